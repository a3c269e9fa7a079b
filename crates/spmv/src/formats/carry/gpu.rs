//! The device side of the carry-out: the per-tile carries and heads the tile kernel writes,
//! the segments, and the launch of the fixup kernel (`CARRY_FIXUP_KERNEL` in carry.cuh).

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::Segment;
use crate::error::Result;
use crate::gpu::{grid_for, Gpu, Kernel, KernelModule};
use crate::matrix::Scalar;

pub(crate) struct DeviceCarry<T: Scalar> {
    /// Written by the tile kernel: each tile's carry and head (pass them as its arguments).
    pub tile_carry: CudaSlice<T::Acc>,
    pub tile_head: CudaSlice<T::Acc>,
    segments: u32,
    seg_row: CudaSlice<u32>,
    seg_first: CudaSlice<u32>,
    seg_end: CudaSlice<u32>,
    fixup: Kernel,
}

impl<T: Scalar> DeviceCarry<T> {
    /// Buffers for `tiles` tiles and the `segments`; the fixup kernel is `{fixup}_{T}` of
    /// `module`.
    pub(crate) fn new(
        gpu: &Gpu,
        module: &KernelModule,
        fixup: &str,
        tiles: usize,
        segments: &[Segment],
    ) -> Result<Self> {
        let column = |f: fn(&Segment) -> u32| segments.iter().map(f).collect::<Vec<u32>>();
        Ok(DeviceCarry {
            tile_carry: gpu.alloc(tiles.max(1))?,
            tile_head: gpu.alloc(tiles.max(1))?,
            // Below 2^32: one segment per tile at most, and tiles are counted in u32.
            segments: segments.len() as u32,
            seg_row: gpu.upload_nonempty(&column(|s| s.row))?,
            seg_first: gpu.upload_nonempty(&column(|s| s.first))?,
            seg_end: gpu.upload_nonempty(&column(|s| s.end))?,
            fixup: Kernel::for_type::<T>(
                gpu,
                module,
                fixup,
                grid_for(segments.len() as u64 * 32, 256)?,
            )?,
        })
    }

    /// Launches the fixup of the rows that cross tiles (nothing when none do).
    ///
    /// # Safety
    /// The tile kernel that fills `tile_carry` and `tile_head` was launched before on the same
    /// stream, and every segment's row is below `y.len()`.
    pub(crate) unsafe fn launch_fixup(&self, gpu: &Gpu, y: &mut CudaSlice<T>) -> Result<()> {
        if self.segments == 0 {
            return Ok(());
        }
        // SAFETY: the arguments match CARRY_FIXUP_KERNEL; a segment reads tiles first..=end <
        // tiles (its row ends in a later tile) and writes its row < y.len() (the caller's word).
        unsafe {
            self.fixup.launch(gpu, |a| {
                a.arg(&self.segments)
                    .arg(&self.seg_row)
                    .arg(&self.seg_first)
                    .arg(&self.seg_end)
                    .arg(&self.tile_carry)
                    .arg(&self.tile_head)
                    .arg(y);
            })
        }
    }
}
