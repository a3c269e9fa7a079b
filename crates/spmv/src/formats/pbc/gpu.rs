//! Upload of the PBC kernel.

use super::{Pbc, KERNELS, NAME};
use crate::error::Result;
use crate::formats::{BlockGrid, OneKernel};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub(super) fn upload<T: Scalar>(gpu: &Gpu, a: &Pbc<T>) -> Result<OneKernel<T>> {
    // One CUDA block per PBC block.
    let grid = BlockGrid::new(NAME, "blocks", a.blocks(), a.threads_per_block)?;
    let index = [&a.block_row_ptr[..], &a.block_width, &a.block_slot_ptr, &a.perm];
    // SAFETY: the arguments match PBC_ARGS(T). Block b < blocks reads entries b and b + 1
    // of block_row_ptr and block_slot_ptr (blocks + 1 entries) and entry b of
    // block_width; its slots base + t·h + lane < block_slot_ptr[b + 1] ≤ the length of
    // col_idx and values; every column (padding included) is < ncols = x.len(); perm is
    // a permutation of 0..nrows = y.len(). threads_per_block is a multiple of 32 ≤ 1024.
    unsafe { grid.entries(gpu, (&KERNELS, "pbc"), &[], &index, (&a.col_idx, &a.values)) }
}
