//! Upload and launch of the JDS kernel.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{Jds, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::{DeviceEntries, DeviceFormat};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

pub(super) struct DeviceJds<T> {
    nrows: u32,
    diagonals: u32,
    perm: CudaSlice<u32>,
    iter_ptr: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    kernel: Kernel,
}

impl<T: Scalar> DeviceJds<T> {
    pub(super) fn new(gpu: &Gpu, a: &Jds<T>) -> Result<Self> {
        // Both hold by construction (Jds::new checks rows and nnz against u32::MAX, and
        // the diagonal count is at most the longest row ≤ nnz).
        let nrows = u32::try_from(a.nrows)
            .map_err(|_| Error::format(NAME, "rows exceed 32-bit indices"))?;
        let diagonals = u32::try_from(a.jagged_diagonals())
            .map_err(|_| Error::format(NAME, "jagged diagonals exceed 32-bit indices"))?;
        Ok(DeviceJds {
            nrows,
            diagonals,
            perm: gpu.upload_nonempty(&a.perm)?,
            iter_ptr: gpu.upload(&a.iter_ptr)?,
            entries: DeviceEntries::upload(gpu, &a.col_idx, &a.values)?,
            kernel: Kernel::for_type::<T>(gpu, &KERNELS, "jds", grid_for(a.nrows as u64, BLOCK)?)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceJds<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: the arguments match JDS_ARGS(T). Threads stop at nrows; offsets stay below
        // iter_ptr[diagonals] = nnz = the length of col_idx and values; columns < ncols =
        // x.len() by the CSR invariants; perm is a permutation of 0..nrows = y.len().
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&self.nrows).arg(&self.diagonals).arg(&self.perm).arg(&self.iter_ptr);
                self.entries.push(a);
                a.arg(x).arg(y);
            })
        }
    }
}
