//! Upload and launch of the HDC kernel.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Hdc, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

pub struct DeviceHdc<T> {
    gpu: Arc<Gpu>,
    nrows: u32,
    ncols: u32,
    diagonals: u32,
    offsets: CudaSlice<i32>,
    data: CudaSlice<T>,
    csr_entries: u32,
    row_ptr: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
    bytes_read: usize,
}

impl<T: Scalar> DeviceHdc<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Hdc<T>) -> Result<Self> {
        // All below 2^32 by the conversion's checks.
        let dim = |v: usize| u32::try_from(v).map_err(|_| Error::format(NAME, "dimension exceeds 32 bits"));
        Ok(DeviceHdc {
            gpu: gpu.clone(),
            nrows: dim(a.nrows)?,
            ncols: dim(a.ncols)?,
            diagonals: dim(a.offsets.len())?,
            offsets: upload_or_one(gpu, &a.offsets)?,
            data: upload_or_one(gpu, &a.data)?,
            csr_entries: dim(a.values.len())?,
            row_ptr: gpu.upload(&a.row_ptr)?,
            col_idx: upload_or_one(gpu, &a.col_idx)?,
            values: upload_or_one(gpu, &a.values)?,
            function: gpu.function(&KERNELS, &format!("hdc_{}", T::SUFFIX))?,
            config: grid_for(a.nrows as u64, BLOCK)?,
            bytes: a.device_bytes(),
            bytes_read: a.bytes_read(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceHdc<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows as usize, self.ncols as usize, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch
            .arg(&self.nrows)
            .arg(&self.ncols)
            .arg(&self.diagonals)
            .arg(&self.offsets)
            .arg(&self.data)
            .arg(&self.csr_entries)
            .arg(&self.row_ptr)
            .arg(&self.col_idx)
            .arg(&self.values)
            .arg(x)
            .arg(y);
        // SAFETY: the arguments match HDC_ARGS(T). Threads stop at m = y.len(); data holds
        // diagonals·m slots; row_ptr has m + 1 entries bounding col_idx and values, whose
        // columns are < n by the CSR invariants; the DIA column guard keeps x indices < n.
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
    fn bytes_read(&self) -> usize {
        self.bytes_read
    }
}
