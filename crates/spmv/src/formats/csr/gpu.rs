//! Upload and launch of the CSR kernels.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{vector_lanes, CsrKernel, KERNELS};
use crate::error::{Error, Result};
use crate::formats::{check_vectors, offsets_u32, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::{Csr, Scalar};

const BLOCK: u32 = 256;

pub struct DeviceCsr<T> {
    gpu: Arc<Gpu>,
    nrows: u32,
    ncols: usize,
    format: &'static str,
    row_ptr: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
}

impl<T: Scalar> DeviceCsr<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Csr<T>, kernel: CsrKernel, format: &'static str) -> Result<Self> {
        let nrows = u32::try_from(a.nrows())
            .map_err(|_| Error::format(format, format!("{} rows exceed 32-bit row indices", a.nrows())))?;
        let (name, threads) = match kernel {
            CsrKernel::Scalar => (format!("csr_scalar_{}", T::SUFFIX), a.nrows() as u64),
            CsrKernel::Vector => {
                let lanes = vector_lanes(a.mean_row_len());
                (format!("csr_vector_{lanes}_{}", T::SUFFIX), a.nrows() as u64 * lanes as u64)
            }
        };
        Ok(DeviceCsr {
            gpu: gpu.clone(),
            nrows,
            ncols: a.ncols(),
            format,
            row_ptr: gpu.upload(&offsets_u32(format, a)?)?,
            col_idx: gpu.upload(a.col_idx())?,
            values: gpu.upload(a.values())?,
            function: gpu.function(&KERNELS, &name)?,
            config: grid_for(threads, BLOCK)?,
            bytes: super::device_bytes(a),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceCsr<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(self.format, self.nrows as usize, self.ncols, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch.arg(&self.nrows).arg(&self.row_ptr).arg(&self.col_idx).arg(&self.values).arg(x).arg(y);
        // SAFETY: argument list matches CSR_ARGS(T); columns < ncols = x.len() by the CSR
        // invariants, rows < nrows = y.len() by the bound check in the kernel.
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}
