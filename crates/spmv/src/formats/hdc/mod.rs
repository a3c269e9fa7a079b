//! HDC (hybrid of DIA and CSR, Yang et al.): the well-filled diagonals in DIA, every other
//! entry in CSR.
//!
//! **Threshold.** A diagonal stored in DIA costs `m` value slots (`s` bytes each, `s` = 8 in
//! f64, 4 in f32) and no index; its `e` entries in CSR would cost `e·(s + 4)` bytes (value and
//! column). A diagonal goes to the DIA part when DIA is no more traffic, i.e. when its fill
//! `e / m ≥ s / (s + 4)`: **2/3 in f64, 1/2 in f32** ([`fill_threshold`]). The paper leaves
//! HDC's threshold open ("the best one is hard to determine"); this one follows from the
//! bytes each part moves, and it bounds the DIA part's padding: its slots are at most
//! `(s + 4)/s ≤ 2` times its entries, so HDC never needs the family's padding limit.
//!
//! - DIA part: `offsets` (ascending) and `data`, `offsets.len() × m`, diagonal-major (the slot
//!   of row `r` on diagonal `i` at `data[i·m + r]`), as in [`dia`](super::dia).
//! - CSR part: `row_ptr` (`m + 1` entries), `col_idx`, `values` of the remaining entries.
//!
//! The example matrix of [`dia`](super::dia) (m = 8): diagonal 0 holds 8 entries, 1 holds 5,
//! -2 holds 4, 3 holds 1. In f64 the threshold is 8·2/3 = 5.33 entries, in f32 4:
//! ```text
//!      c0 c1 c2 c3 c4 c5 c6 c7
//! r0 |  1  .  .  .  .  .  .  . |   f64: offsets = [0]
//! r1 |  .  2  .  .  .  .  .  . |        data    = [1, 2, 3, 5, 8, 12, 15, 18]
//! r2 |  .  .  3  4  .  .  .  . |        row_ptr = [0, 0, 0, 1, 2, 5, 7, 9, 10]
//! r3 |  .  .  .  5  6  .  .  . |        col_idx = [3, 4, 2, 5, 7, 3, 6, 4, 7, 5]
//! r4 |  .  .  7  .  8  9  . 10 |        values  = [4, 6, 7, 9, 10, 11, 13, 14, 16, 17]
//! r5 |  .  .  . 11  . 12 13  . |
//! r6 |  .  .  .  . 14  . 15 16 |   f32: offsets = [-2, 0, 1], 24 slots (7 padded zeros);
//! r7 |  .  .  .  .  . 17  . 18 |        CSR holds (4, 7) = 10 only
//! ```
//!
//! **Kernel.** One thread per row: the DIA part as in DIA's kernel (coalesced, column
//! guard), then the row's CSR entries (one thread per row: the leftovers are few and short
//! on the matrices HDC is for), one write of `y[r]`; the CSR loop is skipped altogether when
//! the CSR part is empty. Each row adds its diagonals in ascending order, then its CSR
//! entries: deterministic. The CPU path does the same over chunks of rows.
//!
//! Limits: rows and columns below 2^31 (32-bit signed offsets), the CSR part below 2^32
//! entries; the 140 GiB cap of the family applies to the DIA part.

mod cpu;
mod gpu;

use std::time::Instant;

use rayon::prelude::*;

use super::dia::diagonals::{self, OperandSpread, PADDING_LIMIT_RATIO, SEGMENT_ROWS};
use super::FormatInfo;
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The format's CUDA kernels (`kernel.cu`, after the diagonal family's `diagonals.cuh`).
pub const KERNELS: KernelModule = KernelModule {
    name: "hdc",
    source: include_str!("kernel.cu"),
    headers: &[diagonals::CUDA_HEADER],
};

/// The block kernels (`block.cu`: tiles and lanes, common.cuh's shapes).
pub const BLOCK_KERNELS: KernelModule = KernelModule {
    name: "hdc_block",
    source: include_str!("block.cu"),
    headers: &[diagonals::CUDA_HEADER],
};

const NAME: &str = "hdc";

/// Rows per task of the CSR part's parallel fill.
const ROW_CHUNK: usize = 4096;

/// The fill ratio (entries / rows) from which a diagonal is stored in DIA: `s / (s + 4)` for
/// values of `s` bytes (2/3 in f64, 1/2 in f32).
pub fn fill_threshold<T: Scalar>() -> f64 {
    let s = std::mem::size_of::<T>() as f64;
    s / (s + 4.0)
}

/// A matrix in HDC (see the module doc for the layout).
pub struct Hdc<T> {
    nrows: usize,
    offsets: Vec<i32>,
    /// `offsets.len() × nrows`, diagonal-major.
    data: Vec<T>,
    row_ptr: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    /// DIA slots whose column lies inside the matrix.
    in_range: usize,
    conversion: diagonals::Conversion,
}

impl<T: Scalar> Hdc<T> {
    /// Converts from CSR with the threshold of [`fill_threshold`].
    pub fn new(a: &Csr<T>) -> Result<Self> {
        diagonals::check_shape(NAME, a)?;
        let (m, n) = (a.nrows(), a.ncols());
        let t = Instant::now();
        let s = std::mem::size_of::<T>() as u64;
        // entries / m ≥ s / (s + 4), in integers.
        let offsets: Vec<i32> = diagonals::census(a)
            .iter()
            .filter(|d| d.entries as u64 * (s + 4) >= s * m as u64)
            .map(|d| d.offset)
            .collect();
        let scan_ms = ms_since(t);
        let layout = format!("HDC's DIA part of {} diagonals x {m} rows", offsets.len());
        let stored = offsets.len() as u128 * m as u128;
        diagonals::check_padding(
            NAME,
            &layout,
            stored,
            a.nnz(),
            s as usize,
            PADDING_LIMIT_RATIO as f64,
        )?;

        let t = Instant::now();
        let mut data = vec![T::ZERO; offsets.len() * m];
        diagonals::fill_diagonals(a, 0..m, &offsets, &mut data);
        // CSR part: the entries off the DIA diagonals (a row's offsets ascend, as do `offsets`).
        let in_dia = |r: usize, c: u32| offsets.binary_search(&diagonals::offset_of(r, c)).is_ok();
        let lens: Vec<usize> = (0..m)
            .into_par_iter()
            .map(|r| a.row(r).0.iter().filter(|&&c| !in_dia(r, c)).count())
            .collect();
        let mut row_ptr = Vec::with_capacity(m + 1);
        row_ptr.push(0usize);
        for (r, &l) in lens.iter().enumerate() {
            row_ptr.push(row_ptr[r] + l);
        }
        let rest = row_ptr[m];
        if rest > u32::MAX as usize {
            return Err(Error::format(
                NAME,
                format!("{rest} entries off the DIA part exceed 32-bit CSR offsets"),
            ));
        }
        let mut col_idx = vec![0u32; rest];
        let mut values = vec![T::ZERO; rest];
        let mut parts = Vec::with_capacity(m.div_ceil(ROW_CHUNK));
        let (mut cols_rest, mut vals_rest) = (col_idx.as_mut_slice(), values.as_mut_slice());
        for row0 in (0..m).step_by(ROW_CHUNK) {
            let row1 = (row0 + ROW_CHUNK).min(m);
            let len = row_ptr[row1] - row_ptr[row0];
            let (cs, cr) = std::mem::take(&mut cols_rest).split_at_mut(len);
            let (vs, vr) = std::mem::take(&mut vals_rest).split_at_mut(len);
            (cols_rest, vals_rest) = (cr, vr);
            parts.push((row0..row1, cs, vs));
        }
        parts.into_par_iter().for_each(|(rows, cs, vs)| {
            let mut k = 0;
            for r in rows {
                let (cols, vals) = a.row(r);
                for (&c, &v) in cols.iter().zip(vals) {
                    if !in_dia(r, c) {
                        (cs[k], vs[k]) = (c, v);
                        k += 1;
                    }
                }
            }
        });
        let in_range = diagonals::slots_in_range(0, m, &offsets, m, n);
        let row_ptr = row_ptr.iter().map(|&p| p as u32).collect();
        let conversion =
            diagonals::Conversion::of(a, [("scan_ms", scan_ms), ("fill_ms", ms_since(t))]);
        Ok(Hdc { nrows: m, offsets, data, row_ptr, col_idx, values, in_range, conversion })
    }

    /// The DIA part's diagonals.
    pub fn offsets(&self) -> &[i32] {
        &self.offsets
    }
    /// The DIA part, `offsets().len() × nrows`, diagonal-major.
    pub fn data(&self) -> &[T] {
        &self.data
    }
    /// The CSR part: `row_ptr`, `col_idx`, `values`.
    pub fn csr_part(&self) -> (&[u32], &[u32], &[T]) {
        (&self.row_ptr, &self.col_idx, &self.values)
    }
    /// Entries held by the DIA part.
    pub fn dia_entries(&self) -> usize {
        self.conversion.nnz - self.values.len()
    }
    /// Stored slots: the DIA part's (padding included) plus the CSR entries.
    pub fn stored(&self) -> usize {
        self.data.len() + self.values.len()
    }
    fn csr_bytes(&self) -> usize {
        4 * self.row_ptr.len() + (4 + std::mem::size_of::<T>()) * self.values.len()
    }
    /// Device bytes of both parts.
    pub fn device_bytes(&self) -> usize {
        4 * self.offsets.len() + std::mem::size_of::<T>() * self.data.len() + self.csr_bytes()
    }
    /// Operands per warp of 32 rows: its DIA slots plus its CSR entries.
    pub fn operand_spread(&self) -> OperandSpread {
        let (m, s) = (self.nrows, self.offsets.len());
        OperandSpread::of((0..m.div_ceil(SEGMENT_ROWS)).map(move |w| {
            let rows = diagonals::segment_rows(w, SEGMENT_ROWS, m);
            (s * rows.len() + (self.row_ptr[rows.end] - self.row_ptr[rows.start]) as usize) as u64
        }))
    }
}

impl<T: Scalar> SpmvFormat<T> for Hdc<T> {
    fn stats(&self) -> FormatStats {
        let own = [
            ("fill_threshold", fill_threshold::<T>()),
            ("diagonals", self.offsets.len() as f64),
            ("dia_entries", self.dia_entries() as f64),
            ("csr_entries", self.values.len() as f64),
        ];
        let spreads = [("operand", self.operand_spread())];
        self.conversion.stats(self.device_bytes(), self.stored(), own, &spreads)
    }
    /// DIA slots inside the matrix; no CSR part when it is empty (the kernel skips it).
    fn bytes_read(&self) -> usize {
        let csr = if self.values.is_empty() { 0 } else { self.csr_bytes() };
        4 * self.offsets.len() + std::mem::size_of::<T>() * self.in_range + csr
    }
    super::cpu_and_device!(gpu::upload);
}

/// The registry's entry for `hdc` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "hdc",
        "HDC, DIA for diagonals filled above s/(s+4) (2/3 in f64, 1/2 in f32), CSR for the rest",
        |a, _| Ok(Box::new(Hdc::new(a)?)),
    )
    .kernels(&[KERNELS, BLOCK_KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests;
