//! Upload and launch of the HDIA kernel.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{Hdia, KERNELS, NAME};
use crate::error::Result;
use crate::formats::dia::diagonals;
use crate::formats::{arg_u32, DeviceFormat};
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

pub struct DeviceHdia<T> {
    hack_rows: u32,
    hack_offsets: CudaSlice<u32>,
    offsets: CudaSlice<i32>,
    data: CudaSlice<T>,
    kernel: Kernel,
}

impl<T: Scalar> DeviceHdia<T> {
    pub fn new(gpu: &Gpu, a: &Hdia<T>) -> Result<Self> {
        Ok(DeviceHdia {
            // Below 2^31 by the conversion's checks.
            hack_rows: arg_u32(NAME, "hack rows", a.hack_rows)?,
            hack_offsets: gpu.upload(&a.blocks.diag_ptr)?,
            offsets: gpu.upload_nonempty(&a.blocks.offsets)?,
            data: gpu.upload_nonempty(&a.blocks.values)?,
            kernel: diagonals::row_kernel::<T>(gpu, &KERNELS, "hdia", a.nrows)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceHdia<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let (m, n) = diagonals::launch_dims(x, y);
        // SAFETY: the arguments match hdia_<T>(u32, u32, u32, const u32*, const int*, const T*,
        // const T*, T*). Threads stop at m = y.len(); hack r / h < hacks, so hack_offsets
        // (hacks + 1 entries) is read in bounds; stored diagonal i < hack_offsets[hacks] =
        // offsets.len() and its slots i*h + lane < data.len(); the column guard keeps x
        // indices below n = x.len().
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&m)
                    .arg(&n)
                    .arg(&self.hack_rows)
                    .arg(&self.hack_offsets)
                    .arg(&self.offsets)
                    .arg(&self.data);
                a.arg(x).arg(y);
            })
        }
    }
}
