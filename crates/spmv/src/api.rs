//! The front door: read or build a matrix, put it in a format on the GPU (or the CPU when
//! there is none), multiply with host vectors.
//!
//! ```
//! use spmv::{Backend, FormatHandle, Matrix};
//!
//! // A 2-D Poisson matrix (or Matrix::read("m.mtx.gz")).
//! let a = Matrix::<f64>::generate("poisson2d:n=64")?;
//! // The first GPU, or the CPU with a message on stderr when there is none.
//! let backend = Backend::detect();
//! let op = a.to_device(&backend, "sell-c-sigma:c=32")?;
//! let x = vec![1.0; op.ncols()];
//! let mut y = vec![0.0; op.nrows()];
//! op.apply(1.0, &x, 0.0, &mut y)?; // y = 1·A·x + 0·y
//! assert_eq!(y[0], 2.0); // a corner row of the 5-point stencil: 4 − 1 − 1
//! # Ok::<(), spmv::Error>(())
//! ```
//!
//! **Choosing where it runs.** [`Backend::detect`] takes the first CUDA device and falls
//! back to the CPU (saying why on stderr); [`Backend::gpu`] insists on a GPU (an
//! [`Error::NoGpu`](crate::Error::NoGpu) otherwise) and [`Backend::Cpu`] runs every format's CPU algorithm. The
//! same [`Operator`] API serves both. For vectors that already live on the device, use
//! [`Operator::device_matrix`] and [`DeviceMatrix::apply`] with `CudaSlice`s.

use std::path::Path;
use std::sync::Mutex;

use cudarc::driver::CudaSlice;

use crate::backend::Backend;
use crate::choice::Choice;
use crate::error::Result;
use crate::formats::{self, DeviceMatrix, FormatHandle, FormatStats, HostMatrix, MatrixInfo};
use crate::matrix::{Csr, Scalar};
use crate::operator::{check_block, check_transpose, Block};

/// A sparse matrix on the host, in CSR: what every format is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<T: Scalar = f64> {
    csr: Csr<T>,
}

impl<T: Scalar> Matrix<T> {
    /// Reads a Matrix Market file (`.mtx` or `.mtx.gz`).
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        Ok(Matrix { csr: crate::io::read_matrix_market(path.as_ref())? })
    }

    /// Generates a matrix from a spec such as `poisson3d:n=64` (docs/generators.md).
    pub fn generate(spec: &str) -> Result<Self> {
        Ok(Matrix { csr: crate::io::gen::generate(spec)?.cast() })
    }

    /// Wraps a CSR matrix (no copy).
    pub fn from_csr(csr: Csr<T>) -> Self {
        Matrix { csr }
    }
    /// The CSR matrix inside.
    pub fn csr(&self) -> &Csr<T> {
        &self.csr
    }
    /// The CSR matrix inside, taken out.
    pub fn into_csr(self) -> Csr<T> {
        self.csr
    }
    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.csr.nrows()
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.csr.ncols()
    }
    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.csr.nnz()
    }

    /// Converts the matrix to the format `spec` names (`brcp`, `sell-c-sigma:c=32,sigma=1024`,
    /// see `spmv formats`), or the one `auto` or `tune` chooses, and, on a GPU backend,
    /// uploads it.
    pub fn to_device(&self, backend: &Backend, spec: &str) -> Result<Operator<T>> {
        let spec = Choice::parse(spec)?;
        self.to_device_spec(backend, &spec)
    }

    /// [`Matrix::to_device`] with a parsed spec.
    pub fn to_device_spec(&self, backend: &Backend, spec: &Choice) -> Result<Operator<T>> {
        Operator::new(&self.csr, backend, spec)
    }
}

impl<T: Scalar> From<Csr<T>> for Matrix<T> {
    fn from(csr: Csr<T>) -> Self {
        Matrix { csr }
    }
}

/// Device copies of x and y reused from product to product (reallocated when a product of
/// other lengths comes: a transposed or block product).
type DeviceVectors<T> = Mutex<Option<(CudaSlice<T>, CudaSlice<T>)>>;

enum Place<T: Scalar> {
    Cpu(HostMatrix<T>),
    Gpu { device: Box<DeviceMatrix<T>>, vectors: DeviceVectors<T> },
}

/// A matrix in one format on one backend, ready for `y = α·A·x + β·y` with host vectors.
///
/// On the GPU each product copies `x` (and `y` when β ≠ 0) to the device and `y` back; a
/// solver that keeps its vectors on the device uses [`Operator::device_matrix`] instead.
/// `Send` and `Sync`: products from several threads run one after another.
pub struct Operator<T: Scalar> {
    place: Place<T>,
    /// The format a choosing format (`auto`) built, as its label.
    chosen: Option<String>,
}

/// `nrows()`, `ncols()`, `nnz()`, `spec()` ... of the matrix and its format.
impl<T: Scalar> FormatHandle for Operator<T> {
    fn info(&self) -> &MatrixInfo {
        match &self.place {
            Place::Cpu(h) => h.info(),
            Place::Gpu { device, .. } => device.info(),
        }
    }
}

impl<T: Scalar> Operator<T> {
    /// `a` converted to the format `spec` names and, on a GPU backend, uploaded (what
    /// [`Matrix::to_device_spec`] does, for a CSR the caller keeps: no copy of it).
    pub fn new(a: &Csr<T>, backend: &Backend, spec: &Choice) -> Result<Self> {
        let host = spec.build_on(backend, a)?;
        let chosen = host.chosen();
        let place = match backend {
            Backend::Cpu => Place::Cpu(host),
            Backend::Gpu(gpu) => {
                Place::Gpu { device: Box::new(host.upload(gpu)?), vectors: Mutex::new(None) }
            }
        };
        Ok(Operator { place, chosen })
    }

    /// `y = α·A·x + β·y`. Wrong lengths are an [`Error::Shape`](crate::Error::Shape); β = 0 never reads `y`.
    pub fn apply(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) -> Result<()> {
        match &self.place {
            Place::Cpu(host) => host.apply(alpha, x, beta, y),
            Place::Gpu { device, vectors } => {
                if let Some(e) = formats::host::shape_error(device.info(), x.len(), y.len()) {
                    return Err(e);
                }
                on_device(device, vectors, x, beta, y, |d, x, y| d.apply(alpha, x, beta, y))
            }
        }
    }

    /// `y = α·Aᵀ·x + β·y` (`x` of `nrows` entries, `y` of `ncols`), through Aᵀ stored as a
    /// matrix of its own (module [`operator`](crate::operator); on a GPU,
    /// [`DeviceMatrix::apply_transpose`]).
    pub fn apply_transpose(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) -> Result<()> {
        match &self.place {
            Place::Cpu(host) => host.apply_transpose(alpha, x, beta, y),
            Place::Gpu { device, vectors } => {
                check_transpose((device.nrows(), device.ncols()), x.len(), y.len())?;
                on_device(device, vectors, x, beta, y, |d, x, y| {
                    d.apply_transpose(alpha, x, beta, y)
                })
            }
        }
    }

    /// `Y = α·A·X + β·Y` for `block.k` vectors (`X` of `ncols·k` entries, `Y` of `nrows·k`,
    /// both stored as `block.layout` says).
    pub fn apply_block(&self, alpha: T, x: &[T], beta: T, y: &mut [T], block: Block) -> Result<()> {
        match &self.place {
            Place::Cpu(host) => host.apply_block(alpha, x, beta, y, block),
            Place::Gpu { device, vectors } => {
                check_block((device.nrows(), device.ncols()), x.len(), y.len(), block)?;
                on_device(device, vectors, x, beta, y, |d, x, y| {
                    d.apply_block(alpha, x, beta, y, block)
                })
            }
        }
    }

    /// `Y = α·Aᵀ·X + β·Y` for `block.k` vectors (`X` of `nrows·k` entries, `Y` of `ncols·k`):
    /// on a GPU Aᵀ's block product ([`DeviceMatrix::apply_transpose_block`]), on the CPU one
    /// transposed product per column.
    pub fn apply_transpose_block(
        &self, alpha: T, x: &[T], beta: T, y: &mut [T], block: Block,
    ) -> Result<()> {
        match &self.place {
            Place::Cpu(host) => {
                let apply = |a, x: &[T], b, y: &mut [T]| host.apply_transpose(a, x, b, y);
                let shape = (host.ncols(), host.nrows());
                crate::operator::host_block(shape, apply, (alpha, x, beta, y), block)
            }
            Place::Gpu { device, vectors } => {
                check_block((device.ncols(), device.nrows()), x.len(), y.len(), block)?;
                on_device(device, vectors, x, beta, y, |d, x, y| {
                    d.apply_transpose_block(alpha, x, beta, y, block)
                })
            }
        }
    }

    /// `y = A·x`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) -> Result<()> {
        self.apply(T::ONE, x, T::ZERO, y)
    }

    /// The format's statistics (bytes, stored slots, padding, row lengths, its own figures).
    pub fn stats(&self) -> FormatStats {
        match &self.place {
            Place::Cpu(h) => h.stats(),
            Place::Gpu { device, .. } => device.stats().clone(),
        }
    }
    /// The format `auto` chose (its label), or `None` for a format named directly.
    pub fn chosen(&self) -> Option<&str> {
        self.chosen.as_deref()
    }
    /// Whether products run on a GPU.
    pub fn on_gpu(&self) -> bool {
        matches!(self.place, Place::Gpu { .. })
    }
    /// The device handle, for products with vectors that live on the GPU.
    pub fn device_matrix(&self) -> Option<&DeviceMatrix<T>> {
        match &self.place {
            Place::Gpu { device, .. } => Some(device),
            Place::Cpu(_) => None,
        }
    }
    /// The host handle, on the CPU backend.
    pub fn host_matrix(&self) -> Option<&HostMatrix<T>> {
        match &self.place {
            Place::Cpu(h) => Some(h),
            Place::Gpu { .. } => None,
        }
    }
}

/// A product of `device` with host vectors whose lengths the caller checked: `x` (and `y`
/// when β ≠ 0) copied to device vectors kept from call to call, `run`, `y` copied back.
fn on_device<T: Scalar>(
    device: &DeviceMatrix<T>, vectors: &DeviceVectors<T>, x: &[T], beta: T, y: &mut [T],
    run: impl FnOnce(&DeviceMatrix<T>, &CudaSlice<T>, &mut CudaSlice<T>) -> Result<()>,
) -> Result<()> {
    if y.is_empty() {
        return Ok(());
    }
    if x.is_empty() {
        // A product with a matrix without columns is 0: y = β·y, no device work.
        formats::host::scale_cpu(beta, y);
        return Ok(());
    }
    let gpu = device.gpu();
    let mut vectors = vectors.lock().unwrap_or_else(|p| p.into_inner());
    let fits = |v: &(CudaSlice<T>, CudaSlice<T>)| v.0.len() == x.len() && v.1.len() == y.len();
    if !vectors.as_ref().is_some_and(fits) {
        *vectors = None; // freed before the new ones are allocated
        *vectors = Some((gpu.alloc(x.len())?, gpu.alloc(y.len())?));
    }
    let (x_dev, y_dev) = vectors.as_mut().expect("allocated above");
    let stream = gpu.stream();
    stream.memcpy_htod(x, x_dev)?;
    if beta != T::ZERO {
        stream.memcpy_htod(&*y, y_dev)?;
    }
    run(device, x_dev, y_dev)?;
    stream.memcpy_dtoh(y_dev, y)?;
    gpu.synchronize()
}

// The front door multiplies host vectors on either backend.
crate::operator::by_inherent_methods!(Operator, [T], |o: &Operator<T>| (o.nrows(), o.ncols()));

impl<T: Scalar> std::fmt::Debug for Operator<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.place {
            Place::Cpu(h) => write!(f, "Operator(CPU, {h:?})"),
            Place::Gpu { device, .. } => write!(f, "Operator(GPU, {device:?})"),
        }
    }
}

/// The handles can be shared between threads (checked at compile time).
#[allow(dead_code)]
fn handles_are_send_and_sync<T: Scalar>() {
    fn check<X: Send + Sync>() {}
    check::<Operator<T>>();
    check::<DeviceMatrix<T>>();
    check::<HostMatrix<T>>();
}
