//! Upload and launch of the ELL kernel (also HYB's ELL part).

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{Ell, KERNELS};
use crate::error::{Error, Result};
use crate::formats::{DeviceEntries, DeviceFormat};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

pub(crate) struct DeviceEll<T> {
    nrows: u32,
    row_len: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    kernel: Kernel,
}

impl<T: Scalar> DeviceEll<T> {
    pub(crate) fn new(gpu: &Gpu, ell: &Ell<T>, format: &'static str) -> Result<Self> {
        let nrows = u32::try_from(ell.nrows).map_err(|_| {
            Error::format(format, format!("{} rows exceed 32-bit row indices", ell.nrows))
        })?;
        Ok(DeviceEll {
            nrows,
            row_len: gpu.upload_nonempty(&ell.row_len)?,
            entries: DeviceEntries::upload(gpu, &ell.col, &ell.val)?,
            kernel: Kernel::for_type::<T>(
                gpu,
                &KERNELS,
                "ell",
                grid_for(ell.nrows as u64, BLOCK)?,
            )?,
        })
    }
}

/// Writes every `y[r]`: the sum of the row's ELL entries.
impl<T: Scalar> DeviceFormat<T> for DeviceEll<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: the arguments match ell_<T>(u32 m, const u32*, const u32*, const T*, const
        // T*, T*); rows < m = y.len() by the bound check; slots t*m + r < m*K since
        // t < row_len[r] <= K; columns < ncols = x.len() (CSR invariants).
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&self.nrows).arg(&self.row_len);
                self.entries.push(a);
                a.arg(x).arg(y);
            })
        }
    }
}
