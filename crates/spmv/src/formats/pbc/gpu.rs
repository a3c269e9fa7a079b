//! Upload and launch of the PBC kernel.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::{Pbc, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::DeviceFormat;
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

pub struct DevicePbc<T> {
    block_row_ptr: CudaSlice<u32>,
    block_width: CudaSlice<u32>,
    block_slot_ptr: CudaSlice<u32>,
    perm: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    kernel: Kernel,
}

impl<T: Scalar> DevicePbc<T> {
    pub fn new(gpu: &Gpu, a: &Pbc<T>) -> Result<Self> {
        let blocks = u32::try_from(a.blocks())
            .ok()
            .filter(|&b| b <= i32::MAX as u32)
            .ok_or_else(|| Error::format(NAME, format!("{} blocks exceed the grid limit", a.blocks())))?;
        let config =
            LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (a.threads_per_block, 1, 1), shared_mem_bytes: 0 };
        Ok(DevicePbc {
            block_row_ptr: gpu.upload(&a.block_row_ptr)?,
            block_width: gpu.upload_nonempty(&a.block_width)?,
            block_slot_ptr: gpu.upload(&a.block_slot_ptr)?,
            perm: gpu.upload_nonempty(&a.perm)?,
            col_idx: gpu.upload_nonempty(&a.col_idx)?,
            values: gpu.upload_nonempty(&a.values)?,
            kernel: Kernel::new(gpu, &KERNELS, &format!("pbc_{}", T::SUFFIX), config)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DevicePbc<T> {
    fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // One CUDA block per PBC block; a matrix with rows has at least one, so the grid is
        // never empty.
        // SAFETY: the arguments match PBC_ARGS(T). Block b < blocks reads entries b and b + 1
        // of block_row_ptr and block_slot_ptr (blocks + 1 entries) and entry b of
        // block_width; its slots base + t·h + lane < block_slot_ptr[b + 1] ≤ the length of
        // col_idx and values; every column (padding included) is < ncols = x.len(); perm is
        // a permutation of 0..nrows = y.len(). threads_per_block is a multiple of 32 ≤ 1024.
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&self.block_row_ptr).arg(&self.block_width).arg(&self.block_slot_ptr).arg(&self.perm);
                a.arg(&self.col_idx).arg(&self.values).arg(x).arg(y);
            })
        }
    }
}
