//! DIA (diagonal storage, Bell & Garland 2009): every occupied diagonal stored as a dense
//! array of `m` slots, one offset per diagonal.
//!
//! Diagonal `d = col − row` holds the entries `(r, r + d)`. `offsets` lists the occupied
//! diagonals in ascending order; `data` is `offsets.len() × m`, diagonal-major: the slot of
//! row `r` on diagonal `i` is `data[i·m + r]`, holding `A(r, r + offsets[i])` or an explicit
//! zero (a gap on the diagonal, or a column outside the matrix). Stored slots = S·m (the
//! paper's `ope_DIA = S × N`), padded zeros = S·m − nnz.
//!
//! The example matrix of the diagonal family (8 × 8, 18 entries, 4 diagonals; built so that
//! its figures match the DRM paper's Fig. 5–7: DIA pads 14 zeros, segments of 2 rows pad 2,
//! segments of 4 rows pad 6, and the segments' operand counts are {2, 4, 8, 6}):
//! ```text
//!      c0 c1 c2 c3 c4 c5 c6 c7
//! r0 |  1  .  .  .  .  .  .  . |      offsets = [-2, 0, 1, 3]
//! r1 |  .  2  .  .  .  .  .  . |
//! r2 |  .  .  3  4  .  .  .  . |      data (4 x 8, one line per diagonal):
//! r3 |  .  .  .  5  6  .  .  . |      d = -2:  [ 0,  0,  0,  0,  7, 11, 14, 17]
//! r4 |  .  .  7  .  8  9  . 10 |      d =  0:  [ 1,  2,  3,  5,  8, 12, 15, 18]
//! r5 |  .  .  . 11  . 12 13  . |      d =  1:  [ 0,  0,  4,  6,  9, 13, 16,  0]
//! r6 |  .  .  .  . 14  . 15 16 |      d =  3:  [ 0,  0,  0,  0, 10,  0,  0,  0]
//! r7 |  .  .  .  .  . 17  . 18 |      32 slots, 18 entries, 14 padded zeros
//! ```
//! Slots `d = -2` rows 0–1 and `d = 1` row 7 and `d = 3` rows 5–7 lie outside the matrix.
//!
//! **Kernel.** One thread per row loops over the diagonals: column `c = r + offsets[i]`; when
//! `c` lies inside the matrix it adds `data[i·m + r] · x[c]` (the guard is one unsigned
//! compare: a negative `c` wraps past `n`). Neighbouring threads read neighbouring slots of
//! each diagonal (coalesced) and neighbouring `x` entries; every thread of a warp reads the
//! same offset (a broadcast). No column indices are stored, which is DIA's whole appeal, and
//! its weakness: one stray entry adds a whole diagonal of `m` slots (add32: 3,767 diagonals
//! for 19,848 entries). Each row adds its diagonals in ascending order, so the result is
//! deterministic; the CPU path streams the same blocks diagonal by diagonal, over chunks of
//! rows in parallel.
//!
//! **Limits.** Offsets are 32-bit signed (rows and columns below 2^31), slot offsets 64-bit.
//! Before allocating, the conversion refuses ([`Error::Format`], naming
//! the padded zeros, the ratio and the limit) any matrix whose S·m slots exceed
//! `max_padding` × nnz (unless at most [`PADDING_FLOOR_SLOTS`] = 2^20 slots) or whose values
//! would exceed [`MAX_STORED_BYTES`] = 140 GiB or the host's available memory. `max_padding` is the registry's parameter of
//! that name ([`Dia::with_limit`]), by default [`PADDING_LIMIT_RATIO`] = 20. HDIA,
//! DIA-Adaptive and DRM apply the default limit to their own stored slots; HDC's DIA part
//! stays within it by construction.
//!
//! [`diagonals`] holds what the whole family shares (census, fills, CPU block product and
//! loops, padding limit, operand figures and statistics, kernel set-up).

pub(crate) mod cpu;
pub mod diagonals;
pub(crate) mod gpu;

use std::sync::Arc;
use std::time::Instant;

pub use diagonals::{
    OperandSpread, MAX_STORED_BYTES, PADDING_FLOOR_SLOTS, PADDING_LIMIT_RATIO, SEGMENT_ROWS,
};

use super::ell::{max_padding, MAX_PADDING};
use super::values::{EncodedValues, ValueChoice, ValueCodec};
use super::{values, FormatInfo};
use super::{DeviceFormat, FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The format's CUDA kernels (`kernel.cu`, after `diagonals.cuh` and the value loaders).
pub const KERNELS: KernelModule = KernelModule {
    name: "dia",
    source: include_str!("kernel.cu"),
    headers: &[diagonals::CUDA_HEADER, super::values::CUDA_HEADER],
};

/// Its block kernels, A·X (`block.cu`; compiled only when a block product runs).
pub const BLOCK_KERNELS: KernelModule = KernelModule {
    name: "dia_block",
    source: include_str!("block.cu"),
    headers: &[diagonals::CUDA_HEADER, super::values::CUDA_HEADER],
};

const NAME: &str = "dia";

/// A matrix in DIA (see the module doc for the layout).
pub struct Dia<T> {
    nrows: usize,
    offsets: Vec<i32>,
    /// `offsets.len() × nrows`, diagonal-major.
    data: Vec<T>,
    /// Slots whose column lies inside the matrix (what the kernel reads of `data`).
    in_range: usize,
    /// The slots coded narrower (`values` other than full; `data` is then empty).
    coded: Option<EncodedValues<T>>,
    conversion: diagonals::Conversion,
}

impl<T: Scalar> Dia<T> {
    /// Converts from CSR; refuses beyond the default padding limit (see the module doc).
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_limit(a, PADDING_LIMIT_RATIO as f64)
    }

    /// Converts from CSR; refuses when the stored slots exceed `max_padding ≥ 1` times the
    /// entries (arrays of at most [`PADDING_FLOOR_SLOTS`] slots are always accepted).
    pub fn with_limit(a: &Csr<T>, max_padding: f64) -> Result<Self> {
        if max_padding.is_nan() || max_padding < 1.0 {
            return Err(Error::format(
                NAME,
                format!("padding limit {max_padding}: must be a number ≥ 1"),
            ));
        }
        diagonals::check_shape(NAME, a)?;
        let t = Instant::now();
        let offsets: Vec<i32> = diagonals::census(a).iter().map(|d| d.offset).collect();
        Self::with_offsets(NAME, a, offsets, ms_since(t), max_padding)
    }

    /// DIA on the given occupied diagonals (every entry's offset among them), found in
    /// `scan_ms`, with errors under the name of `format` (DIA-Adaptive's DIA layout); checks
    /// the padding limit `max_padding` before allocating.
    pub(crate) fn with_offsets(
        format: &'static str, a: &Csr<T>, offsets: Vec<i32>, scan_ms: f64, max_padding: f64,
    ) -> Result<Self> {
        let (m, n) = (a.nrows(), a.ncols());
        let stored = offsets.len() as u128 * m as u128;
        let layout = format!("DIA with {} diagonals x {m} rows", offsets.len());
        diagonals::check_padding(
            format,
            &layout,
            stored,
            a.nnz(),
            std::mem::size_of::<T>(),
            max_padding,
        )?;

        let t = Instant::now();
        let mut data = vec![T::ZERO; stored as usize];
        diagonals::fill_diagonals(a, 0..m, &offsets, &mut data);
        let in_range = diagonals::slots_in_range(0, m, &offsets, m, n);
        let conversion =
            diagonals::Conversion::of(a, [("scan_ms", scan_ms), ("fill_ms", ms_since(t))]);
        Ok(Dia { nrows: m, offsets, data, in_range, coded: None, conversion })
    }

    /// DIA with its slots (padding zeros included) stored as `values` asks: declined, with the
    /// reason, when they do not fit the codec (a pattern never does once a diagonal has a gap).
    pub fn with_values(a: &Csr<T>, max_padding: f64, values: ValueChoice) -> Result<Self> {
        let mut f = Self::with_limit(a, max_padding)?;
        if values != ValueChoice::Codec(ValueCodec::Full) {
            let coded = EncodedValues::encode(&f.data, values, NAME)?;
            if coded.codec() != ValueCodec::Full {
                f.data = Vec::new();
                f.coded = Some(coded);
            }
        }
        Ok(f)
    }

    /// The occupied diagonals, ascending.
    pub fn offsets(&self) -> &[i32] {
        &self.offsets
    }
    /// `offsets().len() × nrows` slots, diagonal-major (empty when the values are coded).
    pub fn data(&self) -> &[T] {
        &self.data
    }
    /// Stored slots, padding included (S·m).
    pub fn stored(&self) -> usize {
        self.offsets.len() * self.nrows
    }
    /// Device bytes: `offsets` (`i32`) and `data` (or its codes).
    pub fn device_bytes(&self) -> usize {
        4 * self.offsets.len()
            + self
                .coded
                .as_ref()
                .map_or(std::mem::size_of::<T>() * self.data.len(), |c| c.device_bytes())
    }
    /// Operands (stored slots) per warp of 32 rows: S·32 each (the last warp's real rows).
    pub fn operand_spread(&self) -> OperandSpread {
        let (m, s) = (self.nrows, self.offsets.len() as u64);
        OperandSpread::of(
            (0..m.div_ceil(SEGMENT_ROWS))
                .map(move |w| s * diagonals::segment_rows(w, SEGMENT_ROWS, m).len() as u64),
        )
    }
}

impl<T: Scalar> SpmvFormat<T> for Dia<T> {
    fn stats(&self) -> FormatStats {
        let own = [("diagonals", self.offsets.len() as f64)];
        self.conversion
            .stats(self.device_bytes(), self.stored(), own, &[("operand", self.operand_spread())])
            .with(self.coded.iter().flat_map(|c| c.stats()))
    }
    /// The offsets and the slots whose column is inside the matrix (the kernel's guard skips
    /// the others).
    fn bytes_read(&self) -> usize {
        4 * self.offsets.len()
            + self
                .coded
                .as_ref()
                .map_or(std::mem::size_of::<T>() * self.in_range, |c| c.bytes_read(self.in_range))
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        match &self.coded {
            None => cpu::spmv(self, x, y),
            Some(c) => cpu::spmv_coded(self, c, x, y),
        }
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(gpu::DeviceDia::new(gpu, self, NAME)?))
    }
}

/// The registry's entry for `dia` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "dia",
        "DIA, every occupied diagonal stored in full, one thread per row (refused above max_padding, default 20x)",
        |a, s| Ok(Box::new(Dia::with_values(a, max_padding(s)?, values::ValueChoice::of_spec(s)?)?)),
    )
    .params(&[MAX_PADDING, values::VALUES])
    .kernels(&[KERNELS, BLOCK_KERNELS])
    .deterministic()
    .wide()
}

#[cfg(test)]
mod tests;
