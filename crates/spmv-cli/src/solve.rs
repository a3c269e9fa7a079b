//! `spmv solve`: A·x = b by conjugate gradients or BiCGSTAB over any format (docs/solve.md):
//! CG on the GPU when there is one, BiCGSTAB on the CPU for now; a summary on stdout, the
//! solution as a Matrix Market array file, the result as JSON. The exit status is 0 only when
//! the solve converged.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use spmv::formats;
use spmv::io::inputs;
use spmv::reference::test_vector;
use spmv::solve::{bicgstab_host, cg_gpu, cg_host, jacobi, KrylovSettings, Outcome, Solution};
use spmv::{Backend, Csr, Scalar};

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
    #[arg(long, default_value_t = 1e-8)]
    tol: f64,
    /// Most iterations.
    #[arg(long, default_value_t = 10_000)]
    max_iter: usize,
    /// Test the residual every this many iterations (on the GPU: one read-back each).
    #[arg(long, default_value_t = 1)]
    check_every: usize,
    /// The format of A's products (a spec; see `spmv formats`).
    #[arg(long, default_value = "auto")]
    format: String,
    /// f64 or f32.
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32"])]
    precision: String,
    /// Run on the CPU even when a GPU is present.
    #[arg(long)]
    cpu: bool,
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
    solve_ms: f64,
    ms_per_iteration: f64,
    convert_ms: f64,
}

pub fn run(args: SolveArgs) -> Result<ExitCode> {
    let settings = KrylovSettings { tol: args.tol, max_iter: args.max_iter, check_every: args.check_every };
    settings.validate()?;
    select::check_writable(args.json.as_deref())?;
    select::check_writable(args.output.as_deref())?;
    let spec = formats::parse_spec(&args.format)?;
    let input = inputs::resolve(std::slice::from_ref(&args.input))?.into_iter().next().context("no matrix given")?;
    let a = input.load().with_context(|| input.name())?;
    if a.nrows() != a.ncols() {
        bail!("{}: solving needs a square matrix, this one is {} x {}", input.name(), a.nrows(), a.ncols());
    }
    let b = rhs(&args.rhs, a.nrows())?;
    let mut backend = select::backend(args.cpu);
    if args.method == "bicgstab" && matches!(backend, Backend::Gpu(_)) {
        eprintln!("bicgstab runs on the CPU for now (its GPU version is not written yet)");
        backend = Backend::Cpu;
    }
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
        ms_per_iteration: f64::NAN,
        convert_ms: f64::NAN,
    };
    let converged = match args.precision.as_str() {
        "f32" => solve::<f32>(&a.cast(), &b, &spec, &backend, &args, &settings, &mut report)?,
        _ => solve::<f64>(&a, &b, &spec, &backend, &args, &settings, &mut report)?,
    };
    println!(
        "{} {} ({}, {}, precond {}) on the {}: {} after {} iterations, ‖r‖/‖b‖ = {:.3e} (true {:.3e}), {:.2} ms ({:.4} ms per iteration; conversion {:.2} ms)",
        report.matrix,
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
        report.convert_ms,
    );
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?).with_context(|| path.display().to_string())?;
    }
    Ok(if converged { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The right-hand side of length n.
fn rhs(which: &str, n: usize) -> Result<Vec<f64>> {
    match which {
        "ones" => Ok(vec![1.0; n]),
        "random" => Ok(test_vector::<f64>(n)),
        file => {
            let v = spmv::io::read_matrix_market::<f64>(Path::new(file)).with_context(|| format!("--rhs {file}"))?;
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
    spec: &formats::FormatSpec,
    backend: &Backend,
    args: &SolveArgs,
    settings: &KrylovSettings,
    report: &mut Report,
) -> Result<bool> {
    let b: Vec<T> = b64.iter().map(|&v| T::from_f64(v)).collect();
    let m_inv = match args.precond.as_str() {
        "jacobi" => Some(jacobi(a)?),
        _ => None,
    };
    let start = std::time::Instant::now();
    let host = formats::build(spec, a)?;
    report.chosen = host.chosen();
    let solution: Solution<T> = match backend {
        Backend::Gpu(gpu) => {
            let device = host.upload(gpu)?;
            report.convert_ms = start.elapsed().as_secs_f64() * 1e3;
            cg_gpu(&device, &b, m_inv.as_deref(), settings)?
        }
        Backend::Cpu => {
            report.convert_ms = start.elapsed().as_secs_f64() * 1e3;
            match args.method.as_str() {
                "bicgstab" => bicgstab_host(&host, &b, m_inv.as_deref(), settings)?,
                _ => cg_host(&host, &b, m_inv.as_deref(), settings)?,
            }
        }
    };
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
    report.solve_ms = solution.ms;
    report.ms_per_iteration = solution.ms / solution.iterations.max(1) as f64;
    if let Some(path) = &args.output {
        write_array(path, &solution.x).with_context(|| path.display().to_string())?;
    }
    Ok(solution.converged())
}

/// x as a Matrix Market array file (one column; shortest decimal forms that read back exactly).
fn write_array<T: Scalar>(path: &Path, x: &[T]) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "%%MatrixMarket matrix array real general")?;
    writeln!(out, "% the solution of spmv solve")?;
    writeln!(out, "{} 1", x.len())?;
    for v in x {
        writeln!(out, "{}", v.to_f64())?;
    }
    out.flush()?;
    Ok(())
}
