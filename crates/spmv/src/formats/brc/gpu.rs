//! Upload and launch of the BRC kernel.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Brc, KERNELS, NAME, WARP_BLOCK_ROWS};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

/// Threads per CUDA block: 8 warps, 8 BRC blocks.
const BLOCK: u32 = 256;

pub struct DeviceBrc<T> {
    gpu: Arc<Gpu>,
    nrows: usize,
    ncols: usize,
    blocks: u32,
    block_ptr: CudaSlice<u32>,
    row_perm: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
}

impl<T: Scalar> DeviceBrc<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Brc<T>) -> Result<Self> {
        if a.block_rows != WARP_BLOCK_ROWS {
            return Err(Error::format(
                NAME,
                format!("the GPU kernel runs one warp per block: H must be 32, not {}", a.block_rows),
            ));
        }
        // Holds by construction (slots <= stored slots < 2^32).
        let blocks = u32::try_from(a.blocks()).map_err(|_| Error::format(NAME, "blocks exceed 32 bits"))?;
        Ok(DeviceBrc {
            gpu: gpu.clone(),
            nrows: a.nrows,
            ncols: a.ncols,
            blocks,
            block_ptr: gpu.upload(&a.block_ptr)?,
            row_perm: upload_or_one(gpu, &a.row_perm)?,
            col_idx: upload_or_one(gpu, &a.col_idx)?,
            values: upload_or_one(gpu, &a.values)?,
            function: gpu.function(&KERNELS, &format!("brc_{}", T::SUFFIX))?,
            config: grid_for(a.row_perm.len() as u64, BLOCK)?,
            bytes: a.device_bytes(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceBrc<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows, self.ncols, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        // The atomics add into y: zero it first, on the same stream (timed with it).
        self.gpu.fill(y, T::ZERO)?;
        if self.blocks == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch
            .arg(&self.blocks)
            .arg(&self.block_ptr)
            .arg(&self.row_perm)
            .arg(&self.col_idx)
            .arg(&self.values)
            .arg(x)
            .arg(y);
        // SAFETY: the arguments match brc_<T>(u32, const u32*, const u32*, const u32*, const T*,
        // const T*, T*). Threads of warps past `blocks` return; block b < blocks reads
        // block_ptr[b + 1] (blocks + 1 entries) and slots block_ptr[b] .. block_ptr[b + 1] of
        // col_idx and values; row_perm has blocks * 32 entries; every column is < ncols =
        // x.len() (padding repeats a real column) and every row but NO_ROW is < nrows = y.len().
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}
