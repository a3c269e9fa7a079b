//! Every format's CPU product on each matrix, timed interleaved, and `auto`'s CPU choice
//! scored against the fastest (issue 33's CPU target: `auto` ≥ 0.95 of the best CPU format,
//! never more than 5% slower than csr-vector).
//!
//! On a shared VM the same product's time moves by up to 2× between runs of `spmv bench`,
//! which measures one format after another; here every format of a matrix is built first and
//! the rounds visit them in turn (a round: each format's products for at least `--round-ms`,
//! in a fresh random order), so each format's median sees the same machine. `auto`'s choice
//! is made first (its own measurement is independent of these rounds) and its time is its
//! format's median here.
//!
//! ```text
//! cargo run --release -p spmv-lab --bin cpu_formats -- [--rounds 25] [--round-ms 1]
//!     [--formats all|a,b,...] [--min-nnz 50000] [--tune BUDGET_MS] MATRIX... > rows.jsonl
//! ```
//!
//! `--tune` also runs `tune` on the CPU (no cache) after `auto` and scores its choice the same
//! way; auto's and tune's choices are timed whether or not `--formats` names them.
//!
//! One JSON object per matrix on stdout (name, entries, auto's choice and the time it took
//! to choose, each format's median milliseconds); a summary on stderr.

use std::time::Instant;

use spmv::bench::median_min;
use spmv::formats::{self, FormatHandle, HostMatrix};
use spmv::io::inputs;
use spmv::reference::test_vector;

struct Args {
    rounds: usize,
    round_ms: f64,
    formats: Option<Vec<String>>,
    min_nnz: usize,
    /// Also run `tune` (no cache) with this budget and score its choice.
    tune_ms: Option<u64>,
    inputs: Vec<String>,
}

fn parse_args() -> Args {
    let mut args = Args {
        rounds: 25,
        round_ms: 1.0,
        formats: None,
        min_nnz: 0,
        tune_ms: None,
        inputs: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--rounds" => args.rounds = value().parse().expect("--rounds N"),
            "--round-ms" => args.round_ms = value().parse().expect("--round-ms MS"),
            "--min-nnz" => args.min_nnz = value().parse().expect("--min-nnz N"),
            "--tune" => args.tune_ms = Some(value().parse().expect("--tune BUDGET_MS")),
            "--formats" => {
                let v = value();
                if v != "all" {
                    args.formats = Some(v.split(',').map(str::to_string).collect());
                }
            }
            _ => args.inputs.push(a),
        }
    }
    args
}

/// A matrix's name, `auto`'s time over the best, csr-vector's over `auto`'s, `tune`'s over the best.
type Score = (String, f64, f64, Option<f64>);

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let args = parse_args();
    let names: Vec<String> = args.formats.clone().unwrap_or_else(|| {
        formats::registry::<f64>()
            .into_iter()
            .filter(|f| !f.library_baseline)
            .map(|f| f.name.to_string())
            .collect()
    });
    let mut scores: Vec<Score> = Vec::new();
    for input in inputs::resolve(&args.inputs).expect("inputs") {
        let name = input.name();
        let a = match input.load() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("{name}: {e}");
                continue;
            }
        };
        if a.nnz() < args.min_nnz {
            continue;
        }
        let t = Instant::now();
        let auto = spmv::auto::choose_cpu(&a).expect("auto on the CPU").spec().label();
        let choose_ms = ms_since(t);
        let t = Instant::now();
        let tune = args.tune_ms.map(|ms| {
            let budget = std::time::Duration::from_millis(ms);
            let options = spmv::auto::Options::default();
            let (host, _) =
                spmv::auto::tune_with_cache(&spmv::Backend::Cpu, &a, budget, options, None)
                    .expect("tune on the CPU");
            host.spec().label()
        });
        let tune_ms = ms_since(t);
        // The formats timed: the list, and auto's and tune's choices where it lacks them.
        let mut labels = names.clone();
        for chosen in std::iter::once(&auto).chain(&tune) {
            if !labels.contains(chosen) {
                labels.push(chosen.clone());
            }
        }
        let built: Vec<HostMatrix<f64>> = labels
            .iter()
            .filter_map(|n| formats::build(&formats::parse_spec(n).ok()?, &a).ok())
            .collect();
        let x = test_vector::<f64>(a.ncols());
        let mut y = vec![0.0; a.nrows()];
        // Warm-up, and each format's products per round.
        let reps: Vec<usize> = built
            .iter()
            .map(|h| {
                h.spmv(&x, &mut y).expect("product");
                let t = Instant::now();
                h.spmv(&x, &mut y).expect("product");
                ((args.round_ms / ms_since(t).max(1e-4)).ceil() as usize).clamp(1, 10_000)
            })
            .collect();
        let mut times = vec![Vec::new(); built.len()];
        let mut order: Vec<usize> = (0..built.len()).collect();
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..args.rounds {
            // A fresh order each round (Fisher–Yates, xorshift): no format always follows
            // the same one.
            for k in (1..order.len()).rev() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                order.swap(k, (seed % (k as u64 + 1)) as usize);
            }
            for &i in &order {
                let t = Instant::now();
                for _ in 0..reps[i] {
                    built[i].spmv(&x, &mut y).expect("product");
                }
                times[i].push(ms_since(t) / reps[i] as f64);
            }
        }
        let medians: Vec<(String, f64)> = built
            .iter()
            .zip(&mut times)
            .map(|(h, t)| (h.spec().label(), median_min(t).0))
            .collect();
        let best = medians.iter().map(|(_, t)| *t).fold(f64::INFINITY, f64::min);
        let best_name = medians.iter().find(|(_, t)| *t == best).map(|(n, _)| n.clone());
        let of = |label: &str| medians.iter().find(|(n, _)| n == label).map(|(_, t)| *t);
        let (auto_ms, csr_ms) = (of(&auto), of("csr-vector"));
        let tune_of_best = tune.as_deref().and_then(of).map(|t| best / t);
        if let (Some(auto_ms), Some(csr_ms)) = (auto_ms, csr_ms) {
            scores.push((name.clone(), best / auto_ms, csr_ms / auto_ms, tune_of_best));
        }
        let row = serde_json::json!({
            "matrix": name,
            "nnz": a.nnz(),
            "auto": auto,
            "choose_ms": choose_ms,
            "best": best_name,
            "auto_of_best": auto_ms.map(|t| best / t),
            "auto_over_csr_vector": auto_ms.zip(csr_ms).map(|(t, c)| c / t),
            "tune": tune,
            "tune_cost_ms": tune.as_ref().map(|_| tune_ms),
            "tune_of_best": tune_of_best,
            "median_ms": medians.iter().map(|(n, t)| (n.clone(), serde_json::json!(t))).collect::<serde_json::Map<_, _>>(),
        });
        println!("{row}");
        eprintln!(
            "{name}: auto {auto} {:.3} of the best ({}), {:.3}× csr-vector's speed, chose in {choose_ms:.1} ms",
            auto_ms.map_or(f64::NAN, |t| best / t),
            best_name.unwrap_or_default(),
            auto_ms.zip(csr_ms).map_or(f64::NAN, |(t, c)| c / t),
        );
    }
    if !scores.is_empty() {
        let geo = |f: &dyn Fn(&Score) -> f64| {
            (scores.iter().map(|s| f(s).ln()).sum::<f64>() / scores.len() as f64).exp()
        };
        let below =
            |v: f64| scores.iter().filter(|s| s.1 < v).map(|s| s.0.as_str()).collect::<Vec<_>>();
        let slower = scores.iter().filter(|s| s.2 < 0.95).map(|s| s.0.as_str()).collect::<Vec<_>>();
        eprintln!(
            "{} matrices: auto {:.3} of the best (geomean), below 0.8: {:?}; {:.3}× csr-vector's speed, >5% slower than csr-vector: {:?}",
            scores.len(),
            geo(&|s| s.1),
            below(0.8),
            geo(&|s| s.2),
            slower
        );
        let tuned: Vec<f64> = scores.iter().filter_map(|s| s.3).collect();
        if !tuned.is_empty() {
            let geo = (tuned.iter().map(|v| v.ln()).sum::<f64>() / tuned.len() as f64).exp();
            let below = tuned.iter().filter(|v| **v < 0.9).count();
            eprintln!("tune: {geo:.3} of the best (geomean), {below} below 0.9");
        }
    }
}
