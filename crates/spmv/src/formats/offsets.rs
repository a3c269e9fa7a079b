//! Device offsets of 32 or 64 bits: row offsets (CSR, merge-CSR) and slice offsets
//! (SELL-C-σ) that index the entries.
//!
//! A matrix of fewer than 2^31 entries keeps 32-bit offsets (half the bytes of the offset
//! array, and 32-bit index arithmetic in the kernels); from 2^31 on, the formats that have
//! 64-bit kernels choose them by themselves (`offsets=auto`), and every other format refuses
//! the matrix with the reason ([`check_wide`]). `offsets=64` forces the wide kernels on any
//! matrix, which is how they are tested on small ones.

use cudarc::driver::{CudaSlice, LaunchArgs, PushKernelArg};

use super::spec::{FormatSpec, Param};
use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// From this many entries (or stored slots) on, offsets are 64-bit: 32-bit kernels add lane
/// strides to offsets below 2^31, which then cannot wrap.
pub const WIDE_ENTRIES: usize = 1 << 31;

/// The `offsets` parameter of the formats with 64-bit kernels.
pub const OFFSETS: Param = Param {
    key: "offsets",
    default: "auto",
    doc: "device offsets: 32, 64, or auto (64 bits from 2^31 entries on, else 32)",
};

/// The width of a format's device offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetWidth {
    /// 32-bit offsets (`u32`).
    W32,
    /// 64-bit offsets (`u64`).
    W64,
}

impl OffsetWidth {
    /// The width that `spec`'s `offsets` asks for, for an array indexing `entries` slots
    /// (32 bits refused, with the reason, from 2^31 on).
    pub fn of_spec(spec: &FormatSpec, entries: usize) -> Result<Self> {
        match Self::requested(spec)? {
            Some(width) => width.fits(spec.name(), entries),
            None => Ok(Self::auto(entries)),
        }
    }
    /// The width that `spec`'s `offsets` names, or `None` for auto.
    pub fn requested(spec: &FormatSpec) -> Result<Option<Self>> {
        Ok(match spec.choice("offsets", &["auto", "32", "64"])? {
            "64" => Some(OffsetWidth::W64),
            "32" => Some(OffsetWidth::W32),
            _ => None,
        })
    }
    /// 64 bits from [`WIDE_ENTRIES`] on, else 32.
    pub fn auto(entries: usize) -> Self {
        if entries >= WIDE_ENTRIES {
            OffsetWidth::W64
        } else {
            OffsetWidth::W32
        }
    }
    /// This width, when it can index `entries` slots.
    pub fn fits(self, format: &'static str, entries: usize) -> Result<Self> {
        if self == OffsetWidth::W32 && entries >= WIDE_ENTRIES {
            return Err(Error::format(
                format,
                format!("offsets=32: {entries} stored entries need 64-bit offsets (2^31 or more)"),
            ));
        }
        Ok(self)
    }
    /// The suffix of the kernels of this width: `_o64`, or nothing for 32 bits.
    pub fn kernel_suffix(self) -> &'static str {
        match self {
            OffsetWidth::W32 => "",
            OffsetWidth::W64 => "_o64",
        }
    }
    /// Bytes per offset: 4 or 8.
    pub fn bytes(self) -> usize {
        match self {
            OffsetWidth::W32 => 4,
            OffsetWidth::W64 => 8,
        }
    }
}

/// Refuses a matrix of 2^31 entries or more for a format without 64-bit offsets (the
/// registry's `wide`: 64-bit kernels, or none needed, as DIA indexes its slots in 64 bits).
pub(crate) fn check_wide(format: &'static str, nnz: usize, wide: bool) -> Result<()> {
    if nnz >= WIDE_ENTRIES && !wide {
        let wide: Vec<&str> =
            super::registry::<f64>().into_iter().filter(|f| f.wide).map(|f| f.name).collect();
        return Err(Error::format(
            format,
            format!(
                "{nnz} entries (2^31 or more) need 64-bit device offsets, which this format does not have; formats that do: {}",
                wide.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Offsets on the device, in the width chosen on the host.
pub enum DeviceOffsets {
    /// 32-bit offsets.
    W32(CudaSlice<u32>),
    /// 64-bit offsets.
    W64(CudaSlice<u64>),
}

impl DeviceOffsets {
    /// Uploads `offsets` (non-decreasing, the last the largest) in `width` (checked to fit).
    pub fn upload(
        gpu: &Gpu, format: &'static str, offsets: &[usize], width: OffsetWidth,
    ) -> Result<Self> {
        let last = offsets.last().copied().unwrap_or(0);
        Ok(match width.fits(format, last)? {
            OffsetWidth::W32 => DeviceOffsets::W32(gpu.upload_converted(offsets, |p| p as u32)?),
            OffsetWidth::W64 => DeviceOffsets::W64(gpu.upload_converted(offsets, |p| p as u64)?),
        })
    }
    /// Pushes the array as the kernel's offsets argument (`const u32*` or `const u64*`).
    pub fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        match self {
            DeviceOffsets::W32(o) => args.arg(o),
            DeviceOffsets::W64(o) => args.arg(o),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_width_switches_at_two_to_the_31_and_other_formats_refuse_with_the_reason() {
        assert_eq!(OffsetWidth::auto(WIDE_ENTRIES - 1), OffsetWidth::W32);
        assert_eq!(OffsetWidth::auto(WIDE_ENTRIES), OffsetWidth::W64);
        assert!(OffsetWidth::W32.fits("csr-vector", WIDE_ENTRIES - 1).is_ok());
        let e = OffsetWidth::W32.fits("csr-vector", WIDE_ENTRIES).unwrap_err().to_string();
        assert!(
            e.contains("csr-vector") && e.contains("offsets=32") && e.contains("64-bit"),
            "{e}"
        );
        assert_eq!(OffsetWidth::W64.fits("csr-vector", 5).unwrap(), OffsetWidth::W64);
        assert!(check_wide("ell", WIDE_ENTRIES - 1, false).is_ok());
        assert!(check_wide("csr-vector", WIDE_ENTRIES, true).is_ok());
        let e = check_wide("ell", 3 << 30, false).unwrap_err().to_string();
        assert!(
            e.contains("format ell")
                && e.contains("3221225472 entries")
                && e.contains("csr-vector, sell-c-sigma, merge-csr, dasp, dia"),
            "{e}"
        );
    }
}
