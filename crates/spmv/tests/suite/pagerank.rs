//! PageRank over every registered format: on the CPU against the exact ranking, and on the
//! GPU (tests marked ignored, run with `--include-ignored` on a CUDA machine) against
//! hand-computed ranks, the CPU, the exact ranking, and itself (deterministic formats).

use crate::common;

use std::sync::Arc;

use spmv::formats::registry;
use spmv::gpu::Gpu;
use spmv::solve::pagerank::{
    pagerank, pagerank_exact, top_k_agreement, EdgeWeights, PageRank, Settings, Transition,
};
use spmv::{Coo, Csr, Error, Scalar};

fn graph(n: usize, edges: &[(u32, u32)]) -> Csr<f64> {
    let rows = edges.iter().map(|e| e.0).collect();
    let cols = edges.iter().map(|e| e.1).collect();
    Coo::new_checked(n, n, rows, cols, vec![1.0; edges.len()]).unwrap().to_csr()
}

/// Small graphs and their ranks worked out by hand (α = 0.85; see the unit tests of
/// `solve::pagerank` for the derivations).
fn hand_computed() -> Vec<(&'static str, Csr<f64>, Vec<f64>)> {
    let (a, c) = (0.85f64, 0.15f64);
    let r2 = (3.0 - c * (2.0 + a / 2.0)) / (1.0 + 2.0 * a / 3.0 + a * a / 6.0);
    let r0 = a * r2 / 3.0 + c;
    let r1 = a * (r0 / 2.0 + r2 / 3.0) + c;
    let h = (4.0 * a * c + c) / (1.0 - a * a);
    vec![
        ("cycle", graph(3, &[(0, 1), (1, 2), (2, 0)]), vec![1.0; 3]),
        ("dangling node", graph(3, &[(0, 1), (0, 2), (1, 2)]), vec![r0, r1, r2]),
        ("star", graph(5, &[(1, 0), (2, 0), (3, 0), (4, 0), (0, 1)]), vec![h, a * h + c, c, c, c]),
        ("no edges", Csr::zeros(4, 4), vec![1.0; 4]),
        ("empty", Csr::zeros(0, 0), vec![]),
    ]
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// The failure of a run in `format` that did not converge to the exact ranks: the same top
/// 100 (up to ties) and every rank within 1e-8.
fn differs_from_exact(format: &str, r: &PageRank<f64>, exact: &[f64]) -> Option<String> {
    let agreement = top_k_agreement(exact, &r.scores(), 100, 1e-9);
    let err = max_abs_diff(&r.ranks, exact);
    (!r.converged || agreement.same_position_up_to_ties != 100 || err > 1e-8)
        .then(|| format!("{format}: converged {}, {agreement:?}, max error {err:e}", r.converged))
}

fn generated(spec: &str) -> Transition {
    let a = spmv::io::gen::generate(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    Transition::new(&a, EdgeWeights::Pattern).unwrap()
}

#[test]
fn every_format_on_the_cpu_gives_the_exact_top_100_of_wiki_vote() {
    // wiki-Vote is in the repository's default bench set (data/matrices).
    let file = common::named_matrix_file("wiki-Vote").expect("data/matrices/wiki-Vote.mtx.gz");
    let a = spmv::io::read_matrix_market::<f64>(&file).unwrap();
    let t = Transition::new(&a, EdgeWeights::Pattern).unwrap();
    assert_eq!((t.nodes(), t.edges()), (8297, 103689));
    let exact = pagerank_exact(&t, 0.85, 1e-13, 5000).unwrap();
    assert!(exact.converged);
    let settings = Settings { tol: 1e-11, ..Settings::default() };
    let mut failures = Vec::new();
    for info in registry::<f64>() {
        let format = match info.build(t.matrix()) {
            Ok(f) => f,
            Err(Error::Format { .. }) => continue,
            Err(e) => panic!("{}: {e}", info.name),
        };
        let r = pagerank(&format, &t, &settings).unwrap();
        failures.extend(differs_from_exact(info.name, &r, &exact.ranks));
    }
    common::assert_clean(failures);
}

/// PageRank on the GPU with `format` built from Gᵀ in precision T, or None if the format
/// declines the matrix.
fn on_gpu<T: Scalar>(
    gpu: &Arc<Gpu>, format: &str, t: &Transition, s: &Settings,
) -> Option<spmv::Result<PageRank<T>>> {
    let info = spmv::formats::find::<T>(format).unwrap();
    let host = match info.build(&t.matrix().cast::<T>()) {
        Ok(f) => f,
        Err(Error::Format { .. }) => return None,
        Err(e) => return Some(Err(e)),
    };
    Some(host.upload(gpu).and_then(|d| pagerank(&d, t, s)))
}

/// A GPU test that lists its failures: `test` gets the GPU and the list, which must stay
/// empty.
fn assert_clean_on_gpu(test: impl FnOnce(&Arc<Gpu>, &mut Vec<String>)) {
    let gpu = common::gpu();
    let mut failures = Vec::new();
    test(&gpu, &mut failures);
    common::assert_clean(failures);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_every_format_gives_the_hand_computed_ranks() {
    assert_clean_on_gpu(|gpu, failures| {
        let settings = Settings { tol: 1e-14, ..Settings::default() };
        for (name, a, want) in hand_computed() {
            let t = Transition::new(&a, EdgeWeights::Pattern).unwrap();
            for info in registry::<f64>() {
                match on_gpu::<f64>(gpu, info.name, &t, &settings) {
                    None => {}
                    Some(Ok(r))
                        if r.converged
                            && max_abs_diff(&r.ranks, &want) <= 1e-12
                            && r.ranks.len() == want.len() => {}
                    Some(other) => failures.push(format!("{name} / {}: {other:?}", info.name)),
                }
                // f32: ranks to f32 rounding (a tolerance near it; the fixed point may stall above).
                match on_gpu::<f32>(
                    gpu,
                    info.name,
                    &t,
                    &Settings { tol: 1e-7, ..Settings::default() },
                ) {
                    None => {}
                    Some(Ok(r))
                        if max_abs_diff(&r.scores(), &want) <= 1e-5
                            && r.ranks.len() == want.len() => {}
                    Some(other) => {
                        failures.push(format!("{name} / {} / f32: {other:?}", info.name))
                    }
                }
            }
        }
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_agrees_with_the_cpu() {
    assert_clean_on_gpu(|gpu, failures| {
        let settings = Settings::default();
        for spec in ["powerlaw:n=200000,mean=8,exp=2.1", "kron:scale=16"] {
            let t = generated(spec);
            for format in ["csr-vector", "lightspmv"] {
                let info = spmv::formats::find::<f64>(format).unwrap();
                let cpu = pagerank(&info.build(t.matrix()).unwrap(), &t, &settings).unwrap();
                let g = on_gpu::<f64>(gpu, format, &t, &settings).unwrap().unwrap();
                let err = max_abs_diff(&g.ranks, &cpu.ranks);
                let agreement = top_k_agreement(&cpu.scores(), &g.scores(), 100, 1e-9);
                if !g.converged
                    || g.iterations.abs_diff(cpu.iterations) > 1
                    || err > 1e-9
                    || agreement.same_position_up_to_ties != 100
                {
                    failures.push(format!(
                        "{spec} / {format} f64: iterations GPU {} CPU {}, max diff {err:e}, {agreement:?}",
                        g.iterations, cpu.iterations
                    ));
                }
                // f32 may stall above the tolerance (hubs' ranks are large): cap the iterations.
                let settings32 = Settings { max_iter: 300, ..settings.clone() };
                let info32 = spmv::formats::find::<f32>(format).unwrap();
                let cpu32 =
                    pagerank(&info32.build(&t.matrix().cast()).unwrap(), &t, &settings32).unwrap();
                let g32 = on_gpu::<f32>(gpu, format, &t, &settings32).unwrap().unwrap();
                let scale = cpu32.scores().iter().fold(1.0f64, |m, v| m.max(*v));
                let err32 = max_abs_diff(&g32.scores(), &cpu32.scores());
                if err32 > 1e-4 * scale {
                    failures.push(format!(
                        "{spec} / {format} f32: max diff {err32:e} (largest rank {scale})"
                    ));
                }
            }
        }
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_every_format_gives_the_exact_top_100() {
    assert_clean_on_gpu(|gpu, failures| {
        let t = generated("powerlaw:n=100000,mean=8,exp=2.1");
        let exact = pagerank_exact(&t, 0.85, 1e-13, 5000).unwrap();
        let settings = Settings { tol: 1e-11, ..Settings::default() };
        for info in registry::<f64>() {
            match on_gpu::<f64>(gpu, info.name, &t, &settings) {
                None => {}
                Some(Ok(r)) => failures.extend(differs_from_exact(info.name, &r, &exact.ranks)),
                Some(Err(e)) => failures.push(format!("{}: {e}", info.name)),
            }
        }
    });
}

/// Whether three runs in precision T (those the format does not decline) give the same ranks,
/// bit for bit, in the same number of iterations.
fn repeats<T: Scalar>(
    gpu: &Arc<Gpu>, format: &str, t: &Transition, s: &Settings,
) -> spmv::Result<bool> {
    let runs =
        (0..3).filter_map(|_| on_gpu::<T>(gpu, format, t, s)).collect::<spmv::Result<Vec<_>>>()?;
    let bits = |r: &PageRank<T>| r.ranks.iter().map(|v| v.to_f64().to_bits()).collect::<Vec<_>>();
    Ok(runs.windows(2).all(|w| bits(&w[0]) == bits(&w[1]) && w[0].iterations == w[1].iterations))
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_deterministic_formats_repeat_the_ranks_bit_for_bit() {
    assert_clean_on_gpu(|gpu, failures| {
        let t = generated("kron:scale=16");
        let settings = Settings { max_iter: 200, ..Settings::default() };
        for info in registry::<f64>().into_iter().filter(|f| f.deterministic) {
            let runs = [
                ("f64", repeats::<f64>(gpu, info.name, &t, &settings)),
                ("f32", repeats::<f32>(gpu, info.name, &t, &settings)),
            ];
            for (precision, repeated) in runs {
                match repeated {
                    Ok(true) => {}
                    Ok(false) => failures.push(format!("{} {precision}: runs differ", info.name)),
                    Err(e) => failures.push(format!("{} {precision}: {e}", info.name)),
                }
            }
        }
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_checking_every_k_iterations_stops_on_a_multiple_of_k() {
    let gpu = common::gpu();
    let t = generated("powerlaw:n=50000,mean=8,exp=2.1");
    let every = on_gpu::<f64>(&gpu, "lightspmv", &t, &Settings::default()).unwrap().unwrap();
    let sparse =
        on_gpu::<f64>(&gpu, "lightspmv", &t, &Settings { check_every: 7, ..Settings::default() })
            .unwrap()
            .unwrap();
    assert!(every.converged && sparse.converged);
    assert_eq!(sparse.iterations % 7, 0);
    assert!(sparse.iterations >= every.iterations && sparse.iterations < every.iterations + 7);
    assert!(max_abs_diff(&sparse.ranks, &every.ranks) < 1e-4);
    // max_iter not a multiple of k: the last iteration is checked too.
    let capped = on_gpu::<f64>(
        &gpu,
        "lightspmv",
        &t,
        &Settings { check_every: 7, max_iter: 10, ..Settings::default() },
    )
    .unwrap()
    .unwrap();
    assert_eq!((capped.iterations, capped.converged), (10, false));
    assert!(capped.residual.is_finite() && capped.residual > 0.0);
}
