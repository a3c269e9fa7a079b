//! Upload and launch of the DRM kernel: one launch, or one per sub-block size on large grids.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Drm, Launch, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub struct DeviceDrm<T> {
    gpu: Arc<Gpu>,
    nrows: u32,
    ncols: u32,
    seg_rows: u32,
    blo: CudaSlice<u32>,
    index: CudaSlice<u32>,
    dnum: CudaSlice<u32>,
    off: CudaSlice<i32>,
    val: CudaSlice<T>,
    launches: Vec<Launch>,
    function: CudaFunction,
    bytes: usize,
    bytes_read: usize,
}

/// Threads an SM holds at once when the driver does not say (sm_90: 2048).
const DEFAULT_THREADS_PER_SM: usize = 2048;

impl<T: Scalar> DeviceDrm<T> {
    /// Uploads `a` with the launch plan for this device's resident thread count.
    pub fn new(gpu: &Arc<Gpu>, a: &Drm<T>) -> Result<Self> {
        use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR as PER_SM;
        let per_sm = gpu.context().attribute(PER_SM).map_or(DEFAULT_THREADS_PER_SM, |v| v as usize);
        Self::with_plan(gpu, a, a.launch_plan(gpu.multiprocessors() * per_sm))
    }

    /// Uploads `a` with the given launches (from [`Drm::launch_plan`]).
    pub(crate) fn with_plan(gpu: &Arc<Gpu>, a: &Drm<T>, launches: Vec<Launch>) -> Result<Self> {
        // All below 2^31 by the conversion's checks.
        let dim = |v: usize| u32::try_from(v).map_err(|_| Error::format(NAME, "dimension exceeds 32 bits"));
        Ok(DeviceDrm {
            gpu: gpu.clone(),
            nrows: dim(a.nrows)?,
            ncols: dim(a.ncols)?,
            seg_rows: dim(a.seg_rows)?,
            blo: gpu.upload(&a.blo)?,
            index: upload_or_one(gpu, &a.index)?,
            dnum: gpu.upload(&a.blocks.diag_ptr)?,
            off: upload_or_one(gpu, &a.blocks.offsets)?,
            val: upload_or_one(gpu, &a.blocks.values)?,
            launches,
            function: gpu.function(&KERNELS, &format!("drm_{}", T::SUFFIX))?,
            bytes: a.device_bytes(),
            bytes_read: a.bytes_read(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceDrm<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows as usize, self.ncols as usize, x, y)?;
        for l in &self.launches {
            let config = LaunchConfig {
                grid_dim: (l.sub_blocks, 1, 1),
                block_dim: (l.segments * self.seg_rows, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = self.gpu.stream().launch_builder(&self.function);
            launch
                .arg(&self.nrows)
                .arg(&self.ncols)
                .arg(&self.seg_rows)
                .arg(&l.first)
                .arg(&self.blo)
                .arg(&self.index)
                .arg(&self.dnum)
                .arg(&self.off)
                .arg(&self.val)
                .arg(x)
                .arg(&mut *y);
            // SAFETY: the arguments match drm_<T>(u32, u32, u32, u32, const u32* x3, const int*,
            // const T*, const T*, T*). Sub-blocks first .. first + sub_blocks < blo.len() (a
            // launch plan covers runs of the stored sub-blocks); the block size segments·h ≤
            // 1024 (split at conversion) is at least each of its sub-blocks' rows (runs are
            // sized by their largest); rnum < the sub-block's segments keeps rinx <
            // index.len() = dnum.len() - 1; rows < m = y.len(); stored diagonals < off.len()
            // and slots i·h + lane < val.len(); the column guard keeps x indices below
            // n = x.len(). Each row belongs to one segment: written once.
            unsafe { launch.launch(config) }?;
        }
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
    fn bytes_read(&self) -> usize {
        self.bytes_read
    }
}
