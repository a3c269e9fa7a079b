//! SELL-C-σ (sliced ELL, Kreutzer et al. 2014): rows sorted by length within windows of σ
//! rows, cut into slices of C rows, each slice stored as its own column-major ELL.
//!
//! - **Sorting.** The rows are cut into windows of σ consecutive rows (`0..σ`, `σ..2σ`, ...);
//!   each window is sorted by row length, longest first, with a *stable* sort (rows of equal
//!   length keep their original order). `perm[i]` is the original row at sorted position
//!   `i`. σ may be any value ≥ 1: σ = 1 keeps the original order (plain sliced ELL), σ ≥ m
//!   is a full sort (σ is clamped to m), which is JDS with ELL sections. A σ that is a
//!   multiple of C keeps each window's slices to itself; any other σ is valid too (slices
//!   then straddle windows, which only costs padding). Sorting within a window of exactly
//!   C aligned rows changes nothing in the padding, so useful values are 1 and multiples
//!   of C from 2C up. The registered `sell-c-sigma` uses C = 32 and σ = m (full sort).
//! - **Slices.** Sorted rows `s·C .. s·C + h_s` form slice `s`, with `h_s = min(C, m − s·C)`
//!   (the last slice holds only the rows that exist: no padding rows are stored). The slice
//!   is padded to its longest row, `slice_width[s]`, and stored column-major: entry `t` of
//!   the slice's row `l` sits at `slice_ptr[s] + t·h_s + l`. Padding slots hold the value 0
//!   and a valid column (the row's last real column, or 0 for an empty row), so the kernel
//!   reads `x` without a branch.
//!
//! With C = 2 (C = 32 on the GPU; a small C keeps the example short):
//! ```text
//!     | 1 . 2 . |  row 0: 2 entries
//!     | . . . . |  row 1: 0
//! A = | 3 4 5 . |  row 2: 3
//!     | . 6 . . |  row 3: 1
//!     | . . 7 8 |  row 4: 2
//!
//! σ = 5 (full sort):  perm        = [2, 0, 4, 3, 1]
//!                     slice_width = [3, 2, 0]              slices {2,0} {4,3} {1}
//!                     slice_ptr   = [0, 6, 10, 10]
//!                                   |slice 0 (3 x 2)  |slice 1  |
//!                     values      = [3, 1, 4, 2, 5, 0, 7, 6, 8, 0]
//!                     col_idx     = [0, 0, 1, 2, 2, 2, 2, 1, 3, 1]      10 slots, 2 padding
//!
//! σ = 1 (no sort):    perm        = [0, 1, 2, 3, 4]
//!                     slice_width = [2, 3, 2]              slices {0,1} {2,3} {4}
//!                     slice_ptr   = [0, 4, 10, 12]
//!                     values      = [1, 0, 2, 0, 3, 6, 4, 0, 5, 0, 7, 8]
//!                     col_idx     = [0, 0, 2, 0, 0, 1, 1, 1, 2, 1, 2, 3]  12 slots, 4 padding
//! ```
//! The kernel runs one thread per sorted row: thread `i` finds its slice `s = i / C` and
//! lane `l = i − s·C`, walks the slice's `slice_width[s]` columns with stride `h_s` and
//! writes `y[perm[i]]`. C is a run-time argument, so any C ≥ 1 runs on the GPU; with
//! C = 32 (and blocks of 256 threads) each warp is exactly one slice: the same trip count
//! for all its lanes and 32 consecutive values per load (coalesced). Rows with no entries
//! write 0; threads past the last row exit, so the partial last slice writes nothing out
//! of bounds.
//!
//! Rows, columns and slice widths are 32-bit on the device (`perm`, `slice_width`, `col_idx`
//! are `u32`); the slice offsets are 32-bit below 2^31 stored slots (entries plus padding)
//! and 64-bit from there on ([`OffsetWidth`], `offsets=` in the spec), so a slice's slots are
//! addressed in the width of its offset.

pub(crate) mod cpu;
mod gpu;

use rayon::prelude::*;

use super::jds::sort_rows_by_length;
use super::offsets::OffsetWidth;
use super::{offsets, FormatInfo, Param, RowFigures};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};

/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "sell", source: include_str!("kernel.cu"), headers: &[] };

/// Its block kernels, A·X (`block.cu`; compiled only when a block product runs).
pub const BLOCK_KERNELS: KernelModule =
    KernelModule { name: "sell_block", source: include_str!("block.cu"), headers: &[] };

/// Rows per slice of the registered format: one warp.
pub const DEFAULT_C: usize = 32;

const NAME: &str = "sell-c-sigma";

/// A matrix in SELL-C-σ (see the module doc for the layout).
pub struct SellCSigma<T> {
    nrows: usize,
    ncols: usize,
    rows: RowFigures,
    /// Rows per slice.
    c: usize,
    /// Sorting window, clamped to 1..=max(m, 1).
    sigma: usize,
    /// Sorted position → original row.
    perm: Vec<u32>,
    /// Start of each slice, `slices + 1` entries, the last is `stored`.
    slice_ptr: Vec<usize>,
    /// The width of `slice_ptr` on the device.
    offsets: OffsetWidth,
    /// Longest row of each slice.
    slice_width: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
}

impl<T: Scalar> SellCSigma<T> {
    /// Converts from CSR with `c` rows per slice and sorting windows of `sigma` rows.
    ///
    /// `c ≥ 1`; `sigma ≥ 1` (values above m mean a full sort; `sigma = m` is accepted for
    /// an empty matrix too). Windows are sorted in parallel and slices filled in parallel.
    pub fn new(a: &Csr<T>, c: usize, sigma: usize) -> Result<Self> {
        let (m, nnz) = (a.nrows(), a.nnz());
        if c == 0 || c > u32::MAX as usize {
            return Err(Error::format(
                NAME,
                format!("C = {c} rows per slice: C must be in 1..=2^32 - 1"),
            ));
        }
        if sigma == 0 && m > 0 {
            return Err(Error::format(
                NAME,
                "σ = 0: the sorting window must hold at least one row",
            ));
        }
        if m > u32::MAX as usize {
            return Err(Error::format(NAME, format!("{m} rows exceed 32-bit row indices")));
        }
        let sigma = sigma.clamp(1, m.max(1));
        let row_ptr = a.row_ptr();
        let len = |r: u32| row_ptr[r as usize + 1] - row_ptr[r as usize];

        let mut perm: Vec<u32> = (0..m as u32).into_par_iter().collect();
        if sigma > 1 {
            perm.par_chunks_mut(sigma).for_each(|window| sort_rows_by_length(row_ptr, window));
        }
        let widths: Vec<usize> =
            perm.par_chunks(c).map(|s| s.iter().map(|&r| len(r)).max().unwrap_or(0)).collect();

        // Slice offsets (each slice holds at most C · max row length ≤ 2^32 · ncols slots:
        // no overflow of a 64-bit usize).
        let mut offsets = Vec::with_capacity(widths.len() + 1);
        offsets.push(0usize);
        for (s, &w) in widths.iter().enumerate() {
            offsets.push(offsets[s] + c.min(m - s * c) * w);
        }
        let stored = offsets[widths.len()];
        crate::error::check_host_memory(
            || {
                format!("format {NAME}: {nnz} entries padded to {stored} slots in slices of C = {c} rows (σ = {sigma})")
            },
            (stored * (4 + std::mem::size_of::<T>())) as u64,
        )?;

        // One output slice per SELL slice, filled in parallel.
        let mut col_idx = vec![0u32; stored];
        let mut values = vec![T::ZERO; stored];
        let mut slices = Vec::with_capacity(widths.len());
        let (mut cols_rest, mut vals_rest) = (col_idx.as_mut_slice(), values.as_mut_slice());
        for s in 0..widths.len() {
            let n = offsets[s + 1] - offsets[s];
            let (cs, cr) = std::mem::take(&mut cols_rest).split_at_mut(n);
            let (vs, vr) = std::mem::take(&mut vals_rest).split_at_mut(n);
            (cols_rest, vals_rest) = (cr, vr);
            slices.push((s, cs, vs));
        }
        slices.into_par_iter().with_min_len(16).for_each(|(s, cols, vals)| {
            let rows = &perm[s * c..(s * c + c).min(m)];
            let (h, w) = (rows.len(), widths[s]);
            for (lane, &r) in rows.iter().enumerate() {
                let (rc, rv) = a.row(r as usize);
                let pad = rc.last().copied().unwrap_or(0);
                for t in 0..w {
                    let p = t * h + lane;
                    (cols[p], vals[p]) = if t < rc.len() { (rc[t], rv[t]) } else { (pad, T::ZERO) };
                }
            }
        });

        Ok(SellCSigma {
            nrows: m,
            ncols: a.ncols(),
            rows: RowFigures::of(a),
            c,
            sigma,
            perm,
            offsets: OffsetWidth::auto(stored),
            slice_ptr: offsets,
            slice_width: widths.iter().map(|&w| w as u32).collect(),
            col_idx,
            values,
        })
    }

    /// The same with slice offsets of `offsets` bits (refused when 32 bits cannot index
    /// the stored slots).
    pub fn with_offsets(mut self, offsets: OffsetWidth) -> Result<Self> {
        self.offsets = offsets.fits(NAME, self.stored())?;
        Ok(self)
    }
    /// Rows per slice (C).
    pub fn chunk_rows(&self) -> usize {
        self.c
    }
    /// The sorting window (σ, clamped to 1..=max(m, 1)).
    pub fn sigma(&self) -> usize {
        self.sigma
    }
    /// Number of slices (⌈m / C⌉).
    pub fn slices(&self) -> usize {
        self.slice_width.len()
    }
    /// Sorted position → original row.
    pub fn perm(&self) -> &[u32] {
        &self.perm
    }
    /// Start of each slice (`slices + 1` entries, the last is the stored slot count).
    pub fn slice_ptr(&self) -> &[usize] {
        &self.slice_ptr
    }
    /// Longest row (= padded width) of each slice.
    pub fn slice_width(&self) -> &[u32] {
        &self.slice_width
    }
    /// Column of each slot, slice after slice, column-major within a slice; padding repeats the
    /// row's last column (0 for an empty row).
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Value of each slot, in the order of `col_idx`; 0 in padding.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Stored slots, padding included.
    pub fn stored(&self) -> usize {
        self.values.len()
    }
    /// Device bytes: `perm`, `slice_width`, `col_idx` (`u32`), `slice_ptr` (32 or 64 bits)
    /// and `values`.
    pub fn device_bytes(&self) -> usize {
        4 * (self.perm.len() + self.slice_width.len() + self.col_idx.len())
            + self.offsets.bytes() * self.slice_ptr.len()
            + std::mem::size_of::<T>() * self.values.len()
    }
}

impl<T: Scalar> SpmvFormat<T> for SellCSigma<T> {
    fn stats(&self) -> FormatStats {
        self.rows.stats(self.device_bytes(), self.stored()).with([
            ("slices", self.slices() as f64),
            ("sigma", self.sigma as f64),
            ("chunk_rows", self.c as f64),
            ("offset_bytes", self.offsets.bytes() as f64),
        ])
    }
    super::cpu_and_device!(gpu::DeviceSell::new);
}

/// The registry's entry for `sell-c-sigma` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "sell-c-sigma",
        "sliced ELL, C rows per slice (default 32), rows sorted by length within windows of σ rows (default: full sort)",
        |a, s| {
            let sigma = s.auto_usize("sigma", 1)?.unwrap_or(a.nrows());
            let sell = SellCSigma::new(a, s.usize("c", 1)?, sigma)?;
            Ok(Box::new(match OffsetWidth::requested(s)? {
                Some(width) => sell.with_offsets(width)?,
                None => sell,
            }))
        },
    )
    .params(&[
        Param { key: "c", default: "32", doc: "rows per slice (≥ 1; 32 makes a slice one warp)" },
        Param { key: "sigma", default: "auto", doc: "rows per sorting window (≥ 1; auto: all rows, a full sort)" },
        offsets::OFFSETS,
    ])
    .kernels(&[KERNELS, BLOCK_KERNELS])
    .deterministic()
    .wide()
}

#[cfg(test)]
mod tests;
