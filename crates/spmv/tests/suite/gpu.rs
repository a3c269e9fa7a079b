//! Every registered format on the GPU against the oracle, f64, f32 and (the formats that run
//! in it) f16, on the edge cases and every real matrix: y = A·x into a NaN-poisoned y (twice), and y = α·A·x + β·y for
//! α, β ∈ {0, 1, −2.5}. Run on a CUDA machine with `--include-ignored`.

use crate::common;

use std::sync::Arc;

use spmv::formats::registry;
use spmv::gpu::Gpu;
use spmv::reference::{test_vector, Oracle};
use spmv::{Csr, Error, FormatHandle, Scalar};

fn check_all<T: Scalar>(gpu: &Arc<Gpu>, matrices: &[(String, Csr<f64>)]) -> Vec<String> {
    let mut failures = Vec::new();
    for common::ProductCase { name, a, x, y0, oracle } in common::product_cases::<T>(matrices) {
        for info in registry::<T>() {
            let label = format!("{name} / {} / {}", info.name, T::SUFFIX);
            let format = match info.build(&a) {
                Ok(f) => f,
                // A format may refuse a matrix it cannot hold (the benchmark's "unsupported");
                // each format's unit tests check its own limits.
                Err(Error::Format { .. }) => continue,
                Err(e) => {
                    failures.push(format!("{label}: conversion failed: {e}"));
                    continue;
                }
            };
            let run = || -> spmv::Result<Vec<String>> {
                let mut bad = Vec::new();
                let device = format.upload(gpu)?;
                let x_dev = gpu.upload(&x)?;
                let y0_dev = gpu.upload(&y0)?;
                let mut y_dev = gpu.alloc::<T>(a.nrows())?;
                // y = A·x twice into a poisoned y: a second run must be right again.
                for run in ["first", "second"] {
                    gpu.fill(&mut y_dev, T::nan())?;
                    device.spmv(&x_dev, &mut y_dev)?;
                    let check = oracle.check(&gpu.download(&y_dev)?);
                    if !check.passed() {
                        bad.push(format!("{label} ({run} run): {check:?}"));
                    }
                }
                for (alpha, beta) in common::alpha_beta::<T>() {
                    // β = 0 must not read y: poison it; otherwise start from y0.
                    if beta == T::ZERO {
                        gpu.fill(&mut y_dev, T::nan())?;
                    } else {
                        gpu.stream().memcpy_dtod(&y0_dev, &mut y_dev)?;
                    }
                    device.apply(alpha, &x_dev, beta, &mut y_dev)?;
                    let check = oracle.check_scaled(alpha, beta, &y0, &gpu.download(&y_dev)?);
                    if !check.passed() {
                        bad.push(format!("{label} (α = {alpha}, β = {beta}): {check:?}"));
                    }
                }
                Ok(bad)
            };
            match run() {
                Ok(bad) => failures.extend(bad),
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    failures
}

/// Every format on `matrices` in f64, f32 and f16.
fn check_both(matrices: &[(String, Csr<f64>)]) {
    let sweeps = [check_all::<f64>, check_all::<f32>, check_all::<spmv::f16>];
    common::assert_clean(common::in_each_precision(&common::gpu(), matrices, sweeps));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_formats_match_oracle_on_edge_cases() {
    check_both(&common::edge_cases());
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_formats_match_oracle_on_shared_matrices() {
    check_both(common::shared_matrices());
}

/// CSR5 converted on the GPU gives the same bits as CSR5 converted on the host, on every
/// shared matrix and edge case, in f64 and f32, and records its conversion time.
#[test]
#[ignore = "needs a CUDA device"]
fn csr5_converted_on_the_gpu_equals_csr5_converted_on_the_host() {
    fn check<T: Scalar>(gpu: &Arc<Gpu>, name: &str, a: &Csr<f64>) -> spmv::Result<Option<String>> {
        let a: Csr<T> = a.cast();
        if a.nrows() == 0 {
            return Ok(None);
        }
        let x = test_vector::<T>(a.ncols());
        let mut outputs = Vec::new();
        for spec in ["csr5", "csr5:convert=gpu"] {
            let host = spmv::formats::build(&spmv::formats::parse_spec(spec)?, &a)?;
            if spec.ends_with("gpu") && host.upload(gpu)?.conversion_ms().is_none() {
                return Ok(Some(format!("{name} {}: no conversion time recorded", T::SUFFIX)));
            }
            outputs.push(
                common::gpu_product(gpu, &host, &x)?
                    .iter()
                    .map(|v| v.to_f64().to_bits())
                    .collect::<Vec<_>>(),
            );
        }
        Ok((outputs[0] != outputs[1])
            .then(|| format!("{name} {}: the two conversions give different bits", T::SUFFIX)))
    }
    let gpu = common::gpu();
    let mut failures = Vec::new();
    for (name, a) in common::edge_cases().iter().chain(common::shared_matrices()) {
        for outcome in [check::<f64>(&gpu, name, a), check::<f32>(&gpu, name, a)] {
            match outcome {
                Ok(failure) => failures.extend(failure),
                Err(Error::Format { .. }) => {}
                Err(e) => failures.push(format!("{name}: {e}")),
            }
        }
    }
    common::assert_clean(failures);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_rejects_wrong_vector_lengths() {
    let gpu = common::gpu();
    let a = common::edge_cases().into_iter().find(|(n, _)| n.starts_with("tall")).unwrap().1;
    for info in registry::<f64>() {
        let format = match info.build(&a) {
            Ok(f) => f,
            // A format may refuse the matrix; its own tests check it.
            Err(Error::Format { .. }) => continue,
            Err(e) => panic!("{}: {e}", info.name),
        };
        let device = format.upload(&gpu).unwrap();
        let x = gpu.alloc::<f64>(a.ncols() + 1).unwrap();
        let mut y = gpu.alloc::<f64>(a.nrows()).unwrap();
        let e = device.apply(2.0, &x, 1.0, &mut y).unwrap_err();
        assert!(
            matches!(e, Error::Shape(_)) && e.to_string().contains(info.name),
            "{}: {e}",
            info.name
        );
        let x = gpu.alloc::<f64>(a.ncols()).unwrap();
        let mut y = gpu.alloc::<f64>(a.nrows() - 1).unwrap();
        assert!(matches!(device.spmv(&x, &mut y), Err(Error::Shape(_))), "{}", info.name);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_matrix_reports_what_it_holds_and_serves_two_threads() {
    let gpu = common::gpu();
    let a = common::edge_cases().into_iter().find(|(n, _)| n.starts_with("varied")).unwrap().1;
    let spec = spmv::formats::parse_spec("sell-c-sigma:c=64,sigma=128").unwrap();
    let host = spmv::formats::build(&spec, &a).unwrap();
    let device = host.upload(&gpu).unwrap();
    assert_eq!((device.nrows(), device.ncols(), device.nnz()), (a.nrows(), a.ncols(), a.nnz()));
    assert_eq!(device.spec().to_string(), "sell-c-sigma:c=64,sigma=128,offsets=auto");
    assert!(device.device_bytes() >= device.stats().bytes && device.stats().nnz == a.nnz());
    // One handle shared by two threads, each with its own vectors: both results are right.
    let x = test_vector::<f64>(a.ncols());
    let oracle = Oracle::new(&a, &x);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let x_dev = gpu.upload(&x).unwrap();
                let mut y_dev = gpu.alloc::<f64>(a.nrows()).unwrap();
                for _ in 0..20 {
                    device.apply(-2.5, &x_dev, 0.0, &mut y_dev).unwrap();
                }
                let y = gpu.download(&y_dev).unwrap();
                assert!(oracle.check_scaled(-2.5, 0.0, &vec![0.0; y.len()], &y).passed());
            });
        }
    });
}

#[test]
fn detection_without_cuda_is_an_error_not_a_panic() {
    match Gpu::detect() {
        Ok(gpu) => assert!(!gpu.name().is_empty()),
        Err(e) => assert!(matches!(e, Error::NoGpu(_)), "expected NoGpu, got {e}"),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn out_of_memory_is_an_error_that_can_be_matched() {
    let gpu = common::gpu();
    let e = gpu.alloc::<u8>(1 << 50).unwrap_err(); // 1 PiB
    assert!(e.is_out_of_memory(), "{e}");
    assert!(e.to_string().contains("MiB"), "the message says how much was asked: {e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn back_to_back_timing_gives_one_mean_per_round() {
    let gpu = common::gpu();
    let a = common::edge_cases().into_iter().find(|(n, _)| n.starts_with("varied")).unwrap().1;
    let device = registry::<f64>()[1].build(&a).unwrap().upload(&gpu).unwrap();
    let x = gpu.upload(&test_vector::<f64>(a.ncols())).unwrap();
    let mut y = gpu.alloc::<f64>(a.nrows()).unwrap();
    let means = gpu.time_back_to_back(3, 50, || device.spmv(&x, &mut y)).unwrap();
    assert_eq!(means.len(), 3);
    assert!(means.iter().all(|&t| t > 0.0 && t < 100.0), "{means:?}");
}
