//! The registry of storage formats.
//!
//! A format is one folder (`formats/<name>/`): its layout doc, conversion from CSR,
//! statistics, CPU SpMV, CUDA kernels and launch code. It implements [`SpmvFormat`] (the
//! host side) and returns a [`DeviceSpmv`] from `upload` (the device side). This file is the
//! only place that lists every format: adding one is a folder plus one line in [`registry`].

pub mod amf_csr;
pub mod brc;
pub mod brcp;
pub mod coo;
pub mod csr;
pub mod cusparse;
pub mod dia;
pub mod dia_adaptive;
pub mod drm;
pub mod ell;
pub mod hdc;
pub mod hdia;
pub mod hyb;
pub mod jds;
pub mod lightspmv;
pub mod pbc;
mod row_writer;
pub mod sell;
pub mod teb;
#[cfg(test)]
mod test_support;

use std::sync::Arc;

use cudarc::driver::CudaSlice;

use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};

/// What a format reports about its storage, beside its kernel time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FormatStats {
    /// Bytes of the format's arrays as stored on the device (x and y not included).
    pub bytes: usize,
    /// Matrix entries (nnz of the CSR it was built from).
    pub nnz: usize,
    /// Stored value slots, padding included.
    pub stored: usize,
    pub max_row_len: usize,
    pub mean_row_len: f64,
    /// Format-specific figures (block balance, slice count ...), name and value.
    pub extra: Vec<(String, f64)>,
}

impl FormatStats {
    /// Explicit zeros added by the format.
    pub fn padded_zeros(&self) -> usize {
        self.stored.saturating_sub(self.nnz)
    }
    /// stored / nnz (1.0 for formats without padding).
    pub fn padding_ratio(&self) -> f64 {
        if self.nnz == 0 {
            1.0
        } else {
            self.stored as f64 / self.nnz as f64
        }
    }
    /// The common figures of a matrix stored without padding in `bytes` bytes.
    pub fn unpadded<T: Scalar>(a: &Csr<T>, bytes: usize) -> Self {
        FormatStats {
            bytes,
            nnz: a.nnz(),
            stored: a.nnz(),
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
            extra: Vec::new(),
        }
    }
}

/// JSON carries the derived padding figures too, so no format has to repeat them in `extra`.
impl serde::Serialize for FormatStats {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("FormatStats", 8)?;
        s.serialize_field("bytes", &self.bytes)?;
        s.serialize_field("nnz", &self.nnz)?;
        s.serialize_field("stored", &self.stored)?;
        s.serialize_field("padded_zeros", &self.padded_zeros())?;
        s.serialize_field("padding_ratio", &self.padding_ratio())?;
        s.serialize_field("max_row_len", &self.max_row_len)?;
        s.serialize_field("mean_row_len", &self.mean_row_len)?;
        s.serialize_field("extra", &self.extra)?;
        s.end()
    }
}

/// A matrix held in one storage format on the host.
pub trait SpmvFormat<T: Scalar>: Send + Sync {
    fn nrows(&self) -> usize;
    fn ncols(&self) -> usize;
    fn stats(&self) -> FormatStats;
    /// `y = A·x` on the CPU with the format's own algorithm.
    fn spmv_cpu(&self, x: &[T], y: &mut [T]);
    /// Copies the format to the device and prepares its kernels.
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceSpmv<T>>>;
}

/// A matrix on the device, ready for `y = A·x`.
pub trait DeviceSpmv<T: Scalar> {
    /// Launches `y = A·x` on the GPU's stream (asynchronous). `x` has `ncols` entries and
    /// `y` has `nrows`; every entry of `y` is written.
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()>;
    /// Device bytes of the format's arrays and any workspace it keeps.
    fn device_bytes(&self) -> usize;
    /// Bytes of the format one product must read: `device_bytes` less what the kernel
    /// provably skips (padding behind a row-length early exit). The benchmark's effective
    /// bandwidth counts these, plus x and y.
    fn bytes_read(&self) -> usize {
        self.device_bytes()
    }
}

/// Builds a format from a CSR matrix.
pub type Builder<T> = fn(&Csr<T>) -> Result<Box<dyn SpmvFormat<T>>>;

/// A registered format: its name, a one-line description, its kernels and its builder.
pub struct FormatInfo<T: Scalar> {
    pub name: &'static str,
    pub description: &'static str,
    /// CUDA C modules of the format (empty for library-backed formats such as cuSPARSE).
    pub kernels: &'static [KernelModule],
    /// The GPU result is bitwise identical from run to run (no float atomics or
    /// order-dependent reductions); the format's doc states the mechanism.
    pub deterministic: bool,
    pub build: Builder<T>,
}

/// Every format, in the order `spmv formats` and `spmv bench --formats all` list them.
pub fn registry<T: Scalar>() -> Vec<FormatInfo<T>> {
    vec![
        FormatInfo {
            name: "csr-scalar",
            description: "CSR, one thread per row (the classic baseline)",
            kernels: &[csr::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(csr::CsrFormat::new(a, csr::CsrKernel::Scalar))),
        },
        FormatInfo {
            name: "csr-vector",
            description: "CSR, 2-32 lanes per row chosen from the mean row length, shuffle reduction",
            kernels: &[csr::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(csr::CsrFormat::new(a, csr::CsrKernel::Vector))),
        },
        FormatInfo {
            name: "coo-atomic",
            description: "COO, one atomicAdd per entry (y zeroed first, timed); not deterministic",
            kernels: &[coo::KERNELS],
            deterministic: false,
            build: |a| Ok(Box::new(coo::CooFormat::new(a, coo::CooKernel::Atomic)?)),
        },
        FormatInfo {
            name: "coo-segmented",
            description: "COO, segmented reduction over chunks of 1024 entries plus a carry pass; deterministic",
            kernels: &[coo::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(coo::CooFormat::new(a, coo::CooKernel::Segmented)?)),
        },
        FormatInfo {
            name: "ell",
            description: "ELLPACK, rows padded to the longest, column-major, one thread per row (refused above 20x padding)",
            kernels: &[ell::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(ell::EllFormat::new(a)?)),
        },
        FormatInfo {
            name: "hyb",
            description: "HYB, ELL part of Bell & Garland's width, the rest of each row in COO (atomics aggregated per warp)",
            kernels: &[ell::KERNELS, coo::KERNELS],
            deterministic: false,
            build: |a| Ok(Box::new(hyb::Hyb::new(a)?)),
        },
        FormatInfo {
            name: "jds",
            description: "JDS, rows sorted by length, jagged diagonals column-major; one thread per sorted row",
            kernels: &[jds::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(jds::Jds::new(a)?)),
        },
        FormatInfo {
            name: "sell-c-sigma",
            description: "sliced ELL, C = 32 rows per slice, rows sorted by length within windows of σ rows (default: full sort)",
            kernels: &[sell::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(sell::SellCSigma::new(a, sell::DEFAULT_C, a.nrows())?)),
        },
        FormatInfo {
            name: "lightspmv",
            description: "LightSpMV: CSR-vector, rows handed to vectors of 2-32 lanes by a global atomic counter",
            kernels: &[lightspmv::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(lightspmv::LightSpmv::new(a)?)),
        },
        FormatInfo {
            name: "brc",
            description: "BRC: sorted rows cut into pieces of T = round(mean + sd) entries, blocks of 32 pieces, one atomicAdd per piece (y zeroed first); not deterministic",
            kernels: &[brc::KERNELS],
            deterministic: false,
            build: |a| Ok(Box::new(brc::Brc::new(a)?)),
        },
        FormatInfo {
            name: "brcp",
            description: "BRCP: sorted rows filled row-major into blocks of 32 slots (the paper's width rule), warp segmented sum, rows across blocks summed in block order; deterministic",
            kernels: &[brcp::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(brcp::Brcp::new(a)?)),
        },
        FormatInfo {
            name: "teb",
            description: "TEB (threshold-exchangeorder block): rows merged into blocks of near-equal nnz, one thread block per block, one thread per row (Algorithm 3)",
            kernels: &[teb::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(teb::Teb::new(a, teb::TebKernel::RowPerThread)?)),
        },
        FormatInfo {
            name: "teb-lanes",
            description: "TEB arrays and blocks with an improved kernel: lanes per row chosen per block from its mean row length",
            kernels: &[teb::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(teb::Teb::new(a, teb::TebKernel::LanesPerRow)?)),
        },
        FormatInfo {
            name: "pbc",
            description: "PBC (partition-block-CSR): rows sorted by length, cut into blocks of near-equal nnz (smallest std), each an ELL of its own width",
            kernels: &[pbc::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(pbc::Pbc::new(a)?)),
        },
        FormatInfo {
            name: "amf-csr",
            description: "AMF-CSR (adaptive multi-row folding): rows folded below Ts nnz, row-blocks into sub-blocks below Tl; a warp per folded row",
            kernels: &[amf_csr::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(amf_csr::AmfCsr::new(a)?)),
        },
        FormatInfo {
            name: "dia",
            description: "DIA, every occupied diagonal stored in full, one thread per row (refused above 20x padding)",
            kernels: &[dia::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(dia::Dia::new(a)?)),
        },
        FormatInfo {
            name: "hdia",
            description: "HDIA, hacks of 32 rows each stored DIA-style with its own diagonals, one thread per row",
            kernels: &[hdia::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(hdia::Hdia::new(a)?)),
        },
        FormatInfo {
            name: "hdc",
            description: "HDC, DIA for diagonals filled above s/(s+4) (2/3 in f64, 1/2 in f32), CSR for the rest",
            kernels: &[hdc::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(hdc::Hdc::new(a)?)),
        },
        FormatInfo {
            name: "dia-adaptive",
            description: "DIA-Adaptive, picks DIA, BRCSD-I (cross-point row blocks) or BRCSD-II (32-row blocks) by stored slots",
            kernels: &[dia::KERNELS, dia_adaptive::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(dia_adaptive::DiaAdaptive::new(a)?)),
        },
        FormatInfo {
            name: "drm",
            description: "DRM, 32-row DIA segments merged into balanced sub-blocks (Algorithm 1), one CUDA block per sub-block",
            kernels: &[drm::KERNELS],
            deterministic: true,
            build: |a| Ok(Box::new(drm::Drm::new(a)?)),
        },
        FormatInfo {
            name: "cusparse-alg1",
            description: "cuSPARSE generic SpMV on CSR, CUSPARSE_SPMV_CSR_ALG1 (with preprocess)",
            kernels: &[],
            deterministic: false,
            build: |a| Ok(Box::new(cusparse::Cusparse::new(a, cusparse::Algorithm::Alg1))),
        },
        FormatInfo {
            name: "cusparse-alg2",
            description: "cuSPARSE generic SpMV on CSR, CUSPARSE_SPMV_CSR_ALG2 (deterministic, with preprocess)",
            kernels: &[],
            deterministic: true,
            build: |a| Ok(Box::new(cusparse::Cusparse::new(a, cusparse::Algorithm::Alg2))),
        },
    ]
}

/// The registered format called `name`, or an error listing the valid names.
pub fn find<T: Scalar>(name: &str) -> Result<FormatInfo<T>> {
    let all = registry::<T>();
    let names: Vec<&str> = all.iter().map(|f| f.name).collect();
    all.into_iter().find(|f| f.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
        Error::Unsupported(format!("unknown format '{name}'; known formats: {}", names.join(", ")))
    })
}

/// The registered formats whose GPU result is bitwise identical from run to run
/// (`deterministic`), in registry order: what `spmv bench --deterministic` runs.
pub fn deterministic_registry<T: Scalar>() -> Vec<FormatInfo<T>> {
    registry::<T>().into_iter().filter(|f| f.deterministic).collect()
}

/// Every distinct kernel module of the registry plus the runtime's and the solvers' own: what
/// CI compiles.
pub fn all_kernel_modules() -> Vec<KernelModule> {
    let mut modules = vec![crate::gpu::jit::UTIL_MODULE];
    modules.extend_from_slice(crate::solve::KERNEL_MODULES);
    for info in registry::<f64>() {
        for m in info.kernels {
            if !modules.iter().any(|k| k.name == m.name) {
                modules.push(*m);
            }
        }
    }
    modules
}

/// Device row offsets are 32-bit in this project's kernels: check that `nnz` fits.
pub(crate) fn offsets_u32<T: Scalar>(format: &'static str, a: &Csr<T>) -> Result<Vec<u32>> {
    if a.nnz() > u32::MAX as usize {
        return Err(Error::format(
            format,
            format!("{} entries exceed the 2^32 - 1 that 32-bit device row offsets can address", a.nnz()),
        ));
    }
    Ok(a.row_ptr().iter().map(|&p| p as u32).collect())
}

/// Checks that `x` and `y` have the lengths of an `nrows × ncols` matrix.
pub(crate) fn check_vectors<T>(format: &'static str, nrows: usize, ncols: usize, x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<()> {
    if x.len() != ncols || y.len() != nrows {
        return Err(Error::format(
            format,
            format!("vectors of length x = {}, y = {} given for a {nrows} x {ncols} matrix", x.len(), y.len()),
        ));
    }
    Ok(())
}
