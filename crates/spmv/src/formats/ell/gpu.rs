//! Upload and launch of the ELL kernel (also HYB's ELL part).

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Ell, KERNELS};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

pub struct DeviceEll<T> {
    gpu: Arc<Gpu>,
    format: &'static str,
    nrows: u32,
    ncols: usize,
    row_len: CudaSlice<u32>,
    col: CudaSlice<u32>,
    val: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
    /// Real entries and row lengths only: the kernel stops at each row's length.
    bytes_read: usize,
}

impl<T: Scalar> DeviceEll<T> {
    pub(crate) fn new(gpu: &Arc<Gpu>, ell: &Ell<T>, format: &'static str) -> Result<Self> {
        let nrows = u32::try_from(ell.nrows)
            .map_err(|_| Error::format(format, format!("{} rows exceed 32-bit row indices", ell.nrows)))?;
        Ok(DeviceEll {
            gpu: gpu.clone(),
            format,
            nrows,
            ncols: ell.ncols,
            row_len: upload_or_one(gpu, &ell.row_len)?,
            col: upload_or_one(gpu, &ell.col)?,
            val: upload_or_one(gpu, &ell.val)?,
            function: gpu.function(&KERNELS, &format!("ell_{}", T::SUFFIX))?,
            config: grid_for(ell.nrows as u64, BLOCK)?,
            bytes: ell.bytes(),
            bytes_read: ell.entries() * (4 + std::mem::size_of::<T>()) + 4 * ell.nrows,
        })
    }

    /// Launches the kernel: writes every `y[r]` (the sum of the row's ELL entries). The
    /// caller has checked the vector lengths.
    pub(crate) fn launch(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        if self.nrows == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch.arg(&self.nrows).arg(&self.row_len).arg(&self.col).arg(&self.val).arg(x).arg(y);
        // SAFETY: the arguments match ell_<T>(u32 m, const u32*, const u32*, const T*, const
        // T*, T*); rows < m = y.len() by the bound check; slots t*m + r < m*K since
        // t < row_len[r] <= K; columns < ncols = x.len() (CSR invariants).
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
    pub(crate) fn bytes_read(&self) -> usize {
        self.bytes_read
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceEll<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(self.format, self.nrows as usize, self.ncols, x, y)?;
        self.launch(x, y)
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
    fn bytes_read(&self) -> usize {
        self.bytes_read
    }
}
