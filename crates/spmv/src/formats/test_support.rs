//! Helpers shared by the formats' unit tests.

use proptest::prelude::*;

use super::SpmvFormat;
use crate::reference::{test_vector, Oracle};
use crate::{Coo, Csr, Scalar};

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
