//! Upload of the TEB kernels.

use cudarc::driver::LaunchConfig;

use super::{Teb, TebKernel, KERNELS};
use crate::error::{Error, Result};
use crate::formats::OneKernel;
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

/// The launch shape of TEB, PBC and AMF-CSR: one CUDA block of `threads` threads per block of
/// the format (`blocks` of them, called `what` in the error), at most 2^31 − 1 of them.
pub(crate) fn block_grid(
    format: &'static str,
    what: &str,
    blocks: usize,
    threads: u32,
) -> Result<LaunchConfig> {
    let grid = u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::format(format, format!("{blocks} {what} exceed the grid limit")))?;
    Ok(LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 })
}

pub(super) fn upload<T: Scalar>(gpu: &Gpu, a: &Teb<T>) -> Result<OneKernel<T>> {
    let kernel = match a.kernel {
        TebKernel::RowPerThread => "teb_rows",
        TebKernel::LanesPerRow => "teb_lanes",
    };
    // One thread block per TEB block; a matrix with rows has at least one, so the grid is
    // never empty.
    let config = block_grid(a.name(), "blocks", a.blocks(), a.threads_per_block())?;
    // teb_lanes only: the block holding the empty rows and their range of reordered rows,
    // zeroed by every thread block.
    let empty_rows = match a.kernel {
        TebKernel::RowPerThread => vec![],
        TebKernel::LanesPerRow => {
            let (block, begin, end) = a.empty_rows().unwrap_or((0, 0, 0));
            vec![block, begin, end]
        }
    };
    let kernel = Kernel::for_type::<T>(gpu, &KERNELS, kernel, config)?;
    // SAFETY: the arguments match TEB_ARGS(T), preceded for teb_lanes by the block and
    // the range of its empty rows (Teb::empty_rows: inside that block, after its first
    // row). Block b < blocks reads blo_idx[b..=b+1] (blocks + 1 entries); its rows are
    // < nrows, so row_ptr[row + 1] is in bounds and the entries lie below nnz = the length
    // of col_idx and values; columns are < ncols = x.len(); perm is a permutation of
    // 0..nrows = y.len(). threads_per_block and lanes_threads are multiples of 32 in
    // 32..=1024.
    unsafe {
        OneKernel::entries(
            gpu,
            kernel,
            &empty_rows,
            &[&a.blo_idx, &a.row_ptr, &a.perm],
            (&a.col_idx, &a.values),
        )
    }
}
