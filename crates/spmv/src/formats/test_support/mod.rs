//! Helpers shared by the formats' unit tests (the diagonal family's example matrix and
//! random diagonal matrices among them).

use proptest::prelude::*;

use super::SpmvFormat;
use crate::reference::{test_vector, Oracle};
use crate::{Coo, Csr, Scalar};

/// What the formats' tests share, for `use crate::formats::test_support::prelude::*;` beside
/// `use super::*;` and their family's helpers (`rows::*`, `blocks::*` or `diagonal::*`).
pub(crate) mod prelude {
    pub(crate) use super::{cpu_matches_oracle, random_csr, small_csr};
    pub(crate) use proptest::prelude::*;
}

/// A small CSR matrix written out in a test (valid by the test's word: panics otherwise).
pub(crate) fn small_csr(
    (nrows, ncols): (usize, usize), row_ptr: &[usize], cols: &[u32], vals: &[f64],
) -> Csr<f64> {
    Csr::new_checked(nrows, ncols, row_ptr.to_vec(), cols.to_vec(), vals.to_vec()).unwrap()
}

/// The format's CPU product on a NaN-poisoned output passes the oracle's check.
pub(crate) fn cpu_matches_oracle<T: Scalar>(f: &dyn SpmvFormat<T>, a: &Csr<T>) -> bool {
    let x = test_vector::<T>(a.ncols());
    let mut y = vec![T::nan(); a.nrows()];
    f.spmv_cpu(&x, &mut y);
    Oracle::new(a, &x).check(&y).passed()
}

/// Random small CSR matrices: 0–59 rows and columns (zero dimensions included), up to 400
/// triplets at random positions (repeats summed, so rows range from empty to dense), values
/// multiples of 1/4.
pub(crate) fn random_csr() -> impl Strategy<Value = Csr<f64>> {
    (0usize..60, 0usize..60)
        .prop_flat_map(|(m, n)| {
            let entry = (0..m.max(1) as u32, 0..n.max(1) as u32, -4i32..5);
            (Just(m), Just(n), prop::collection::vec(entry, 0..if m * n == 0 { 1 } else { 400 }))
        })
        .prop_map(|(m, n, entries)| {
            let entries: Vec<_> = entries.into_iter().filter(|_| m * n > 0).collect();
            let rows = entries.iter().map(|e| e.0).collect();
            let cols = entries.iter().map(|e| e.1).collect();
            let vals = entries.iter().map(|e| e.2 as f64 / 4.0).collect();
            Coo::new_checked(m, n, rows, cols, vals).unwrap().to_csr()
        })
}

/// The example matrix of the diagonal family, drawn in [`dia`](super::dia)'s module doc
/// (8 x 8, 18 entries numbered 1..=18 in row order, 4 diagonals).
pub(crate) fn example() -> Csr<f64> {
    let entries: [(u32, u32); 18] = [
        (0, 0),
        (1, 1),
        (2, 2),
        (2, 3),
        (3, 3),
        (3, 4),
        (4, 2),
        (4, 4),
        (4, 5),
        (4, 7),
        (5, 3),
        (5, 5),
        (5, 6),
        (6, 4),
        (6, 6),
        (6, 7),
        (7, 5),
        (7, 7),
    ];
    let rows = entries.iter().map(|e| e.0).collect();
    let cols = entries.iter().map(|e| e.1).collect();
    Coo::new_checked(8, 8, rows, cols, (1..=18).map(f64::from).collect()).unwrap().to_csr()
}

/// `y = A·x` of the example for x = [1, 10, 100, ...]: every entry identifiable.
pub(crate) fn example_product() -> (Vec<f64>, Vec<f64>) {
    let x: Vec<f64> = (0..8).map(|i| 10f64.powi(i)).collect();
    let a = example();
    let mut y = vec![0.0; 8];
    a.spmv_serial(&x, &mut y);
    (x, y)
}

/// Random sparse matrices plus a few diagonals: mostly diagonal structure, any shape.
pub(crate) fn random_diagonal_csr() -> impl Strategy<Value = Csr<f64>> {
    (0usize..90, 0usize..90)
        .prop_flat_map(|(m, n)| {
            let diagonal = (-(m as i64)..n.max(1) as i64, 0.0f64..1.0);
            let stray = (0..m.max(1) as u32, 0..n.max(1) as u32, -4i32..5);
            (
                Just(m),
                Just(n),
                prop::collection::vec(diagonal, 0..5),
                prop::collection::vec(stray, 0..30),
            )
        })
        .prop_map(|(m, n, diagonals, strays)| {
            let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
            if m * n > 0 {
                for (k, &(d, keep)) in diagonals.iter().enumerate() {
                    for r in 0..m as i64 {
                        let c = r + d;
                        // Keep a pseudo-random subset: broken diagonals.
                        let h = ((r as u64 + 1 + 1000 * k as u64)
                            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                            >> 40) as f64
                            / (1u64 << 24) as f64;
                        if (0..n as i64).contains(&c) && h < keep.max(0.3) {
                            rows.push(r as u32);
                            cols.push(c as u32);
                            vals.push((k as f64 + 1.0) * 0.25 + r as f64 / 64.0);
                        }
                    }
                }
                for &(r, c, v) in &strays {
                    rows.push(r);
                    cols.push(c);
                    vals.push(v as f64 / 4.0);
                }
            }
            Coo::new_checked(m, n, rows, cols, vals).unwrap().to_csr()
        })
}

// Helpers shared by one family's tests (each file is owned by that family).
pub(crate) mod blocks;
pub(crate) mod diagonal;
pub(crate) mod rows;
