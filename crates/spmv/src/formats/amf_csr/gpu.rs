//! Upload of the AMF-CSR kernel.

use super::{AmfCsr, BLOCK, KERNELS, NAME};
use crate::error::Result;
use crate::formats::{BlockGrid, OneKernel};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub(super) fn upload<T: Scalar>(gpu: &Gpu, a: &AmfCsr<T>) -> Result<OneKernel<T>> {
    // One CUDA block per sub-block.
    let grid = BlockGrid::new(NAME, "sub-blocks", a.sub_blocks(), BLOCK)?;
    let index = [&a.sub_block_ptr[..], &a.row_block_ptr, &a.row_ptr];
    // SAFETY: the arguments match AMF_ARGS(T). Sub-block s < sub_blocks reads
    // sub_block_ptr[s..=s+1]; its row-blocks k < row_blocks read row_block_ptr[k..=k+1];
    // their rows r < nrows read row_ptr[r..=r+1]; entries lie below nnz = the length of
    // col_idx and values, columns below ncols = x.len(), rows below nrows = y.len().
    // Every row-block is non-empty (r0 < r1), so the binary search's r1 - 1 is valid.
    unsafe { grid.entries(gpu, (&KERNELS, "amf_csr"), &[], &index, (&a.col_idx, &a.values)) }
}
