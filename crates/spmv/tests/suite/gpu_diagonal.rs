//! The diagonal family (DIA, HDIA, HDC, DIA-Adaptive, DRM) on the GPU against the oracle,
//! f64 and f32: generated diagonal matrices (banded with scattered points, long broken
//! diagonals, large offsets, many diagonals), the edge cases and every real matrix they
//! accept; each result twice into a NaN-poisoned y, bitwise identical (the five are
//! registered as deterministic). Run on a CUDA machine with `--include-ignored`.

use crate::common;
use crate::common::diagonal;

use std::sync::Arc;

use spmv::formats::find;
use spmv::gpu::Gpu;
use spmv::reference::{test_vector, Oracle};
use spmv::{Csr, Error, Scalar};

/// Checks every diagonal format on `matrices`; returns the failures and how many
/// (matrix, format) pairs ran.
fn check_all<T: Scalar>(gpu: &Arc<Gpu>, matrices: &[(String, Csr<f64>)]) -> (Vec<String>, usize) {
    let (mut failures, mut ran) = (Vec::new(), 0);
    for (name, a64) in matrices {
        let a: Csr<T> = a64.cast();
        let x = test_vector::<T>(a.ncols());
        let oracle = Oracle::new(&a, &x);
        for format in diagonal::FORMATS {
            let info = find::<T>(format).unwrap();
            assert!(info.deterministic, "{format} is registered as deterministic");
            let label = format!("{name} / {format} / {}", T::SUFFIX);
            let f = match info.build(&a) {
                Ok(f) => f,
                Err(Error::Format { .. }) => continue, // refused: diagonal_cpu checks which
                Err(e) => {
                    failures.push(format!("{label}: conversion failed: {e}"));
                    continue;
                }
            };
            let run = || -> spmv::Result<_> {
                let device = f.upload(gpu)?;
                let x_dev = gpu.upload(&x)?;
                let mut y_dev = gpu.alloc::<T>(a.nrows())?;
                let mut ys = Vec::new();
                for _ in 0..2 {
                    gpu.fill(&mut y_dev, T::nan())?;
                    device.spmv(&x_dev, &mut y_dev)?;
                    ys.push(gpu.download(&y_dev)?);
                }
                Ok(ys)
            };
            ran += 1;
            match run() {
                Ok(ys) => {
                    for (which, y) in ys.iter().enumerate() {
                        let c = oracle.check(y);
                        if !c.passed() {
                            failures.push(format!("{label} (run {which}): {c:?}"));
                        }
                    }
                    let bits =
                        |y: &[T]| y.iter().map(|v| v.to_f64().to_bits()).collect::<Vec<u64>>();
                    if bits(&ys[0]) != bits(&ys[1]) {
                        failures.push(format!("{label}: the two runs differ"));
                    }
                }
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    (failures, ran)
}

/// The diagonal formats on `matrices` in f64 and f32; returns the (matrix, format) pairs
/// that ran in each precision.
fn check_both(matrices: &[(String, Csr<f64>)]) -> (usize, usize) {
    let gpu = common::gpu();
    let (mut failures, ran64) = check_all::<f64>(&gpu, matrices);
    let (f32_failures, ran32) = check_all::<f32>(&gpu, matrices);
    failures.extend(f32_failures);
    common::assert_clean(failures);
    (ran64, ran32)
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_diagonal_formats_match_the_oracle_on_generated_diagonal_matrices() {
    let all = diagonal::matrices();
    let dia_refuses = all.iter().filter(|m| !m.2).count();
    let matrices: Vec<(String, Csr<f64>)> = all.into_iter().map(|(name, a, _)| (name, a)).collect();
    // Every format on every matrix, but DIA on those with many scattered points.
    let expect = 5 * matrices.len() - dia_refuses;
    assert_eq!(check_both(&matrices), (expect, expect));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_diagonal_formats_match_the_oracle_on_edge_cases_and_shared_matrices() {
    let mut matrices = common::edge_cases();
    matrices.extend(common::shared_matrices().iter().cloned());
    let (ran, _) = check_both(&matrices);
    eprintln!("{ran} (matrix, format) pairs ran in f64 on {} matrices", matrices.len());
}
