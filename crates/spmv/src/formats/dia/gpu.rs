//! Upload and launch of the DIA kernel (also DIA-Adaptive's DIA layout).

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Dia, KERNELS};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

pub struct DeviceDia<T> {
    gpu: Arc<Gpu>,
    format: &'static str,
    nrows: u32,
    ncols: u32,
    diagonals: u32,
    offsets: CudaSlice<i32>,
    data: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
    bytes_read: usize,
}

impl<T: Scalar> DeviceDia<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Dia<T>, format: &'static str) -> Result<Self> {
        // Both below 2^31 by check_shape; the diagonal count is below m + n.
        let dim = |v: usize| u32::try_from(v).map_err(|_| Error::format(format, "dimension exceeds 32 bits"));
        Ok(DeviceDia {
            gpu: gpu.clone(),
            format,
            nrows: dim(a.nrows)?,
            ncols: dim(a.ncols)?,
            diagonals: dim(a.offsets.len())?,
            offsets: upload_or_one(gpu, &a.offsets)?,
            data: upload_or_one(gpu, &a.data)?,
            function: gpu.function(&KERNELS, &format!("dia_{}", T::SUFFIX))?,
            config: grid_for(a.nrows as u64, BLOCK)?,
            bytes: a.device_bytes(),
            bytes_read: a.bytes_read(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceDia<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(self.format, self.nrows as usize, self.ncols as usize, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch.arg(&self.nrows).arg(&self.ncols).arg(&self.diagonals).arg(&self.offsets).arg(&self.data).arg(x).arg(y);
        // SAFETY: the arguments match dia_<T>(u32, u32, u32, const int*, const T*, const T*, T*).
        // Threads stop at m = y.len(); data holds diagonals·m slots (at least one element, never
        // read, when empty); the column guard keeps every x index below n = x.len().
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
