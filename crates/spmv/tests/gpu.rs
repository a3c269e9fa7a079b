//! Every registered format on the GPU against the oracle, f64 and f32, on the edge cases
//! and every real matrix. Run on a CUDA machine with `--include-ignored`.

mod common;

use spmv::formats::registry;
use spmv::gpu::Gpu;
use spmv::reference::{test_vector, Oracle};
use spmv::{Csr, Error, Scalar};

fn check_all<T: Scalar>(gpu: &std::sync::Arc<Gpu>, matrices: &[(String, Csr<f64>)]) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, a64) in matrices {
        let a: Csr<T> = a64.cast();
        let x = test_vector::<T>(a.ncols());
        let oracle = Oracle::new(&a, &x);
        for info in registry::<T>() {
            let label = format!("{name} / {} / {}", info.name, T::SUFFIX);
            let format = match (info.build)(&a) {
                Ok(f) => f,
                // A format may refuse a matrix it cannot hold (the benchmark's "unsupported");
                // each format's unit tests check its own limits.
                Err(Error::Format { .. }) => continue,
                Err(e) => {
                    failures.push(format!("{label}: conversion failed: {e}"));
                    continue;
                }
            };
            let run = || -> spmv::Result<_> {
                let device = format.upload(gpu)?;
                let x_dev = gpu.upload(&x)?;
                let mut y_dev = gpu.alloc::<T>(a.nrows())?;
                gpu.fill(&mut y_dev, T::nan())?;
                device.spmv(&x_dev, &mut y_dev)?;
                let first = gpu.download(&y_dev)?;
                // A second run into a poisoned buffer must give a correct result again.
                gpu.fill(&mut y_dev, T::nan())?;
                device.spmv(&x_dev, &mut y_dev)?;
                Ok((first, gpu.download(&y_dev)?))
            };
            match run() {
                Ok((first, second)) => {
                    for (which, y) in [("first", first), ("second", second)] {
                        let check = oracle.check(&y);
                        if !check.passed() {
                            failures.push(format!("{label} ({which} run): {check:?}"));
                        }
                    }
                }
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    failures
}

fn gpu() -> std::sync::Arc<Gpu> {
    Gpu::detect().unwrap_or_else(|e| panic!("this test needs a CUDA device: {e}"))
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_formats_match_oracle_on_edge_cases_f64() {
    let f = check_all::<f64>(&gpu(), &common::edge_cases());
    assert!(f.is_empty(), "{} failures:\n{}", f.len(), f.join("\n"));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_formats_match_oracle_on_edge_cases_f32() {
    let f = check_all::<f32>(&gpu(), &common::edge_cases());
    assert!(f.is_empty(), "{} failures:\n{}", f.len(), f.join("\n"));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_formats_match_oracle_on_shared_matrices() {
    let gpu = gpu();
    let matrices = common::shared_matrices();
    let mut f = check_all::<f64>(&gpu, &matrices);
    f.extend(check_all::<f32>(&gpu, &matrices));
    assert!(f.is_empty(), "{} failures:\n{}", f.len(), f.join("\n"));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_rejects_wrong_vector_lengths() {
    let gpu = gpu();
    let a = common::edge_cases().into_iter().find(|(n, _)| n.starts_with("tall")).unwrap().1;
    for info in registry::<f64>() {
        let format = match (info.build)(&a) {
            Ok(f) => f,
            // A format may refuse the matrix (DIA: 4570 diagonals); its own tests check it.
            Err(Error::Format { .. }) => continue,
            Err(e) => panic!("{}: {e}", info.name),
        };
        let device = format.upload(&gpu).unwrap();
        let x = gpu.alloc::<f64>(a.ncols() + 1).unwrap();
        let mut y = gpu.alloc::<f64>(a.nrows()).unwrap();
        assert!(matches!(device.spmv(&x, &mut y), Err(Error::Format { .. })), "{}", info.name);
    }
}

#[test]
fn detection_without_cuda_is_an_error_not_a_panic() {
    match Gpu::detect() {
        Ok(gpu) => assert!(!gpu.name().is_empty()),
        Err(e) => assert!(matches!(e, Error::NoGpu(_)), "expected NoGpu, got {e}"),
    }
}
