//! The launch shape of the formats that give each of their blocks one CUDA block (TEB, PBC,
//! AMF-CSR), and their upload over [`OneKernel::entries`].

use cudarc::driver::LaunchConfig;

use crate::error::{Error, Result};
use crate::formats::OneKernel;
use crate::gpu::{Gpu, Kernel, KernelModule};
use crate::matrix::Scalar;

/// One CUDA block of `threads` threads per block of the format (`blocks` of them), at most
/// 2^31 − 1 of them; a matrix with rows has at least one, so the grid is never empty.
pub(crate) struct BlockGrid {
    config: LaunchConfig,
}

impl BlockGrid {
    /// The grid, or the format's error when the `blocks` (called `what`) exceed its limit.
    pub(crate) fn new(
        format: &'static str, what: &str, blocks: usize, threads: u32,
    ) -> Result<Self> {
        let grid =
            u32::try_from(blocks).ok().filter(|&b| b <= i32::MAX as u32).ok_or_else(|| {
                Error::format(format, format!("{blocks} {what} exceed the grid limit"))
            })?;
        let config = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        Ok(BlockGrid { config })
    }

    /// Kernel `name` of `module` in T on this grid, with [`OneKernel::entries`]' arguments.
    ///
    /// # Safety
    /// As for [`OneKernel::entries`], on this grid.
    pub(crate) unsafe fn entries<T: Scalar>(
        &self, gpu: &Gpu, (module, name): (&KernelModule, &str), counts: &[u32], index: &[&[u32]],
        entries: (&[u32], &[T]),
    ) -> Result<OneKernel<T>> {
        let kernel = Kernel::for_type::<T>(gpu, module, name, self.config)?;
        // SAFETY: the caller's.
        unsafe { OneKernel::entries(gpu, kernel, counts, index, entries) }
    }
}
