//! The device side of the carry-out: the per-tile carries and heads the tile kernel writes,
//! the segments, and the launch of the fixup kernel (`CARRY_FIXUP_KERNEL` in carry.cuh).

use cudarc::driver::{CudaSlice, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg};

use super::Segment;
use crate::error::Result;
use crate::formats::arg_u32;
use crate::gpu::{grid_for, Gpu, Kernel, KernelModule};
use crate::matrix::Scalar;

/// Rows whose entries cross units of work (CSR5's tiles, BRCP's blocks), as the kernels that
/// finish them take them: `u32 count, const u32* row, const u32* first, const u32* last`
/// (each row's first and last unit).
pub(crate) struct DeviceSpans {
    count: u32,
    row: CudaSlice<u32>,
    first: CudaSlice<u32>,
    last: CudaSlice<u32>,
}

impl DeviceSpans {
    /// Uploads `spans`, each as `[row, first, last]` by `parts` (empty arrays as one unread
    /// element); errors name `format`.
    pub(crate) fn upload<S>(
        gpu: &Gpu, format: &'static str, spans: &[S], parts: impl Fn(&S) -> [u32; 3],
    ) -> Result<Self> {
        let column = |i: usize| spans.iter().map(|s| parts(s)[i]).collect::<Vec<u32>>();
        Ok(DeviceSpans {
            count: arg_u32(format, "spanning rows", spans.len())?,
            row: gpu.upload_nonempty(&column(0))?,
            first: gpu.upload_nonempty(&column(1))?,
            last: gpu.upload_nonempty(&column(2))?,
        })
    }

    /// Launches `kernel(count, row, first, last, const A* before, const A* after, T* y)`, the
    /// pass that finishes the spanning rows; nothing when there are none.
    ///
    /// # Safety
    /// As for [`Kernel::launch`]: `kernel` takes those parameters, and with these spans it
    /// accesses `before`, `after` and `y` only in bounds (the caller says why).
    pub(crate) unsafe fn launch<A: DeviceRepr, T: DeviceRepr>(
        &self, kernel: &Kernel, gpu: &Gpu, (before, after): (&CudaSlice<A>, &CudaSlice<A>),
        y: &mut CudaSlice<T>,
    ) -> Result<()> {
        // SAFETY: the caller's.
        unsafe { self.launch_with(kernel, gpu, (before, after), y, |_| {}) }
    }

    /// [`DeviceSpans::launch`] for a kernel that takes more arguments after `y`, as `more`
    /// pushes them.
    ///
    /// # Safety
    /// As for [`DeviceSpans::launch`], with the kernel's further parameters.
    pub(crate) unsafe fn launch_with<'a, A: DeviceRepr, T: DeviceRepr>(
        &'a self, kernel: &'a Kernel, gpu: &'a Gpu,
        (before, after): (&'a CudaSlice<A>, &'a CudaSlice<A>), y: &'a mut CudaSlice<T>,
        more: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        // SAFETY: the caller's.
        unsafe {
            kernel.launch(gpu, |a| {
                a.arg(&self.count).arg(&self.row).arg(&self.first).arg(&self.last);
                a.arg(before).arg(after).arg(y);
                more(a);
            })
        }
    }
}

pub(crate) struct DeviceCarry<T: Scalar> {
    /// Written by the tile kernel: each tile's carry and head (pass them as its arguments).
    pub tile_carry: CudaSlice<T::Acc>,
    pub tile_head: CudaSlice<T::Acc>,
    segments: DeviceSpans,
    fixup: Kernel,
}

impl<T: Scalar> DeviceCarry<T> {
    /// Buffers for `tiles` tiles and the `segments`; the fixup kernel is `{fixup}_{T}` of
    /// `module`.
    pub(crate) fn new(
        gpu: &Gpu, module: &KernelModule, fixup: &str, tiles: usize, segments: &[Segment],
    ) -> Result<Self> {
        Ok(DeviceCarry {
            tile_carry: gpu.alloc(tiles.max(1))?,
            tile_head: gpu.alloc(tiles.max(1))?,
            // Below 2^32: one segment per tile at most, and tiles are counted in u32.
            segments: DeviceSpans::upload(gpu, module.name, segments, |s| [s.row, s.first, s.end])?,
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
        // SAFETY: the arguments match CARRY_FIXUP_KERNEL; a segment reads tiles first..=end <
        // tiles (its row ends in a later tile) and writes its row < y.len() (the caller's word).
        unsafe { self.segments.launch(&self.fixup, gpu, (&self.tile_carry, &self.tile_head), y) }
    }

    /// The grid of the fixup kernel (a warp per segment), for other fixups of these segments.
    pub(crate) fn fixup_config(&self) -> LaunchConfig {
        self.fixup.config()
    }

    /// Launches `fixup`, a block product's fixup of these segments (CARRY_FIXUP_BLOCK_KERNEL),
    /// over `carries` (that pass's carries and heads, BLOCK_TILE columns of them), with its
    /// arguments after `y` as `more` pushes them (nothing when no rows cross tiles).
    ///
    /// # Safety
    /// As for [`DeviceCarry::launch_fixup`], for `fixup`'s parameters and buffers of
    /// BLOCK_TILE·tiles carries and heads.
    pub(crate) unsafe fn launch_block_fixup<'a>(
        &'a self, gpu: &'a Gpu, fixup: &'a Kernel,
        carries: (&'a CudaSlice<T::Acc>, &'a CudaSlice<T::Acc>), y: &'a mut CudaSlice<T>,
        more: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<()> {
        // SAFETY: the caller's.
        unsafe { self.segments.launch_with(fixup, gpu, carries, y, more) }
    }
}
