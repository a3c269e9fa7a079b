//! Upload and launch of the CSR kernels.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{CsrKernel, KERNELS};
use crate::error::{Error, Result};
use crate::formats::{offsets_u32, DeviceEntries, DeviceFormat};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::{Csr, Scalar};

const BLOCK: u32 = 256;

pub struct DeviceCsr<T> {
    nrows: u32,
    row_ptr: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    plain: Kernel,
    /// The same kernel with α and β (`_ab`).
    scaled: Kernel,
}

impl<T: Scalar> DeviceCsr<T> {
    pub fn new(gpu: &Gpu, a: &Csr<T>, kernel: CsrKernel, format: &'static str) -> Result<Self> {
        let nrows = u32::try_from(a.nrows())
            .map_err(|_| Error::format(format, format!("{} rows exceed 32-bit row indices", a.nrows())))?;
        let (name, threads) = match kernel {
            CsrKernel::Scalar => ("csr_scalar".to_string(), a.nrows() as u64),
            CsrKernel::Vector(lanes) => (format!("csr_vector_{lanes}"), a.nrows() as u64 * lanes as u64),
        };
        let config = grid_for(threads, BLOCK)?;
        Ok(DeviceCsr {
            nrows,
            row_ptr: gpu.upload(&offsets_u32(format, a)?)?,
            entries: DeviceEntries::upload(gpu, a.col_idx(), a.values())?,
            plain: Kernel::new(gpu, &KERNELS, &format!("{name}_{}", T::SUFFIX), config)?,
            scaled: Kernel::new(gpu, &KERNELS, &format!("{name}_ab_{}", T::SUFFIX), config)?,
        })
    }
}

// SAFETY (both launches): the arguments match CSR_ARGS(T) (then T alpha, T beta for `_ab`);
// columns < ncols = x.len() by the CSR invariants, rows < nrows = y.len() by the bound check
// in the kernel; entries row_ptr[r]..row_ptr[r + 1] lie inside col_idx and values.
impl<T: Scalar> DeviceFormat<T> for DeviceCsr<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            self.plain.launch(gpu, |a| {
                a.arg(&self.nrows).arg(&self.row_ptr).arg(&self.entries.col_idx).arg(&self.entries.values).arg(x).arg(y);
            })
        }
    }
    unsafe fn launch_scaled(&self, gpu: &Gpu, alpha: T, x: &CudaSlice<T>, beta: T, y: &mut CudaSlice<T>) -> Option<Result<()>> {
        // SAFETY: see above.
        Some(unsafe {
            self.scaled.launch(gpu, |a| {
                a.arg(&self.nrows).arg(&self.row_ptr).arg(&self.entries.col_idx).arg(&self.entries.values).arg(x).arg(y);
                a.arg(&alpha).arg(&beta);
            })
        })
    }
}
