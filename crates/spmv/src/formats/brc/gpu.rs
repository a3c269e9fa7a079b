//! Upload and launch of the BRC kernel.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{check_warp_blocks, Brc, KERNELS, NAME};
use crate::error::Result;
use crate::formats::{arg_u32, DeviceEntries, DeviceFormat};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

/// Threads per CUDA block: 8 warps, 8 BRC blocks.
const BLOCK: u32 = 256;

pub struct DeviceBrc<T> {
    blocks: u32,
    block_ptr: CudaSlice<u32>,
    row_perm: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    kernel: Kernel,
}

impl<T: Scalar> DeviceBrc<T> {
    pub fn new(gpu: &Gpu, a: &Brc<T>) -> Result<Self> {
        check_warp_blocks(NAME, a.block_rows())?;
        // Holds by construction (slots <= stored slots < 2^32).
        let blocks = arg_u32(NAME, "blocks", a.blocks())?;
        let config = grid_for(a.row_perm().len() as u64, BLOCK)?;
        Ok(DeviceBrc {
            blocks,
            block_ptr: gpu.upload(a.block_ptr())?,
            row_perm: gpu.upload_nonempty(a.row_perm())?,
            entries: DeviceEntries::upload(gpu, a.col_idx(), a.values())?,
            kernel: Kernel::for_type::<T>(gpu, &KERNELS, "brc", config)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceBrc<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // The atomics add into y: zero it first, on the same stream (timed with it).
        gpu.fill(y, T::ZERO)?;
        if self.blocks == 0 {
            return Ok(());
        }
        // SAFETY: the arguments match brc_<T>(u32, const u32*, const u32*, const u32*, const T*,
        // const T*, T*). Threads of warps past `blocks` return; block b < blocks reads
        // block_ptr[b + 1] (blocks + 1 entries) and slots block_ptr[b] .. block_ptr[b + 1] of
        // col_idx and values; row_perm has blocks * 32 entries; every column is < ncols =
        // x.len() (padding repeats a real column) and every row but NO_ROW is < nrows = y.len().
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&self.blocks).arg(&self.block_ptr).arg(&self.row_perm);
                self.entries.push(a);
                a.arg(x).arg(y);
            })
        }
    }
}
