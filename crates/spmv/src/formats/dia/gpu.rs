//! Upload and launch of the DIA kernel (also DIA-Adaptive's DIA layout).

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{diagonals, Dia, KERNELS};
use crate::error::Result;
use crate::formats::values::DeviceValues;
use crate::formats::{arg_u32, DeviceFormat};
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

pub struct DeviceDia<T> {
    diagonals: u32,
    offsets: CudaSlice<i32>,
    data: DeviceValues<T>,
    kernel: Kernel,
}

impl<T: Scalar> DeviceDia<T> {
    /// Uploads `a`; errors are reported under the name of `format`.
    pub fn new(gpu: &Gpu, a: &Dia<T>, format: &'static str) -> Result<Self> {
        Ok(DeviceDia {
            // Below m + n < 2^32.
            diagonals: arg_u32(format, "diagonals", a.offsets.len())?,
            offsets: gpu.upload_nonempty(&a.offsets)?,
            data: match &a.coded {
                None => DeviceValues::upload_full(gpu, &a.data)?,
                Some(c) => DeviceValues::upload(gpu, c)?,
            },
            kernel: diagonals::row_kernel::<T>(
                gpu,
                &KERNELS,
                &format!("dia{}", a.coded.as_ref().map_or("", |c| c.codec().kernel_suffix())),
                a.nrows,
            )?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceDia<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let (m, n) = diagonals::launch_dims(x, y);
        // SAFETY: the arguments match dia{codec}_<T>(u32, u32, u32, const int*, const void*,
        // const T*, T*) (the full kernel's values pointer is the codes argument). Threads stop at
        // m = y.len(); the values hold diagonals·m slots (at least one element, never read, when
        // empty); the column guard keeps every x index below n = x.len().
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&m).arg(&n).arg(&self.diagonals).arg(&self.offsets);
                self.data.push(a);
                a.arg(x).arg(y);
            })
        }
    }
}
