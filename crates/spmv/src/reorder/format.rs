//! A format over `P·A·Pᵀ` used as `A`: `x` gathered into the permuted order before the
//! product, `y` scattered back after it, on the CPU and on the GPU (`kernel.cu`).

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{permutation, Permutation, Reordering};
use crate::choice::Choice;
use crate::error::Result;
use crate::formats::{DeviceFormat, FormatHandle, FormatStats, HostMatrix, SpmvFormat};
use crate::gpu::{grid_stride, Gpu, Kernel, KernelModule};
use crate::matrix::{Csr, Scalar};

/// The gather (`x` into the new order) and scatter (`y` back to the old) kernels.
pub const KERNELS: KernelModule =
    KernelModule { name: "reorder", source: include_str!("kernel.cu"), headers: &[] };

/// A format built on the permuted matrix, with the permutation.
pub struct Reordered<T: Scalar> {
    inner: HostMatrix<T>,
    perm: Arc<Permutation>,
    method: Reordering,
}

/// Builds `spec` on `permuted = P·A·Pᵀ` (from [`Permutation::apply`]) and wraps it so that it
/// multiplies by `A`: the handle's `x` and `y` are in `A`'s order.
pub fn build_reordered<T: Scalar>(
    spec: &Choice, permuted: &Csr<T>, perm: &Arc<Permutation>, method: Reordering,
) -> Result<HostMatrix<T>> {
    let inner = spec.build(permuted)?;
    let deterministic = inner.info().deterministic;
    let format = Box::new(Reordered { inner, perm: perm.clone(), method });
    Ok(HostMatrix::new(spec.spec(), deterministic, format, permuted).with_permuted_source())
}

impl<T: Scalar> Reordered<T> {
    /// The permutation of `a` by `method`, `P·A·Pᵀ`, and `spec` built on it: a convenience for
    /// one format (the benchmark permutes once and builds every format on the result).
    pub fn build(spec: &Choice, a: &Csr<T>, method: Reordering) -> Result<HostMatrix<T>> {
        let perm = Arc::new(permutation(a, method)?);
        build_reordered(spec, &perm.apply(a)?, &perm, method)
    }
}

impl<T: Scalar> SpmvFormat<T> for Reordered<T> {
    fn stats(&self) -> FormatStats {
        // The permutation both ways (8 bytes per row) and the two permuted vectors.
        let n = self.perm.len();
        let mut stats = self.inner.stats();
        stats.bytes += n * (8 + 2 * std::mem::size_of::<T>());
        stats.extra.push((format!("reorder_{}", self.method), 1.0));
        stats
    }
    fn bytes_read(&self) -> usize {
        // The inner product, plus the gather (index, x, x') and scatter (index, y', y) passes;
        // the bench adds the caller's x and y once.
        let n = self.perm.len();
        self.inner.bytes_read() + 2 * n * (4 + 2 * std::mem::size_of::<T>())
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        let n = self.perm.len();
        let mut xp = vec![T::ZERO; n];
        let mut yp = vec![T::ZERO; n];
        self.perm.gather(x, &mut xp);
        self.inner.format().spmv_cpu(&xp, &mut yp);
        self.perm.scatter(&yp, y);
    }
    fn chosen(&self) -> Option<String> {
        self.inner.chosen()
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        let n = self.perm.len();
        Ok(Box::new(DeviceReordered {
            inner: self.inner.format().upload(gpu)?,
            n: n as u32,
            old_of_new: gpu.upload_nonempty(self.perm.old_of_new())?,
            new_of_old: gpu.upload_nonempty(self.perm.new_of_old())?,
            scratch: Mutex::new((gpu.alloc(n.max(1))?, gpu.alloc(n.max(1))?)),
            gather: Kernel::new(
                gpu,
                &KERNELS,
                &format!("gather_{}", T::SUFFIX),
                grid_stride(n as u64),
            )?,
            scatter: Kernel::new(
                gpu,
                &KERNELS,
                &format!("scatter_{}", T::SUFFIX),
                grid_stride(n as u64),
            )?,
        }))
    }
}

struct DeviceReordered<T: Scalar> {
    inner: Box<dyn DeviceFormat<T>>,
    n: u32,
    old_of_new: CudaSlice<u32>,
    new_of_old: CudaSlice<u32>,
    /// x and y in the permuted order.
    scratch: Mutex<(CudaSlice<T>, CudaSlice<T>)>,
    gather: Kernel,
    scatter: Kernel,
}

impl<T: Scalar> DeviceFormat<T> for DeviceReordered<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let mut scratch = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let (xp, yp) = &mut *scratch;
        // SAFETY: gather_T(u32 n, const u32* old_of_new, const T* x, T* xp) and scatter_T(u32 n,
        // const u32* new_of_old, const T* yp, T* y): i < n = the permutation's length = x.len()
        // = y.len() (square, checked by the handle) = the scratch lengths; both index arrays
        // hold values below n.
        // The inner format gets vectors of its own (permuted) matrix's lengths.
        unsafe {
            self.gather.launch(gpu, |a| {
                a.arg(&self.n).arg(&self.old_of_new).arg(x).arg(&mut *xp);
            })?;
            self.inner.launch(gpu, xp, yp)?;
            self.scatter.launch(gpu, |a| {
                a.arg(&self.n).arg(&self.new_of_old).arg(&*yp).arg(y);
            })
        }
    }
    fn workspace_bytes(&self) -> usize {
        self.inner.workspace_bytes()
    }
    fn conversion_ms(&self) -> Option<f64> {
        self.inner.conversion_ms()
    }
}
