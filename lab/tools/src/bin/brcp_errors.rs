//! The BRCP paper's error experiment (its §3.2): y = A·1 in each format, against the exact
//! result, on the GPU (on the CPU when there is none).
//!
//! ```text
//! cargo run --release -p spmv-lab --bin brcp_errors -- [INPUTS...] [--formats brc,brcp,...]
//!     [--precision f32,f64] [--values file|pagerank] [--runs N] [--json FILE]
//! ```
//! INPUTS are Matrix Market files, folders of them or generator specs, as for `spmv bench`.
//! `--values file` multiplies the matrix as stored (a pattern matrix has ones, so A·1 counts
//! entries: exact in every order); `--values pagerank` multiplies PageRank's matrix Gᵀ of the
//! graph instead (G[i][j] = 1 / out-degree of i for every stored entry (i, j)), whose sums
//! round. The matrix is cast to the precision first, so the exact result `μ` (the oracle:
//! exact products, compensated f64 sum) measures the summation alone.
//!
//! Per matrix × format × precision, over `--runs` runs (default 10) of the same upload, each
//! into a NaN-poisoned y, with μ_i ≠ 0 rows only:
//! - max and mean of |y_i − μ_i| / |μ_i| (run 0);
//! - the paper's RE = Σ_i (y_i − μ_i) / μ_i (its eq. 4; signed, so errors may cancel), for
//!   run 0 and its smallest and largest value over the runs;
//! - `differing rows`: rows whose bits are not the same in every run (0 for a
//!   deterministic format);
//! - `inexact rows`: rows of run 0 that differ from μ rounded to the precision.

use std::path::PathBuf;

use spmv::bench::Status;
use spmv::io::inputs;
use spmv::reference::Oracle;
use spmv::{Backend, Coo, Csr, Matrix, Scalar};

const USAGE: &str = "usage: brcp_errors [INPUTS...] [--formats LIST] [--precision f32,f64] \
                     [--values file|pagerank] [--runs N] [--json FILE]";

struct Args {
    inputs: Vec<String>,
    formats: Vec<String>,
    precisions: Vec<String>,
    pagerank: bool,
    runs: usize,
    json: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        inputs: Vec::new(),
        formats: ["brc", "brcp", "lightspmv", "cusparse-alg1"].map(String::from).to_vec(),
        precisions: vec!["f32".into(), "f64".into()],
        pagerank: false,
        runs: 10,
        json: None,
    };
    let list =
        |s: String| s.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--formats" => args.formats = list(value()?),
            "--precision" => args.precisions = list(value()?),
            "--values" => {
                args.pagerank = match value()?.as_str() {
                    "file" => false,
                    "pagerank" => true,
                    other => return Err(format!("--values: 'file' or 'pagerank', not '{other}'")),
                }
            }
            "--runs" => args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--json" => args.json = Some(PathBuf::from(value()?)),
            "-h" | "--help" => return Err(USAGE.into()),
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}\n{USAGE}")),
            _ => args.inputs.push(arg),
        }
    }
    if args.inputs.is_empty() {
        return Err(USAGE.into());
    }
    args.runs = args.runs.max(1);
    Ok(args)
}

/// PageRank's matrix Gᵀ: entry (j, i) = 1 / (entries of row i) for every entry (i, j) of `a`.
fn pagerank_matrix(a: &Csr<f64>) -> Csr<f64> {
    let coo = a.to_coo();
    let vals = coo.rows().iter().map(|&r| 1.0 / a.row_len(r as usize) as f64).collect();
    Coo::new_checked(a.ncols(), a.nrows(), coo.cols().to_vec(), coo.rows().to_vec(), vals)
        .expect("the transpose of a valid matrix is valid")
        .to_csr()
}

#[derive(serde::Serialize)]
struct Outcome {
    matrix: String,
    format: String,
    precision: String,
    nrows: usize,
    nnz: usize,
    status: Status,
    error: Option<String>,
    runs: usize,
    /// Rows left out of the relative errors: μ_i = 0.
    zero_rows: usize,
    max_rel_error: f64,
    mean_rel_error: f64,
    re_sum: f64,
    re_sum_min: f64,
    re_sum_max: f64,
    differing_rows: usize,
    inexact_rows: usize,
}

/// (max, mean, signed sum) of (y_i − μ_i) / μ_i over the rows with μ_i ≠ 0.
fn errors<T: Scalar>(y: &[T], exact: &[f64]) -> (f64, f64, f64) {
    let (mut max, mut abs_sum, mut signed, mut rows) = (0.0f64, 0.0, 0.0, 0usize);
    for (v, &mu) in y.iter().zip(exact) {
        if mu != 0.0 {
            let rel = (v.to_f64() - mu) / mu;
            max = max.max(rel.abs());
            abs_sum += rel.abs();
            signed += rel;
            rows += 1;
        }
    }
    (max, if rows == 0 { 0.0 } else { abs_sum / rows as f64 }, signed)
}

/// `runs` results of y = A·1 in the format `spec` (each into a NaN-filled y).
fn products<T: Scalar>(
    backend: &Backend, spec: &str, a: &Csr<T>, runs: usize,
) -> spmv::Result<Vec<Vec<T>>> {
    let op = Matrix::from_csr(a.clone()).to_device(backend, spec)?;
    let ones = vec![T::ONE; a.ncols()];
    (0..runs)
        .map(|_| {
            let mut y = vec![T::nan(); a.nrows()];
            op.spmv(&ones, &mut y)?;
            Ok(y)
        })
        .collect()
}

fn measure<T: Scalar>(
    backend: &Backend, name: &str, a64: &Csr<f64>, formats: &[String], runs: usize,
) -> Vec<Outcome> {
    let a: Csr<T> = a64.cast();
    let exact = Oracle::new(&a, &vec![T::ONE; a.ncols()]).y;
    let zero_rows = exact.iter().filter(|&&mu| mu == 0.0).count();
    formats
        .iter()
        .map(|format| {
            let mut o = Outcome {
                matrix: name.into(),
                format: format.clone(),
                precision: T::SUFFIX.into(),
                nrows: a.nrows(),
                nnz: a.nnz(),
                status: Status::Ok,
                error: None,
                runs,
                zero_rows,
                max_rel_error: f64::NAN,
                mean_rel_error: f64::NAN,
                re_sum: f64::NAN,
                re_sum_min: f64::NAN,
                re_sum_max: f64::NAN,
                differing_rows: 0,
                inexact_rows: 0,
            };
            match products(backend, format, &a, runs) {
                Err(e) => {
                    o.status = Status::of_error(&e);
                    o.error = Some(e.to_string());
                }
                Ok(ys) => {
                    (o.max_rel_error, o.mean_rel_error, o.re_sum) = errors(&ys[0], &exact);
                    let sums: Vec<f64> = ys.iter().map(|y| errors(y, &exact).2).collect();
                    o.re_sum_min = sums.iter().copied().fold(f64::INFINITY, f64::min);
                    o.re_sum_max = sums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let bits = |v: &T| v.to_f64().to_bits();
                    o.differing_rows = (0..a.nrows())
                        .filter(|&r| ys.iter().any(|y| bits(&y[r]) != bits(&ys[0][r])))
                        .count();
                    o.inexact_rows = ys[0]
                        .iter()
                        .zip(&exact)
                        .filter(|(v, &mu)| v.to_f64() != T::from_f64(mu).to_f64())
                        .count();
                    if ys[0].iter().any(|v| v.to_f64().is_nan()) {
                        o.status = Status::Wrong;
                    }
                }
            }
            o
        })
        .collect()
}

fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let inputs = match inputs::resolve(&args.inputs) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let backend = Backend::detect();
    eprintln!("running on the {}", backend.describe());
    let mut outcomes = Vec::new();
    println!(
        "| matrix | format | prec | max rel err | mean rel err | RE (run 0) | RE min..max over {} runs | differing rows | inexact rows |",
        args.runs
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for input in &inputs {
        let name = input.name();
        let a = match input.load() {
            Ok(a) if args.pagerank => pagerank_matrix(&a),
            Ok(a) => a,
            Err(e) => {
                eprintln!("error: {name}: {e}");
                continue;
            }
        };
        for precision in &args.precisions {
            let found = match precision.as_str() {
                "f64" => measure::<f64>(&backend, &name, &a, &args.formats, args.runs),
                "f32" => measure::<f32>(&backend, &name, &a, &args.formats, args.runs),
                other => {
                    eprintln!("unknown precision '{other}' (f32, f64)");
                    return std::process::ExitCode::FAILURE;
                }
            };
            for o in &found {
                if o.status != Status::Ok {
                    println!(
                        "| {name} | {} | {} | {}: {} | | | | | |",
                        o.format,
                        o.precision,
                        o.status.as_str(),
                        o.error.as_deref().unwrap_or("")
                    );
                } else {
                    println!(
                        "| {name} | {} | {} | {:.3e} | {:.3e} | {:.4e} | {:.4e} .. {:.4e} | {} | {} |",
                        o.format,
                        o.precision,
                        o.max_rel_error,
                        o.mean_rel_error,
                        o.re_sum,
                        o.re_sum_min,
                        o.re_sum_max,
                        o.differing_rows,
                        o.inexact_rows
                    );
                }
            }
            outcomes.extend(found);
        }
    }
    if let Some(path) = &args.json {
        let report = serde_json::json!({
            "device": backend.describe(),
            "values": if args.pagerank { "pagerank" } else { "file" },
            "runs": args.runs,
            "results": outcomes,
        });
        if let Err(e) =
            std::fs::write(path, serde_json::to_string_pretty(&report).expect("serializable"))
        {
            eprintln!("error: writing {}: {e}", path.display());
            return std::process::ExitCode::FAILURE;
        }
        eprintln!("results written to {}", path.display());
    }
    std::process::ExitCode::SUCCESS
}
