//! `spmv explain`: why `auto` chooses what it chooses for a matrix (docs/auto.md).

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use spmv::auto::{self, Features, Model};
use spmv::io::inputs;
use spmv::{Csr, FormatHandle, Precision, Scalar};

#[derive(clap::Args)]
pub struct ExplainArgs {
    /// Matrix files (.mtx, .mtx.gz), folders of them, or generator specs.
    #[arg(required = true)]
    inputs: Vec<String>,
    /// The precision the choice is for: f64, f32 or f16.
    #[arg(long, default_value = "f64")]
    precision: String,
    /// Choose among the deterministic formats only.
    #[arg(long)]
    deterministic: bool,
    /// The timing the choice is for: host (products issued one by one, as a loop of
    /// `apply` runs them) or graph (CUDA-graph replay, as `spmv solve` runs its iterations).
    #[arg(long, default_value = "host", value_parser = ["host", "graph"])]
    timing: String,
    /// How many candidates to list.
    #[arg(long, default_value_t = 8)]
    top: usize,
    /// Also measure the first candidates on the GPU (or the CPU) and keep the fastest, as
    /// `auto::tune` does; the answer is cached (docs/auto.md).
    #[arg(long)]
    tune: bool,
    /// Time budget of --tune in milliseconds (the first candidate is always measured).
    #[arg(long, default_value_t = 2000)]
    budget_ms: u64,
    /// With --tune: measure on the CPU even when a GPU is present.
    #[arg(long)]
    cpu: bool,
}

pub fn run(args: ExplainArgs) -> Result<ExitCode> {
    let precision = crate::select::precisions(&args.precision)?;
    let backend = if args.tune { Some(crate::select::backend(args.cpu)) } else { None };
    for input in inputs::resolve(&args.inputs)? {
        let a = input.load().with_context(|| spmv::error::printable_name(&input.name()))?;
        for p in &precision {
            let text = match p {
                Precision::F64 => explain::<f64>(&input.name(), &a, &args, backend.as_ref()),
                Precision::F32 => explain::<f32>(&input.name(), &a.cast(), &args, backend.as_ref()),
                Precision::F16 => {
                    explain::<spmv::f16>(&input.name(), &a.cast(), &args, backend.as_ref())
                }
            }?;
            print!("{text}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn explain<T: Scalar>(
    name: &str, a: &Csr<T>, args: &ExplainArgs, backend: Option<&spmv::Backend>,
) -> Result<String> {
    let timing = if args.timing == "graph" { auto::Timing::Graph } else { auto::Timing::Host };
    let model = Model::h200(timing);
    let k = model.training.k;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {} ({}): {} x {}, {} entries",
        spmv::error::printable_name(name),
        T::SUFFIX,
        a.nrows(),
        a.ncols(),
        a.nnz()
    );
    let t = Instant::now();
    let f = Features::of(a, model.training.l2_bytes);
    let features_ms = t.elapsed().as_secs_f64() * 1e3;
    let _ = writeln!(
        s,
        "features ({features_ms:.2} ms): mean row {:.2}, row cv {:.2}, max/mean {:.1}, empty rows {:.1}%, diagonal fill {:.1}, column spread {:.3}, size {:.2}x L2, distinct values {:.1}%",
        f.mean_row,
        f.row_cv,
        f.max_over_mean,
        100.0 * f.empty_rows,
        f.diagonal_fill,
        f.col_spread,
        f.size_over_l2,
        100.0 * f.distinct_values
    );
    let near: Vec<String> =
        model.neighbours(&f, 5).into_iter().map(|(n, d)| format!("{n} ({d:.2})")).collect();
    let _ = writeln!(
        s,
        "nearest measured matrices (of {}; distance): {}",
        model.training.matrices.len(),
        near.join(", ")
    );
    let t = Instant::now();
    let options =
        auto::Options { deterministic: args.deterministic, held_out: false, timing: Some(timing) };
    let ranking = options.rank::<T>(&f);
    let rank_ms = t.elapsed().as_secs_f64() * 1e3;
    // choose_with ranks again (cheap) and converts: its time is the conversion's.
    let t = Instant::now();
    let (_, choice) = auto::choose_with(a, f, options)?;
    let convert_ms = t.elapsed().as_secs_f64() * 1e3 - rank_ms;
    debug_assert_eq!(ranking, choice.ranking);
    let best_ms = model.estimate_best_ms(&f, k);
    let _ = writeln!(
        s,
        "candidates ({} formats{}; {} time predicted relative to the best of the {k} nearest, and estimated on the H200; ranked by the prediction and each one's worst neighbour):",
        choice.ranking.len(),
        if args.deterministic { ", deterministic only" } else { "" },
        if timing == auto::Timing::Graph { "CUDA-graph replay" } else { "host-issued" }
    );
    for (i, (format, rel)) in choice.ranking.iter().take(args.top).enumerate() {
        let _ =
            writeln!(s, "  {:>2}. {format:<16} {rel:>6.2}x  ~{:.1} us", i + 1, rel * best_ms * 1e3);
    }
    for (format, why) in &choice.declined {
        let _ = writeln!(s, "  declined: {format}: {why}");
    }
    let predicted_ms =
        choice.ranking.iter().find(|(f, _)| *f == choice.chosen).map_or(1.0, |r| r.1) * best_ms;
    let _ = writeln!(
        s,
        "chosen: {} (the first of the ranking that accepts the matrix; features and ranking {:.2} ms)\nconversion: {:.2} ms on this host = about {:.0} products at the estimated {:.1} us on the H200",
        choice.chosen,
        features_ms + rank_ms,
        convert_ms.max(0.0),
        convert_ms.max(0.0) / predicted_ms,
        predicted_ms * 1e3
    );
    let _ = writeln!(
        s,
        "{}",
        confidence_lines(model, &f, &choice.chosen, args.budget_ms, predicted_ms)
    );
    let on_cpu = auto::choose_cpu(a)?.spec().label();
    let _ = writeln!(
        s,
        "on the CPU backend: {on_cpu} (the faster of {} raced on this machine, not this ranking; docs/auto.md)\n",
        auto::cpu_candidates(a).join(", ")
    );
    if let Some(backend) = backend {
        let t = Instant::now();
        let (_, tuned) =
            auto::tune(backend, a, std::time::Duration::from_millis(args.budget_ms), options)?;
        let how = if tuned.cached {
            "from the cache".to_string()
        } else {
            format!("measured in {:.0} ms", t.elapsed().as_secs_f64() * 1e3)
        };
        let _ = writeln!(
            s,
            "tune ({how}; per product, back to back on the GPU, a timed loop on the CPU):"
        );
        for (format, ms) in &tuned.measured {
            let _ = writeln!(s, "  {format:<24} {:>10.1} us", ms * 1e3);
        }
        let _ = writeln!(s, "tuned choice: {}\n", tuned.chosen);
    }
    Ok(s)
}

/// The choice's confidence (how the chosen format fared on the neighbours its prediction rests
/// on) and whether `tune` is worth its cost for this matrix.
fn confidence_lines(
    model: &Model, f: &Features, chosen: &str, budget_ms: u64, predicted_ms: f64,
) -> String {
    let k = model.training.k;
    let c = model.confidence(f, chosen, k);
    let mut s = match c.range() {
        Some((lo, hi)) => format!(
            "confidence: on the {k} nearest measured matrices {chosen} ran at {lo:.2}–{hi:.2}x their best (the fastest on {}{}): {}",
            c.best_on(),
            match c.declined() {
                0 => String::new(),
                d => format!(", did not run on {d}"),
            },
            if c.tune_worth() { "the neighbours disagree" } else { "they agree" }
        ),
        None => format!("confidence: none of the {k} nearest measured matrices ran {chosen}"),
    };
    let products = budget_ms as f64 / predicted_ms.max(1e-6);
    let cost = format!(
        "it costs up to its budget ({budget_ms} ms, --budget-ms: about {products:.0} products at the estimated time) once per matrix, then its cache"
    );
    s.push('\n');
    s.push_str(&if c.tune_worth() {
        format!("tune: worth it for a matrix used for many products; {cost}")
    } else {
        let hi = c.range().map_or(1.0, |r| r.1);
        format!(
            "tune: unlikely to gain more than {:.0}% (the worst neighbour's loss with this choice); {cost}",
            100.0 * (1.0 - 1.0 / hi)
        )
    });
    s
}
