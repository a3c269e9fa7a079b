//! Upload of the TEB kernels.

use super::{Teb, TebKernel, KERNELS};
use crate::error::Result;
use crate::formats::{BlockGrid, OneKernel};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub(super) fn upload<T: Scalar>(gpu: &Gpu, a: &Teb<T>) -> Result<OneKernel<T>> {
    let kernel = match a.kernel {
        TebKernel::RowPerThread => "teb_rows",
        TebKernel::LanesPerRow => "teb_lanes",
    };
    // One thread block per TEB block.
    let grid = BlockGrid::new(a.name(), "blocks", a.blocks(), a.threads_per_block())?;
    // teb_lanes only: the block holding the empty rows and their range of reordered rows,
    // zeroed by every thread block.
    let empty_rows = match a.kernel {
        TebKernel::RowPerThread => vec![],
        TebKernel::LanesPerRow => {
            let (block, begin, end) = a.empty_rows().unwrap_or((0, 0, 0));
            vec![block, begin, end]
        }
    };
    // SAFETY: the arguments match TEB_ARGS(T), preceded for teb_lanes by the block and
    // the range of its empty rows (Teb::empty_rows: inside that block, after its first
    // row). Block b < blocks reads blo_idx[b..=b+1] (blocks + 1 entries); its rows are
    // < nrows, so row_ptr[row + 1] is in bounds and the entries lie below nnz = the length
    // of col_idx and values; columns are < ncols = x.len(); perm is a permutation of
    // 0..nrows = y.len(). threads_per_block and lanes_threads are multiples of 32 in
    // 32..=1024.
    unsafe {
        grid.entries(
            gpu,
            (&KERNELS, kernel),
            &empty_rows,
            &[&a.blo_idx, &a.row_ptr, &a.perm],
            (&a.col_idx, &a.values),
        )
    }
}
