//! HYB (Bell & Garland 2009): the first K entries of every row in ELL, the rest in COO.
//!
//! ```text
//!     | 1 . 2 . |      with K = 2:
//! A = | . . . . |      ELL part (m = 4):  row_len = [2, 0, 2, 1]
//!     | 3 4 5 . |                         col = [0, 0, 0, 1,   2, 0, 1, 1]
//!     | . 6 . . |                         val = [1, 0, 3, 6,   2, 0, 4, 0]
//!                      COO part:          rows = [2], cols = [2], vals = [5]
//! ```
//! **Width rule** (Bell & Garland, as in CUSP's `compute_optimal_entries_per_row`): K is the
//! largest k such that at least max(4096, m/3) rows have ≥ k entries — ELL pays off for a
//! column of slots while at least a third of the rows fill it and there are enough of them
//! (4096) to occupy the GPU; K = 0 (all COO) when fewer than max(4096, m/3) rows are
//! non-empty, e.g. every matrix under 4096 rows. It is computed from a histogram of the row
//! lengths. Since at least m/3 rows have ≥ K entries, m·K ≤ 3·nnz: the ELL part stays within
//! ELL's padding limit by construction; K is still capped by
//! [`ell`]'s limit (ratio 20, 16 GiB), so no input makes it allocate more.
//!
//! The GPU runs two kernels of the modules it shares with `ell` and `coo-atomic` (HYB has
//! no `kernel.cu` of its own): the ELL kernel writes every `y[r]` (the sum of the row's
//! first K entries; 0 for an empty row), then a COO atomic kernel adds the rest. That
//! kernel (`coo_atomic_warp`) is `coo-atomic`'s with the atomics aggregated per warp: the
//! 32 lanes of a warp hold 32 consecutive COO entries, add up each row's entries among them
//! with shuffles, and the row's first lane does one `atomicAdd`. The COO part is where the
//! long rows of a skewed matrix go, and one atomic per entry on the same `y[row]` would
//! serialise them (Bell & Garland's own COO kernel is a segmented reduction for the same
//! reason). The atomics still make the result order-dependent when a row's COO entries
//! span more than one warp. The CPU path does the same sums with the two modules' CPU code.

mod gpu;

use super::coo::{self, Triplets};
use super::ell::{self, Ell};
use super::{auto_or, FormatStats, SpmvFormat};
use super::{FormatInfo, Param};
use crate::error::Result;
use crate::matrix::{Csr, Scalar};

/// Bell & Garland's break-even row count: ELL needs at least this many rows per slot column.
pub const BREAKEVEN_ROWS: usize = 4096;
/// Bell & Garland's relative speed of ELL over COO: a slot column needs ≥ m/3 rows.
pub const RELATIVE_SPEED: usize = 3;

/// The Bell & Garland width for rows of lengths `lens`: the largest k such that at least
/// max(4096, m/3) rows have ≥ k entries (0 when no k ≥ 1 qualifies).
pub fn bell_garland_width(lens: &[usize]) -> usize {
    let m = lens.len();
    let longest = lens.iter().copied().max().unwrap_or(0);
    let mut histogram = vec![0usize; longest + 1];
    for &l in lens {
        histogram[l] += 1;
    }
    let mut at_least = m; // rows with ≥ k entries, for k = 0
    for k in 1..=longest {
        at_least -= histogram[k - 1];
        if at_least < BREAKEVEN_ROWS || RELATIVE_SPEED * at_least < m {
            return k - 1;
        }
    }
    longest
}

/// HYB's ELL part obeys ELL's default padding limit.
const LIMIT: f64 = ell::PADDING_LIMIT_RATIO as f64;

/// A matrix split into an ELL part of width K and a COO part.
pub struct Hyb<T> {
    nnz: usize,
    ell: Ell<T>,
    coo: Triplets<T>,
    max_row_len: usize,
    mean_row_len: f64,
}

impl<T: Scalar> Hyb<T> {
    /// K by [`bell_garland_width`], capped by ELL's padding limit.
    pub fn new(a: &Csr<T>) -> Result<Self> {
        let lens: Vec<usize> = (0..a.nrows()).map(|r| a.row_len(r)).collect();
        let want = bell_garland_width(&lens);
        let width =
            ell::max_width_within_limit(a.nrows(), want, a.nnz(), std::mem::size_of::<T>(), LIMIT);
        Self::with_width(a, width)
    }

    /// A given width (checked against ELL's padding limit).
    pub fn with_width(a: &Csr<T>, width: usize) -> Result<Self> {
        coo::check_rows("hyb", a.nrows())?;
        ell::check_padding("hyb", a.nrows(), width, a.nnz(), std::mem::size_of::<T>(), LIMIT)?;
        Ok(Hyb {
            nnz: a.nnz(),
            ell: Ell::truncated(a, width),
            coo: Triplets::from_csr_tail(a, width),
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
        })
    }

    /// K, the entries per row in the ELL part.
    pub fn width(&self) -> usize {
        self.ell.width()
    }
    /// The ELL part: the first K entries of every row.
    pub fn ell(&self) -> &Ell<T> {
        &self.ell
    }
    /// The COO part: every row's entries after its first K.
    pub fn coo(&self) -> &Triplets<T> {
        &self.coo
    }
    fn bytes(&self) -> usize {
        self.ell.bytes() + self.coo.bytes()
    }
}

impl<T: Scalar> SpmvFormat<T> for Hyb<T> {
    fn stats(&self) -> FormatStats {
        let stored = self.ell.stored() + self.coo.len();
        FormatStats::new(self.bytes(), self.nnz, stored, self.max_row_len, self.mean_row_len).with(
            [
                ("ell_width", self.width() as f64),
                ("ell_entries", (self.nnz - self.coo.len()) as f64),
                ("coo_entries", self.coo.len() as f64),
            ],
        )
    }
    /// The ELL part without its padding (the kernel stops at each row's length), and the COO part.
    fn bytes_read(&self) -> usize {
        self.ell.bytes_read() + self.coo.bytes()
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        self.ell.spmv_cpu(x, y);
        coo::cpu::accumulate(&self.coo, x, y);
    }
    super::upload_with!(gpu::DeviceHyb::new);
}

/// The registry's entry for `hyb` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "hyb",
        "HYB, ELL part of Bell & Garland's width, the rest of each row in COO (atomics aggregated per warp)",
        |a, s| auto_or(s, "width", 0, || Hyb::new(a), |k| Hyb::with_width(a, k)),
    )
    .params(&[Param { key: "width", default: "auto", doc: "ELL width K (auto: Bell & Garland's rule, capped by ELL's padding limit)" }])
    .kernels(&[ell::KERNELS, coo::KERNELS])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::prelude::*;
    use crate::formats::test_support::rows::*;
    use crate::Error;

    #[test]
    fn worked_example_gives_the_documented_arrays() {
        let a = example_4x3();
        let h = Hyb::with_width(&a, 2).unwrap();
        assert_eq!(h.ell().row_len(), [2, 0, 2, 1]);
        assert_eq!(h.ell().col(), [0, 0, 0, 1, 2, 0, 1, 1]);
        assert_eq!(h.ell().val(), [1., 0., 3., 6., 2., 0., 4., 0.]);
        assert_eq!(
            (&h.coo().rows[..], &h.coo().cols[..], &h.coo().vals[..]),
            (&[2][..], &[2][..], &[5.][..])
        );
        let s = h.stats();
        assert_eq!((s.nnz, s.stored, s.max_row_len), (6, 9, 3));
        assert_eq!(s.bytes, 8 * 12 + 4 * 4 + 16);
        assert_eq!(s.extra[0], ("ell_width".to_string(), 2.0));
        assert_eq!(s.extra[2], ("coo_entries".to_string(), 1.0));
        assert_example_product(&h, &a);
        // Small matrices (< 4096 rows) are all COO under the rule.
        let h = Hyb::new(&a).unwrap();
        assert_eq!((h.width(), h.coo().len()), (0, 6));
        assert_example_product(&h, &a);
    }

    #[test]
    fn width_rule_on_constructed_row_lengths() {
        let lens = |parts: &[(usize, usize)]| -> Vec<usize> {
            parts.iter().flat_map(|&(count, len)| std::iter::repeat_n(len, count)).collect()
        };
        // m = 12000, threshold max(4096, 4000) = 4096: 6000 rows have ≥ 5 entries, 3000 ≥ 6.
        assert_eq!(bell_garland_width(&lens(&[(6000, 2), (3000, 5), (3000, 9)])), 5);
        // m = 30000, threshold 10000 (m/3): 15000 rows have ≥ 4, 5000 have ≥ 5.
        assert_eq!(bell_garland_width(&lens(&[(15000, 1), (10000, 4), (5000, 100)])), 4);
        // Exactly at the threshold counts: 10000 of 30000 rows have ≥ 7.
        assert_eq!(bell_garland_width(&lens(&[(20000, 3), (10000, 7)])), 7);
        // Every row the same length: K is that length (no COO part).
        assert_eq!(bell_garland_width(&lens(&[(5000, 6)])), 6);
        // Fewer than 4096 rows: all COO.
        assert_eq!(bell_garland_width(&lens(&[(4095, 30)])), 0);
        // Empty rows and an empty matrix.
        assert_eq!(bell_garland_width(&lens(&[(9000, 0), (1000, 50)])), 0);
        assert_eq!(bell_garland_width(&[]), 0);
    }

    #[test]
    fn width_is_capped_by_the_padding_limit() {
        assert!(matches!(
            Hyb::with_width(&example_4x3(), usize::MAX / 8),
            Err(Error::Format { format: "hyb", .. })
        ));
        // 5999 rows of 3 entries and one of 500: K = 3, the long row's tail goes to COO.
        let mut lens = vec![3; 6000];
        lens[5] = 500;
        let a = rows_of_lengths(&lens, 500, |_, _| 0.5);
        let h = Hyb::new(&a).unwrap();
        assert_eq!((h.width(), h.coo().len()), (3, 497));
        assert!(cpu_matches_oracle(&h, &a));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn cpu_path_matches_the_oracle(a in random_csr(), width in 0usize..6) {
            for h in [Hyb::new(&a).unwrap(), Hyb::with_width(&a, width).unwrap()] {
                prop_assert!(cpu_matches_oracle(&h, &a), "K = {}", h.width());
                prop_assert_eq!(h.ell().entries() + h.coo().len(), a.nnz());
            }
        }
    }
}
