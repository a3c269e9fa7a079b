//! Upload and launch of the TEB kernels.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Teb, TebKernel, KERNELS};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub struct DeviceTeb<T> {
    gpu: Arc<Gpu>,
    name: &'static str,
    nrows: usize,
    ncols: usize,
    blo_idx: CudaSlice<u32>,
    row_ptr: CudaSlice<u32>,
    perm: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
    /// `teb-lanes` only: the block holding the empty rows and their range of reordered rows,
    /// zeroed by every thread block.
    empty_rows: Option<(u32, u32, u32)>,
}

impl<T: Scalar> DeviceTeb<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Teb<T>) -> Result<Self> {
        let blocks = u32::try_from(a.blocks())
            .ok()
            .filter(|&b| b <= i32::MAX as u32)
            .ok_or_else(|| Error::format(a.name(), format!("{} blocks exceed the grid limit", a.blocks())))?;
        let kernel = match a.kernel {
            TebKernel::RowPerThread => "teb_rows",
            TebKernel::LanesPerRow => "teb_lanes",
        };
        let threads = a.threads_per_block();
        let empty_rows = (a.kernel == TebKernel::LanesPerRow).then(|| a.empty_rows().unwrap_or((0, 0, 0)));
        Ok(DeviceTeb {
            gpu: gpu.clone(),
            name: a.name(),
            nrows: a.nrows,
            ncols: a.ncols,
            blo_idx: gpu.upload(&a.blo_idx)?,
            row_ptr: gpu.upload(&a.row_ptr)?,
            perm: upload_or_one(gpu, &a.perm)?,
            col_idx: upload_or_one(gpu, &a.col_idx)?,
            values: upload_or_one(gpu, &a.values)?,
            function: gpu.function(&KERNELS, &format!("{kernel}_{}", T::SUFFIX))?,
            config: LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 },
            bytes: a.device_bytes(),
            empty_rows,
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceTeb<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(self.name, self.nrows, self.ncols, x, y)?;
        if self.config.grid_dim.0 == 0 {
            return Ok(()); // no rows (blocks = 0 only for an empty matrix)
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        if let Some((block, begin, end)) = &self.empty_rows {
            launch.arg(block).arg(begin).arg(end);
        }
        launch.arg(&self.blo_idx).arg(&self.row_ptr).arg(&self.perm).arg(&self.col_idx).arg(&self.values).arg(x).arg(y);
        // SAFETY: the arguments match TEB_ARGS(T), preceded for teb_lanes by the block and
        // the range of its empty rows (Teb::empty_rows: inside that block, after its first
        // row). Block b < blocks reads blo_idx[b..=b+1] (blocks + 1 entries); its rows are
        // < nrows, so row_ptr[row + 1] is in bounds and the entries lie below nnz = the length
        // of col_idx and values; columns are < ncols = x.len(); perm is a permutation of
        // 0..nrows = y.len(). threads_per_block and lanes_threads are multiples of 32 in
        // 32..=1024.
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}
