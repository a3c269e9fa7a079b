//! ELL (ELLPACK): every row padded to the width K = the longest row, stored column-major.
//!
//! ```text
//!     | 1 . 2 . |      K = 3, m = 4; slot t of row r at t*m + r
//! A = | . . . . |      row_len = [2, 0, 3, 1]
//!     | 3 4 5 . |      col = [0, 0, 0, 1,   2, 0, 1, 1,   2, 0, 2, 1]
//!     | . 6 . . |      val = [1, 0, 3, 6,   2, 0, 4, 0,   0, 0, 5, 0]
//!                             t = 0         t = 1         t = 2
//! ```
//! `col` and `val` are m×K arrays; a padding slot has value 0 and a valid column (the row's
//! last real column, or 0 for an empty row) so that even a kernel that read it would touch
//! a valid `x`. `row_len` holds each row's real length: thread r (one thread per row) loops
//! `t < row_len[r]` and stops early. Neighbouring threads read neighbouring slots, so the
//! loads are coalesced; a warp runs as long as its longest row.
//!
//! **Padding limit.** One long row makes every row that long. Before allocating, the
//! conversion computes `stored = m·K` and refuses (`Error::Format`, naming the padding
//! ratio and the limit) when `stored > max_padding · max(nnz, 1)` — `max_padding` is the
//! `ell:max_padding` parameter, by default `PADDING_LIMIT_RATIO` = 20 — unless the arrays
//! are tiny (`stored ≤ PADDING_FLOOR_SLOTS` = 2^20 slots, a few MiB at most, always
//! accepted), or when the arrays would exceed `MAX_STORED_BYTES` = 16 GiB. Slot offsets are
//! 64-bit in the kernel (m·K may exceed 2^32); rows and columns are 32-bit.
//!
//! HYB reuses this module for its ELL part, with K chosen by its own rule and rows cut at K
//! (`row_len[r] = min(len(r), K)`), under the default limit.

pub(crate) mod cpu;
pub(crate) mod gpu;

use std::sync::Arc;

use rayon::prelude::*;

use super::{DeviceFormat, FormatStats, SpmvFormat};
use super::{FormatInfo, FormatSpec, Param};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};

/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "ell", source: include_str!("kernel.cu"), headers: &[] };

/// Largest accepted stored/nnz ratio (above [`PADDING_FLOOR_SLOTS`]) unless a format is
/// given another (`ell:max_padding`).
pub const PADDING_LIMIT_RATIO: usize = 20;
/// Arrays of at most this many slots are accepted whatever their padding ratio.
pub const PADDING_FLOOR_SLOTS: usize = 1 << 20;
/// Largest accepted size of the ELL arrays (`col`, `val`, `row_len`), in bytes.
pub const MAX_STORED_BYTES: u64 = 16 << 30;

/// Device bytes of ELL arrays of width `width` for `m` rows with `elem`-byte values.
fn stored_bytes(m: usize, width: usize, elem: usize) -> u128 {
    m as u128 * width as u128 * (4 + elem) as u128 + 4 * m as u128
}

/// Whether `m` rows of width `width` obey the padding limit `max_padding` (stored/nnz) for
/// `nnz` entries.
fn within_limit(m: usize, width: usize, nnz: usize, elem: usize, max_padding: f64) -> bool {
    let stored = m as u128 * width as u128;
    let ratio_ok =
        stored <= PADDING_FLOOR_SLOTS as u128 || stored as f64 <= max_padding * nnz.max(1) as f64;
    ratio_ok && stored_bytes(m, width, elem) <= MAX_STORED_BYTES as u128
}

/// Checks the padding limit `max_padding` for `m` rows of width `width` holding `nnz`
/// entries, before anything is allocated; the error names the padding ratio and the limit,
/// or the size.
pub(crate) fn check_padding(
    format: &'static str, m: usize, width: usize, nnz: usize, elem: usize, max_padding: f64,
) -> Result<()> {
    if m > u32::MAX as usize {
        return Err(Error::format(format, format!("{m} rows exceed 32-bit row indices")));
    }
    if within_limit(m, width, nnz, elem, max_padding) {
        return Ok(());
    }
    let stored = m as f64 * width as f64;
    let bytes = stored_bytes(m, width, elem);
    let ratio = stored / nnz.max(1) as f64;
    let reason = if ratio > max_padding && stored > PADDING_FLOOR_SLOTS as f64 {
        format!(
            "padding ratio {ratio:.1} (stored {stored:.1e} slots for {nnz:.1e} entries, width {width} x {m} rows) exceeds the limit {max_padding}",
            nnz = nnz as f64
        )
    } else {
        format!(
            "the arrays would take {:.1} GiB (width {width} x {m} rows, padding ratio {ratio:.1}), above the cap of {} GiB",
            bytes as f64 / (1u64 << 30) as f64,
            MAX_STORED_BYTES >> 30
        )
    };
    Err(Error::format(format, reason))
}

/// The widest K ≤ `want` for which `m` rows of width K obey the padding limit `max_padding`
/// (HYB's cap).
pub(crate) fn max_width_within_limit(
    m: usize, want: usize, nnz: usize, elem: usize, max_padding: f64,
) -> usize {
    if m == 0 || within_limit(m, want, nnz, elem, max_padding) {
        return want;
    }
    // within_limit is monotone in the width: binary search for the last accepted width.
    let (mut lo, mut hi) = (0, want); // lo accepted, hi refused
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if within_limit(m, mid, nnz, elem, max_padding) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The ELL arrays (column-major m×K) of a matrix, or of its first K entries per row.
#[derive(Clone, Debug, PartialEq)]
pub struct Ell<T> {
    nrows: usize,
    ncols: usize,
    width: usize,
    /// Real entries per row (≤ width).
    row_len: Vec<u32>,
    col: Vec<u32>,
    val: Vec<T>,
}

impl<T: Scalar> Ell<T> {
    /// All of `a`, K = the longest row. Refuses (before allocating) beyond the padding limit
    /// `max_padding` (stored/nnz, see the module doc).
    pub fn with_limit(a: &Csr<T>, max_padding: f64) -> Result<Self> {
        let width = a.max_row_len();
        check_padding("ell", a.nrows(), width, a.nnz(), std::mem::size_of::<T>(), max_padding)?;
        Ok(Self::truncated(a, width))
    }

    /// The first `width` entries of each row of `a` (the caller has checked the limit).
    pub(crate) fn truncated(a: &Csr<T>, width: usize) -> Self {
        let m = a.nrows();
        let row_len: Vec<u32> =
            (0..m).into_par_iter().map(|r| a.row_len(r).min(width) as u32).collect();
        let mut col = vec![0u32; m * width];
        let mut val = vec![T::ZERO; m * width];
        if m > 0 {
            col.par_chunks_mut(m).zip(val.par_chunks_mut(m)).enumerate().for_each(
                |(t, (col_t, val_t))| {
                    for r in 0..m {
                        let (cols, vals) = a.row(r);
                        if t < cols.len() {
                            col_t[r] = cols[t];
                            val_t[r] = vals[t];
                        } else {
                            // Padding: value 0 (from the allocation), the row's last real column.
                            col_t[r] = cols.last().copied().unwrap_or(0);
                        }
                    }
                },
            );
        }
        Ell { nrows: m, ncols: a.ncols(), width, row_len, col, val }
    }

    /// K, the slots per row.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Real entries of each row (≤ K).
    pub fn row_len(&self) -> &[u32] {
        &self.row_len
    }
    /// Column of each slot, column-major (slot t of row r at `t·m + r`); padding repeats the
    /// row's last column (0 for an empty row).
    pub fn col(&self) -> &[u32] {
        &self.col
    }
    /// Value of each slot, in the order of `col`; 0 in padding.
    pub fn val(&self) -> &[T] {
        &self.val
    }
    /// Slots, padding included (m·K).
    pub fn stored(&self) -> usize {
        self.val.len()
    }
    /// Real entries held.
    pub fn entries(&self) -> usize {
        self.row_len.iter().map(|&l| l as usize).sum()
    }
    /// Device bytes of `col`, `val` and `row_len`.
    pub fn bytes(&self) -> usize {
        stored_bytes(self.nrows, self.width, std::mem::size_of::<T>()) as usize
    }
    /// Bytes one product reads: `row_len` and the real entries only (the kernel stops at
    /// each row's length, so it never loads the padding).
    pub fn bytes_read(&self) -> usize {
        self.entries() * (4 + std::mem::size_of::<T>()) + 4 * self.nrows
    }

    /// `y = A·x` (of the entries held) on the CPU.
    pub fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        cpu::spmv(self, x, y)
    }
}

/// The `ell` format: an [`Ell`] of the whole matrix.
pub struct EllFormat<T> {
    ell: Ell<T>,
    nnz: usize,
    mean_row_len: f64,
}

impl<T: Scalar> EllFormat<T> {
    /// [`EllFormat::with_limit`] with the default limit, [`PADDING_LIMIT_RATIO`].
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_limit(a, PADDING_LIMIT_RATIO as f64)
    }
    /// All of `a`, refused when the padding exceeds `max_padding` (stored/nnz ≥ 1; arrays of
    /// at most [`PADDING_FLOOR_SLOTS`] slots are always accepted).
    pub fn with_limit(a: &Csr<T>, max_padding: f64) -> Result<Self> {
        Ok(EllFormat {
            ell: Ell::with_limit(a, max_padding)?,
            nnz: a.nnz(),
            mean_row_len: a.mean_row_len(),
        })
    }
    /// The ELL arrays.
    pub fn ell(&self) -> &Ell<T> {
        &self.ell
    }
}

impl<T: Scalar> SpmvFormat<T> for EllFormat<T> {
    fn stats(&self) -> FormatStats {
        FormatStats::new(
            self.ell.bytes(),
            self.nnz,
            self.ell.stored(),
            self.ell.width,
            self.mean_row_len,
        )
        .with([("ell_width", self.ell.width as f64)])
    }
    fn bytes_read(&self) -> usize {
        self.ell.bytes_read()
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        self.ell.spmv_cpu(x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(gpu::upload(gpu, &self.ell, "ell")?))
    }
}

/// The `max_padding` parameter of ell and dia.
pub(crate) const MAX_PADDING: Param = Param {
    key: "max_padding",
    default: "20",
    doc: "largest stored/nnz ratio accepted (≥ 1; arrays of ≤ 2^20 slots are always accepted)",
};

/// `max_padding` ([`MAX_PADDING`]).
pub(crate) fn max_padding(s: &FormatSpec) -> Result<f64> {
    s.f64("max_padding", 1.0)
}

/// The registry's entry for `ell` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "ell",
        "ELLPACK, rows padded to the longest, column-major, one thread per row (refused above max_padding, default 20x)",
        |a, s| Ok(Box::new(EllFormat::with_limit(a, max_padding(s)?)?)),
    )
    .params(&[MAX_PADDING])
    .kernels(&[KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::prelude::*;
    use crate::formats::test_support::rows::*;

    #[test]
    fn worked_example_gives_the_documented_arrays() {
        let a = example_4x3();
        let f = EllFormat::new(&a).unwrap();
        let e = f.ell();
        assert_eq!(e.width(), 3);
        assert_eq!(e.row_len(), [2, 0, 3, 1]);
        assert_eq!(e.col(), [0, 0, 0, 1, 2, 0, 1, 1, 2, 0, 2, 1]);
        assert_eq!(e.val(), [1., 0., 3., 6., 2., 0., 4., 0., 0., 0., 5., 0.]);
        let s = f.stats();
        assert_eq!((s.nnz, s.stored, s.max_row_len, s.padded_zeros()), (6, 12, 3, 6));
        assert_eq!(s.bytes, 12 * 12 + 4 * 4);
        assert_eq!(s.padding_ratio(), 2.0);
        assert_example_product(&f, &a);
    }

    /// 4000 rows of one entry and one row of 1000: K = 1000, 4·10^6 slots for 4999 entries.
    fn one_long_row() -> Csr<f64> {
        let mut lens = vec![1; 4000];
        lens[17] = 1000;
        rows_of_lengths(&lens, 1000, |_, _| 1.0)
    }

    #[test]
    fn padding_limit_refuses_one_long_row_and_names_the_ratio() {
        let a = one_long_row();
        let e = EllFormat::new(&a).err().expect("ELL must refuse this matrix");
        let Error::Format { format, reason } = &e else {
            panic!("expected Error::Format, got {e}")
        };
        assert_eq!(*format, "ell");
        assert!(reason.contains("padding ratio 800.2"), "{reason}");
        assert!(reason.contains("exceeds the limit 20"), "{reason}");
        // The same matrix without its long row fits.
        let short = rows_of_lengths(&[1; 3999], 1000, |_, _| 1.0);
        assert_eq!(EllFormat::new(&short).unwrap().ell().width(), 1);
    }

    #[test]
    fn padding_limit_rules() {
        // Tiny arrays always pass; beyond the floor the ratio decides; the byte cap holds.
        let limit = PADDING_LIMIT_RATIO as f64;
        assert!(within_limit(1000, 1000, 1, 8, limit));
        assert!(!within_limit(2000, 1000, 1, 8, limit));
        assert!(within_limit(2000, 1000, 100_000, 8, limit));
        assert!(!within_limit(2000, 1000, 99_999, 8, limit));
        assert!(!within_limit(2000, 1000, 100_000, 8, 19.5));
        assert!(!within_limit(1 << 30, 3, 1 << 30, 8, limit), "36 GiB of arrays");
        assert!(check_padding("ell", 1 << 30, 3, 1 << 30, 8, limit)
            .unwrap_err()
            .to_string()
            .contains("GiB"));
        assert_eq!(max_width_within_limit(2000, 1000, 10_000, 8, limit), 524);
        assert_eq!(max_width_within_limit(2000, 50, 10_000, 8, limit), 50);
        assert_eq!(max_width_within_limit(0, 50, 0, 8, limit), 50);
    }

    #[test]
    fn a_lower_limit_refuses_what_the_default_accepts_and_names_the_limit() {
        // 300000 rows of one entry, one of five: K = 5, 1.5·10^6 slots (above the floor) for
        // 300004 entries, a padding ratio of 5.0.
        let m = 300_000;
        let mut lens = vec![1; m];
        lens[0] = 5;
        let a = rows_of_lengths(&lens, 8, |_, _| 1.0);
        assert_eq!(EllFormat::new(&a).unwrap().ell().width(), 5);
        assert_eq!(EllFormat::with_limit(&a, 5.0).unwrap().stats().padded_zeros(), 4 * m - 4);
        let e =
            EllFormat::with_limit(&a, 2.5).err().expect("a limit of 2.5 must refuse a ratio of 5");
        let Error::Format { format, reason } = &e else {
            panic!("expected Error::Format, got {e}")
        };
        assert_eq!(*format, "ell");
        assert!(reason.contains("padding ratio 5.0"), "{reason}");
        assert!(reason.contains("exceeds the limit 2.5"), "{reason}");
    }

    #[test]
    fn truncated_keeps_the_first_entries_of_each_row() {
        let e = Ell::truncated(&example_4x3(), 2);
        assert_eq!(e.row_len(), [2, 0, 2, 1]);
        assert_eq!(e.col(), [0, 0, 0, 1, 2, 0, 1, 1]);
        assert_eq!(e.val(), [1., 0., 3., 6., 2., 0., 4., 0.]);
        assert_eq!(e.entries(), 5);
        let e = Ell::truncated(&example_4x3(), 0);
        assert_eq!((e.stored(), e.row_len()), (0, &[0, 0, 0, 0][..]));
        let mut y = [f64::NAN; 4];
        e.spmv_cpu(&[1.0, 1.0, 1.0], &mut y);
        assert_eq!(y, [0.0; 4]);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn cpu_path_matches_the_oracle(a in random_csr()) {
            let f = EllFormat::new(&a).unwrap(); // small: always under the floor
            prop_assert!(cpu_matches_oracle(&f, &a));
            // Padding columns are valid and padding values zero.
            prop_assert!(f.ell().col().iter().all(|&c| (c as usize) < a.ncols().max(1)));
            let padded = f.ell().val().len() - a.nnz();
            prop_assert_eq!(f.stats().padded_zeros(), padded);
        }
    }
}
