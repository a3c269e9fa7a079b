//! Fits `auto`'s model (crate::auto) to `spmv bench --precision f64 --json` runs of every
//! format (one or several: a format measured in several runs keeps the geometric mean of its
//! times) and writes the training table the library ships (`src/auto/h200-f64.json`).
//!
//! ```sh
//! # the shipped table (docs/auto.md)
//! cargo run --release -p spmv-lab --bin auto_fit -- --time graph \
//!     lab/results/auto-heldout-f64-run6.json.gz lab/results/auto-train-f64-1.json.gz \
//!     ../shared/matrices crates/spmv/src/auto/h200-f64.json
//! ```
//!
//! With `--time graph` first, a result's time is its CUDA-graph replay time (`graph_ms`: the
//! back-to-back products without the host's launch cost, steadier on products of a few µs;
//! docs/bench.md), or its host-issued back-to-back time where it has none.
//!
//! For every matrix of the run (files from the folder by name, generated ones from their
//! spec) it computes the features, keeps every format's back-to-back time, scores every `k` by
//! leave-one-out cross-validation (each matrix predicted by the others only) and prints the
//! cross-validated score of every `k`: the geometric mean over the matrices of the best time
//! over the chosen format's time (over all, and over the matrices of >= 5·10^4 entries, which
//! chooses `k`). Beside it, leave-one-family-out (each matrix predicted
//! without its whole family: a generator family, or a SuiteSparse group from the folder's
//! `MANIFEST.tsv`), per family and over all: the score of matrices unlike any it has seen.
//! Last, where the table of the other timing sits beside OUT (`h200-f64.json` graph,
//! `h200-f64-host.json` host-issued), that table's leave-one-out choices scored by this run's
//! times: what ranking by one timing costs a caller who sees the other. `AUTO_FIT_SHOW=A,B`
//! also prints the leave-one-out score and choice of the training matrices named A and B.
//!
//! ```sh
//! # the host-issued table
//! cargo run --release -p spmv-lab --bin auto_fit -- --time b2b \
//!     lab/results/auto-heldout-f64-run6.json.gz lab/results/auto-train-f64-1.json.gz \
//!     lab/results/auto-train-f64-families.json.gz ../shared/matrices \
//!     crates/spmv/src/auto/h200-f64-host.json
//! ```

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use rayon::prelude::*;
use spmv::auto::{Features, Model, Training, TrainingMatrix};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let graph = match args.first().map(String::as_str) {
        Some("--time") if args.len() > 1 => {
            let graph = args[1] == "graph";
            args.drain(..2);
            graph
        }
        _ => false,
    };
    let (benches, [folder, out]) = match args.len() {
        n if n >= 3 => (&args[..n - 2], [&args[n - 2], &args[n - 1]]),
        _ => {
            eprintln!(
                "usage: auto_fit [--time b2b|graph] BENCH.json[.gz]... MATRIX_FOLDER OUT.json"
            );
            std::process::exit(2);
        }
    };
    // Every run's back-to-back times; a format measured in several runs keeps the geometric
    // mean (on matrices of a few microseconds two measurements of one kernel differ by tens
    // of percent: averaging runs is the cheapest way to a less noisy table).
    // The first run's L2 is the one the size feature is measured against (the model's GPU);
    // every run's device is named in the table's source.
    let mut l2_bytes = None;
    let mut devices: Vec<String> = Vec::new();
    let mut logs: BTreeMap<String, HashMap<String, Vec<f64>>> = BTreeMap::new();
    for bench in benches {
        let mut text = String::new();
        let file = std::fs::File::open(bench).unwrap_or_else(|e| panic!("{bench}: {e}"));
        if bench.ends_with(".gz") {
            flate2::read::GzDecoder::new(file).read_to_string(&mut text).unwrap();
        } else {
            std::io::BufReader::new(file).read_to_string(&mut text).unwrap();
        }
        let report: serde_json::Value = serde_json::from_str(&text).unwrap();
        l2_bytes.get_or_insert(report["machine"]["l2_bytes"].as_f64().unwrap());
        let device = report["machine"]["name"].as_str().unwrap_or("?").to_string();
        if !devices.contains(&device) {
            devices.push(device);
        }
        for r in report["results"].as_array().unwrap() {
            // auto's and tune's own rows are choices, not candidates.
            let format = r["format"].as_str().unwrap();
            if r["status"] == "ok"
                && r["precision"] == "f64"
                && !spmv::choice::CHOOSERS.iter().any(|c| format.starts_with(c.name))
            {
                let t = r["graph_ms"]
                    .as_f64()
                    .filter(|_| graph)
                    .unwrap_or_else(|| r["back_to_back_ms"].as_f64().unwrap());
                logs.entry(r["matrix"].as_str().unwrap().to_string())
                    .or_default()
                    .entry(format.to_string())
                    .or_default()
                    .push(t.ln());
            }
        }
    }
    let times: BTreeMap<String, HashMap<String, f64>> = logs
        .into_iter()
        .map(|(m, formats)| {
            (
                m,
                formats
                    .into_iter()
                    .map(|(f, v)| (f, (v.iter().sum::<f64>() / v.len() as f64).exp()))
                    .collect(),
            )
        })
        .collect();
    let bench = benches.join(" ");
    let l2_bytes = l2_bytes.expect("at least one bench run");
    let device = devices.join(" and ");
    let matrices: Vec<TrainingMatrix> = times
        .into_par_iter()
        .map(|(name, times_ms)| {
            let a = if name.contains(':') {
                spmv::io::gen::generate(&name).unwrap()
            } else {
                let path = std::path::Path::new(folder).join(format!("{name}.mtx.gz"));
                spmv::io::read_matrix_market::<f64>(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            };
            TrainingMatrix { name, features: Features::of(&a, l2_bytes), times_ms }
        })
        .collect();
    let timing = if graph {
        "CUDA-graph replay (host-issued back-to-back where not capturable)"
    } else {
        "back-to-back"
    };
    let source = format!("{device}, {timing} f64 times of `spmv bench --formats all` from {bench}");
    let mut training = Training { source, l2_bytes, k: 1, matrices };
    let candidates: Vec<String> = {
        let mut c: Vec<String> =
            training.matrices.iter().flat_map(|m| m.times_ms.keys().cloned()).collect();
        c.sort();
        c.dedup();
        c
    };
    let candidates: Vec<&str> = candidates.iter().map(String::as_str).collect();
    let families = families(&training.matrices, folder);
    let model = Model::new(training.clone());
    // k is chosen by leave-one-out over the matrices of at least 5·10^4 entries: where a choice
    // costs real time (smaller products are launch-bound, their times noise), and the sizes
    // users bring.
    let large: Vec<bool> = training.matrices.iter().map(|m| m.features.nnz >= 5e4).collect();
    let large_geomean = |cv: &spmv::auto::CrossValidation| {
        let logs: Vec<f64> =
            cv.scores.iter().zip(&large).filter(|(_, &l)| l).map(|(s, _)| s.1.ln()).collect();
        (logs.iter().sum::<f64>() / logs.len().max(1) as f64).exp()
    };
    let mut best = None::<(f64, spmv::auto::CrossValidation)>;
    for k in [1, 2, 3, 5, 7, 10, 15, 20, 25, 30, 40] {
        let cv = model.cross_validate(&candidates, k, 1, None);
        let lofo = model.cross_validate(&candidates, k, 1, Some(&families));
        let score = large_geomean(&cv);
        println!(
            "k = {k:2}: cross-validated geomean {:.3} of the per-matrix best ({score:.3} on the {} of >= 5e4 entries), worst {:.3} ({}), {} of {} below 0.7; leave-one-family-out {:.3} ({:.3}), worst {:.3} ({})",
            cv.geomean, large.iter().filter(|&&l| l).count(), cv.worst, cv.worst_matrix, cv.below_70, cv.matrices, lofo.geomean, large_geomean(&lofo), lofo.worst, lofo.worst_matrix
        );
        if best.as_ref().is_none_or(|b| score > b.0) {
            best = Some((score, cv));
        }
    }
    let best = best.unwrap().1;
    println!(
        "chosen k = {} ({} matrices, {} candidate formats)",
        best.k,
        training.matrices.len(),
        candidates.len()
    );
    println!("below 0.7: {:?}", best.low);
    if let Ok(show) = std::env::var("AUTO_FIT_SHOW") {
        for s in best.scores.iter().filter(|s| show.split(',').any(|n| n == s.0)) {
            println!("SHOW {s:?}");
        }
    }
    // Per family at the chosen k: leave-one-out beside leave-one-family-out.
    let lofo = model.cross_validate(&candidates, best.k, 1, Some(&families));
    let mut by_family: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (i, family) in families.iter().enumerate() {
        let entry = by_family.entry(family).or_default();
        entry.0.push(best.scores[i].1.ln());
        entry.1.push(lofo.scores[i].1.ln());
    }
    let geomean = |v: &[f64]| (v.iter().sum::<f64>() / v.len() as f64).exp();
    println!(
        "family: matrices, leave-one-out, leave-one-family-out (geomean of the per-matrix best)"
    );
    for (family, (loo, lofo)) in &by_family {
        println!("  {family}: {}, {:.3}, {:.3}", loo.len(), geomean(loo), geomean(lofo));
    }
    println!(
        "leave-one-family-out at k = {}: geomean {:.3}, worst {:.3} ({}), {} below 0.7",
        best.k, lofo.geomean, lofo.worst, lofo.worst_matrix, lofo.below_70
    );
    // What `tune` would keep measuring the first few of the ranking, judged by the same times.
    for measured in [2, 3, 4, 6, 8] {
        let cv = model.cross_validate(&candidates, best.k, measured, None);
        println!(
            "tune measuring at most {measured} (stopping where the leader is clear): cross-validated geomean {:.3}, worst {:.3} ({}), {} below 0.7, {:.2} measured on average",
            cv.geomean, cv.worst, cv.worst_matrix, cv.below_70, cv.mean_measured
        );
    }
    // The shipped table of the other timing: its leave-one-out choices scored by these times
    // (does ranking by the caller's timing pay, against one ranking for both?).
    let other = if graph { "h200-f64-host.json" } else { "h200-f64.json" };
    let other = std::path::Path::new(out).with_file_name(other);
    if let Ok(text) = std::fs::read_to_string(&other) {
        let table: Training = serde_json::from_str(&text).unwrap();
        let k = table.k;
        let cv = Model::new(table).cross_validate(&candidates, k, 1, None);
        // This run's times and size class of each matrix, by name (the tables may differ in order).
        let mine: HashMap<&str, (&HashMap<String, f64>, bool)> = (training.matrices.iter())
            .zip(&large)
            .map(|(m, &l)| (m.name.as_str(), (&m.times_ms, l)))
            .collect();
        let rescored: Vec<(f64, bool)> = cv
            .scores
            .iter()
            .filter_map(|(name, _, chosen)| {
                let (t, large) = mine.get(name.as_str())?;
                let best = t.values().copied().fold(f64::INFINITY, f64::min);
                // A choice this run did not measure counts as cross_validate counts a decline.
                Some((t.get(chosen).map_or(0.1, |c| best / c), *large))
            })
            .collect();
        let geomean = |large_only: bool| {
            let logs: Vec<f64> =
                rescored.iter().filter(|s| !large_only || s.1).map(|s| s.0.ln()).collect();
            (logs.iter().sum::<f64>() / logs.len().max(1) as f64).exp()
        };
        println!(
            "{} (k = {k}): its leave-one-out choices scored by these times: geomean {:.3} ({:.3} on >= 5e4 entries), {} below 0.7",
            other.display(),
            geomean(false),
            geomean(true),
            rescored.iter().filter(|s| s.0 < 0.7).count()
        );
    }
    training.k = best.k;
    std::fs::write(out, serde_json::to_string(&training).unwrap()).unwrap();
}

/// Each training matrix's family: a generated matrix's generator family, a file's SuiteSparse
/// group from `MANIFEST.tsv` in the matrix folder (name, group, ...), else its own name.
fn families(matrices: &[TrainingMatrix], folder: &str) -> Vec<String> {
    let manifest = std::fs::read_to_string(std::path::Path::new(folder).join("MANIFEST.tsv"));
    let groups: HashMap<String, String> = manifest
        .iter()
        .flat_map(|text| text.lines().skip(1))
        .filter_map(|line| {
            let mut fields = line.split('\t');
            Some((fields.next()?.to_string(), fields.next()?.to_string()))
        })
        .collect();
    matrices
        .iter()
        .map(|m| match spmv::io::gen::parse_spec(&m.name) {
            Ok(spec) => spec.family().to_string(),
            Err(_) => groups.get(&m.name).cloned().unwrap_or_else(|| m.name.clone()),
        })
        .collect()
}
