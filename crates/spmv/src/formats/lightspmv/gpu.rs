//! Upload and launch of the LightSpMV kernel: the row counter is zeroed on the stream before
//! every launch, and the grid holds as many warps as the device keeps resident (each warp
//! loops, taking rows from the counter until they run out).

use std::cell::RefCell;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{LightSpmv, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::{offsets_u32, DeviceEntries, DeviceFormat};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

/// Threads per block (8 warps).
const BLOCK: u32 = 256;

pub(super) struct DeviceLightSpmv<T> {
    nrows: u32,
    row_ptr: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    /// The global row counter. `launch` takes `&self` but must zero it on the stream first;
    /// launches never run concurrently (`DeviceFormat` is not `Sync`, and the owning
    /// `DeviceMatrix` serialises them), so a `RefCell` gives that write its `&mut`.
    row_counter: RefCell<CudaSlice<u32>>,
    kernel: Kernel,
}

/// Warps the grid launches: enough for every row to be taken in one round, at most as many as
/// the device keeps resident at once (more would only wait for a free slot and then find the
/// counter exhausted).
fn grid_warps(nrows: u64, vectors_per_warp: u64, resident_warps: u64) -> u64 {
    nrows.div_ceil(vectors_per_warp).clamp(1, resident_warps.max(1))
}

impl<T: Scalar> DeviceLightSpmv<T> {
    pub(super) fn new(gpu: &Gpu, a: &LightSpmv<T>) -> Result<Self> {
        // Checked on conversion; repeated here so that the launch can rely on it.
        let nrows = u32::try_from(a.csr.nrows())
            .ok()
            .filter(|&m| m <= super::MAX_ROWS)
            .ok_or_else(|| {
                Error::format(
                    NAME,
                    format!("{} rows exceed the 2^31 - 1 of the row counter", a.csr.nrows()),
                )
            })?;
        let per_sm = gpu
            .context()
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?;
        let resident_warps = gpu.multiprocessors() as u64 * (per_sm.max(32) as u64 / 32);
        let warps = grid_warps(nrows as u64, a.vectors_per_warp() as u64, resident_warps);
        let name = format!("lightspmv_{}_{}", a.lanes, T::SUFFIX);
        Ok(DeviceLightSpmv {
            nrows,
            row_ptr: gpu.upload(&offsets_u32(NAME, &a.csr)?)?,
            entries: DeviceEntries::upload(gpu, a.csr.col_idx(), a.csr.values())?,
            row_counter: RefCell::new(gpu.alloc::<u32>(1)?),
            kernel: Kernel::new(gpu, &KERNELS, &name, grid_for(warps * 32, BLOCK)?)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceLightSpmv<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let mut counter = self.row_counter.borrow_mut();
        // Zeroed on the stream, so it is 0 when this launch starts and no earlier launch can
        // still be using it (same stream: in order).
        gpu.stream().memset_zeros(&mut *counter)?;
        let counter = &*counter;
        // SAFETY: the arguments match LIGHTSPMV_ARGS(T). Rows come from the counter and are
        // used only below nrows = y.len(); their entries lie in row_ptr[row]..row_ptr[row+1]
        // ≤ nnz (the length of col_idx and values); columns < ncols = x.len() by the CSR
        // invariants. Blocks are whole warps (BLOCK = 256), as the full-warp shuffles need;
        // the counter cannot wrap (nrows < 2^31, at most one fetch per warp past nrows).
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&self.nrows).arg(counter).arg(&self.row_ptr);
                self.entries.push(a);
                a.arg(x).arg(y);
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::grid_warps;

    #[test]
    fn grid_covers_the_rows_in_one_round_up_to_the_resident_warps() {
        assert_eq!(grid_warps(0, 16, 8448), 1);
        assert_eq!(grid_warps(1, 16, 8448), 1);
        assert_eq!(grid_warps(17, 16, 8448), 2);
        assert_eq!(grid_warps(10_000_000, 1, 8448), 8448);
        assert_eq!(grid_warps(100, 1, 0), 1);
    }
}
