//! Upload and launch of the AMF-CSR kernel.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{AmfCsr, BLOCK, KERNELS, NAME};
use crate::error::Result;
use crate::formats::teb::block_grid;
use crate::formats::{DeviceEntries, DeviceFormat};
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

pub struct DeviceAmfCsr<T> {
    sub_block_ptr: CudaSlice<u32>,
    row_block_ptr: CudaSlice<u32>,
    row_ptr: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    kernel: Kernel,
}

impl<T: Scalar> DeviceAmfCsr<T> {
    pub fn new(gpu: &Gpu, a: &AmfCsr<T>) -> Result<Self> {
        let config = block_grid(NAME, "sub-blocks", a.sub_blocks(), BLOCK)?;
        Ok(DeviceAmfCsr {
            sub_block_ptr: gpu.upload(&a.sub_block_ptr)?,
            row_block_ptr: gpu.upload(&a.row_block_ptr)?,
            row_ptr: gpu.upload(&a.row_ptr)?,
            entries: DeviceEntries::upload(gpu, &a.col_idx, &a.values)?,
            kernel: Kernel::for_type::<T>(gpu, &KERNELS, "amf_csr", config)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceAmfCsr<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // One CUDA block per sub-block; a matrix with rows has at least one, so the grid is
        // never empty.
        // SAFETY: the arguments match AMF_ARGS(T). Sub-block s < sub_blocks reads
        // sub_block_ptr[s..=s+1]; its row-blocks k < row_blocks read row_block_ptr[k..=k+1];
        // their rows r < nrows read row_ptr[r..=r+1]; entries lie below nnz = the length of
        // col_idx and values, columns below ncols = x.len(), rows below nrows = y.len().
        // Every row-block is non-empty (r0 < r1), so the binary search's r1 - 1 is valid.
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&self.sub_block_ptr).arg(&self.row_block_ptr).arg(&self.row_ptr);
                self.entries.push(a);
                a.arg(x).arg(y);
            })
        }
    }
}
