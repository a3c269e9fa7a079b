//! Upload and launch of the HDIA kernel.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Hdia, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

pub struct DeviceHdia<T> {
    gpu: Arc<Gpu>,
    nrows: u32,
    ncols: u32,
    hack_rows: u32,
    hack_offsets: CudaSlice<u32>,
    offsets: CudaSlice<i32>,
    data: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
    bytes_read: usize,
}

impl<T: Scalar> DeviceHdia<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Hdia<T>) -> Result<Self> {
        // All below 2^31 by the conversion's checks.
        let dim = |v: usize| u32::try_from(v).map_err(|_| Error::format(NAME, "dimension exceeds 32 bits"));
        Ok(DeviceHdia {
            gpu: gpu.clone(),
            nrows: dim(a.nrows)?,
            ncols: dim(a.ncols)?,
            hack_rows: dim(a.hack_rows)?,
            hack_offsets: gpu.upload(&a.blocks.diag_ptr)?,
            offsets: upload_or_one(gpu, &a.blocks.offsets)?,
            data: upload_or_one(gpu, &a.blocks.values)?,
            function: gpu.function(&KERNELS, &format!("hdia_{}", T::SUFFIX))?,
            config: grid_for(a.nrows as u64, BLOCK)?,
            bytes: a.device_bytes(),
            bytes_read: a.bytes_read(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceHdia<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows as usize, self.ncols as usize, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch
            .arg(&self.nrows)
            .arg(&self.ncols)
            .arg(&self.hack_rows)
            .arg(&self.hack_offsets)
            .arg(&self.offsets)
            .arg(&self.data)
            .arg(x)
            .arg(y);
        // SAFETY: the arguments match hdia_<T>(u32, u32, u32, const u32*, const int*, const T*,
        // const T*, T*). Threads stop at m = y.len(); hack r / h < hacks, so hack_offsets
        // (hacks + 1 entries) is read in bounds; stored diagonal i < hack_offsets[hacks] =
        // offsets.len() and its slots i*h + lane < data.len(); the column guard keeps x
        // indices below n = x.len().
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
