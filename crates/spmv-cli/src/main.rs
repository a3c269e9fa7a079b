//! `spmv`: benchmark, generate and inspect sparse matrices in every storage format.

mod pagerank;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use spmv::bench::inputs::{self, Input};
use spmv::bench::report::Report;
use spmv::bench::{Backend, Settings};
use spmv::formats::{self, FormatInfo};
use spmv::gpu::Gpu;
use spmv::{Csr, Precision, Scalar};

#[derive(Parser)]
#[command(name = "spmv", version, about = "Sparse matrix-vector multiplication formats on NVIDIA GPUs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Benchmark formats on matrices against the oracle and the copy roofline.
    Bench(BenchArgs),
    /// List the registered formats.
    Formats,
    /// Generate a matrix from a spec (see docs/generators.md) and write it.
    Gen {
        /// Generator spec, e.g. poisson3d:n=128 or kron:scale=20.
        spec: String,
        /// Output file, .mtx or .mtx.gz.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Print the shape and row-length statistics of matrices (files, folders or specs).
    Info {
        #[arg(required = true)]
        inputs: Vec<String>,
    },
    /// PageRank of graphs over any format, on the GPU or the CPU (see docs/pagerank.md).
    Pagerank(pagerank::PagerankArgs),
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Matrix files (.mtx, .mtx.gz), folders of them, or generator specs. None: the default set.
    inputs: Vec<String>,
    /// Comma-separated format names, or "all" (see `spmv formats`).
    #[arg(long, default_value = "all")]
    formats: String,
    /// Comma-separated precisions: f64, f32.
    #[arg(long, default_value = "f64")]
    precision: String,
    /// Timed repetitions per matrix and format (the median is reported).
    #[arg(long, default_value_t = 100)]
    reps: usize,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 10)]
    warmup: usize,
    /// Write the full results as JSON (schema: docs/bench.md).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Run on the CPU even when a GPU is present.
    #[arg(long)]
    cpu: bool,
    /// Keep only the formats whose GPU result is bitwise identical from run to run; naming
    /// one that is not with --formats is an error.
    #[arg(long)]
    deterministic: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => bench(args),
        Command::Formats => {
            for f in formats::registry::<f64>() {
                println!("{:<16} {}", f.name, f.description);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Gen { spec, output } => generate(&spec, &output),
        Command::Info { inputs } => info(&inputs),
        Command::Pagerank(args) => pagerank::run(args),
    };
    result.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        ExitCode::FAILURE
    })
}

fn generate(spec: &str, output: &std::path::Path) -> Result<ExitCode> {
    let a = spmv::io::gen::generate(spec)?;
    spmv::io::write_matrix_market(output, &a).with_context(|| format!("writing {}", output.display()))?;
    eprintln!("{spec}: {} x {}, {} entries -> {}", a.nrows(), a.ncols(), a.nnz(), output.display());
    Ok(ExitCode::SUCCESS)
}

fn info(args: &[String]) -> Result<ExitCode> {
    for input in inputs::resolve(args)? {
        let a = input.load().with_context(|| input.name())?;
        let empty = (0..a.nrows()).filter(|&r| a.row_len(r) == 0).count();
        println!(
            "{}: {} x {}, nnz {}, row length mean {:.2} max {}, empty rows {}",
            input.name(),
            a.nrows(),
            a.ncols(),
            a.nnz(),
            a.mean_row_len(),
            a.max_row_len(),
            empty
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_list(s: &str) -> Vec<String> {
    s.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

/// The registered formats named on the command line (all of them for "all").
fn select_formats<T: Scalar>(names: &[String]) -> Result<Vec<FormatInfo<T>>> {
    if names.iter().any(|n| n.eq_ignore_ascii_case("all")) {
        return Ok(formats::registry::<T>());
    }
    names.iter().map(|n| Ok(formats::find::<T>(n)?)).collect()
}

/// `--deterministic`: "all" becomes every deterministic format; a named format that is not
/// deterministic is an error.
fn deterministic_names(names: &[String]) -> Result<Vec<String>> {
    let deterministic: Vec<&str> = formats::deterministic_registry::<f64>().iter().map(|f| f.name).collect();
    if names.iter().any(|n| n.eq_ignore_ascii_case("all")) {
        return Ok(deterministic.iter().map(|n| n.to_string()).collect());
    }
    let refused: Vec<&str> = select_formats::<f64>(names)?.iter().filter(|f| !f.deterministic).map(|f| f.name).collect();
    if !refused.is_empty() {
        bail!(
            "--deterministic: {} may give different bits from run to run; deterministic formats: {}",
            refused.join(", "),
            deterministic.join(", ")
        );
    }
    Ok(names.to_vec())
}

fn bench(args: BenchArgs) -> Result<ExitCode> {
    let settings = Settings { warmup: args.warmup, reps: args.reps.max(1) };
    let precisions: Vec<Precision> = parse_list(&args.precision)
        .iter()
        .map(|p| p.parse().map_err(anyhow::Error::msg))
        .collect::<Result<_>>()?;
    let mut format_names = parse_list(&args.formats);
    // Fail on a bad format name before loading anything.
    select_formats::<f64>(&format_names)?;
    if args.deterministic {
        format_names = deterministic_names(&format_names)?;
    }
    let inputs = if args.inputs.is_empty() { inputs::default_set()? } else { inputs::resolve(&args.inputs)? };
    if inputs.is_empty() {
        bail!("no matrices to benchmark");
    }

    let backend = if args.cpu {
        eprintln!("running on the CPU (--cpu)");
        Backend::Cpu
    } else {
        match Gpu::detect() {
            Ok(gpu) => {
                eprintln!("running on the GPU: {} ({})", gpu.name(), gpu.arch());
                Backend::Gpu(gpu)
            }
            Err(e) => {
                eprintln!("{e}; running on the CPU instead");
                Backend::Cpu
            }
        }
    };
    let machine = backend.machine(&settings)?;
    let mut report = Report::new(machine, &settings);

    let total = (inputs.len() * precisions.len() * select_formats::<f64>(&format_names)?.len()) as u64;
    let bar = if std::io::stderr().is_terminal() { ProgressBar::new(total) } else { ProgressBar::hidden() };
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("valid template"));
    let mut load_failures = Vec::new();
    for input in &inputs {
        bar.set_message(format!("loading {}", input.name()));
        let a = match input.load() {
            Ok(a) => a,
            Err(e) => {
                bar.suspend(|| eprintln!("error: {}: {e}", input.name()));
                load_failures.push(input.name());
                bar.inc((precisions.len() * format_names.len()) as u64);
                continue;
            }
        };
        for &precision in &precisions {
            let results = match precision {
                Precision::F64 => run::<f64>(&backend, input, &a, &format_names, &settings, &report, &bar)?,
                Precision::F32 => run::<f32>(&backend, input, &a.cast(), &format_names, &settings, &report, &bar)?,
            };
            report.results.extend(results);
        }
    }
    bar.finish_and_clear();

    print!("{}", report.table());
    let baseline = match backend {
        Backend::Gpu(_) => "cusparse-alg1",
        Backend::Cpu => "csr-scalar",
    };
    print!("{}", report.summary_table(baseline));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("results written to {}", path.display());
    }
    let failed = report.failures().count() + load_failures.len();
    if failed > 0 {
        eprintln!("FAILED: {failed} result(s) wrong or not run (see the table)");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn run<T: Scalar>(
    backend: &Backend,
    input: &Input,
    a: &Csr<T>,
    names: &[String],
    settings: &Settings,
    report: &Report,
    bar: &ProgressBar,
) -> Result<Vec<spmv::bench::Measurement>> {
    let formats = select_formats::<T>(names)?;
    let name = input.name();
    Ok(backend.run_matrix(&name, a, &formats, settings, &report.machine, |m| {
        bar.set_message(format!("{} {} {}", m.matrix, m.format, m.precision));
        bar.inc(1);
    }))
}
