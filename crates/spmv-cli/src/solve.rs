//! `spmv solve`: A·x = b by CG, MINRES, BiCGSTAB or GMRES (or `auto`) over any format
//! (docs/solve.md),
//! on the GPU when there is one: progress on stderr, a summary on stdout (with, on the GPU,
//! the time per iteration against the sum of its parts: the product measured alone plus the
//! vector traffic at the copy bandwidth), the solution as a Matrix Market array file, the
//! result as JSON. The exit status is 0 only when the solve converged. The solve itself is
//! the library's (`spmv::app::solve`); here are the flags, b, progress and the output.

use std::io::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use spmv::app::solve::{self, Request};
use spmv::app::Target;
use spmv::choice::Choice;
use spmv::error::printable_name;
use spmv::io::inputs;
use spmv::reference::test_vector_rows;
use spmv::solve::KrylovSettings;

use crate::select;

#[derive(clap::Args)]
pub struct SolveArgs {
    /// The matrix A (square): a .mtx/.mtx.gz file or a generator spec.
    input: String,
    /// The right-hand side: ones, random (the test vector, reproducible), random:K (K such
    /// columns, solved together) or a Matrix Market file (array or coordinate) of A's rows and
    /// one column or several (solved together: one block product a step; -o writes them all).
    #[arg(long, default_value = "ones")]
    rhs: String,
    /// cg (symmetric positive definite A), minres (symmetric A), bicgstab or gmres (general A),
    /// or auto: cg for a symmetric A with a positive diagonal (minres if cg finds A
    /// indefinite), minres for another symmetric A, gmres for a nonsymmetric one (bicgstab if
    /// gmres does not converge); the summary says what it did. A comma-separated list solves
    /// with each (to compare them, e.g. with --plot).
    #[arg(long, default_value = "auto", value_delimiter = ',', value_parser = select::one_of::<solve::MethodChoice>(&["auto", "cg", "bicgstab", "minres", "gmres"]))]
    method: Vec<solve::MethodChoice>,
    /// GMRES: the basis' size before a restart (1 to 256).
    #[arg(long, default_value_t = 30)]
    restart: usize,
    /// none, or jacobi (the inverse diagonal).
    #[arg(long, default_value = "none", value_parser = select::one_of::<solve::Preconditioner>(&["none", "jacobi"]))]
    precond: solve::Preconditioner,
    /// Stop when ‖r‖/‖b‖ ≤ tol.
    #[arg(long, default_value_t = 1e-8, allow_hyphen_values = true)]
    tol: f64,
    /// Most iterations.
    #[arg(long, default_value_t = 10_000)]
    max_iter: usize,
    /// On the GPU, read the residual back (and report progress) every this many iterations;
    /// the test itself runs on the device every iteration.
    #[arg(long, default_value_t = 10)]
    check_every: usize,
    /// On the GPU, launch each iteration's kernels one by one instead of replaying a CUDA graph.
    #[arg(long)]
    no_graph: bool,
    /// The format of A's products (a spec; see `spmv formats`), or a comma-separated list of
    /// them: each method solves once with each format.
    #[arg(long, default_value = "auto")]
    format: String,
    /// f64 or f32.
    #[arg(long, default_value = "f64", value_parser = select::one_of::<spmv::Precision>(&["f64", "f32"]))]
    precision: spmv::Precision,
    /// Solve this many times and report the median time of all but the first (which also
    /// compiles the kernels and builds the CUDA graph); 1: the one solve's time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    #[command(flatten)]
    place: select::Placement,
    /// Write x as a Matrix Market array file.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Write the result as JSON (with several methods or formats: a list, one per solve).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Draw the residual history (log scale) as an SVG file, every solve of the run overlaid
    /// (and each method `auto` ran). Use --check-every 1 for every iteration's point.
    #[arg(long)]
    plot: Option<PathBuf>,
}

pub fn run(args: SolveArgs) -> Result<ExitCode> {
    let settings = KrylovSettings {
        tol: args.tol,
        max_iter: args.max_iter,
        check_every: args.check_every,
        graph: !args.no_graph,
        progress: None,
        restart: args.restart,
    };
    settings.validate()?;
    let files = [&args.output, &args.json, &args.plot];
    let named: Vec<_> = files.iter().filter_map(|f| f.as_ref()).collect();
    if (1..named.len()).any(|i| named[..i].contains(&named[i])) {
        bail!("-o, --json and --plot name the same file: give each its own");
    }
    select::check_writable(args.json.as_deref(), "--json")?;
    select::check_writable(args.output.as_deref(), "-o")?;
    crate::report::check_svg(args.plot.as_deref(), "--plot")?;
    let choices = spmv::choice::parse_list(&args.format)?;
    let mut methods = args.method.clone();
    methods.dedup();
    let solves: Vec<(solve::MethodChoice, Choice)> =
        methods.iter().flat_map(|&m| choices.iter().map(move |c| (m, c.clone()))).collect();
    if solves.is_empty() {
        bail!("--method and --format name no solve");
    }
    if solves.len() > 1 && args.output.is_some() {
        bail!("-o writes one solution: give one method and one format with it");
    }
    // One process per GPU (a launcher's ranks): each reads only its rows of A and b, rank 0
    // prints and writes the files (x gathered from every rank).
    let place = match select::multi_process(&args.place)? {
        Some(world) => Some(select::rank_place(world)?),
        None => None,
    };
    let arg = std::slice::from_ref(&args.input);
    let inputs =
        if place.is_some() { inputs::resolve_for_rows(arg)? } else { inputs::resolve(arg)? };
    let input = inputs.into_iter().next().context("no matrix given")?;
    let name = input.name();
    // Reading A is the setup's first phase in a distributed solve's report.
    let (a, (b, k), target, read) = match &place {
        Some(p) => {
            let options = spmv::io::ReadOptions::default();
            let (partition, own, read) =
                select::own_rows(&input, &options, p).with_context(|| printable_name(&name))?;
            let rows = partition.rows(p.ranks.world().rank);
            let b = p.ranks.agree(rhs(&args.rhs, own.ncols(), rows))?;
            (own, b, Target::Ranks(p.clone()), read)
        }
        None => {
            let mut read = spmv::distributed::Phases::default();
            let a = read.time("read", || input.load()).with_context(|| printable_name(&name))?;
            let b = rhs(&args.rhs, a.nrows(), 0..a.nrows())?;
            (a, b, args.place.target()?, read)
        }
    };
    let lead = place.as_ref().is_none_or(|p| p.ranks.world().rank == 0);
    let mut reports = Vec::new();
    for (method, choice) in solves {
        let request = Request {
            method,
            precond: args.precond,
            choice,
            precision: args.precision,
            settings: if lead { with_progress_line(&settings) } else { settings.clone() },
            repeat: args.repeat,
            measure_parts: true,
        };
        let solve::Run { mut report, x } = solve::run_block(&name, &a, &b, k, &request, &target)?;
        if let Some(d) = report.distributed.as_mut() {
            d.setup = read.clone().then(std::mem::take(&mut d.setup));
        }
        let x = match &place {
            Some(p) if args.output.is_some() => p.ranks.gather_rows(&x)?,
            _ => x,
        };
        if lead {
            print!("{}", report.summary());
            if let Some(path) = &args.output {
                write_array(path, &x, k).context("-o")?;
            }
        }
        reports.push(report);
    }
    if lead {
        match reports.as_slice() {
            [one] => select::write_json(args.json.as_deref(), "--json", one)?,
            all => select::write_json(args.json.as_deref(), "--json", &all)?,
        }
        if let Some(path) = &args.plot {
            let svg = spmv::picture::convergence_svg(
                &format!("{}: residual history", printable_name(&name)),
                &curves(&reports),
                args.tol,
            )?;
            crate::report::write(path, "--plot", &svg)?;
        }
    }
    let converged = reports.iter().all(|r| r.converged());
    Ok(if converged { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The residual histories of `reports`, each method run a curve named by its method and
/// format (the matrix names the plot).
fn curves(reports: &[solve::Report]) -> Vec<spmv::picture::Curve> {
    let mut curves = Vec::new();
    for r in reports {
        let format = r.chosen.as_ref().map_or(r.format.clone(), |c| format!("{}({c})", r.format));
        for a in &r.history {
            let label = format!("{} on {format}", a.method);
            curves.push(spmv::picture::Curve { label, points: a.residuals.clone() });
        }
    }
    curves
}

/// Most right-hand sides solved together (`random:K` or a file's columns): B's n·k entries
/// are allocated only once k is known to be at most this.
const MOST_RIGHT_HAND_SIDES: usize = 1024;

/// Rows `rows` of the right-hand sides (of length n) and how many there are: k columns, one
/// after the other.
fn rhs(which: &str, n: usize, rows: Range<usize>) -> spmv::Result<(Vec<f64>, usize)> {
    let too_many = |k: usize| {
        spmv::Error::Argument(format!(
            "--rhs {which}: {k} right-hand sides; at most {MOST_RIGHT_HAND_SIDES} are solved together"
        ))
    };
    if let Some(count) = which.strip_prefix("random:") {
        let k: usize = count.parse().ok().filter(|&k| k > 0).ok_or_else(|| {
            spmv::Error::Argument(format!("--rhs {which}: K of random:K is a count from 1"))
        })?;
        if k > MOST_RIGHT_HAND_SIDES {
            return Err(too_many(k));
        }
        // Column j: the test vector's entries n·j + rows (each column its own values).
        let b = (0..k).flat_map(|j| test_vector_rows::<f64>(n * j + rows.start..n * j + rows.end));
        return Ok((b.collect(), k));
    }
    match which {
        "ones" => Ok((vec![1.0; rows.len()], 1)),
        "random" => Ok((test_vector_rows::<f64>(rows), 1)),
        file => {
            let path = Path::new(file);
            let named = |e: spmv::Error| spmv::Error::Argument(format!("--rhs {file}: {e}"));
            let h = spmv::io::read_header(path).map_err(named)?;
            if h.nrows != n || h.ncols == 0 {
                return Err(spmv::Error::Argument(format!(
                    "--rhs {file}: a {} x {} matrix, but B needs {n} rows and at least one column",
                    h.nrows, h.ncols
                )));
            }
            if h.ncols > MOST_RIGHT_HAND_SIDES {
                return Err(too_many(h.ncols));
            }
            let options = spmv::io::ReadOptions::default();
            let v = spmv::io::read_matrix_market_rows::<f64>(path, &options, rows.clone())
                .map_err(named)?;
            let (m, k) = (rows.len(), h.ncols);
            let mut b = vec![0.0; m * k];
            for r in 0..m {
                let (cols, values) = v.row(r);
                for (&c, &value) in cols.iter().zip(values) {
                    b[c as usize * m + r] += value;
                }
            }
            Ok((b, k))
        }
    }
}

/// `settings` reporting progress on stderr, at most twice a second (nothing for a solve
/// shorter than that), on every backend.
fn with_progress_line(settings: &KrylovSettings) -> KrylovSettings {
    let tol = settings.tol;
    let last = std::sync::Mutex::new(std::time::Instant::now());
    let show = move |iterations: usize, residual: f64| {
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed().as_secs_f64() >= 0.5 {
            eprintln!("  iteration {iterations}: ‖r‖/‖b‖ = {residual:.3e} (tol {tol:.1e})");
            *last = std::time::Instant::now();
        }
    };
    KrylovSettings { progress: Some(std::sync::Arc::new(show)), ..settings.clone() }
}

/// X (k columns, one after the other) as a Matrix Market array file (which lists a column
/// after the other; shortest decimal forms that read back exactly).
fn write_array(path: &Path, x: &[f64], k: usize) -> spmv::Result<()> {
    spmv::io::output::write_file(path, |out| {
        writeln!(out, "%%MatrixMarket matrix array real general")?;
        writeln!(out, "% the solution of spmv solve")?;
        writeln!(out, "{} {k}", x.len() / k)?;
        for v in x {
            writeln!(out, "{v}")?;
        }
        Ok(())
    })
}
