//! Upload and launch of the HDC kernel.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{Hdc, KERNELS, NAME};
use crate::error::Result;
use crate::formats::dia::diagonals;
use crate::formats::{arg_u32, DeviceEntries, DeviceFormat};
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

pub struct DeviceHdc<T> {
    diagonals: u32,
    offsets: CudaSlice<i32>,
    data: CudaSlice<T>,
    csr_entries: u32,
    row_ptr: CudaSlice<u32>,
    entries: DeviceEntries<T>,
    kernel: Kernel,
}

impl<T: Scalar> DeviceHdc<T> {
    pub fn new(gpu: &Gpu, a: &Hdc<T>) -> Result<Self> {
        Ok(DeviceHdc {
            // Both below 2^32 by the conversion's checks.
            diagonals: arg_u32(NAME, "diagonals", a.offsets.len())?,
            offsets: gpu.upload_nonempty(&a.offsets)?,
            data: gpu.upload_nonempty(&a.data)?,
            csr_entries: arg_u32(NAME, "CSR entries", a.values.len())?,
            row_ptr: gpu.upload(&a.row_ptr)?,
            entries: DeviceEntries::upload(gpu, &a.col_idx, &a.values)?,
            kernel: diagonals::row_kernel::<T>(gpu, &KERNELS, "hdc", a.nrows)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceHdc<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let (m, n) = diagonals::launch_dims(x, y);
        // SAFETY: the arguments match HDC_ARGS(T). Threads stop at m = y.len(); data holds
        // diagonals·m slots; row_ptr has m + 1 entries bounding col_idx and values, whose
        // columns are < n by the CSR invariants; the DIA column guard keeps x indices < n.
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&m).arg(&n).arg(&self.diagonals).arg(&self.offsets).arg(&self.data);
                a.arg(&self.csr_entries).arg(&self.row_ptr);
                self.entries.push(a);
                a.arg(x).arg(y);
            })
        }
    }
}
