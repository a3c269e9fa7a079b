//! Shared test helpers of the formats (see mod.rs).
//!
//! The block family's (BRC, BRCP, TEB, PBC, AMF-CSR): the TEB paper's example matrix and
//! its product, matrices of very different row lengths, the products of matrices without
//! entries, and the GPU check of a format's specs on the family's test matrices.

use super::rows::{gpu, gpu_failures, random_rows};
use crate::formats::SpmvFormat;
use crate::{Coo, Csr};

/// Matrix A of the TEB paper's Fig. 1, drawn in TEB's module doc (PBC and AMF-CSR use it
/// too).
pub(crate) fn paper_matrix() -> Csr<f64> {
    #[rustfmt::skip]
    let entries: [(u32, u32, f64); 16] = [
        (0, 2, 2.0), (0, 6, 1.0), (0, 7, 8.0),
        (1, 0, 3.0),
        (2, 3, 6.0), (2, 7, 9.0),
        (3, 0, 6.0), (3, 1, 7.0),
        (4, 6, 2.0),
        (5, 4, 5.0), (5, 5, 8.0),
        (6, 4, 6.0),
        (7, 0, 5.0), (7, 5, 4.0), (7, 6, 2.0), (7, 7, 1.0),
    ];
    let (rows, cols, vals) = (
        entries.map(|e| e.0).to_vec(),
        entries.map(|e| e.1).to_vec(),
        entries.map(|e| e.2).to_vec(),
    );
    Coo::new_checked(8, 8, rows, cols, vals).unwrap().to_csr()
}

/// Checks `f`'s CPU product: `x` into a NaN-poisoned y gives exactly `want`.
#[track_caller]
pub(crate) fn assert_cpu_product(f: &dyn SpmvFormat<f64>, x: &[f64], want: &[f64]) {
    let mut y = vec![f64::NAN; want.len()];
    f.spmv_cpu(x, &mut y);
    assert_eq!(y, want);
}

/// Checks `f`'s CPU product of [`paper_matrix`]: x = [1, 10, 100, ..., 1e7] gives each row's
/// entries as digits at their columns.
#[track_caller]
pub(crate) fn assert_paper_product(f: &dyn SpmvFormat<f64>) {
    let x = [1.0, 10.0, 100.0, 1000.0, 1e4, 1e5, 1e6, 1e7];
    assert_cpu_product(
        f,
        &x,
        &[81_000_200.0, 3.0, 90_006_000.0, 76.0, 2e6, 850_000.0, 60_000.0, 12_400_005.0],
    );
}

/// Rows of very different lengths (mostly short, a few long, some empty), deterministic.
pub(crate) fn varied(m: usize, n: usize, seed: u64) -> Csr<f64> {
    random_rows(m, n, seed, |rng| match rng.below(100) {
        0..=14 => 0,
        15..=69 => rng.below(6),
        70..=96 => rng.below(40),
        _ => rng.below(1500),
    })
}

/// Builds a format with `build` (which checks the format's own figures) from matrices
/// without entries: no rows, no columns, one row, a tall one. Each one's CPU product of x = 1
/// into a NaN-poisoned y must be all zeros.
#[track_caller]
pub(crate) fn assert_empty_products<F: SpmvFormat<f32>>(build: impl Fn(&Csr<f32>) -> F) {
    for (m, n) in [(0, 0), (0, 5), (5, 0), (1, 1), (70, 3)] {
        let f = build(&Csr::zeros(m, n));
        let mut y = vec![f32::NAN; m];
        f.spmv_cpu(&vec![1.0; n], &mut y);
        assert!(y.iter().all(|&v| v == 0.0), "{m} x {n}: {y:?}");
    }
}

/// The GPU test of a block format: on [`paper_matrix`], a [`varied`] matrix and a tall one,
/// every spec that `specs` lists for the matrix, in f64 and f32, three runs each, must pass
/// the oracle and give the same bits every run (see [`gpu_failures`]).
pub(crate) fn assert_gpu_matches_oracle(specs: impl Fn(&Csr<f64>) -> Vec<String>) {
    let gpu = gpu();
    let mut failures = Vec::new();
    for (name, a) in [
        ("paper", paper_matrix()),
        ("varied", varied(5003, 4000, 1)),
        ("tall", varied(40000, 500, 5)),
    ] {
        failures.extend(
            gpu_failures(&gpu, &a, &specs(&a), 3).into_iter().map(|f| format!("{name}, {f}")),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
