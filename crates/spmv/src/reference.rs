//! The oracle every SpMV path is checked against: serial CSR SpMV whose products are
//! computed exactly (two-product with FMA) and summed with Neumaier's compensated sum in f64,
//! so its result is correctly rounded to f64 for all practical inputs.
//!
//! Checking uses a bound that holds for *any* summation order (sequential, tree, atomics):
//! a row of k terms summed in precision T with unit roundoff u has an error of at most
//! (k + 1)·u·Σ|a_ij·x_j| (Higham, Accuracy and Stability, §3.1). A result outside
//! (k + 2)·u·Σ|a_ij·x_j| is therefore a bug, never rounding; a missing or doubled entry, a
//! wrong column or an unwritten output (outputs are poisoned with NaN) lands far outside.
//! For f16 (sums in f32, y stored in f16) u is f32's, plus the one rounding of the store.

use rayon::prelude::*;

use crate::matrix::{Csr, Scalar};

/// The exact-as-possible product `A·x` and, per row, `Σ|a_ij·x_j|` (the scale of its error).
#[derive(Clone, Debug)]
pub struct Oracle {
    /// `A·x` per row, correctly rounded to f64 for all practical inputs.
    pub y: Vec<f64>,
    /// `Σ|a_ij·x_j|` per row, the scale of the row's rounding bound (∞ for non-finite terms).
    pub abs_sum: Vec<f64>,
    row_len: Vec<usize>,
}

/// Neumaier's compensated accumulator.
#[derive(Clone, Copy, Default)]
struct Compensated {
    sum: f64,
    carry: f64,
}

impl Compensated {
    #[inline]
    fn add(&mut self, v: f64) {
        let t = self.sum + v;
        if self.sum.abs() >= v.abs() {
            self.carry += (self.sum - t) + v;
        } else {
            self.carry += (v - t) + self.sum;
        }
        self.sum = t;
    }
    fn value(self) -> f64 {
        self.sum + self.carry
    }
}

/// Serial oracle for one row: exact products (value + FMA residual), compensated sum.
fn oracle_row<T: Scalar>(cols: &[u32], vals: &[T], x: &[T]) -> (f64, f64) {
    let mut acc = Compensated::default();
    let mut abs = 0.0f64;
    // Products that are not finite (non-finite inputs, allowed only on request) are summed
    // apart, plainly: inf + inf = inf, inf − inf = NaN in any order, and they decide the row.
    let mut non_finite: Option<f64> = None;
    for (&c, &v) in cols.iter().zip(vals) {
        let (a, b) = (v.to_f64(), x[c as usize].to_f64());
        let p = a * b;
        if !p.is_finite() {
            non_finite = Some(non_finite.unwrap_or(0.0) + p);
            abs = f64::INFINITY;
            continue;
        }
        acc.add(p);
        acc.add(a.mul_add(b, -p));
        abs += p.abs();
    }
    (non_finite.unwrap_or_else(|| acc.value()), abs)
}

/// The error of storing a sum of magnitude at most `s` from `T::Acc` into `T` (f16 from
/// f32: one rounding, relative or, near zero, absolute); none when they are one type.
fn store_error<T: Scalar>(s: f64) -> f64 {
    if T::PRECISION == <T::Acc as Scalar>::PRECISION {
        0.0
    } else {
        T::UNIT_ROUNDOFF * s + T::TINY
    }
}

impl Oracle {
    /// Computes the oracle serially, row by row (the reference definition).
    pub fn serial<T: Scalar>(a: &Csr<T>, x: &[T]) -> Self {
        assert_eq!(x.len(), a.ncols(), "x has the wrong length");
        let (y, abs_sum) = (0..a.nrows())
            .map(|r| {
                let (c, v) = a.row(r);
                oracle_row(c, v, x)
            })
            .unzip();
        Oracle { y, abs_sum, row_len: (0..a.nrows()).map(|r| a.row_len(r)).collect() }
    }

    /// The same numbers as [`Oracle::serial`], rows computed in parallel (each row is still
    /// summed serially, so the result is bit-identical).
    pub fn new<T: Scalar>(a: &Csr<T>, x: &[T]) -> Self {
        assert_eq!(x.len(), a.ncols(), "x has the wrong length");
        let (y, abs_sum) = (0..a.nrows())
            .into_par_iter()
            .map(|r| {
                let (c, v) = a.row(r);
                oracle_row(c, v, x)
            })
            .unzip();
        Oracle {
            y,
            abs_sum,
            row_len: (0..a.nrows()).into_par_iter().map(|r| a.row_len(r)).collect(),
        }
    }

    /// Why the exact `A·x` cannot be held in `T`, if it cannot: a row whose result, or the sum
    /// of its products' magnitudes, is not finite or beyond `T`'s largest value (a value or x
    /// entry that overflowed when rounded to `T`, or a sum past f16's ±65504). Such a
    /// matrix is unsupported in `T`, not computed wrong.
    pub fn range_error<T: Scalar>(&self) -> Option<String> {
        let r = (0..self.y.len())
            .find(|&r| !(self.y[r].abs() <= T::MAX && self.abs_sum[r] <= T::MAX))?;
        Some(format!(
            "row {r}: A·x = {:e} (sum of |a·x| {:e}) is outside the range of {} (±{:e})",
            self.y[r],
            self.abs_sum[r],
            T::SUFFIX,
            T::MAX
        ))
    }

    /// Compares a computed `y = A·x` (precision `T`, summed in `T::Acc`) with the oracle.
    pub fn check<T: Scalar>(&self, y: &[T]) -> Check {
        assert_eq!(y.len(), self.y.len(), "y has the wrong length");
        let u = <T::Acc as Scalar>::UNIT_ROUNDOFF;
        self.compare(y, |r| {
            let sum = (self.row_len[r] as f64 + 2.0) * u * self.abs_sum[r];
            (self.y[r], sum + store_error::<T>(self.y[r].abs() + sum))
        })
    }

    /// Compares a computed `y = α·A·x + β·y0` (precision `T`) with the oracle. The bound
    /// adds to the sum's (k + 2)·u·Σ|a·x|, scaled by |α|, three roundings of the final
    /// α·s + β·y0 (products and sum): 3·u·(|α|·Σ|a·x| + |β·y0|).
    pub fn check_scaled<T: Scalar>(&self, alpha: T, beta: T, y0: &[T], y: &[T]) -> Check {
        assert_eq!(y.len(), self.y.len(), "y has the wrong length");
        assert_eq!(y0.len(), self.y.len(), "y0 has the wrong length");
        let (u, a, b) = (<T::Acc as Scalar>::UNIT_ROUNDOFF, alpha.to_f64(), beta.to_f64());
        self.compare(y, |r| {
            let by0 = if b == 0.0 { 0.0 } else { b * y0[r].to_f64() };
            let bound = a.abs() * (self.row_len[r] as f64 + 5.0) * u * self.abs_sum[r]
                + 3.0 * u * by0.abs();
            let expected = a * self.y[r] + by0;
            // Formats without a scaled kernel store A·x in T first (a scratch vector), then
            // combine: two stores into T.
            let first_store = a.abs()
                * store_error::<T>(
                    self.y[r].abs() + self.abs_sum[r] * (self.row_len[r] as f64 + 2.0) * u,
                );
            let bound = bound + first_store;
            (expected, bound + store_error::<T>(expected.abs() + bound))
        })
    }

    /// Counts the rows where |y − expected| exceeds the bound; `row(r)` = (expected, bound).
    fn compare<T: Scalar>(&self, y: &[T], row: impl Fn(usize) -> (f64, f64) + Sync) -> Check {
        let per_row = |r: usize| {
            let (expected, bound) = row(r);
            let err = (y[r].to_f64() - expected).abs();
            // NaN compares false, so a poisoned or NaN output fails here. A row whose exact
            // result is not finite (non-finite inputs, read only when allowed) must give the
            // same infinity, or NaN for NaN, whatever the summation order.
            let ok = if expected.is_finite() {
                err <= bound
            } else {
                let v = y[r].to_f64();
                v == expected || (v.is_nan() && expected.is_nan())
            };
            // A non-finite exact result has no relative error: 0 when matched, ∞ when not
            // (|inf − inf| is NaN, and would report ∞ for a right answer).
            let rel = if !expected.is_finite() {
                if ok {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else if err == 0.0 {
                0.0
            } else if self.abs_sum[r] > 0.0 {
                err / self.abs_sum[r]
            } else {
                f64::INFINITY
            };
            (ok, if rel.is_nan() { f64::INFINITY } else { rel }, r)
        };
        let (failures, max_rel, worst) = (0..y.len())
            .into_par_iter()
            .map(per_row)
            .fold(
                || (0usize, 0.0f64, None),
                |(f, m, w), (ok, rel, r)| {
                    let f = f + usize::from(!ok);
                    if rel > m || (!ok && w.is_none()) {
                        (f, rel.max(m), Some(r))
                    } else {
                        (f, m, w)
                    }
                },
            )
            .reduce(
                || (0, 0.0, None),
                |a, b| {
                    let worst = if b.1 > a.1 || a.2.is_none() { b.2.or(a.2) } else { a.2 };
                    (a.0 + b.0, a.1.max(b.1), worst)
                },
            );
        Check { max_rel_error: max_rel, failed_rows: failures, worst_row: worst }
    }
}

/// The outcome of comparing one result with the oracle.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Check {
    /// max over rows of |y − y_oracle| / Σ|a_ij·x_j| (∞ for a wrong value in an all-zero row).
    pub max_rel_error: f64,
    /// Rows outside the rounding bound (k + 2)·u·Σ|a_ij·x_j|.
    pub failed_rows: usize,
    /// The row with the largest relative error (or the first failing row).
    pub worst_row: Option<usize>,
}

impl Check {
    /// No row outside the rounding bound.
    pub fn passed(&self) -> bool {
        self.failed_rows == 0
    }
}

/// A reproducible test vector x with entries in [-1, 1) that are exact in f32 and f64.
pub fn test_vector<T: Scalar>(n: usize) -> Vec<T> {
    test_vector_rows(0..n)
}

/// Entries `rows` of [`test_vector`] (of any length that holds them).
pub fn test_vector_rows<T: Scalar>(rows: std::ops::Range<usize>) -> Vec<T> {
    rows.map(|i| {
        // splitmix64 of the index, top 24 bits: exact in both precisions.
        let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        T::from_f64((z >> 40) as f64 / (1u64 << 23) as f64 - 1.0)
    })
    .collect()
}
