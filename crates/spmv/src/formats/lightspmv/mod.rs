//! LightSpMV (Liu & Schmidt 2018; the baseline of the BRCP paper, papers/003): CSR-vector
//! whose rows are not assigned by thread index but handed out at run time by a global atomic
//! row counter.
//!
//! The storage is plain CSR (32-bit offsets and columns on the device) plus one `u32`
//! counter. A *vector* of `L` lanes computes one row; `L` is the smallest power of two ≥ the
//! mean row length, within 2..=32 (the rule of `csr-vector`, so the two differ only in how
//! rows reach the vectors). A warp holds `32 / L` vectors; its lane 0 takes the next `32 / L`
//! rows with one `atomicAdd(counter, 32 / L)`, broadcasts the first with a shuffle, and the
//! warp's vectors compute those rows; then it fetches again, until the counter passes the
//! last row. The grid holds only as many warps as the device keeps resident, so a warp that
//! drew short rows simply comes back for more: the load balances itself without any
//! preprocessing.
//!
//! ```text
//!     | 1 . 2 . |      row_ptr = [0, 2, 2, 5, 6, 8]
//!     | . . . . |      col_idx = [0, 2, 0, 1, 2, 1, 2, 3]
//! A = | 3 4 5 . |      values  = [1, 2, 3, 4, 5, 6, 7, 8]
//!     | . 6 . . |
//!     | . . 7 8 |      mean row length 8/5 = 1.6  ->  L = 2 lanes, 16 vectors per warp
//!
//! counter = 0 (zeroed on the stream before every launch)
//! warp A: atomicAdd(counter, 16) -> 0    vectors 0..4 take rows 0..4, vectors 5..15 idle
//! warp B: atomicAdd(counter, 16) -> 16   16 >= 5 rows: exits
//! warp A: atomicAdd(counter, 16) -> 32   exits
//!
//! row 2 (entries at positions 2, 3, 4) in its vector of 2 lanes:
//!   lane 0: positions 2, 4  ->  3·x0 + 5·x2
//!   lane 1: position  3     ->  4·x1
//!   y[2] = lane 0 + lane 1  (shuffle reduction)
//! ```
//! **Deterministic.** The result of a row does not depend on which warp takes it, nor when:
//! lane `l` of the vector always adds the row's entries `l, l + L, l + 2L, ...` in order (for
//! L = 32 and rows longer than 32, counted from the row's start rounded down to a multiple of
//! 32, for aligned loads), and the `L` partial sums are combined by the same shuffle tree.
//! Each row is written by exactly one vector, with no atomics on `y`. The dynamic schedule
//! changes only *where* a row is computed, never the order of its additions, so results are
//! bitwise identical from run to run (`deterministic: true` in the registry).
//!
//! The counter must start at 0 for every product: it is zeroed on the stream right before
//! each launch (a 4-byte memset, inside the timed region). Rows are limited to 2^31 − 1 so
//! that the counter, which overshoots the last row by at most one fetch per warp, never wraps;
//! larger matrices are refused with [`Error::Format`].
//!
//! The CPU path (`cpu.rs`) runs the same scheme with rayon's threads as the warps and the
//! same per-row summation order.

mod cpu;
mod gpu;

use super::csr::{lanes, LANES};
use super::FormatInfo;
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};

/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "lightspmv", source: include_str!("kernel.cu"), headers: &[] };

const NAME: &str = "lightspmv";

/// Most rows the 32-bit row counter can hand out without wrapping.
const MAX_ROWS: u32 = i32::MAX as u32;

/// A CSR matrix with LightSpMV's vector width.
pub struct LightSpmv<T> {
    csr: Csr<T>,
    /// Lanes per vector (2, 4, 8, 16 or 32).
    lanes: u32,
}

impl<T: Scalar> LightSpmv<T> {
    /// Copies the CSR matrix and chooses the vector width from its mean row length.
    /// Refuses matrices beyond 32-bit device offsets or the row counter's 2^31 − 1 rows.
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_lanes(a, super::csr::vector_lanes(a.mean_row_len()))
    }

    /// The same with a given vector width (a power of two in 2..=32).
    pub fn with_lanes(a: &Csr<T>, lanes: u32) -> Result<Self> {
        if !(2..=32).contains(&lanes) || !lanes.is_power_of_two() {
            return Err(Error::format(
                NAME,
                format!("{lanes} lanes per vector: must be 2, 4, 8, 16 or 32"),
            ));
        }
        if a.nrows() > MAX_ROWS as usize {
            return Err(Error::format(
                NAME,
                format!("{} rows exceed the 2^31 - 1 of the row counter", a.nrows()),
            ));
        }
        super::check_nnz_u32(NAME, a.nnz())?;
        Ok(LightSpmv { csr: a.clone(), lanes })
    }

    /// Lanes per vector.
    pub fn lanes(&self) -> u32 {
        self.lanes
    }
    /// Vectors per warp, which is also the rows a warp takes per fetch.
    pub fn vectors_per_warp(&self) -> u32 {
        32 / self.lanes
    }
    /// CSR with 32-bit offsets and columns, plus the 4-byte row counter.
    pub fn device_bytes(&self) -> usize {
        super::csr::device_bytes(&self.csr) + 4
    }
}

impl<T: Scalar> SpmvFormat<T> for LightSpmv<T> {
    fn stats(&self) -> FormatStats {
        FormatStats::unpadded(&self.csr, self.device_bytes()).with([
            ("lanes_per_vector", self.lanes as f64),
            ("rows_per_warp_fetch", self.vectors_per_warp() as f64),
            ("cpu_rows_per_fetch", cpu::rows_per_fetch(self.csr.mean_row_len()) as f64),
        ])
    }
    super::cpu_and_device!(gpu::DeviceLightSpmv::new);
}

/// The registry's entry for `lightspmv` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "lightspmv",
        "LightSpMV: CSR-vector, rows handed to vectors of 2-32 lanes by a global atomic counter",
        |a, s| match lanes(s)? {
            None => Ok(Box::new(LightSpmv::new(a)?)),
            Some(l) => Ok(Box::new(LightSpmv::with_lanes(a, l)?)),
        },
    )
    .params(&[LANES])
    .kernels(&[KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests;
