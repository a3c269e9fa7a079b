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

use std::time::Instant;

use rayon::prelude::*;

use super::jds::sort_rows_by_length;
use super::{auto_or, FormatStats, RowFigures, SpmvFormat};
use super::{FormatInfo, Param};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "brc", source: include_str!("kernel.cu"), headers: &[] };

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

/// The rows of `a`, longest first (stable: equal lengths keep their order), as the 32-bit
/// row indices of BRC and BRCP: refused when the rows reach [`NO_ROW`].
pub(crate) fn sorted_rows<T: Scalar>(format: &'static str, a: &Csr<T>) -> Result<Vec<u32>> {
    let m = a.nrows();
    if m >= NO_ROW as usize {
        return Err(Error::format(
            format,
            format!("{m} rows exceed the 2^32 - 2 that 32-bit row indices allow"),
        ));
    }
    let mut sorted: Vec<u32> = (0..m as u32).into_par_iter().collect();
    sort_rows_by_length(a.row_ptr(), &mut sorted);
    Ok(sorted)
}

/// Start of each block of `block_rows` slots and the given widths (`blocks + 1` offsets, the
/// last the stored slots), or `None` when the stored slots exceed the 2^32 − 1 that 32-bit
/// offsets address.
pub(crate) fn block_offsets(
    widths: impl ExactSizeIterator<Item = usize>, block_rows: usize,
) -> Option<Vec<usize>> {
    let mut block_ptr = Vec::with_capacity(widths.len() + 1);
    block_ptr.push(0usize);
    for w in widths {
        let p = block_ptr.last().and_then(|&p: &usize| p.checked_add(w * block_rows));
        block_ptr.push(p.filter(|&p| p <= u32::MAX as usize)?);
    }
    Some(block_ptr)
}

/// The blocks BRC and BRCP store alike: H slots per block, each block padded to its width
/// `w_b` and stored column-major (entry `t` of slot `l` of block `b` at
/// `block_ptr[b] + t·H + l`), the row of every slot in `row_perm`. [`Brc`] and
/// [`Brcp`](super::brcp::Brcp) dereference to theirs, so these are their accessors too.
pub struct BlockArrays<T> {
    /// Slots per block (H).
    block_rows: usize,
    /// Start of each block in `values`/`col_idx`, `blocks + 1` entries.
    block_ptr: Vec<u32>,
    /// Row of each slot (`blocks · H` entries), [`NO_ROW`] for dummy slots.
    row_perm: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    /// Real entries per block (for the balance figure).
    block_nnz: Vec<usize>,
}

/// Writes entries `start..start + len` of a row (`(rc, rv)`, `len ≥ 1`) into lane `lane` of a
/// block of `h` lanes and width `w ≥ len` (entry `t` at slot `t·h + lane`), padded with the
/// last column written and zeros: BRC's pieces and BRCP's runs of a row alike.
pub(crate) fn fill_lane<T: Scalar>(
    cols: &mut [u32], vals: &mut [T], (h, lane, w): (usize, usize, usize),
    (rc, rv): (&[u32], &[T]), (start, len): (usize, usize),
) {
    let pad = rc[start + len - 1];
    for t in 0..w {
        let p = t * h + lane;
        (cols[p], vals[p]) = if t < len { (rc[start + t], rv[start + t]) } else { (pad, T::ZERO) };
    }
}

impl<T: Scalar> BlockArrays<T> {
    /// The blocks of `block_rows` slots starting at `block_ptr` (from [`block_offsets`]),
    /// filled in parallel: `fill(b, rows, slots, cols, vals)` gets block `b`'s slots in
    /// `row_perm` (all [`NO_ROW`] until written) and in the format's own per-slot array
    /// `slot_data`, and its entries in `col_idx` and `values` (zeros until written), and
    /// returns the block's real entries.
    pub(crate) fn fill<S: Send>(
        block_rows: usize, block_ptr: &[usize], slot_data: &mut [S],
        fill: impl Fn(usize, &mut [u32], &mut [S], &mut [u32], &mut [T]) -> usize + Sync,
    ) -> Self {
        let blocks = block_ptr.len() - 1;
        let stored = block_ptr[blocks];
        let mut col_idx = vec![0u32; stored];
        let mut values = vec![T::ZERO; stored];
        let mut row_perm = vec![NO_ROW; blocks * block_rows];
        // One output slice per block, filled in parallel.
        let mut parts = Vec::with_capacity(blocks);
        let (mut cols_rest, mut vals_rest) = (col_idx.as_mut_slice(), values.as_mut_slice());
        for (b, (rows, slots)) in
            row_perm.chunks_mut(block_rows).zip(slot_data.chunks_mut(block_rows)).enumerate()
        {
            let n = block_ptr[b + 1] - block_ptr[b];
            let (cs, cr) = std::mem::take(&mut cols_rest).split_at_mut(n);
            let (vs, vr) = std::mem::take(&mut vals_rest).split_at_mut(n);
            (cols_rest, vals_rest) = (cr, vr);
            parts.push((b, rows, slots, cs, vs));
        }
        let block_nnz: Vec<usize> = parts
            .into_par_iter()
            .with_min_len(16)
            .map(|(b, rows, slots, cols, vals)| fill(b, rows, slots, cols, vals))
            .collect();
        BlockArrays {
            block_rows,
            block_ptr: block_ptr.iter().map(|&p| p as u32).collect(),
            row_perm,
            col_idx,
            values,
            block_nnz,
        }
    }

    /// Slots per block (H).
    pub fn block_rows(&self) -> usize {
        self.block_rows
    }
    /// Number of blocks of H slots.
    pub fn blocks(&self) -> usize {
        self.block_ptr.len() - 1
    }
    /// Stored value slots, padding and dummy slots included.
    pub fn stored(&self) -> usize {
        self.values.len()
    }
    /// Start of each block (`blocks + 1` entries; the last is the stored slot count).
    pub fn block_ptr(&self) -> &[u32] {
        &self.block_ptr
    }
    /// Width of block `b`: `(block_ptr[b+1] − block_ptr[b]) / H`.
    pub fn block_width(&self, b: usize) -> usize {
        (self.block_ptr[b + 1] - self.block_ptr[b]) as usize / self.block_rows
    }
    /// Real entries per block.
    pub fn block_nnz(&self) -> &[usize] {
        &self.block_nnz
    }
    /// Row of each slot ([`NO_ROW`] for dummy slots).
    pub fn row_perm(&self) -> &[u32] {
        &self.row_perm
    }
    /// Column of each entry, column-major per block (entry `t` of slot `l` at
    /// `block_ptr[b] + t·H + l`); padding holds the piece's last column, 0 in dummy slots.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Value of each entry, in the order of `col_idx`; 0 in padding and dummy slots.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Device bytes of the blocks: `block_ptr`, `row_perm`, `col_idx` (all `u32`) and
    /// `values` (all that BRC uploads; BRCP adds its own arrays).
    pub fn device_bytes(&self) -> usize {
        4 * (self.block_ptr.len() + self.row_perm.len() + self.col_idx.len())
            + std::mem::size_of::<T>() * self.values.len()
    }
}

/// One piece of a row: `len` entries of `row` starting at entry `start` of the row.
#[derive(Clone, Copy, Debug)]
struct Piece {
    row: u32,
    start: u32,
    len: u32,
}

/// A matrix in BRC (see the module doc for the layout): its blocks (one slot per piece,
/// [`BlockArrays`], which it dereferences to) and BRC's own figures.
pub struct Brc<T> {
    nrows: usize,
    rows: RowFigures,
    /// Piece length (T).
    threshold: usize,
    arrays: BlockArrays<T>,
    /// Per slot: its row has more than one piece (host only: the CPU path adds those last).
    split: Vec<bool>,
    split_rows: usize,
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
            return Err(Error::format(
                NAME,
                "H = 0 slots per block: a block needs at least one slot",
            ));
        }
        if threshold == 0 {
            return Err(Error::format(NAME, "T = 0: pieces must hold at least one entry"));
        }
        let start = Instant::now();
        let sorted = sorted_rows(NAME, a)?;
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
        let sort_ms = ms_since(start);

        let start = Instant::now();
        let blocks = pieces.len().div_ceil(block_rows);
        let widths: Vec<usize> = (0..blocks).map(|b| pieces[b * block_rows].len as usize).collect();
        let block_ptr = block_offsets(widths.iter().copied(), block_rows).ok_or_else(|| {
            Error::format(
                NAME,
                format!("{nnz} entries in blocks of {block_rows} pieces of up to T = {threshold} need more than 2^32 - 1 stored slots"),
            )
        })?;
        let mut split = vec![false; blocks * block_rows];
        let arrays =
            BlockArrays::fill(block_rows, &block_ptr, &mut split, |b, rows, flags, cols, vals| {
                let first = b * block_rows;
                let w = widths[b];
                let mut entries = 0;
                for (lane, piece) in
                    pieces[first..pieces.len().min(first + block_rows)].iter().enumerate()
                {
                    let (rc, rv) = a.row(piece.row as usize);
                    let (s, len) = (piece.start as usize, piece.len as usize);
                    fill_lane(cols, vals, (block_rows, lane, w), (rc, rv), (s, len));
                    rows[lane] = piece.row;
                    flags[lane] = rc.len() > threshold;
                    entries += len;
                }
                entries
            });
        let fill_ms = ms_since(start);

        Ok(Brc {
            nrows: m,
            rows: RowFigures::of(a),
            threshold,
            arrays,
            split,
            split_rows,
            sort_ms,
            fill_ms,
        })
    }

    /// Piece length (T).
    pub fn threshold(&self) -> usize {
        self.threshold
    }
    /// Rows cut into more than one piece (their sums take several atomics).
    pub fn split_rows(&self) -> usize {
        self.split_rows
    }
}

impl<T> std::ops::Deref for Brc<T> {
    type Target = BlockArrays<T>;
    fn deref(&self) -> &BlockArrays<T> {
        &self.arrays
    }
}

impl<T: Scalar> SpmvFormat<T> for Brc<T> {
    fn stats(&self) -> FormatStats {
        self.rows.stats(self.device_bytes(), self.stored()).with([
            ("threshold", self.threshold as f64),
            ("blocks", self.blocks() as f64),
            ("split_rows", self.split_rows as f64),
            ("block_nnz_cv", coefficient_of_variation(self.block_nnz())),
            ("sort_ms", self.sort_ms),
            ("fill_ms", self.fill_ms),
        ])
    }
    super::cpu_and_device!(gpu::DeviceBrc::new);
}

/// The registry's entry for `brc` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "brc",
        "BRC: sorted rows cut into pieces of T = round(mean + sd) entries, blocks of 32 pieces, one atomicAdd per piece (y zeroed first)",
        |a, s| {
            let with_threshold = |t| Brc::with_params(a, WARP_BLOCK_ROWS, t);
            auto_or(s, "threshold", 1, || Brc::new(a), with_threshold)
        },
    )
    .params(&[Param { key: "threshold", default: "auto", doc: "T, the longest piece (≥ 1; auto: round(mean + sd) of the row lengths)" }])
    .kernels(&[KERNELS])
}

#[cfg(test)]
pub(crate) mod tests;
