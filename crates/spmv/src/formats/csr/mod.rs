//! CSR with the two classic kernels: CSR-scalar (one thread per row) and CSR-vector
//! (a group of 2–32 lanes per row).
//!
//! ```text
//!     | 1 . 2 |      row_ptr = [0, 2, 2, 5]
//! A = | . . . |      col_idx = [0, 2, 0, 1, 2]
//!     | 3 4 5 |      values  = [1, 2, 3, 4, 5]
//! ```
//! CSR-scalar gives thread r the loop over `row_ptr[r]..row_ptr[r+1]`: simple, but
//! neighbouring threads read far-apart entries (uncoalesced) and long rows stall a warp.
//! CSR-vector gives each row `L` lanes that read consecutive entries and add their partial
//! sums with warp shuffles. `L` is the smallest power of two ≥ the mean row length, within
//! 2..=32 (Bell & Garland's rule), so short-row matrices do not leave most lanes idle.
//!
//! CSR-vector takes `values=…` ([`super::values`]): the values stored as exact narrower codes
//! (a pattern, small integers, half or single floats, a dictionary), and `cols=delta16`: the
//! columns as 16-bit deltas from each row's first ([`Delta16Columns`]). The same sums in the
//! same order, so `y` has the bits of the uncompressed format with fewer bytes read.

mod cpu;
mod gpu;

use std::sync::Arc;

use super::offsets;
use super::offsets::OffsetWidth;
use super::values;
use super::values::columns::Delta16Columns;
use super::values::{EncodedValues, ValueChoice, ValueCodec};
use super::{DeviceFormat, FormatStats, SpmvFormat};
use super::{FormatInfo, FormatSpec, Param};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};

const HEADERS: &[&str] = &[super::values::CUDA_HEADER, include_str!("vector.cuh")];

/// The kernels over full values and columns.
pub const KERNELS: KernelModule =
    KernelModule { name: "csr", source: include_str!("kernel.cu"), headers: HEADERS };

/// CSR for a block of vectors, A·X (compiled only when a block product runs).
pub const BLOCK_KERNELS: KernelModule =
    KernelModule { name: "csr_block", source: include_str!("block.cu"), headers: HEADERS };

/// CSR-vector over coded values or 16-bit columns (compiled only when such a matrix is used).
pub const CODED_KERNELS: KernelModule =
    KernelModule { name: "csr_coded", source: include_str!("coded.cu"), headers: HEADERS };

/// Which CSR kernel runs on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsrKernel {
    /// CSR-scalar: one thread per row.
    Scalar,
    /// CSR-vector with this many lanes per row (2, 4, 8, 16 or 32).
    Vector(u32),
}

/// Lanes per row for CSR-vector: smallest power of two ≥ the mean row length, in 2..=32.
pub fn vector_lanes(mean_row_len: f64) -> u32 {
    let mut lanes = 2;
    while lanes < 32 && (lanes as f64) < mean_row_len {
        lanes *= 2;
    }
    lanes
}

/// A CSR matrix and the kernel to run it with.
pub struct CsrFormat<T> {
    csr: Csr<T>,
    kernel: CsrKernel,
    /// The width of the device row offsets.
    offsets: OffsetWidth,
    /// The values coded narrower (CSR-vector with `values` other than full), or `None`.
    coded: Option<EncodedValues<T>>,
    /// The columns as 16-bit deltas (CSR-vector with `cols=delta16`), or `None`.
    cols16: Option<Delta16Columns>,
}

/// The `cols` parameter: full, delta16, or auto (delta16 where every row fits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnChoice {
    /// 32-bit columns.
    Full,
    /// 16-bit deltas from each row's first column; declined when a row spans 65,536 or more.
    Delta16,
    /// `delta16` where every row fits, else full columns.
    Auto,
}

impl<T: Scalar> CsrFormat<T> {
    /// `a` with `kernel`, row offsets of [`OffsetWidth::auto`] width.
    pub fn new(a: &Csr<T>, kernel: CsrKernel) -> Self {
        CsrFormat {
            csr: a.clone(),
            kernel,
            offsets: OffsetWidth::auto(a.nnz()),
            coded: None,
            cols16: None,
        }
    }
    /// The same with row offsets of `offsets` bits (refused when 32 bits cannot index `a`).
    pub fn with_offsets(mut self, offsets: OffsetWidth) -> Result<Self> {
        let name = self.name();
        self.offsets = offsets.fits(name, self.csr.nnz())?;
        if offsets != OffsetWidth::W32 && (self.coded.is_some() || self.cols16.is_some()) {
            return Err(Error::format(name, "values other than full and cols=delta16 have 32-bit row offsets only (below 2^31 entries)"));
        }
        Ok(self)
    }
    /// CSR-vector with `lanes` per row, or [`vector_lanes`] of the mean row length.
    pub fn vector(a: &Csr<T>, lanes: Option<u32>) -> Result<Self> {
        Self::vector_coded(a, lanes, ValueChoice::Codec(ValueCodec::Full), ColumnChoice::Full)
    }
    /// CSR-vector with its values and columns stored as `values` and `cols` ask (declined,
    /// with the reason, when the matrix does not fit the codec); row offsets of
    /// [`OffsetWidth::auto`] width (see [`CsrFormat::with_offsets`]).
    pub fn vector_coded(
        a: &Csr<T>, lanes: Option<u32>, values: ValueChoice, cols: ColumnChoice,
    ) -> Result<Self> {
        let lanes = lanes.unwrap_or_else(|| vector_lanes(a.mean_row_len()));
        if !(2..=32).contains(&lanes) || !lanes.is_power_of_two() {
            return Err(Error::format(
                "csr-vector",
                format!("{lanes} lanes per row: must be 2, 4, 8, 16 or 32"),
            ));
        }
        // Full values stay in the CSR (no copy of them).
        let coded = match EncodedValues::codec_for(a.values(), values, "csr-vector")? {
            ValueCodec::Full => None,
            codec => Some(EncodedValues::with_codec(a.values(), codec)),
        };
        let cols16 = match cols {
            ColumnChoice::Full => None,
            ColumnChoice::Delta16 => Some(Delta16Columns::of(a, "csr-vector")?),
            ColumnChoice::Auto => Delta16Columns::of(a, "csr-vector").ok(),
        };
        CsrFormat {
            csr: a.clone(),
            kernel: CsrKernel::Vector(lanes),
            offsets: OffsetWidth::W32,
            coded,
            cols16,
        }
        .with_offsets(OffsetWidth::auto(a.nnz()))
    }
    fn name(&self) -> &'static str {
        match self.kernel {
            CsrKernel::Scalar => "csr-scalar",
            CsrKernel::Vector(_) => "csr-vector",
        }
    }
}

/// Device bytes of CSR with 32-bit columns and offsets of [`OffsetWidth::auto`] width.
pub(crate) fn device_bytes<T: Scalar>(a: &Csr<T>) -> usize {
    OffsetWidth::auto(a.nnz()).bytes() * (a.nrows() + 1) + (4 + std::mem::size_of::<T>()) * a.nnz()
}

impl<T: Scalar> SpmvFormat<T> for CsrFormat<T> {
    fn stats(&self) -> FormatStats {
        let a = &self.csr;
        let mut stats = FormatStats::unpadded(a, self.bytes_read());
        if let CsrKernel::Vector(lanes) = self.kernel {
            stats.extra.push(("lanes_per_row".into(), lanes as f64));
        }
        stats.extra.push(("offset_bytes".into(), self.offsets.bytes() as f64));
        if let Some(v) = &self.coded {
            stats.extra.extend(v.stats().into_iter().map(|(k, v)| (k.to_string(), v)));
        }
        if self.cols16.is_some() {
            stats.extra.push(("col_bytes".into(), 2.0));
        }
        stats
    }
    /// Row offsets, columns (or deltas and row bases) and values (or codes and table): a
    /// product reads all of them.
    fn bytes_read(&self) -> usize {
        let a = &self.csr;
        let cols = self.cols16.as_ref().map_or(4 * a.nnz(), Delta16Columns::device_bytes);
        let values =
            self.coded.as_ref().map_or(std::mem::size_of::<T>() * a.nnz(), |v| v.device_bytes());
        self.offsets.bytes() * (a.nrows() + 1) + cols + values
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        if self.coded.is_none() && self.cols16.is_none() {
            return cpu::spmv(&self.csr, x, y);
        }
        cpu::spmv_coded(&self.csr, self.coded.as_ref(), self.cols16.as_ref(), x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(gpu::DeviceCsr::new(
            gpu,
            &self.csr,
            self.kernel,
            self.offsets,
            self.coded.as_ref(),
            self.cols16.as_ref(),
            self.name(),
        )?))
    }
}

/// The `lanes` parameter of csr-vector and lightspmv.
pub(crate) const LANES: Param = Param {
    key: "lanes",
    default: "auto",
    doc: "lanes per row: 2, 4, 8, 16 or 32 (auto: the smallest power of two ≥ the mean row length)",
};

/// `lanes` ([`LANES`]): `None` for auto, else a power of two in 2..=32.
pub(crate) fn lanes(s: &FormatSpec) -> Result<Option<u32>> {
    match s.auto_usize("lanes", 2)? {
        Some(l) if l > 32 || !l.is_power_of_two() => Err(Error::Unsupported(format!(
            "format {}: parameter lanes={l} must be 2, 4, 8, 16, 32 or auto",
            s.name()
        ))),
        l => Ok(l.map(|l| l as u32)),
    }
}

/// The registry's entry for `csr-scalar` (listed in [`super::registry`]).
pub(crate) fn scalar_entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new("csr-scalar", "CSR, one thread per row (the classic baseline)", |a, s| {
        Ok(Box::new(
            CsrFormat::new(a, CsrKernel::Scalar).with_offsets(OffsetWidth::of_spec(s, a.nnz())?)?,
        ))
    })
    .params(&[offsets::OFFSETS])
    .kernels(&[KERNELS, BLOCK_KERNELS])
    .deterministic()
    .half()
    .wide()
}

/// The registry's entry for `csr-vector` (listed in [`super::registry`]).
pub(crate) fn vector_entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "csr-vector",
        "CSR, 2-32 lanes per row chosen from the mean row length, shuffle reduction",
        |a, s| {
            let cols = match s.choice("cols", values::columns::COLUMN_CHOICES)? {
                "delta16" => ColumnChoice::Delta16,
                "auto" => ColumnChoice::Auto,
                _ => ColumnChoice::Full,
            };
            let offsets = OffsetWidth::of_spec(s, a.nnz())?;
            Ok(Box::new(
                CsrFormat::vector_coded(a, lanes(s)?, values::ValueChoice::of_spec(s)?, cols)?
                    .with_offsets(offsets)?,
            ))
        },
    )
    .params(&[
        LANES,
        values::VALUES,
        Param { key: "cols", default: "full", doc: values::columns::COLUMNS_DOC },
        offsets::OFFSETS,
    ])
    .kernels(&[KERNELS, CODED_KERNELS, BLOCK_KERNELS])
    .deterministic()
    .half()
    .wide()
}
