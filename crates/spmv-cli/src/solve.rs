//! `spmv solve`: A·x = b by conjugate gradients or BiCGSTAB over any format (docs/solve.md),
//! on the GPU when there is one: progress on stderr, a summary on stdout (with, on the GPU,
//! the time per iteration against the sum of its parts: the product measured alone plus the
//! vector traffic at the copy bandwidth), the solution as a Matrix Market array file, the
//! result as JSON. The exit status is 0 only when the solve converged.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use spmv::bench::{median_min, Settings as BenchSettings};
use spmv::choice::Choice;
use spmv::error::printable_name;
use spmv::io::inputs;
use spmv::reference::test_vector;
use spmv::solve::{self, jacobi, KrylovSettings, Method, Outcome, Solution};
use spmv::{Backend, Csr, DeviceMatrix, FormatHandle, Scalar};

use crate::select;

#[derive(clap::Args)]
pub struct SolveArgs {
    /// The matrix A (square): a .mtx/.mtx.gz file or a generator spec.
    input: String,
    /// The right-hand side: ones, random (the test vector, reproducible) or a Matrix Market
    /// file with one column (array or coordinate).
    #[arg(long, default_value = "ones")]
    rhs: String,
    /// cg (symmetric positive definite A) or bicgstab (general A).
    #[arg(long, default_value = "cg", value_parser = ["cg", "bicgstab"])]
    method: String,
    /// none, or jacobi (the inverse diagonal).
    #[arg(long, default_value = "none", value_parser = ["none", "jacobi"])]
    precond: String,
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
    /// The format of A's products (a spec; see `spmv formats`).
    #[arg(long, default_value = "auto")]
    format: String,
    /// f64 or f32.
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32"])]
    precision: String,
    /// Solve this many times and report the median time of all but the first (which also
    /// compiles the kernels and builds the CUDA graph); 1: the one solve's time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    #[command(flatten)]
    place: select::Placement,
    /// Write x as a Matrix Market array file.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Write the result as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Serialize)]
struct Report {
    schema_version: u32,
    spmv_version: String,
    matrix: String,
    rows: usize,
    nnz: usize,
    method: String,
    precond: String,
    format: String,
    /// The format `auto` chose, when the format is `auto`.
    chosen: Option<String>,
    precision: String,
    backend: String,
    tol: f64,
    max_iter: usize,
    check_every: usize,
    /// converged, not_converged, breakdown, non_finite or inaccurate_residual.
    outcome: String,
    /// What vanished, for a breakdown.
    breakdown: Option<String>,
    iterations: usize,
    residual: f64,
    true_residual: f64,
    /// The solve's wall time (with --repeat: the median over the repeats after the first).
    solve_ms: f64,
    /// The first solve's wall time (kernel compilation included).
    first_solve_ms: f64,
    /// Mean time of one iteration (on the GPU: the iterations queued, read-backs included).
    ms_per_iteration: f64,
    convert_ms: f64,
    /// GPU: the iteration was replayed as a CUDA graph.
    graph: bool,
    /// GPU: the parts of an iteration, measured after the solve.
    parts: Option<Parts>,
    /// With --devices: the distributed matrix.
    distributed: Option<Distributed>,
}

/// A solve over several GPUs (`--devices`).
#[derive(Serialize)]
struct Distributed {
    devices: Vec<usize>,
    /// Each part's format (auto's choice named) and entries.
    part_formats: Vec<String>,
    part_nnz: Vec<usize>,
    /// x entries and bytes exchanged per product.
    halo_entries: usize,
    halo_bytes: usize,
    /// One distributed product, and one halo exchange alone: back-to-back means of 100.
    spmv_ms: f64,
    exchange_ms: f64,
}

/// An iteration's parts on the GPU: its products, each timed alone (back to back), plus the
/// vector kernels' traffic at the copy bandwidth measured in the same run.
#[derive(Serialize)]
struct Parts {
    products: usize,
    /// One product, back-to-back mean (median of 3 rounds of 100).
    spmv_ms: f64,
    /// Bytes one product moves at least: the format's arrays, x once, y once.
    spmv_bytes: usize,
    vector_bytes: usize,
    copy_gbs: f64,
    /// products × spmv_ms + vector_bytes at copy_gbs.
    parts_ms: f64,
    /// ms_per_iteration / parts_ms.
    ratio: f64,
    /// (products × spmv_bytes + vector_bytes) per iteration over ms_per_iteration.
    achieved_gbs: f64,
}

pub fn run(args: SolveArgs) -> Result<ExitCode> {
    let settings = KrylovSettings {
        tol: args.tol,
        max_iter: args.max_iter,
        check_every: args.check_every,
        graph: !args.no_graph,
        progress: None,
    };
    settings.validate()?;
    if args.output.is_some() && args.output == args.json {
        bail!("-o and --json name the same file: give each its own");
    }
    select::check_writable(args.json.as_deref(), "--json")?;
    select::check_writable(args.output.as_deref(), "-o")?;
    let spec = Choice::parse(&args.format)?;
    let input = inputs::resolve(std::slice::from_ref(&args.input))?
        .into_iter()
        .next()
        .context("no matrix given")?;
    let a = input.load().with_context(|| printable_name(&input.name()))?;
    if a.nrows() != a.ncols() {
        bail!(
            "{}: solving needs a square matrix, this one is {} x {}",
            printable_name(&input.name()),
            a.nrows(),
            a.ncols()
        );
    }
    let b = rhs(&args.rhs, a.nrows())?;
    let backend = args.place.backend();
    let mut report = Report {
        schema_version: 1,
        spmv_version: env!("CARGO_PKG_VERSION").to_string(),
        matrix: input.name(),
        rows: a.nrows(),
        nnz: a.nnz(),
        method: args.method.clone(),
        precond: args.precond.clone(),
        format: spec.label(),
        chosen: None,
        precision: args.precision.clone(),
        backend: backend.describe(),
        tol: args.tol,
        max_iter: args.max_iter,
        check_every: args.check_every,
        outcome: String::new(),
        breakdown: None,
        iterations: 0,
        residual: f64::NAN,
        true_residual: f64::NAN,
        solve_ms: f64::NAN,
        first_solve_ms: f64::NAN,
        ms_per_iteration: f64::NAN,
        convert_ms: f64::NAN,
        graph: false,
        parts: None,
        distributed: None,
    };
    let converged = match args.precision.as_str() {
        "f32" => solve::<f32>(&a.cast(), &b, &spec, &backend, &args, &settings, &mut report)?,
        _ => solve::<f64>(&a, &b, &spec, &backend, &args, &settings, &mut report)?,
    };
    println!(
        "{} {} ({}, {}, precond {}) on the {}: {} after {} iterations, ‖r‖/‖b‖ = {:.3e} (true {:.3e}), {:.2} ms ({:.4} ms per iteration{}; conversion {:.2} ms)",
        printable_name(&report.matrix),
        report.method,
        report.chosen.as_ref().map_or(report.format.clone(), |c| format!("{}({c})", report.format)),
        report.precision,
        report.precond,
        report.backend,
        report.breakdown.as_ref().map_or(report.outcome.replace('_', " "), |why| format!("breakdown: {why}")),
        report.iterations,
        report.residual,
        report.true_residual,
        report.solve_ms,
        report.ms_per_iteration,
        if report.graph { ", CUDA graph" } else { "" },
        report.convert_ms,
    );
    if let Some(p) = &report.parts {
        println!(
            "per iteration: {:.2}x its parts ({} x SpMV {:.4} ms + {:.1} MB of vector traffic at {:.0} GB/s = {:.4} ms); {:.0} GB/s achieved",
            p.ratio,
            p.products,
            p.spmv_ms,
            p.vector_bytes as f64 / 1e6,
            p.copy_gbs,
            p.parts_ms,
            p.achieved_gbs
        );
    }
    if let Some(d) = &report.distributed {
        println!(
            "{} parts on devices {:?}: entries {:?}; halo {} entries ({:.2} MB) per product; SpMV {:.4} ms, exchange alone {:.4} ms (back-to-back means of 100)",
            d.devices.len(),
            d.devices,
            d.part_nnz,
            d.halo_entries,
            d.halo_bytes as f64 / 1e6,
            d.spmv_ms,
            d.exchange_ms
        );
    }
    select::write_json(args.json.as_deref(), "--json", &report)?;
    Ok(if converged { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The right-hand side of length n.
fn rhs(which: &str, n: usize) -> Result<Vec<f64>> {
    match which {
        "ones" => Ok(vec![1.0; n]),
        "random" => Ok(test_vector::<f64>(n)),
        file => {
            let v = spmv::io::read_matrix_market::<f64>(Path::new(file))
                .with_context(|| format!("--rhs {file}"))?;
            if v.nrows() != n || v.ncols() != 1 {
                bail!("--rhs {file}: a {} x {} matrix, but b needs {n} x 1", v.nrows(), v.ncols());
            }
            let mut b = vec![0.0; n];
            for (r, b) in b.iter_mut().enumerate() {
                *b = v.row(r).1.first().copied().unwrap_or(0.0);
            }
            Ok(b)
        }
    }
}

fn solve<T: Scalar>(
    a: &Csr<T>,
    b64: &[f64],
    spec: &Choice,
    backend: &Backend,
    args: &SolveArgs,
    settings: &KrylovSettings,
    report: &mut Report,
) -> Result<bool> {
    let b: Vec<T> = b64.iter().map(|&v| T::from_f64(v)).collect();
    let distributed = args.place.parts(backend)?;
    let m_inv = match args.precond.as_str() {
        "jacobi" => Some(jacobi(a)?),
        _ => None,
    };
    let method = if args.method == "bicgstab" { Method::Bicgstab } else { Method::Cg };
    if let Some(parts) = distributed {
        let m_inv = m_inv.as_deref();
        return solve_distributed(a, &b, m_inv, method, parts, spec, args, settings, report);
    }
    let start = std::time::Instant::now();
    let host = spec.build_on(backend, a)?;
    report.chosen = host.chosen();
    let m_inv = m_inv.as_deref();
    let mut solves = Solves::default();
    let settings = &with_progress_line(settings);
    match backend {
        Backend::Gpu(gpu) => {
            let device = host.upload(gpu)?;
            report.convert_ms = start.elapsed().as_secs_f64() * 1e3;
            for _ in 0..args.repeat {
                solves.push(solve::solve(&device, method, &b, m_inv, settings)?);
            }
            let iteration_ms = solves.last.as_ref().map_or(f64::NAN, |s| s.iteration_ms);
            if a.nrows() > 0 {
                report.parts =
                    Some(parts(backend, &device, method, m_inv.is_some(), iteration_ms)?);
            }
        }
        Backend::Cpu => {
            report.convert_ms = start.elapsed().as_secs_f64() * 1e3;
            for _ in 0..args.repeat {
                solves.push(solve::solve(&host, method, &b, m_inv, settings)?);
            }
        }
    };
    finish(solves, args, report)
}

/// A solve over several GPUs (`--devices`): `solve`'s, from the preconditioner on.
#[allow(clippy::too_many_arguments)]
fn solve_distributed<T: Scalar>(
    a: &Csr<T>,
    b: &[T],
    m_inv: Option<&[T]>,
    method: Method,
    (gpus, devices): select::Parts,
    spec: &Choice,
    args: &SolveArgs,
    settings: &KrylovSettings,
    report: &mut Report,
) -> Result<bool> {
    let settings = &with_progress_line(settings);
    let start = std::time::Instant::now();
    let d = select::distribute(a, &gpus, spec, args.place.exchange)?;
    report.convert_ms = start.elapsed().as_secs_f64() * 1e3;
    report.backend = format!(
        "{} GPU part(s) on device(s) {devices:?}, halo by {}",
        devices.len(),
        args.place.exchange
    );
    let mut solves = Solves::default();
    for _ in 0..args.repeat {
        solves.push(solve::solve(&d, method, b, m_inv, settings)?);
    }
    let (spmv_ms, exchange_ms) = d.time_products(100)?;
    report.distributed = Some(Distributed {
        devices,
        part_formats: d.part_formats(),
        part_nnz: d.part_nnz(),
        halo_entries: d.halo_entries(),
        halo_bytes: d.halo_bytes(),
        spmv_ms,
        exchange_ms,
    });
    report.chosen = Some(d.part_formats().join(" | "));
    finish(solves, args, report)
}

/// The solves of `--repeat`: every time, and only the last solution (one x in memory,
/// whatever the count).
struct Solves<T> {
    ms: Vec<f64>,
    last: Option<Solution<T>>,
}

impl<T> Default for Solves<T> {
    fn default() -> Self {
        Solves { ms: Vec::new(), last: None }
    }
}

impl<T> Solves<T> {
    fn push(&mut self, s: Solution<T>) {
        self.ms.push(s.ms);
        self.last = Some(s);
    }
}

/// The report's figures from the solves (the median time of all but the first), and x written.
fn finish<T: Scalar>(solves: Solves<T>, args: &SolveArgs, report: &mut Report) -> Result<bool> {
    let solution = solves.last.expect("at least one solve");
    report.first_solve_ms = solves.ms[0];
    let mut times = solves.ms[1..].to_vec();
    let timed = if times.is_empty() { solves.ms[0] } else { median_min(&mut times).0 };
    report.outcome = match &solution.outcome {
        Outcome::Converged => "converged",
        Outcome::NotConverged => "not_converged",
        Outcome::Breakdown(why) => {
            report.breakdown = Some(why.clone());
            "breakdown"
        }
        Outcome::NonFinite => "non_finite",
        Outcome::InaccurateResidual => "inaccurate_residual",
    }
    .into();
    report.iterations = solution.iterations;
    report.residual = solution.residual;
    report.true_residual = solution.true_residual;
    report.solve_ms = timed;
    report.ms_per_iteration = solution.iteration_ms;
    report.graph = solution.graph;
    if let Some(path) = &args.output {
        write_array(path, &solution.x).context("-o")?;
    }
    Ok(solution.converged())
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

/// Times one product of `a` (square, with rows) alone and measures the copy bandwidth, to set
/// an iteration's time against the sum of its parts.
fn parts<T: Scalar>(
    backend: &Backend,
    a: &DeviceMatrix<T>,
    method: Method,
    preconditioned: bool,
    iteration_ms: f64,
) -> Result<Parts> {
    let Backend::Gpu(gpu) = backend else { bail!("parts are measured on the GPU") };
    let n = a.nrows();
    let x = gpu.upload(&test_vector::<T>(n))?;
    let mut y = gpu.alloc::<T>(n)?;
    gpu.time(10, 10, || a.spmv(&x, &mut y))?;
    let mut rounds = gpu.time_back_to_back(3, 100, || a.spmv(&x, &mut y))?;
    let spmv_ms = median_min(&mut rounds).0;
    let copy_gbs = backend.machine(&BenchSettings::default())?.copy_gbs;
    let value = std::mem::size_of::<T>();
    let spmv_bytes = a.bytes_read() + 2 * n * value;
    let vector_bytes = method.vector_bytes_per_iteration(n, value, preconditioned);
    let products = method.products_per_iteration();
    let parts_ms = products as f64 * spmv_ms + vector_bytes as f64 / (copy_gbs * 1e9) * 1e3;
    let achieved_gbs = (products * spmv_bytes + vector_bytes) as f64 / (iteration_ms * 1e-3) / 1e9;
    Ok(Parts {
        products,
        spmv_ms,
        spmv_bytes,
        vector_bytes,
        copy_gbs,
        parts_ms,
        ratio: iteration_ms / parts_ms,
        achieved_gbs,
    })
}

/// x as a Matrix Market array file (one column; shortest decimal forms that read back exactly).
fn write_array<T: Scalar>(path: &Path, x: &[T]) -> spmv::Result<()> {
    spmv::io::output::write_file(path, |out| {
        writeln!(out, "%%MatrixMarket matrix array real general")?;
        writeln!(out, "% the solution of spmv solve")?;
        writeln!(out, "{} 1", x.len())?;
        for v in x {
            writeln!(out, "{}", v.to_f64())?;
        }
        Ok(())
    })
}
