//! Upload and launch of the PBC kernel.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Pbc, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub struct DevicePbc<T> {
    gpu: Arc<Gpu>,
    nrows: usize,
    ncols: usize,
    block_row_ptr: CudaSlice<u32>,
    block_width: CudaSlice<u32>,
    block_slot_ptr: CudaSlice<u32>,
    perm: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
}

impl<T: Scalar> DevicePbc<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Pbc<T>) -> Result<Self> {
        let blocks = u32::try_from(a.blocks())
            .ok()
            .filter(|&b| b <= i32::MAX as u32)
            .ok_or_else(|| Error::format(NAME, format!("{} blocks exceed the grid limit", a.blocks())))?;
        Ok(DevicePbc {
            gpu: gpu.clone(),
            nrows: a.nrows,
            ncols: a.ncols,
            block_row_ptr: gpu.upload(&a.block_row_ptr)?,
            block_width: upload_or_one(gpu, &a.block_width)?,
            block_slot_ptr: gpu.upload(&a.block_slot_ptr)?,
            perm: upload_or_one(gpu, &a.perm)?,
            col_idx: upload_or_one(gpu, &a.col_idx)?,
            values: upload_or_one(gpu, &a.values)?,
            function: gpu.function(&KERNELS, &format!("pbc_{}", T::SUFFIX))?,
            config: LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (a.threads_per_block, 1, 1),
                shared_mem_bytes: 0,
            },
            bytes: a.device_bytes(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DevicePbc<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows, self.ncols, x, y)?;
        if self.config.grid_dim.0 == 0 {
            return Ok(()); // no rows
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch
            .arg(&self.block_row_ptr)
            .arg(&self.block_width)
            .arg(&self.block_slot_ptr)
            .arg(&self.perm)
            .arg(&self.col_idx)
            .arg(&self.values)
            .arg(x)
            .arg(y);
        // SAFETY: the arguments match PBC_ARGS(T). Block b < blocks reads entries b and b + 1
        // of block_row_ptr and block_slot_ptr (blocks + 1 entries) and entry b of
        // block_width; its slots base + t·h + lane < block_slot_ptr[b + 1] ≤ the length of
        // col_idx and values; every column (padding included) is < ncols = x.len(); perm is
        // a permutation of 0..nrows = y.len(). threads_per_block is a multiple of 32 ≤ 1024.
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}
