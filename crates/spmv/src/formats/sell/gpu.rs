//! Upload and launch of the SELL-C-σ kernels (one product, and a block of vectors).

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{SellCSigma, BLOCK_KERNELS, KERNELS, NAME};
use crate::error::Result;
use crate::formats::offsets::DeviceOffsets;
use crate::formats::{
    arg_u32, BlockKernel, BlockKernels, DeviceEntries, DeviceFormat, LanesRule, Scaled,
};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;
use crate::operator::Block;

/// Threads per block: a multiple of 32, so with C = 32 every warp is one whole slice.
const BLOCK: u32 = 256;

pub(super) struct DeviceSell<T> {
    nrows: u32,
    c: u32,
    perm: CudaSlice<u32>,
    slice_ptr: DeviceOffsets,
    slice_width: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    kernel: Kernel,
    block: BlockKernels,
}

impl<T: Scalar> DeviceSell<T> {
    pub(super) fn new(gpu: &Gpu, a: &SellCSigma<T>) -> Result<Self> {
        // Both hold by construction (SellCSigma::new checks them).
        let nrows = arg_u32(NAME, "rows", a.nrows)?;
        let c = arg_u32(NAME, "slice rows (C)", a.c)?;
        let config = grid_for(a.nrows as u64, BLOCK)?;
        let suffix = a.offsets.kernel_suffix();
        Ok(DeviceSell {
            nrows,
            c,
            perm: gpu.upload_nonempty(&a.perm)?,
            slice_ptr: DeviceOffsets::upload(gpu, NAME, &a.slice_ptr, a.offsets)?,
            slice_width: gpu.upload_nonempty(&a.slice_width)?,
            entries: DeviceEntries::upload(gpu, &a.col_idx, &a.values)?,
            kernel: Kernel::for_type::<T>(gpu, &KERNELS, &format!("sell{suffix}"), config)?,
            block: BlockKernels::new(
                &BLOCK_KERNELS,
                format!("sell_block{suffix}"),
                format!("sell_block{suffix}_lanes"),
                config,
                a.nrows,
                LanesRule::THREAD_PER_ROW,
            )?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceSell<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: the arguments match SELL_ARGS(T, O) of the kernel's offset width. Threads stop at nrows; slice s of thread
        // i < nrows is < slices; its slots lie in slice_ptr[s]..slice_ptr[s+1] ≤ the length of
        // col_idx and values; every column (padding included) is < ncols = x.len(); perm is
        // a permutation of 0..nrows = y.len().
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&self.nrows).arg(&self.c).arg(&self.perm);
                self.slice_ptr.push(a);
                a.arg(&self.slice_width);
                self.entries.push(a);
                a.arg(x).arg(y);
            })
        }
    }
    fn block_kernel(&self) -> BlockKernel {
        BlockKernel::Tiles
    }
    unsafe fn launch_block(&self, gpu: &Gpu, p: Scaled<'_, T>, block: Block) -> Option<Result<()>> {
        // SAFETY: as for `launch`, with block.cu's (m, n, k) first and (alpha, beta) last; x
        // holds ncols·k and y nrows·k entries (the handle's check), every index is formed in
        // 64 bits (block_at).
        launch_block_kernels!(self.block, gpu, p, block, m = self.nrows, |a| {
            a.arg(&self.c).arg(&self.perm);
            self.slice_ptr.push(a);
            a.arg(&self.slice_width);
            self.entries.push(a);
        })
    }
}
