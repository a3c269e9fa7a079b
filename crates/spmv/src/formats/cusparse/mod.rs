//! cuSPARSE's generic SpMV on CSR, registered as formats so that every comparison with the
//! vendor library is a ratio from the same run.
//!
//! - `cusparse-alg1` — `CUSPARSE_SPMV_CSR_ALG1`: the default, fastest in general, not
//!   bit-reproducible between runs.
//! - `cusparse-alg2` — `CUSPARSE_SPMV_CSR_ALG2`: deterministic (same bits every run).
//!
//! Both call `cusparseSpMV_preprocess` once on upload, so the timed call is the steady
//! state a solver sees, and apply α and β of `y = α·A·x + β·y` in the same call. Indices are
//! 32-bit signed (`CUSPARSE_INDEX_32I`) until the entries, rows or columns reach 2^31, then
//! 64-bit for both the row offsets and the columns (`_64I`: cuSPARSE's documented pairs; twice
//! the column bytes of our formats' 32-bit columns). `offsets=64` forces 64-bit indices on
//! any matrix. The CPU path is plain CSR.

mod gpu;

use std::sync::Arc;

use super::offsets::{self, OffsetWidth};
use super::{Builder, FormatInfo, FormatSpec};
use super::{DeviceFormat, FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::matrix::{Csr, Precision, Scalar};

/// Which cuSPARSE CSR algorithm runs the product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// `CUSPARSE_SPMV_CSR_ALG1` (`cusparse-alg1`): the default; not bit-reproducible.
    Alg1,
    /// `CUSPARSE_SPMV_CSR_ALG2` (`cusparse-alg2`): deterministic.
    Alg2,
}

impl Algorithm {
    fn name(self) -> &'static str {
        match self {
            Algorithm::Alg1 => "cusparse-alg1",
            Algorithm::Alg2 => "cusparse-alg2",
        }
    }
}

/// A CSR matrix run by cuSPARSE's `cusparseSpMV` on the GPU (plain CSR on the CPU).
pub struct Cusparse<T> {
    csr: Csr<T>,
    algorithm: Algorithm,
    /// 64-bit indices (taken anyway when the matrix needs them).
    wide: bool,
}

impl<T: Scalar> Cusparse<T> {
    /// `a` (shared, not copied) for `algorithm`, with 32-bit indices unless the matrix needs 64.
    pub fn new(a: &Csr<T>, algorithm: Algorithm) -> Self {
        Cusparse { csr: a.clone(), algorithm, wide: false }
    }
    /// The same with 64-bit indices when `wide` (or when the matrix needs them). Refused in
    /// f16: cuSPARSE's SpMV with 64-bit indices and f16 data gave infinities where the sums
    /// are finite on the H200 (CUDA 13.0; `tests/suite/offsets.rs`), so f16 keeps 32-bit indices.
    pub fn with_wide_indices(self, wide: bool) -> Result<Self> {
        let this = Cusparse { wide, ..self };
        if this.index_bytes() == 8 && T::PRECISION == Precision::F16 {
            return Err(Error::format(
                this.algorithm.name(),
                "64-bit indices in f16 give wrong sums in cuSPARSE (measured on the H200); f16 needs nnz, rows and columns below 2^31",
            ));
        }
        Ok(this)
    }
    fn index_bytes(&self) -> usize {
        let limit = i32::MAX as usize;
        let a = &self.csr;
        if self.wide || a.nnz() > limit || a.nrows() > limit || a.ncols() > limit {
            8
        } else {
            4
        }
    }
}

impl<T: Scalar> SpmvFormat<T> for Cusparse<T> {
    fn stats(&self) -> FormatStats {
        let (a, index) = (&self.csr, self.index_bytes());
        let bytes = index * (a.nrows() + 1 + a.nnz()) + std::mem::size_of::<T>() * a.nnz();
        FormatStats::unpadded(a, bytes).with([("offset_bytes", index as f64)])
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        self.csr.spmv_parallel(x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(gpu::DeviceCusparse::new(
            gpu,
            &self.csr,
            self.algorithm,
            self.index_bytes() == 8,
        )?))
    }
}

/// What the two cuSPARSE entries share: the offsets parameter, f16, wide matrices, and
/// their place as the library baseline.
fn library_entry<T: Scalar>(
    name: &'static str, description: &'static str, build: Builder<T>,
) -> FormatInfo<T> {
    FormatInfo::new(name, description, build)
        .params(&[offsets::OFFSETS])
        .half()
        .wide()
        .library_baseline()
}

/// Builds `algorithm` on `a` with the index width the spec's offsets ask for.
fn build_with<T: Scalar>(
    a: &Csr<T>, s: &FormatSpec, algorithm: Algorithm,
) -> Result<Box<dyn SpmvFormat<T>>> {
    let wide = OffsetWidth::of_spec(s, a.nnz())? == OffsetWidth::W64;
    Ok(Box::new(Cusparse::new(a, algorithm).with_wide_indices(wide)?))
}

/// The registry's entry for `cusparse-alg1` (listed in [`super::registry`]).
pub(crate) fn alg1_entry<T: Scalar>() -> FormatInfo<T> {
    library_entry(
        "cusparse-alg1",
        "cuSPARSE generic SpMV on CSR, CUSPARSE_SPMV_CSR_ALG1 (with preprocess)",
        |a, s| build_with(a, s, Algorithm::Alg1),
    )
}

/// The registry's entry for `cusparse-alg2` (listed in [`super::registry`]).
pub(crate) fn alg2_entry<T: Scalar>() -> FormatInfo<T> {
    library_entry(
        "cusparse-alg2",
        "cuSPARSE generic SpMV on CSR, CUSPARSE_SPMV_CSR_ALG2 (deterministic, with preprocess)",
        |a, s| build_with(a, s, Algorithm::Alg2),
    )
    .deterministic()
}
