//! Upload and launch of the SELL-C-σ kernel.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{SellCSigma, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

/// Threads per block: a multiple of 32, so with C = 32 every warp is one whole slice.
const BLOCK: u32 = 256;

pub struct DeviceSell<T> {
    gpu: Arc<Gpu>,
    nrows: u32,
    ncols: usize,
    c: u32,
    perm: CudaSlice<u32>,
    slice_ptr: CudaSlice<u32>,
    slice_width: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
}

impl<T: Scalar> DeviceSell<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &SellCSigma<T>) -> Result<Self> {
        // Both hold by construction (SellCSigma::new checks them).
        let nrows = u32::try_from(a.nrows).map_err(|_| Error::format(NAME, "rows exceed 32-bit indices"))?;
        let c = u32::try_from(a.c).map_err(|_| Error::format(NAME, "C exceeds 32 bits"))?;
        Ok(DeviceSell {
            gpu: gpu.clone(),
            nrows,
            ncols: a.ncols,
            c,
            perm: gpu.upload(&a.perm)?,
            slice_ptr: gpu.upload(&a.slice_ptr)?,
            slice_width: gpu.upload(&a.slice_width)?,
            col_idx: gpu.upload(&a.col_idx)?,
            values: gpu.upload(&a.values)?,
            function: gpu.function(&KERNELS, &format!("sell_{}", T::SUFFIX))?,
            config: grid_for(a.nrows as u64, BLOCK)?,
            bytes: a.device_bytes(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceSell<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows as usize, self.ncols, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch
            .arg(&self.nrows)
            .arg(&self.c)
            .arg(&self.perm)
            .arg(&self.slice_ptr)
            .arg(&self.slice_width)
            .arg(&self.col_idx)
            .arg(&self.values)
            .arg(x)
            .arg(y);
        // SAFETY: the arguments match SELL_ARGS(T). Threads stop at nrows; slice s of thread
        // i < nrows is < slices; its slots lie in slice_ptr[s]..slice_ptr[s+1] ≤ the length of
        // col_idx and values; every column (padding included) is < ncols = x.len(); perm is
        // a permutation of 0..nrows = y.len().
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}
