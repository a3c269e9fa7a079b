//! Upload and launch of the DRM kernel: one launch, or one per sub-block size on large grids.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::{Drm, Launch, KERNELS, NAME};
use crate::error::Result;
use crate::formats::dia::diagonals;
use crate::formats::{arg_u32, DeviceFormat};
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

pub struct DeviceDrm<T> {
    seg_rows: u32,
    blo: CudaSlice<u32>,
    index: CudaSlice<u32>,
    dnum: CudaSlice<u32>,
    off: CudaSlice<i32>,
    val: CudaSlice<T>,
    /// Each launch's first sub-block (the kernel's `block_base`) and grid.
    launches: Vec<(u32, LaunchConfig)>,
    /// `drm_<T>`; every launch passes its own grid (the one stored is the first launch's, or
    /// one thread when a matrix without rows has no launch).
    kernel: Kernel,
}

/// Threads an SM holds at once when the driver does not say (sm_90: 2048).
const DEFAULT_THREADS_PER_SM: usize = 2048;

impl<T: Scalar> DeviceDrm<T> {
    /// Uploads `a` with the launch plan for this device's resident thread count.
    pub fn new(gpu: &Gpu, a: &Drm<T>) -> Result<Self> {
        use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR as PER_SM;
        let per_sm = gpu.context().attribute(PER_SM).map_or(DEFAULT_THREADS_PER_SM, |v| v as usize);
        Self::with_plan(gpu, a, a.launch_plan(gpu.multiprocessors() * per_sm))
    }

    /// Uploads `a` with the given launches (from [`Drm::launch_plan`]).
    pub(crate) fn with_plan(gpu: &Gpu, a: &Drm<T>, launches: Vec<Launch>) -> Result<Self> {
        // At most 1024 by the conversion's checks.
        let seg_rows = arg_u32(NAME, "segment rows", a.seg_rows)?;
        let launches: Vec<(u32, LaunchConfig)> = launches
            .iter()
            .map(|l| {
                let config = LaunchConfig {
                    grid_dim: (l.sub_blocks, 1, 1),
                    block_dim: (l.segments * seg_rows, 1, 1),
                    shared_mem_bytes: 0,
                };
                (l.first, config)
            })
            .collect();
        let first = launches.first().map_or(LaunchConfig::for_num_elems(1), |l| l.1);
        Ok(DeviceDrm {
            seg_rows,
            blo: gpu.upload(&a.blo)?,
            index: gpu.upload_nonempty(&a.index)?,
            dnum: gpu.upload(&a.blocks.diag_ptr)?,
            off: gpu.upload_nonempty(&a.blocks.offsets)?,
            val: gpu.upload_nonempty(&a.blocks.values)?,
            launches,
            kernel: Kernel::for_type::<T>(gpu, &KERNELS, "drm", first)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceDrm<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let (m, n) = diagonals::launch_dims(x, y);
        for (first, config) in &self.launches {
            // SAFETY: the arguments match drm_<T>(u32, u32, u32, u32, const u32* x3, const int*,
            // const T*, const T*, T*). Sub-blocks first .. first + sub_blocks < blo.len() (a
            // launch plan covers runs of the stored sub-blocks); the block size segments·h ≤
            // 1024 (split at conversion) is at least each of its sub-blocks' rows (runs are
            // sized by their largest); rnum < the sub-block's segments keeps rinx <
            // index.len() = dnum.len() - 1; rows < m = y.len(); stored diagonals < off.len()
            // and slots i·h + lane < val.len(); the column guard keeps x indices below
            // n = x.len(). Each row belongs to one segment: written once.
            unsafe {
                self.kernel.launch_with(gpu, *config, |a| {
                    a.arg(&m)
                        .arg(&n)
                        .arg(&self.seg_rows)
                        .arg(first)
                        .arg(&self.blo)
                        .arg(&self.index);
                    a.arg(&self.dnum).arg(&self.off).arg(&self.val).arg(x).arg(&mut *y);
                })
            }?;
        }
        Ok(())
    }
}
