//! The host side of every format: the [`SpmvFormat`] trait a format implements, and
//! [`HostMatrix`], the one concrete handle that checks shapes and applies α and β once.

use std::sync::{Arc, OnceLock};

use super::device::{DeviceFormat, DeviceMatrix};
use super::spec::FormatSpec;
use super::FormatStats;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::matrix::{Csr, Scalar};
use crate::operator::{host_block, to_columns, Block, Layout, LinearOperator};

/// What a format implements on the host: its statistics, its CPU algorithm and its upload.
/// Only the format's own work goes here; [`HostMatrix`] and [`DeviceMatrix`] know the shape
/// (from the CSR the format was built from) and do the checks.
pub trait SpmvFormat<T: Scalar>: Send + Sync {
    /// The format's statistics: device bytes, stored slots and padding, row lengths and its own
    /// figures (`FormatStats::new(..).with([..])`).
    fn stats(&self) -> FormatStats;
    /// Bytes of the format one product must read: the device bytes less what the kernel
    /// provably skips (padding behind a row-length early exit). The benchmark's effective
    /// bandwidth counts these, plus x and y.
    fn bytes_read(&self) -> usize {
        self.stats().bytes
    }
    /// `y = A·x` on the CPU with the format's own algorithm. The caller guarantees
    /// `x.len() == ncols` and `y.len() == nrows`; every entry of `y` is written.
    fn spmv_cpu(&self, x: &[T], y: &mut [T]);
    /// Copies the format's arrays to the device and loads its kernels.
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>>;
    /// The format a choosing format (`auto`) built, as its label; `None` for the others.
    fn chosen(&self) -> Option<String> {
        None
    }
}

/// The error for vectors of lengths `x` and `y` that do not fit the matrix, or `None`.
pub(crate) fn shape_error(info: &MatrixInfo, x: usize, y: usize) -> Option<Error> {
    let (nrows, ncols) = (info.nrows, info.ncols);
    (x != ncols || y != nrows).then(|| {
        Error::Shape(format!(
            "format {}: vectors of length x = {x}, y = {y} given for a {nrows} x {ncols} matrix (x needs {ncols}, y {nrows})",
            info.spec.name()
        ))
    })
}

/// A matrix in one registered format on the host, with the spec it was built from.
///
/// `apply` computes `y = α·A·x + β·y` on the CPU: lengths are checked (an [`Error::Shape`],
/// never a panic), β = 0 never reads `y` (it may hold NaN), α = 0 does not run the product.
pub struct HostMatrix<T: Scalar> {
    info: MatrixInfo,
    format: Box<dyn SpmvFormat<T>>,
    /// The CSR the format was built from (shared with the caller's, no copy): where the
    /// transposed product's matrix comes from.
    source: Csr<T>,
    /// Aᵀ in CSR, built on the first transposed product.
    transposed: OnceLock<Csr<T>>,
    /// How a GPU copy builds Aᵀ's format; `csr-vector` when `None`.
    transpose_format: Option<TransposeFormat<T>>,
    /// The source is P·A·Pᵀ, not the A the products multiply by (a reordered handle): no
    /// copy of the matrix can be built from it.
    source_permuted: bool,
}

/// Why a reordered handle has no Aᵀ.
pub(crate) const PERMUTED_SOURCE: &str =
    "Aᵀ·x of a reordered handle: it keeps P·A·Pᵀ only (build the matrix without a reordering)";

/// How the GPU's transposed product builds Aᵀ's format from Aᵀ in CSR on its first call: set
/// by the layer that chose A's format (choice.rs: `auto` on Aᵀ's own structure), as formats
/// know nothing of choosing.
pub type TransposeFormat<T> = Arc<dyn Fn(&Csr<T>) -> Result<HostMatrix<T>> + Send + Sync>;

/// What a handle knows about its matrix and the format holding it.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixInfo {
    /// Number of rows of the matrix.
    pub nrows: usize,
    /// Number of columns of the matrix.
    pub ncols: usize,
    /// Entries of the CSR the format was built from.
    pub nnz: usize,
    /// The canonical spec, every parameter spelled out: `sell-c-sigma:c=32,sigma=auto`.
    pub spec: FormatSpec,
    /// Whether the format's GPU result is bitwise identical from run to run.
    pub deterministic: bool,
}

/// The accessors [`HostMatrix`] and [`DeviceMatrix`] share, from their [`MatrixInfo`].
pub trait FormatHandle {
    /// The shape, spec and determinism of the handle's matrix.
    fn info(&self) -> &MatrixInfo;
    /// Number of rows (the length `y` must have).
    fn nrows(&self) -> usize {
        self.info().nrows
    }
    /// Number of columns (the length `x` must have).
    fn ncols(&self) -> usize {
        self.info().ncols
    }
    /// Entries of the CSR the format was built from.
    fn nnz(&self) -> usize {
        self.info().nnz
    }
    /// The registered name, e.g. `sell-c-sigma`.
    fn name(&self) -> &'static str {
        self.info().spec.name()
    }
    /// The canonical spec, every parameter spelled out.
    fn spec(&self) -> &FormatSpec {
        &self.info().spec
    }
    /// Whether the format's GPU result is bitwise identical from run to run.
    fn deterministic(&self) -> bool {
        self.info().deterministic
    }
}

impl<T: Scalar> FormatHandle for HostMatrix<T> {
    fn info(&self) -> &MatrixInfo {
        &self.info
    }
}

impl<T: Scalar> HostMatrix<T> {
    /// `format` built from `a` as `spec` says.
    pub(crate) fn new(
        spec: FormatSpec, deterministic: bool, format: Box<dyn SpmvFormat<T>>, a: &Csr<T>,
    ) -> Self {
        let info =
            MatrixInfo { nrows: a.nrows(), ncols: a.ncols(), nnz: a.nnz(), spec, deterministic };
        HostMatrix {
            info,
            format,
            source: a.clone(),
            transposed: OnceLock::new(),
            transpose_format: None,
            source_permuted: false,
        }
    }
    /// The same handle, its source marked as P·A·Pᵀ (reorder/format.rs): the products that
    /// would build a copy of A from it (Aᵀ·x, a block product's CSR) refuse or do without.
    pub(crate) fn with_permuted_source(self) -> Self {
        HostMatrix { source_permuted: true, ..self }
    }
    /// Whether the source is P·A·Pᵀ rather than A.
    pub(crate) fn source_permuted(&self) -> bool {
        self.source_permuted
    }
    /// The same matrix, its GPU copies building Aᵀ (for the transposed product) with `format`.
    pub fn with_transpose_format(self, format: TransposeFormat<T>) -> Self {
        HostMatrix { transpose_format: Some(format), ..self }
    }
    /// How a GPU copy builds Aᵀ's format (`None`: `csr-vector`).
    pub(crate) fn transpose_format(&self) -> Option<&TransposeFormat<T>> {
        self.transpose_format.as_ref()
    }
    /// The CSR the format was built from (P·A·Pᵀ for a reordered handle).
    pub fn source(&self) -> &Csr<T> {
        &self.source
    }
    /// Aᵀ in CSR, built from the source on the first call and kept; refused for a reordered
    /// handle.
    pub fn transposed_csr(&self) -> Result<&Csr<T>> {
        if self.source_permuted {
            return Err(Error::Unsupported(PERMUTED_SOURCE.into()));
        }
        transposed(&self.transposed, &self.source)
    }
    /// The format's statistics (see [`SpmvFormat::stats`]).
    pub fn stats(&self) -> FormatStats {
        self.format.stats()
    }
    /// Bytes of the format one product reads (see [`SpmvFormat::bytes_read`]).
    pub fn bytes_read(&self) -> usize {
        self.format.bytes_read()
    }
    /// The format `auto` chose (its label), or `None` for a format named directly.
    pub fn chosen(&self) -> Option<String> {
        self.format.chosen()
    }
    /// The format itself (for format-specific inspection in tests and tools).
    pub fn format(&self) -> &dyn SpmvFormat<T> {
        self.format.as_ref()
    }

    /// `y = α·A·x + β·y` on the CPU.
    pub fn apply(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) -> Result<()> {
        if let Some(e) = shape_error(&self.info, x.len(), y.len()) {
            return Err(e);
        }
        combine(alpha, beta, y, |out| self.format.spmv_cpu(x, out));
        Ok(())
    }

    /// `y = α·Aᵀ·x + β·y` on the CPU, through Aᵀ in CSR (built on the first call).
    pub fn apply_transpose(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) -> Result<()> {
        crate::operator::check_transpose((self.info.nrows, self.info.ncols), x.len(), y.len())?;
        let t = self.transposed_csr()?;
        combine(alpha, beta, y, |out| t.spmv_parallel(x, out));
        Ok(())
    }

    /// `Y = α·A·X + β·Y` for `block.k` vectors on the CPU: from 2 vectors on, through the CSR
    /// it was built from, each row read once for all the columns ([`csr_block`]; column j
    /// has the bits of csr-vector's A·x_j, which may differ in the last bits from this
    /// format's own order of sums); one product per column for one vector and for a
    /// reordered handle (its CSR is P·A·Pᵀ).
    pub fn apply_block(&self, alpha: T, x: &[T], beta: T, y: &mut [T], block: Block) -> Result<()> {
        if block.k >= 2 && !self.source_permuted {
            return csr_block(&self.source, (alpha, x, beta, y), block);
        }
        let apply = |a, x: &[T], b, y: &mut [T]| self.apply(a, x, b, y);
        host_block((self.info.nrows, self.info.ncols), apply, (alpha, x, beta, y), block)
    }

    /// `y = A·x` on the CPU (`apply` with α = 1, β = 0).
    pub fn spmv(&self, x: &[T], y: &mut [T]) -> Result<()> {
        self.apply(T::ONE, x, T::ZERO, y)
    }

    /// Uploads the matrix to `gpu`: a [`DeviceMatrix`] with the same spec and statistics.
    pub fn upload(&self, gpu: &Arc<Gpu>) -> Result<DeviceMatrix<T>> {
        let device = self.format.upload(gpu)?;
        DeviceMatrix::new(gpu, self, device)
    }
}

impl<T: Scalar> std::fmt::Debug for HostMatrix<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "HostMatrix({}, {} x {}, nnz {})",
            self.info.spec, self.info.nrows, self.info.ncols, self.info.nnz
        )
    }
}

/// `y = α·t + β·y` where `product` writes `t` (every entry): α = 0 skips it, α = 1 with
/// β = 0 writes straight into `y`.
pub(crate) fn combine<T: Scalar>(alpha: T, beta: T, y: &mut [T], product: impl FnOnce(&mut [T])) {
    if alpha == T::ZERO {
        scale_cpu(beta, y);
    } else if alpha == T::ONE && beta == T::ZERO {
        product(y);
    } else {
        let mut t = vec![T::ZERO; y.len()];
        product(&mut t);
        axpby_cpu(alpha, &t, beta, y);
    }
}

/// `Y = α·A·X + β·Y` for a block of vectors on the CPU through [`Csr::block_product`] (the
/// matrix read once per row for every column), combined as [`combine`] combines a single
/// product: column j has the bits of `Csr::apply(α, x_j, β, y_j)`.
pub(crate) fn csr_block<T: Scalar>(
    a: &Csr<T>, (alpha, x, beta, y): (T, &[T], T, &mut [T]), block: Block,
) -> Result<()> {
    let (m, k) = (a.nrows(), block.k);
    crate::operator::check_block((m, a.ncols()), x.len(), y.len(), block)?;
    if m == 0 || alpha == T::ZERO {
        scale_cpu(beta, y);
        return Ok(());
    }
    let row_major = block.layout == Layout::RowMajor;
    if row_major && alpha == T::ONE && beta == T::ZERO {
        a.block_product(x, block, y);
        return Ok(());
    }
    // A·X rounded to T as the single product rounds it, then in Y's layout.
    let what = || format!("a block product's {m} × {k} intermediate");
    crate::error::check_host_memory(what, std::mem::size_of_val(y) as u64)?;
    let mut t = vec![T::ZERO; y.len()];
    a.block_product(x, block, &mut t);
    if !row_major {
        t = to_columns(&t, m, k, Layout::RowMajor);
    }
    if alpha == T::ONE && beta == T::ZERO {
        y.copy_from_slice(&t);
    } else {
        axpby_cpu(alpha, &t, beta, y);
    }
    Ok(())
}

/// The transpose kept in `cell`, built from `a` on the first call.
pub(crate) fn transposed<'a, T: Scalar>(
    cell: &'a OnceLock<Csr<T>>, a: &Csr<T>,
) -> Result<&'a Csr<T>> {
    if let Some(t) = cell.get() {
        return Ok(t);
    }
    let t = a.transpose()?;
    Ok(cell.get_or_init(|| t))
}

/// `y = β·y` (β = 0 writes zeros without reading).
pub(crate) fn scale_cpu<T: Scalar>(beta: T, y: &mut [T]) {
    use rayon::prelude::*;
    if beta == T::ZERO {
        y.par_iter_mut().with_min_len(1 << 14).for_each(|v| *v = T::ZERO);
    } else if beta != T::ONE {
        y.par_iter_mut()
            .with_min_len(1 << 14)
            .for_each(|v| *v = T::from_acc(beta.to_acc() * v.to_acc()));
    }
}

/// `y = α·t + β·y` (β = 0 does not read `y`), as the GPU's `axpby` kernel: in `T::Acc`,
/// one rounding to `T` (f16).
fn axpby_cpu<T: Scalar>(alpha: T, t: &[T], beta: T, y: &mut [T]) {
    use rayon::prelude::*;
    let (a, b) = (alpha.to_acc(), beta.to_acc());
    y.par_iter_mut().zip(t).with_min_len(1 << 14).for_each(|(v, &t)| {
        let at = a * t.to_acc();
        *v = T::from_acc(if beta == T::ZERO { at } else { at + b * v.to_acc() });
    });
}

// The host backend: each format's CPU algorithm.
crate::operator::by_inherent_methods!(HostMatrix, [T], |h: &HostMatrix<T>| (h.nrows(), h.ncols()));

/// Plain CSR on the host, rows over rayon's threads (Aᵀ built on every transposed product:
/// use a [`HostMatrix`] to keep it).
impl<T: Scalar> LinearOperator<T> for Csr<T> {
    type Vector = [T];
    fn shape(&self) -> (usize, usize) {
        (self.nrows(), self.ncols())
    }
    fn apply(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) -> Result<()> {
        if x.len() != self.ncols() || y.len() != self.nrows() {
            return Err(Error::Shape(format!(
                "vectors of length x = {}, y = {} given for a {} x {} matrix",
                x.len(),
                y.len(),
                self.nrows(),
                self.ncols()
            )));
        }
        combine(alpha, beta, y, |out| self.spmv_parallel(x, out));
        Ok(())
    }
    fn apply_transpose(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) -> Result<()> {
        crate::operator::check_transpose(self.shape(), x.len(), y.len())?;
        let t = self.transpose()?;
        combine(alpha, beta, y, |out| t.spmv_parallel(x, out));
        Ok(())
    }
    fn apply_block(
        &self, alpha: T, x: &[T], beta: T, y: &mut [T], block: crate::operator::Block,
    ) -> Result<()> {
        csr_block(self, (alpha, x, beta, y), block)
    }
}
