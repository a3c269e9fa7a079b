//! BRC, blocked row-column (Ashari et al. 2014, as the BRCP paper describes it): rows sorted
//! by length, long rows cut into pieces of at most T entries (column blocking), the pieces
//! grouped into blocks of H = 32 (row blocking, one warp per block), each block padded to
//! its longest piece and stored column-major; every piece's partial sum is added into `y`
//! with an atomic. Not deterministic: a row cut into three or more pieces gets its partial
//! sums added in whatever order the warps finish.
//!
//! - **Threshold.** `T = round(μ + σ)` of the row lengths (mean and population standard
//!   deviation over all m rows, empty rows included; at least 1), computed from exact
//!   integer sums so the layout never depends on the thread count.
//! - **Pieces.** The rows are sorted by length, longest first (stable: equal lengths keep
//!   their order). A row of `k` entries becomes `ceil(k / T)` pieces: entries
//!   `j·T .. min((j+1)·T, k)` form piece `j`. Empty rows have no piece. The pieces are then
//!   sorted by length, longest first, again stable (so the full pieces of the longest rows
//!   come first, in row order): the paper leaves the order of the pieces open; this one
//!   gives the least padding, and a split row's last piece lands in a later block than its
//!   full pieces (as the paper's Fig. 2 shows row 0 in blocks 0 and 2).
//! - **Blocks.** Pieces `b·H .. b·H + H` form block `b`; its width `w_b` is its first
//!   (longest) piece's length, and the last block is filled with dummy slots (no row,
//!   zeros) up to H. Entry `t` of the block's slot `l` sits at `block_ptr[b] + t·H + l`
//!   (column-major, so a warp's 32 loads are consecutive); `block_ptr[b+1] − block_ptr[b]`
//!   is `H·w_b` (the paper's `blockBegin`; the width needs no array of its own). Padding
//!   slots hold the value 0 and the piece's last column (0 in a dummy slot), so the kernel
//!   reads `x` without a branch. `row_perm[s]` is the row of slot `s` (`NO_ROW` for a dummy).
//! - **Kernel.** `y` is filled with 0 (timed with the product: it belongs to it), then one
//!   warp per block: lane `l` sums its slot's `w_b` products and does one `atomicAdd` into
//!   `y[row_perm[b·H + l]]`.
//!
//! The paper's matrix A (§1.3) with H = 2 and T = 2 (the rule gives T = round(1.5 + 1.118)
//! = 3 for A, which splits nothing; T = 2 shows a split):
//! ```text
//!     | 1 . 2 . |  row 0: 2 entries          sorted rows: 2, 0, 3   (row 1 is empty)
//! A = | . . . . |  row 1: 0                  pieces (row, entries): (2, 3 4) (2, 5) (0, 1 2) (3, 6)
//!     | 3 4 . 5 |  row 2: 3                  sorted by length:     (2, 3 4) (0, 1 2) (2, 5) (3, 6)
//!     | . . 6 . |  row 3: 1
//!
//!   block 0 (width 2): slot 0 = row 2: 3 4    slot 1 = row 0: 1 2
//!   block 1 (width 1): slot 2 = row 2: 5      slot 3 = row 3: 6
//!
//!   block_ptr = [0, 4, 6]
//!   values    = [3, 1, 4, 2, 5, 6]            (column-major per block)
//!   col_idx   = [0, 0, 1, 2, 3, 2]
//!   row_perm  = [2, 0, 2, 3]
//! ```
//! Row 2 gets two atomic adds, from blocks 0 and 1.
//!
//! On the CPU the blocks run in parallel (rayon): each slot's sum is written to `y` directly
//! when its row has one piece, and the pieces of split rows are added afterwards in slot
//! order (the CPU needs no atomics for that).
//!
//! Device indices are 32-bit: conversion fails with [`Error::Format`] when the rows reach
//! 2^32 − 1 (all-ones is `NO_ROW`) or the stored slots exceed 2^32 − 1.

mod cpu;
mod gpu;

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::jds::sort_rows_by_length;
use super::{DeviceFormat, FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};

pub const KERNELS: KernelModule = KernelModule { name: "brc", source: include_str!("kernel.cu") };

/// Slots per block of the registered format, and the only value the GPU kernel takes: one warp.
pub const WARP_BLOCK_ROWS: usize = 32;

/// `row_perm` of a dummy slot (the last block's padding to H slots).
pub const NO_ROW: u32 = u32::MAX;

const NAME: &str = "brc";

/// `T = round(μ + σ)` of the row lengths (population σ over all m rows), at least 1: BRC's
/// piece length and BRCP's width cap.
///
/// μ and σ come from the exact integer sums Σk and Σk², so `T` is the same for every thread
/// count (a parallel floating-point sum could round differently near a half).
pub fn threshold<T: Scalar>(a: &Csr<T>) -> usize {
    let m = a.nrows();
    if m == 0 {
        return 1;
    }
    let squares: u128 = (0..m).into_par_iter().map(|r| (a.row_len(r) as u128).pow(2)).sum();
    let mean = a.nnz() as f64 / m as f64;
    let variance = (squares as f64 / m as f64 - mean * mean).max(0.0);
    ((mean + variance.sqrt()).round() as usize).max(1)
}

/// Width of block `b` of a column-major block layout with `block_rows` slots per block:
/// `(block_ptr[b+1] − block_ptr[b]) / H` (BRC and BRCP store their blocks alike).
pub(crate) fn block_width(block_ptr: &[u32], block_rows: usize, b: usize) -> usize {
    (block_ptr[b + 1] - block_ptr[b]) as usize / block_rows
}

/// Refuses a layout the GPU kernels of BRC and BRCP cannot run: one warp per block, H = 32.
pub(crate) fn check_warp_blocks(format: &'static str, block_rows: usize) -> Result<()> {
    if block_rows != WARP_BLOCK_ROWS {
        return Err(Error::format(
            format,
            format!("the GPU kernel runs one warp per block: H must be 32, not {block_rows}"),
        ));
    }
    Ok(())
}

/// Coefficient of variation (σ / μ) of the real entries per block: 0 for perfectly equal blocks.
pub(crate) fn coefficient_of_variation(counts: &[usize]) -> f64 {
    if counts.is_empty() {
        return 0.0;
    }
    let n = counts.len() as f64;
    let mean = counts.iter().sum::<usize>() as f64 / n;
    if mean == 0.0 {
        return 0.0;
    }
    let variance = counts.iter().map(|&c| (c as f64 - mean).powi(2)).sum::<f64>() / n;
    variance.sqrt() / mean
}

/// One piece of a row: `len` entries of `row` starting at entry `start` of the row.
#[derive(Clone, Copy, Debug)]
struct Piece {
    row: u32,
    start: u32,
    len: u32,
}

/// A matrix in BRC (see the module doc for the layout).
pub struct Brc<T> {
    nrows: usize,
    ncols: usize,
    nnz: usize,
    /// Slots per block (H).
    block_rows: usize,
    /// Piece length (T).
    threshold: usize,
    /// Start of each block in `values`/`col_idx`, `blocks + 1` entries.
    block_ptr: Vec<u32>,
    /// Row of each slot (`blocks · H` entries), [`NO_ROW`] for dummy slots.
    row_perm: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    /// Per slot: its row has more than one piece (host only: the CPU path adds those last).
    split: Vec<bool>,
    split_rows: usize,
    /// Real entries per block (for the balance figure).
    block_nnz: Vec<usize>,
    max_row_len: usize,
    mean_row_len: f64,
    sort_ms: f64,
    fill_ms: f64,
}

impl<T: Scalar> Brc<T> {
    /// The registered configuration: H = 32, T = round(μ + σ).
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_params(a, WARP_BLOCK_ROWS, threshold(a))
    }

    /// BRC with `block_rows` slots per block (H ≥ 1; the GPU takes only 32) and pieces of
    /// at most `threshold` entries (T ≥ 1).
    pub fn with_params(a: &Csr<T>, block_rows: usize, threshold: usize) -> Result<Self> {
        let (m, nnz) = (a.nrows(), a.nnz());
        if block_rows == 0 {
            return Err(Error::format(NAME, "H = 0 slots per block: a block needs at least one slot"));
        }
        if threshold == 0 {
            return Err(Error::format(NAME, "T = 0: pieces must hold at least one entry"));
        }
        if m >= NO_ROW as usize {
            return Err(Error::format(NAME, format!("{m} rows exceed the 2^32 - 2 that 32-bit row indices allow")));
        }
        let start = Instant::now();
        let row_ptr = a.row_ptr();
        let mut sorted: Vec<u32> = (0..m as u32).into_par_iter().collect();
        sort_rows_by_length(row_ptr, &mut sorted);
        let pieces_of = |r: u32| a.row_len(r as usize).div_ceil(threshold);
        let split_rows = sorted.par_iter().filter(|&&r| pieces_of(r) > 1).count();
        let mut pieces: Vec<Piece> = sorted
            .par_iter()
            .flat_map_iter(|&r| {
                let len = a.row_len(r as usize);
                (0..pieces_of(r)).map(move |j| {
                    let start = j * threshold;
                    Piece { row: r, start: start as u32, len: (len - start).min(threshold) as u32 }
                })
            })
            .collect();
        pieces.par_sort_by_key(|p| std::cmp::Reverse(p.len)); // stable
        let sort_ms = start.elapsed().as_secs_f64() * 1e3;

        let start = Instant::now();
        let blocks = pieces.len().div_ceil(block_rows);
        let widths: Vec<usize> = (0..blocks).map(|b| pieces[b * block_rows].len as usize).collect();
        let mut block_ptr = Vec::with_capacity(blocks + 1);
        block_ptr.push(0usize);
        for &w in &widths {
            match block_ptr.last().and_then(|&p: &usize| p.checked_add(w * block_rows)) {
                Some(p) if p <= u32::MAX as usize => block_ptr.push(p),
                _ => {
                    return Err(Error::format(
                        NAME,
                        format!("{nnz} entries in blocks of {block_rows} pieces of up to T = {threshold} need more than 2^32 - 1 stored slots"),
                    ))
                }
            }
        }
        let stored = block_ptr[blocks];
        let mut col_idx = vec![0u32; stored];
        let mut values = vec![T::ZERO; stored];
        let mut row_perm = vec![NO_ROW; blocks * block_rows];
        let mut split = vec![false; blocks * block_rows];
        // One output slice per block, filled in parallel.
        let mut parts = Vec::with_capacity(blocks);
        let (mut cols_rest, mut vals_rest) = (col_idx.as_mut_slice(), values.as_mut_slice());
        for (b, (rows, flags)) in row_perm.chunks_mut(block_rows).zip(split.chunks_mut(block_rows)).enumerate() {
            let n = block_ptr[b + 1] - block_ptr[b];
            let (cs, cr) = std::mem::take(&mut cols_rest).split_at_mut(n);
            let (vs, vr) = std::mem::take(&mut vals_rest).split_at_mut(n);
            (cols_rest, vals_rest) = (cr, vr);
            parts.push((b, rows, flags, cs, vs));
        }
        let block_nnz: Vec<usize> = parts
            .into_par_iter()
            .with_min_len(16)
            .map(|(b, rows, flags, cols, vals)| {
                let first = b * block_rows;
                let w = widths[b];
                let mut entries = 0;
                for (lane, piece) in pieces[first..pieces.len().min(first + block_rows)].iter().enumerate() {
                    let (rc, rv) = a.row(piece.row as usize);
                    let (s, len) = (piece.start as usize, piece.len as usize);
                    let pad = rc[s + len - 1];
                    for t in 0..w {
                        let p = t * block_rows + lane;
                        (cols[p], vals[p]) = if t < len { (rc[s + t], rv[s + t]) } else { (pad, T::ZERO) };
                    }
                    rows[lane] = piece.row;
                    flags[lane] = rc.len() > threshold;
                    entries += len;
                }
                entries
            })
            .collect();
        let fill_ms = start.elapsed().as_secs_f64() * 1e3;

        Ok(Brc {
            nrows: m,
            ncols: a.ncols(),
            nnz,
            block_rows,
            threshold,
            block_ptr: block_ptr.iter().map(|&p| p as u32).collect(),
            row_perm,
            col_idx,
            values,
            split,
            split_rows,
            block_nnz,
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
            sort_ms,
            fill_ms,
        })
    }

    /// Slots per block (H).
    pub fn block_rows(&self) -> usize {
        self.block_rows
    }
    /// Piece length (T).
    pub fn threshold(&self) -> usize {
        self.threshold
    }
    pub fn blocks(&self) -> usize {
        self.block_ptr.len() - 1
    }
    /// Start of each block (`blocks + 1` entries; the last is the stored slot count).
    pub fn block_ptr(&self) -> &[u32] {
        &self.block_ptr
    }
    /// Width of block `b`: `(block_ptr[b+1] − block_ptr[b]) / H`.
    pub fn block_width(&self, b: usize) -> usize {
        block_width(&self.block_ptr, self.block_rows, b)
    }
    /// Row of each slot ([`NO_ROW`] for dummy slots).
    pub fn row_perm(&self) -> &[u32] {
        &self.row_perm
    }
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Rows cut into more than one piece (their sums take several atomics).
    pub fn split_rows(&self) -> usize {
        self.split_rows
    }
    /// Stored value slots, padding included.
    pub fn stored(&self) -> usize {
        self.values.len()
    }
    /// Device bytes: `block_ptr`, `row_perm`, `col_idx` (all `u32`) and `values`.
    pub fn device_bytes(&self) -> usize {
        4 * (self.block_ptr.len() + self.row_perm.len() + self.col_idx.len())
            + std::mem::size_of::<T>() * self.values.len()
    }
}

impl<T: Scalar> SpmvFormat<T> for Brc<T> {
    fn stats(&self) -> FormatStats {
        FormatStats {
            bytes: self.device_bytes(),
            nnz: self.nnz,
            stored: self.stored(),
            max_row_len: self.max_row_len,
            mean_row_len: self.mean_row_len,
            extra: vec![
                ("threshold".into(), self.threshold as f64),
                ("blocks".into(), self.blocks() as f64),
                ("split_rows".into(), self.split_rows as f64),
                ("block_nnz_cv".into(), coefficient_of_variation(&self.block_nnz)),
                ("sort_ms".into(), self.sort_ms),
                ("fill_ms".into(), self.fill_ms),
            ],
        }
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        cpu::spmv(self, x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(gpu::DeviceBrc::new(gpu, self)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::{cpu_matches_oracle as check, random_csr};
    use proptest::prelude::*;

    /// Matrix A of the paper's §1.3.
    pub(crate) fn paper_matrix() -> Csr<f64> {
        Csr::new_checked(4, 4, vec![0, 2, 2, 5, 6], vec![0, 2, 0, 1, 3, 2], vec![1., 2., 3., 4., 5., 6.]).unwrap()
    }

    #[test]
    fn threshold_is_mean_plus_deviation_rounded() {
        // Row lengths 2, 0, 3, 1: μ = 1.5, σ = sqrt(1.25) = 1.118, T = round(2.618) = 3.
        assert_eq!(threshold(&paper_matrix()), 3);
        assert_eq!(threshold(&Csr::<f64>::zeros(0, 0)), 1);
        assert_eq!(threshold(&Csr::<f64>::zeros(5, 5)), 1);
        // Equal rows: σ = 0, T = the row length.
        let a = Csr::new_checked(2, 3, vec![0, 3, 6], vec![0, 1, 2, 0, 1, 2], vec![1.0; 6]).unwrap();
        assert_eq!(threshold::<f64>(&a), 3);
    }

    #[test]
    fn worked_example_gives_the_documented_arrays() {
        let a = paper_matrix();
        let f = Brc::with_params(&a, 2, 2).unwrap();
        assert_eq!(f.block_ptr(), &[0, 4, 6]);
        assert_eq!((f.block_width(0), f.block_width(1)), (2, 1));
        assert_eq!(f.values(), &[3., 1., 4., 2., 5., 6.]);
        assert_eq!(f.col_idx(), &[0, 0, 1, 2, 3, 2]);
        assert_eq!(f.row_perm(), &[2, 0, 2, 3]);
        assert_eq!(f.split_rows(), 1);
        let s = f.stats();
        assert_eq!((s.nnz, s.stored, s.padded_zeros(), s.max_row_len), (6, 6, 0, 3));
        assert_eq!(s.bytes, 4 * (3 + 4 + 6) + 8 * 6);
        let x = [1.0, 10.0, 100.0, 1000.0];
        let mut y = [f64::NAN; 4];
        f.spmv_cpu(&x, &mut y);
        assert_eq!(y, [201.0, 0.0, 5043.0, 600.0]);

        // The rule's own T = 3 splits nothing: blocks {row 2, row 0} of width 3 and
        // {row 3, dummy} of width 1.
        let f = Brc::with_params(&a, 2, threshold(&a)).unwrap();
        assert_eq!(f.block_ptr(), &[0, 6, 8]);
        assert_eq!(f.values(), &[3., 1., 4., 2., 5., 0., 6., 0.]);
        assert_eq!(f.col_idx(), &[0, 0, 1, 2, 3, 2, 2, 0]);
        assert_eq!(f.row_perm(), &[2, 0, 3, NO_ROW]);
        assert_eq!(f.split_rows(), 0);
        let mut y = [f64::NAN; 4];
        f.spmv_cpu(&x, &mut y);
        assert_eq!(y, [201.0, 0.0, 5043.0, 600.0]);
    }

    #[test]
    fn bad_parameters_are_format_errors() {
        let a = paper_matrix();
        assert!(matches!(Brc::with_params(&a, 0, 3), Err(Error::Format { .. })));
        assert!(matches!(Brc::with_params(&a, 32, 0), Err(Error::Format { .. })));
    }

    #[test]
    fn long_rows_are_split_into_pieces_of_t() {
        // Row r has r entries: 0..=99; T = 7 splits every row above 7.
        let mut row_ptr = vec![0];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        for r in 0..100usize {
            for c in 0..r {
                cols.push(c as u32);
                vals.push((r + c) as f64 / 8.0 - 3.0);
            }
            row_ptr.push(cols.len());
        }
        let a = Csr::new_checked(100, 100, row_ptr, cols, vals).unwrap();
        for (h, t) in [(32, 7), (1, 1), (3, 100), (32, 1), (5, 13)] {
            let f = Brc::with_params(&a, h, t).unwrap();
            assert!(check(&f, &a), "H = {h}, T = {t}");
            let pieces: usize = (0..100).map(|k: usize| k.div_ceil(t)).sum();
            assert_eq!(f.row_perm().iter().filter(|&&r| r != NO_ROW).count(), pieces);
            assert_eq!(f.split_rows(), (0..100).filter(|&k| k > t).count());
            assert!((0..f.blocks()).all(|b| f.block_width(b) <= t));
            // Sorted pieces: block widths never grow.
            assert!((1..f.blocks()).all(|b| f.block_width(b) <= f.block_width(b - 1)));
        }
        assert_eq!(Brc::new(&a).unwrap().threshold(), threshold(&a));
        assert!(check(&Brc::new(&a.cast::<f32>()).unwrap(), &a.cast::<f32>()));
    }

    #[test]
    fn empty_matrices() {
        for (m, n) in [(0, 0), (0, 5), (5, 0), (70, 3)] {
            let a = Csr::<f32>::zeros(m, n);
            let f = Brc::new(&a).unwrap();
            assert_eq!((f.stored(), f.blocks()), (0, 0));
            let mut y = vec![f32::NAN; m];
            f.spmv_cpu(&vec![1.0; n], &mut y);
            assert!(y.iter().all(|&v| v == 0.0));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn random_matrices_match_the_oracle(a in random_csr(), h in 1usize..40, t in 1usize..20) {
            let f = Brc::with_params(&a, h, t).unwrap();
            prop_assert!(check(&f, &a));
            prop_assert_eq!(*f.block_ptr().last().unwrap() as usize, f.stored());
            prop_assert!(f.stored() >= a.nnz());
            prop_assert_eq!(f.row_perm().len(), f.blocks() * h);
            let real: usize = (0..a.nrows()).map(|r| a.row_len(r).div_ceil(t)).sum();
            prop_assert_eq!(f.row_perm().iter().filter(|&&r| r != NO_ROW).count(), real);
            let a32: Csr<f32> = a.cast();
            prop_assert!(check(&Brc::with_params(&a32, h, t).unwrap(), &a32));
            prop_assert!(check(&Brc::new(&a).unwrap(), &a));
        }
    }
}
