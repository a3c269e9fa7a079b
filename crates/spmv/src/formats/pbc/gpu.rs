//! Upload and launch of the PBC kernel.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{Pbc, KERNELS, NAME};
use crate::error::Result;
use crate::formats::teb::block_grid;
use crate::formats::{DeviceEntries, DeviceFormat};
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

pub struct DevicePbc<T> {
    block_row_ptr: CudaSlice<u32>,
    block_width: CudaSlice<u32>,
    block_slot_ptr: CudaSlice<u32>,
    perm: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    kernel: Kernel,
}

impl<T: Scalar> DevicePbc<T> {
    pub fn new(gpu: &Gpu, a: &Pbc<T>) -> Result<Self> {
        let config = block_grid(NAME, "blocks", a.blocks(), a.threads_per_block)?;
        Ok(DevicePbc {
            block_row_ptr: gpu.upload(&a.block_row_ptr)?,
            block_width: gpu.upload_nonempty(&a.block_width)?,
            block_slot_ptr: gpu.upload(&a.block_slot_ptr)?,
            perm: gpu.upload_nonempty(&a.perm)?,
            entries: DeviceEntries::upload(gpu, &a.col_idx, &a.values)?,
            kernel: Kernel::for_type::<T>(gpu, &KERNELS, "pbc", config)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DevicePbc<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // One CUDA block per PBC block; a matrix with rows has at least one, so the grid is
        // never empty.
        // SAFETY: the arguments match PBC_ARGS(T). Block b < blocks reads entries b and b + 1
        // of block_row_ptr and block_slot_ptr (blocks + 1 entries) and entry b of
        // block_width; its slots base + t·h + lane < block_slot_ptr[b + 1] ≤ the length of
        // col_idx and values; every column (padding included) is < ncols = x.len(); perm is
        // a permutation of 0..nrows = y.len(). threads_per_block is a multiple of 32 ≤ 1024.
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&self.block_row_ptr)
                    .arg(&self.block_width)
                    .arg(&self.block_slot_ptr)
                    .arg(&self.perm);
                self.entries.push(a);
                a.arg(x).arg(y);
            })
        }
    }
}
