//! Upload and launch of the TEB kernels.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::{Teb, TebKernel, KERNELS};
use crate::error::{Error, Result};
use crate::formats::{DeviceEntries, DeviceFormat};
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

pub struct DeviceTeb<T> {
    blo_idx: CudaSlice<u32>,
    row_ptr: CudaSlice<u32>,
    perm: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    kernel: Kernel,
    /// `teb-lanes` only: the block holding the empty rows and their range of reordered rows,
    /// zeroed by every thread block.
    empty_rows: Option<(u32, u32, u32)>,
}

impl<T: Scalar> DeviceTeb<T> {
    pub fn new(gpu: &Gpu, a: &Teb<T>) -> Result<Self> {
        let kernel = match a.kernel {
            TebKernel::RowPerThread => "teb_rows",
            TebKernel::LanesPerRow => "teb_lanes",
        };
        let config = block_grid(a.name(), "blocks", a.blocks(), a.threads_per_block())?;
        let empty_rows =
            (a.kernel == TebKernel::LanesPerRow).then(|| a.empty_rows().unwrap_or((0, 0, 0)));
        Ok(DeviceTeb {
            blo_idx: gpu.upload(&a.blo_idx)?,
            row_ptr: gpu.upload(&a.row_ptr)?,
            perm: gpu.upload_nonempty(&a.perm)?,
            entries: DeviceEntries::upload(gpu, &a.col_idx, &a.values)?,
            kernel: Kernel::for_type::<T>(gpu, &KERNELS, kernel, config)?,
            empty_rows,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceTeb<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // One thread block per TEB block; a matrix with rows has at least one, so the grid
        // is never empty.
        // SAFETY: the arguments match TEB_ARGS(T), preceded for teb_lanes by the block and
        // the range of its empty rows (Teb::empty_rows: inside that block, after its first
        // row). Block b < blocks reads blo_idx[b..=b+1] (blocks + 1 entries); its rows are
        // < nrows, so row_ptr[row + 1] is in bounds and the entries lie below nnz = the length
        // of col_idx and values; columns are < ncols = x.len(); perm is a permutation of
        // 0..nrows = y.len(). threads_per_block and lanes_threads are multiples of 32 in
        // 32..=1024.
        unsafe {
            self.kernel.launch(gpu, |a| {
                if let Some((block, begin, end)) = &self.empty_rows {
                    a.arg(block).arg(begin).arg(end);
                }
                a.arg(&self.blo_idx).arg(&self.row_ptr).arg(&self.perm);
                self.entries.push(a);
                a.arg(x).arg(y);
            })
        }
    }
}
