//! `spmv pagerank`: PageRank over any registered format, on the GPU (whole iteration on the
//! device) or the CPU, with iterations, times, the top ranks and, with `--exact`, the
//! agreement of the top ranks with the exact ranking (see docs/pagerank.md). The run itself is
//! the library's (`spmv::app::pagerank`); here are the flags and the output.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use spmv::app::pagerank::{self, Exact, GraphReport, Request};
use spmv::error::{printable, printable_name};
use spmv::io::inputs;
use spmv::io::output::Provenance;
use spmv::reorder::Reordering;
use spmv::solve::pagerank::{EdgeWeights, Settings};
use spmv::Backend;

use crate::select;

#[derive(clap::Args)]
pub struct PagerankArgs {
    /// Adjacency matrices (row = source node, column = target): .mtx/.mtx.gz files, folders
    /// of them, or generator specs.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// Format spec(s) for the products y = Gᵀ·r: a name or spec, a comma-separated list, or
    /// "all" (see `spmv formats`).
    #[arg(long, default_value = "csr-vector")]
    format: String,
    /// Keep only the formats whose GPU result is bitwise identical from run to run.
    #[arg(long)]
    deterministic: bool,
    /// Comma-separated precisions: f64, f32.
    #[arg(long, default_value = "f64")]
    precision: String,
    /// Damping factor α.
    #[arg(long, default_value_t = 0.85, allow_hyphen_values = true)]
    alpha: f64,
    /// Stop when max |r_{k+1} − r_k| < tol (ranks have mean 1).
    #[arg(long, default_value_t = 1e-5, allow_hyphen_values = true)]
    tol: f64,
    /// Most iterations.
    #[arg(long, default_value_t = 1000)]
    max_iter: usize,
    /// GPU: read the residual (one scalar) every this many iterations.
    #[arg(long, default_value_t = 1)]
    check_every: usize,
    /// How many of the highest-ranked nodes to print.
    #[arg(long, default_value_t = 10)]
    top: usize,
    #[command(flatten)]
    place: select::Placement,
    /// Weigh edges by |value| instead of counting every stored entry as one edge.
    #[arg(long)]
    weighted: bool,
    /// Timed runs per format, 1 to 1000 (times: mean and min; ranks from the first run).
    #[arg(long, default_value_t = 1, value_parser = crate::count(1, 1000))]
    runs: usize,
    /// Also compute the exact ranking (oracle SpMV, f64, CPU) and compare the top ranks.
    #[arg(long)]
    exact: bool,
    /// Tolerance of the exact ranking.
    #[arg(long, default_value_t = 1e-12, allow_hyphen_values = true)]
    exact_tol: f64,
    /// Top ranks compared with the exact ranking.
    #[arg(long, default_value_t = 100)]
    agreement: usize,
    /// Exact ranks closer than this count as tied in the tie-aware agreement.
    #[arg(long, default_value_t = 1e-9, allow_hyphen_values = true)]
    tie_tol: f64,
    /// Write every result as JSON (schema: docs/pagerank.md).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Permute Gᵀ symmetrically before building the format (rcm, degree): the ranks stay in
    /// the original node order; the permutation's time is reorder_ms, its passes are in the
    /// iteration time. Not combined with --devices.
    #[arg(long, default_value = "none", value_parser = select::parse_reordering)]
    reorder: Reordering,
}

/// The JSON report.
#[derive(Serialize)]
struct Report {
    #[serde(flatten)]
    provenance: Provenance,
    /// "gpu" or "cpu".
    backend: String,
    device: String,
    settings: Settings,
    weights: EdgeWeights,
    runs: usize,
    exact_tol: Option<f64>,
    tie_tol: f64,
    graphs: Vec<GraphReport>,
}

pub fn run(args: PagerankArgs) -> Result<ExitCode> {
    let settings = Settings {
        alpha: args.alpha,
        tol: args.tol,
        max_iter: args.max_iter,
        check_every: args.check_every,
    };
    settings.validate()?;
    if let Some(world) = select::multi_process(&args.place)? {
        // Gᵀ's rows of a rank's nodes hold every rank's edges into them: a transpose across
        // processes, not written yet.
        anyhow::bail!(
            "PageRank with one process per GPU is not written yet (this is rank {} of {}): run it in one process over several GPUs with --devices",
            world.rank,
            world.size
        );
    }
    for (flag, value) in [("--exact-tol", args.exact_tol), ("--tie-tol", args.tie_tol)] {
        if !(value >= 0.0 && value.is_finite()) {
            anyhow::bail!("{flag} {value}: must be a finite number >= 0");
        }
    }
    let precisions = select::precisions(&args.precision)?;
    pagerank::check_precisions(&precisions)?;
    let specs = select::format_specs(&args.format, args.deterministic)?;
    select::check_writable(args.json.as_deref(), "--json")?;
    let weights = if args.weighted { EdgeWeights::Values } else { EdgeWeights::Pattern };
    let inputs = inputs::resolve(&args.inputs)?;
    let target = args.place.target()?;
    let backend = target.backend();
    let request = Request {
        settings: settings.clone(),
        weights,
        reorder: args.reorder,
        runs: args.runs,
        top: args.top,
        exact: args.exact.then_some(Exact {
            tol: args.exact_tol,
            agreement: args.agreement,
            tie_tol: args.tie_tol,
        }),
    };
    let mut report = Report {
        provenance: Provenance::of_layout(1),
        backend: match backend {
            Backend::Gpu(_) => "gpu",
            Backend::Cpu => "cpu",
        }
        .into(),
        device: match &backend {
            Backend::Gpu(g) => g.name().to_string(),
            Backend::Cpu => backend.describe(),
        },
        settings,
        weights,
        runs: args.runs,
        exact_tol: args.exact.then_some(args.exact_tol),
        tie_tol: args.tie_tol,
        graphs: Vec::new(),
    };
    let mut failed = 0;
    for input in &inputs {
        let name = input.name();
        // What is printed of the name: escaped, so that it cannot forge a line.
        let shown = printable_name(&name);
        let graph = input.load().and_then(|adjacency| {
            pagerank::graph(&name, &adjacency, &specs, &precisions, &target, &request)
        });
        let graph = match graph {
            Ok(graph) => graph,
            Err(e) => {
                eprintln!("error: {shown}: {}", printable(&e.to_string()));
                failed += 1;
                continue;
            }
        };
        for r in &graph.results {
            // A run that stopped at --max-iter without reaching --tol is a failure too.
            if r.unconverged() {
                eprintln!(
                    "{shown}: {} did not converge within --max-iter {}",
                    printable_name(&r.format),
                    args.max_iter
                );
            }
            failed += usize::from(r.status.failed() || r.unconverged());
        }
        print!("{}", graph.text(weights));
        report.graphs.push(graph);
    }
    select::write_json(args.json.as_deref(), "--json", &report)?;
    Ok(select::exit_code(failed, "run(s) or input(s) failed or did not converge (see above)"))
}
