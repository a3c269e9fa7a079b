//! HDIA (hacked DIA, Barbieri et al.): the rows cut into hacks of `h` rows (32 in the
//! registered format: one warp), each hack stored DIA-style with only the diagonals it
//! touches.
//!
//! - `hack_offsets` (`hacks + 1` entries, cumulative): hack `k` holds the diagonals
//!   `hack_offsets[k] .. hack_offsets[k+1]` of the lists below (the paper's `hackOffsets`).
//! - `offsets`: each hack's sorted offsets, hack after hack (the paper's `hdi_offsets`).
//! - `data`: each hack's block, `h` slots per diagonal: the slot of local row `l` on stored
//!   diagonal `i` (counted over all hacks) is `data[i·h + l]` (the paper's `hdi_data`). The
//!   last hack is padded to `h` rows, so a hack's operands are `dig_k × h` as in the paper.
//!
//! The example matrix of [`dia`](super::dia) with hacks of 2 rows (32 on the GPU; a small
//! `h` keeps the example short):
//! ```text
//!      c0 c1 c2 c3 c4 c5 c6 c7
//! r0 |  1  .  .  .  .  .  .  . |   hack 0 (rows 0-1): {0}
//! r1 |  .  2  .  .  .  .  .  . |
//! r2 |  .  .  3  4  .  .  .  . |   hack 1 (rows 2-3): {0, 1}
//! r3 |  .  .  .  5  6  .  .  . |
//! r4 |  .  .  7  .  8  9  . 10 |   hack 2 (rows 4-5): {-2, 0, 1, 3}
//! r5 |  .  .  . 11  . 12 13  . |
//! r6 |  .  .  .  . 14  . 15 16 |   hack 3 (rows 6-7): {-2, 0, 1}
//! r7 |  .  .  .  .  . 17  . 18 |
//!
//! hack_offsets = [0, 1, 3, 7, 10]
//! offsets      = [0 | 0, 1 | -2, 0, 1, 3 | -2, 0, 1]
//! data         = [1, 2 | 3, 5, 4, 6 | 7, 11, 8, 12, 9, 13, 10, 0 | 14, 17, 15, 18, 16, 0]
//! ```
//! 20 slots for 18 entries: 2 padded zeros (`d = 3` and `d = 1` leave the matrix in rows 5
//! and 7), against DIA's 14; with hacks of 4 rows, 24 slots. Operands per hack: {2, 4, 8, 6}.
//!
//! **Kernel.** One thread per row (blocks of 256 threads): row `r` is lane `r mod h` of hack
//! `r / h`; it walks the hack's diagonals, adding `data[i·h + lane] · x[r + offsets[i]]` when
//! the column lies inside the matrix. With h = 32 a warp is one hack: one trip count, 32
//! consecutive slots per load. Rows add their diagonals in ascending order: deterministic.
//! Hacks cost in proportion to their diagonals, so a warp's work varies with the structure
//! (the imbalance DRM addresses); the statistics report the operand variance per hack.
//!
//! **Limits.** As DIA (see [`dia`](super::dia)): the stored slots `Σ dig_k · h` obey the
//! family's padding limit (20 × nnz above 2^20 slots, 140 GiB of values and the host's memory), checked before
//! allocating; `hack_offsets` is 32-bit, slot offsets 64-bit.

mod cpu;
mod gpu;

use std::time::Instant;

use super::dia::diagonals::{self, OperandSpread, SegmentBlocks, SEGMENT_ROWS};
use super::{FormatInfo, Param};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The format's CUDA kernels (`kernel.cu`, after the diagonal family's `diagonals.cuh`).
pub const KERNELS: KernelModule = KernelModule {
    name: "hdia",
    source: include_str!("kernel.cu"),
    headers: &[diagonals::CUDA_HEADER],
};

const NAME: &str = "hdia";

/// A matrix in HDIA (see the module doc for the layout).
pub struct Hdia<T> {
    nrows: usize,
    /// Rows per hack.
    hack_rows: usize,
    /// `diag_ptr` is `hack_offsets`.
    blocks: SegmentBlocks<T>,
    /// Slots whose row and column lie inside the matrix (what the kernel reads of `data`).
    in_range: usize,
    operands: OperandSpread,
    conversion: diagonals::Conversion,
}

impl<T: Scalar> Hdia<T> {
    /// Converts from CSR with hacks of 32 rows.
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_hack_rows(a, SEGMENT_ROWS)
    }

    /// Converts from CSR with hacks of `hack_rows ≥ 1` rows; refuses beyond the padding limit.
    pub fn with_hack_rows(a: &Csr<T>, hack_rows: usize) -> Result<Self> {
        diagonals::check_shape(NAME, a)?;
        if hack_rows == 0 || hack_rows > i32::MAX as usize {
            return Err(Error::format(
                NAME,
                format!("{hack_rows} rows per hack: the hack height must be in 1..2^31"),
            ));
        }
        let (m, n, h) = (a.nrows(), a.ncols(), hack_rows);
        let (hack_diagonals, scan_ms) = diagonals::scan_segments(NAME, a, h, "HDIA", "hacks")?;

        let t = Instant::now();
        let order: Vec<u32> = (0..hack_diagonals.len() as u32).collect();
        let blocks = diagonals::build_segments(a, h, &hack_diagonals, &order);
        let in_range = diagonals::segment_slots_in_range(&hack_diagonals, h, m, n);
        let operands = OperandSpread::of(hack_diagonals.iter().map(|o| (o.len() * h) as u64));
        let conversion =
            diagonals::Conversion::of(a, [("scan_ms", scan_ms), ("fill_ms", ms_since(t))]);
        Ok(Hdia { nrows: m, hack_rows: h, blocks, in_range, operands, conversion })
    }

    /// Rows per hack (h).
    pub fn hack_rows(&self) -> usize {
        self.hack_rows
    }
    /// Number of hacks (⌈m / h⌉).
    pub fn hacks(&self) -> usize {
        self.blocks.diag_ptr.len() - 1
    }
    /// Cumulative diagonal count per hack (`hacks + 1` entries).
    pub fn hack_offsets(&self) -> &[u32] {
        &self.blocks.diag_ptr
    }
    /// Each hack's offsets, hack after hack.
    pub fn offsets(&self) -> &[i32] {
        &self.blocks.offsets
    }
    /// `hack_rows` slots per stored diagonal.
    pub fn data(&self) -> &[T] {
        &self.blocks.values
    }
    /// Stored slots, padding included.
    pub fn stored(&self) -> usize {
        self.blocks.values.len()
    }
    /// Operands (stored slots) per hack.
    pub fn operand_spread(&self) -> OperandSpread {
        self.operands
    }
    fn index_bytes(&self) -> usize {
        4 * (self.blocks.diag_ptr.len() + self.blocks.offsets.len())
    }
    /// Device bytes: `hack_offsets` (`u32`), `offsets` (`i32`), `data`.
    pub fn device_bytes(&self) -> usize {
        self.index_bytes() + std::mem::size_of::<T>() * self.stored()
    }
}

impl<T: Scalar> SpmvFormat<T> for Hdia<T> {
    fn stats(&self) -> FormatStats {
        let own =
            [("hack_rows", self.hack_rows as f64), ("diagonals", self.blocks.offsets.len() as f64)];
        self.conversion.stats(
            self.device_bytes(),
            self.stored(),
            own,
            &[("operand", self.operands)],
        )
    }
    /// All but the slots outside the matrix.
    fn bytes_read(&self) -> usize {
        self.index_bytes() + std::mem::size_of::<T>() * self.in_range
    }
    super::cpu_and_device!(gpu::upload);
}

/// The registry's entry for `hdia` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "hdia",
        "HDIA, hacks of hack_rows rows (default 32) each stored DIA-style with its own diagonals, one thread per row",
        |a, s| Ok(Box::new(Hdia::with_hack_rows(a, s.usize("hack_rows", 1)?)?)),
    )
    .params(&[Param { key: "hack_rows", default: "32", doc: "rows per hack (≥ 1)" }])
    .kernels(&[KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests;
