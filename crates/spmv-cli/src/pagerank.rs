//! `spmv pagerank`: PageRank over any registered format, on the GPU (whole iteration on the
//! device) or the CPU, with iterations, times, the top ranks and, with `--exact`, the
//! agreement of the top ranks with the exact ranking (see docs/pagerank.md).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;

use spmv::bench::Status;
use spmv::choice::Choice;
use spmv::error::printable_name;
use spmv::io::inputs;
use spmv::reorder::{self, Reordering};
use spmv::solve::pagerank::{self, Agreement, EdgeWeights, PageRank, Settings, Transition};
use spmv::{Backend, Precision, Scalar};

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
    schema_version: u32,
    spmv_version: String,
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

#[derive(Serialize)]
struct GraphReport {
    matrix: String,
    nodes: usize,
    /// Entries of the adjacency matrix, and the weighted edges kept in Gᵀ.
    adjacency_nnz: usize,
    edges: usize,
    dangling: usize,
    transition_ms: f64,
    exact: Option<ExactReport>,
    results: Vec<RunReport>,
}

#[derive(Serialize)]
struct ExactReport {
    iterations: usize,
    converged: bool,
    residual: f64,
    total_ms: f64,
    top: Vec<(usize, f64)>,
}

#[derive(Serialize)]
struct RunReport {
    format: String,
    precision: Precision,
    /// "ok", "unsupported" (the format declined Gᵀ) or "error".
    status: Status,
    error: Option<String>,
    convert_ms: f64,
    /// The permutation and P·Gᵀ·Pᵀ (with --reorder), in milliseconds.
    reorder_ms: Option<f64>,
    upload_ms: Option<f64>,
    iterations: usize,
    converged: bool,
    residual: f64,
    /// Mean and min over the runs of the iteration time.
    total_ms: f64,
    min_total_ms: f64,
    ms_per_iteration: f64,
    /// Every run gave bitwise the same ranks (null with one run).
    identical_runs: Option<bool>,
    agreement: Option<Agreement>,
    /// Max |r − r_exact| over the nodes.
    max_abs_error: Option<f64>,
    /// The largest rank (the scale of the rounding in the residual).
    largest_rank: f64,
    /// The top nodes (0-based) and their ranks.
    top: Vec<(usize, f64)>,
}

impl RunReport {
    fn new(spec: &Choice, precision: Precision) -> Self {
        RunReport {
            format: spec.label(),
            precision,
            status: Status::Error,
            error: None,
            convert_ms: f64::NAN,
            reorder_ms: None,
            upload_ms: None,
            iterations: 0,
            converged: false,
            residual: f64::NAN,
            total_ms: f64::NAN,
            min_total_ms: f64::NAN,
            ms_per_iteration: f64::NAN,
            identical_runs: None,
            agreement: None,
            max_abs_error: None,
            largest_rank: f64::NAN,
            top: Vec::new(),
        }
    }
}

pub fn run(args: PagerankArgs) -> Result<ExitCode> {
    let settings = Settings {
        alpha: args.alpha,
        tol: args.tol,
        max_iter: args.max_iter,
        check_every: args.check_every,
    };
    settings.validate()?;
    for (flag, value) in [("--exact-tol", args.exact_tol), ("--tie-tol", args.tie_tol)] {
        if !(value >= 0.0 && value.is_finite()) {
            anyhow::bail!("{flag} {value}: must be a finite number >= 0");
        }
    }
    let precisions = select::precisions(&args.precision)?;
    if precisions.contains(&Precision::F16) {
        // Ranks of 1/n for millions of nodes sit below f16's normal range, and its 11 bits
        // cannot order them: PageRank is offered in f64 and f32 only.
        anyhow::bail!("pagerank runs in f64 or f32, not f16 (scores near 1/n need more than f16's range and 11 bits)");
    }
    let specs = select::format_specs(&args.format, args.deterministic)?;
    select::check_writable(args.json.as_deref(), "--json")?;
    let weights = if args.weighted { EdgeWeights::Values } else { EdgeWeights::Pattern };
    let inputs = inputs::resolve(&args.inputs)?;
    let backend = args.place.backend();
    let mut report = Report {
        schema_version: 1,
        spmv_version: env!("CARGO_PKG_VERSION").to_string(),
        backend: match backend {
            Backend::Gpu(_) => "gpu",
            Backend::Cpu => "cpu",
        }
        .into(),
        device: match &backend {
            Backend::Gpu(g) => g.name().to_string(),
            Backend::Cpu => backend.describe(),
        },
        settings: settings.clone(),
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
        let adjacency = match input.load() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("error: {shown}: {}", spmv::error::printable(&e.to_string()));
                failed += 1;
                continue;
            }
        };
        let t = Transition::new(&adjacency, weights).with_context(|| shown.clone())?;
        println!(
            "# {shown}: {} nodes, {} edges, {} dangling ({} weights); Gᵀ built in {:.1} ms",
            t.nodes(),
            t.edges(),
            t.dangling_count(),
            if args.weighted { "|value|" } else { "pattern" },
            t.build_ms()
        );
        let exact = if args.exact {
            let e = pagerank::pagerank_exact(
                &t,
                args.alpha,
                args.exact_tol,
                args.max_iter.max(10_000),
            )?;
            println!(
                "# exact ranking: oracle SpMV in f64 on the CPU to tol {:e}: {} iterations in {:.0} ms{}",
                args.exact_tol,
                e.iterations,
                e.total_ms,
                if e.converged { "" } else { " (NOT converged)" }
            );
            Some(e)
        } else {
            None
        };
        let mut graph = GraphReport {
            matrix: name.clone(),
            nodes: t.nodes(),
            adjacency_nnz: adjacency.nnz(),
            edges: t.edges(),
            dangling: t.dangling_count(),
            transition_ms: t.build_ms(),
            exact: exact.as_ref().map(|e| ExactReport {
                iterations: e.iterations,
                converged: e.converged,
                residual: e.residual,
                total_ms: e.total_ms,
                top: e.top(args.top),
            }),
            results: Vec::new(),
        };
        let exact_scores = exact.as_ref().map(|e| e.scores());
        for &precision in &precisions {
            for spec in &specs {
                let mut r = match precision {
                    Precision::F64 => run_one::<f64>(&backend, &t, spec, &settings, &args),
                    Precision::F32 => run_one::<f32>(&backend, &t, spec, &settings, &args),
                    Precision::F16 => anyhow::bail!("pagerank does not run in f16"),
                };
                if let (Some(exact), Some(scores)) = (&exact_scores, r.1.take()) {
                    r.0.agreement = Some(pagerank::top_k_agreement(
                        exact,
                        &scores,
                        args.agreement,
                        args.tie_tol,
                    ));
                    r.0.max_abs_error = Some(
                        exact.iter().zip(&scores).map(|(e, s)| (e - s).abs()).fold(0.0, f64::max),
                    );
                }
                // A run that stopped at --max-iter without reaching --tol is a failure too.
                let unconverged = r.0.status == Status::Ok && !r.0.converged;
                if unconverged {
                    eprintln!(
                        "{shown}: {} did not converge within --max-iter {}",
                        printable_name(&r.0.format),
                        args.max_iter
                    );
                }
                failed += usize::from(r.0.status.failed() || unconverged);
                graph.results.push(r.0);
            }
        }
        print!("{}", table(&graph, args.exact));
        if let Some(first) = graph.results.iter().find(|r| r.status == Status::Ok) {
            print!("{}", top_table(first, exact.as_ref()));
        }
        report.graphs.push(graph);
    }
    select::write_json(args.json.as_deref(), "--json", &report)?;
    Ok(select::exit_code(failed, "run(s) or input(s) failed or did not converge (see above)"))
}

/// One format × precision: conversion, upload, `runs` PageRank runs. Returns the report and
/// the ranks of the first run (for the comparison with the exact ranking).
fn run_one<T: Scalar>(
    backend: &Backend,
    t: &Transition,
    spec: &Choice,
    settings: &Settings,
    args: &PagerankArgs,
) -> (RunReport, Option<Vec<f64>>) {
    let mut report = RunReport::new(spec, T::PRECISION);
    let gt = t.matrix().cast::<T>();
    let method = args.reorder;
    report.format = spmv::bench::label(spec, method);
    if args.place.devices.is_some() {
        if method != Reordering::None {
            report.error = Some("--devices is not combined with --reorder".into());
            return (report, None);
        }
        let start = Instant::now();
        let outcome = (|| -> anyhow::Result<Runs<T>> {
            let (gpus, _) = args.place.parts(backend)?.expect("with --devices");
            let d = select::distribute(&gt, &gpus, spec, args.place.exchange)?;
            report.upload_ms = Some(start.elapsed().as_secs_f64() * 1e3);
            report.format = format!(
                "{} [{} parts: {}]",
                report.format,
                gpus.len(),
                d.part_formats().join(" | ")
            );
            Ok(Runs::of(args.runs, || spmv::solve::pagerank(&d, t, settings))?)
        })();
        return finish_runs(report, outcome.map_err(|e| e.to_string()), args);
    }
    let start = Instant::now();
    let built = match method {
        Reordering::None => spec.build_on(backend, &gt),
        method => reorder::permutation(&gt, method).and_then(|perm| {
            let permuted = perm.apply(&gt)?;
            report.reorder_ms = Some(start.elapsed().as_secs_f64() * 1e3);
            reorder::build_reordered(spec, &permuted, &std::sync::Arc::new(perm), method)
        }),
    };
    let host = match built {
        Ok(f) => f,
        Err(e) => {
            report.status = Status::of_error(&e);
            report.error = Some(e.to_string());
            return (report, None);
        }
    };
    report.convert_ms = start.elapsed().as_secs_f64() * 1e3 - report.reorder_ms.unwrap_or(0.0);
    let outcome = (|| -> spmv::Result<Runs<T>> {
        match backend {
            Backend::Gpu(gpu) => {
                let start = Instant::now();
                let device = host.upload(gpu)?;
                gpu.synchronize()?;
                report.upload_ms = Some(start.elapsed().as_secs_f64() * 1e3);
                Runs::of(args.runs, || spmv::solve::pagerank(&device, t, settings))
            }
            Backend::Cpu => Runs::of(args.runs, || spmv::solve::pagerank(&host, t, settings)),
        }
    })();
    finish_runs(report, outcome.map_err(|e| e.to_string()), args)
}

/// The runs of one format: the first in whole, of the others only their times and whether
/// they gave the first's ranks bit for bit (one ranking in memory, whatever `--runs`).
struct Runs<T> {
    first: PageRank<T>,
    total_ms: Vec<f64>,
    identical: bool,
}

impl<T: Scalar> Runs<T> {
    fn of<E>(runs: usize, mut run: impl FnMut() -> Result<PageRank<T>, E>) -> Result<Self, E> {
        let first = run()?;
        let mut all = Runs { total_ms: vec![first.total_ms], first, identical: true };
        for _ in 1..runs {
            let r = run()?;
            all.total_ms.push(r.total_ms);
            all.identical &= r.iterations == all.first.iterations
                && r.ranks
                    .iter()
                    .zip(&all.first.ranks)
                    .all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits());
        }
        Ok(all)
    }
}

/// The report's figures from the runs (or their error), and the first run's ranks.
fn finish_runs<T: Scalar>(
    mut report: RunReport,
    outcome: std::result::Result<Runs<T>, String>,
    args: &PagerankArgs,
) -> (RunReport, Option<Vec<f64>>) {
    let runs = match outcome {
        Ok(runs) => runs,
        Err(e) => {
            report.error = Some(e);
            return (report, None);
        }
    };
    let first = &runs.first;
    report.status = Status::Ok;
    report.iterations = first.iterations;
    report.converged = first.converged;
    report.residual = first.residual;
    report.total_ms = runs.total_ms.iter().sum::<f64>() / runs.total_ms.len() as f64;
    report.min_total_ms = runs.total_ms.iter().copied().fold(f64::INFINITY, f64::min);
    report.ms_per_iteration =
        if first.iterations == 0 { f64::NAN } else { report.total_ms / first.iterations as f64 };
    if runs.total_ms.len() > 1 {
        report.identical_runs = Some(runs.identical);
    }
    report.top = first.top(args.top);
    report.largest_rank = first.ranks.iter().map(|r| r.to_f64()).fold(f64::NAN, f64::max);
    (report, Some(first.scores()))
}

fn table(graph: &GraphReport, exact: bool) -> String {
    let mut s = String::new();
    let width = graph.results.iter().map(|r| r.format.chars().count()).max().unwrap_or(0).max(14);
    let _ = write!(
        s,
        "{:<width$} {:>4} {:>9} {:>9} {:>6} {:>4} {:>10} {:>9} {:>9} {:>9}",
        "format",
        "prec",
        "conv ms",
        "upload ms",
        "iters",
        "conv",
        "total ms",
        "ms/iter",
        "residual",
        "same runs"
    );
    if exact {
        let _ =
            write!(s, " {:>10} {:>9} {:>9} {:>9}", "top-k same", "up to tie", "overlap", "max err");
    }
    let _ = writeln!(s, "  status");
    for r in &graph.results {
        let same = match r.identical_runs {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let _ = write!(
            s,
            "{:<width$} {:>4} {:>9.2} {:>9} {:>6} {:>4} {:>10.3} {:>9.4} {:>9.1e} {:>9}",
            printable_name(&r.format),
            r.precision.name(),
            r.convert_ms,
            r.upload_ms.map_or("-".to_string(), |u| format!("{u:.2}")),
            r.iterations,
            if r.converged { "yes" } else { "NO" },
            r.total_ms,
            r.ms_per_iteration,
            r.residual,
            same
        );
        if exact {
            match (&r.agreement, r.max_abs_error) {
                (Some(a), Some(e)) => {
                    let _ = write!(
                        s,
                        " {:>10} {:>9} {:>9} {:>9.1e}",
                        format!("{}/{}", a.same_position, a.k),
                        a.same_position_up_to_ties,
                        a.overlap,
                        e
                    );
                }
                _ => {
                    let _ = write!(s, " {:>10} {:>9} {:>9} {:>9}", "-", "-", "-", "-");
                }
            }
        }
        let status = match (r.status, &r.error) {
            (Status::Ok, _) => "ok".to_string(),
            (st, Some(e)) => format!(
                "{} ({})",
                st.as_str().to_uppercase(),
                printable_name(e.lines().next().unwrap_or(""))
            ),
            (st, None) => st.as_str().to_uppercase(),
        };
        let _ = writeln!(s, "  {status}");
    }
    // A residual that stalls above tol is usually rounding: say so, with the spacing of the
    // precision's numbers at the largest rank.
    for r in graph
        .results
        .iter()
        .filter(|r| r.status == Status::Ok && !r.converged && r.largest_rank > 0.0)
    {
        let bits = if r.precision == Precision::F32 { 23 } else { 52 };
        let spacing = 2f64.powi(r.largest_rank.log2().floor() as i32 - bits);
        let stalled = r.residual <= 16.0 * spacing;
        let _ = writeln!(
            s,
            "# {} {}: not converged after {} iterations (residual {:.1e}): {}",
            r.format,
            r.precision,
            r.iterations,
            r.residual,
            if stalled {
                format!(
                    "{} numbers near the largest rank, {:.1}, are {:.1e} apart, so the residual stalls at rounding level",
                    r.precision, r.largest_rank, spacing
                )
            } else {
                "raise --max-iter".to_string()
            }
        );
    }
    s
}

/// The top nodes of one run (1-based node numbers, as in the Matrix Market file).
fn top_table(r: &RunReport, exact: Option<&PageRank<f64>>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# top {} by {} {} (nodes numbered from 1, as in the file)",
        r.top.len(),
        r.format,
        r.precision
    );
    let _ = write!(s, "{:>5} {:>10} {:>14}", "rank", "node", "score");
    if exact.is_some() {
        let _ = write!(s, " {:>14}", "exact score");
    }
    let _ = writeln!(s);
    for (p, &(node, score)) in r.top.iter().enumerate() {
        let _ = write!(s, "{:>5} {:>10} {:>14.6}", p + 1, node + 1, score);
        if let Some(e) = exact {
            let _ = write!(s, " {:>14.6}", e.ranks[node]);
        }
        let _ = writeln!(s);
    }
    s
}
