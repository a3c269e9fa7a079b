//! Upload and launch of the AMF-CSR kernel.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{AmfCsr, BLOCK, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub struct DeviceAmfCsr<T> {
    gpu: Arc<Gpu>,
    nrows: usize,
    ncols: usize,
    sub_block_ptr: CudaSlice<u32>,
    row_block_ptr: CudaSlice<u32>,
    row_ptr: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
}

impl<T: Scalar> DeviceAmfCsr<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &AmfCsr<T>) -> Result<Self> {
        let blocks = u32::try_from(a.sub_blocks())
            .ok()
            .filter(|&b| b <= i32::MAX as u32)
            .ok_or_else(|| Error::format(NAME, format!("{} sub-blocks exceed the grid limit", a.sub_blocks())))?;
        Ok(DeviceAmfCsr {
            gpu: gpu.clone(),
            nrows: a.nrows,
            ncols: a.ncols,
            sub_block_ptr: gpu.upload(&a.sub_block_ptr)?,
            row_block_ptr: gpu.upload(&a.row_block_ptr)?,
            row_ptr: gpu.upload(&a.row_ptr)?,
            col_idx: upload_or_one(gpu, &a.col_idx)?,
            values: upload_or_one(gpu, &a.values)?,
            function: gpu.function(&KERNELS, &format!("amf_csr_{}", T::SUFFIX))?,
            config: LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 },
            bytes: a.device_bytes(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceAmfCsr<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows, self.ncols, x, y)?;
        if self.config.grid_dim.0 == 0 {
            return Ok(()); // no rows
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch
            .arg(&self.sub_block_ptr)
            .arg(&self.row_block_ptr)
            .arg(&self.row_ptr)
            .arg(&self.col_idx)
            .arg(&self.values)
            .arg(x)
            .arg(y);
        // SAFETY: the arguments match AMF_ARGS(T). Sub-block s < sub_blocks reads
        // sub_block_ptr[s..=s+1]; its row-blocks k < row_blocks read row_block_ptr[k..=k+1];
        // their rows r < nrows read row_ptr[r..=r+1]; entries lie below nnz = the length of
        // col_idx and values, columns below ncols = x.len(), rows below nrows = y.len().
        // Every row-block is non-empty (r0 < r1), so the binary search's r1 - 1 is valid.
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}
