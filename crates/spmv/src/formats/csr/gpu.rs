//! Upload and launch of the CSR kernels.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{CsrKernel, KERNELS};
use crate::error::{Error, Result};
use crate::formats::values::{DeviceValues, EncodedValues};
use crate::formats::{offsets_u32, DeviceFormat};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::{Csr, Scalar};

const BLOCK: u32 = 256;

pub struct DeviceCsr<T> {
    nrows: u32,
    row_ptr: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: DeviceValues<T>,
    plain: Kernel,
    /// The same kernel with α and β (`_ab`); coded values have none (the handle scales).
    scaled: Option<Kernel>,
}

impl<T: Scalar> DeviceCsr<T> {
    /// `coded`: CSR-vector's values as codes, or `None` for the values themselves.
    pub fn new(gpu: &Gpu, a: &Csr<T>, kernel: CsrKernel, coded: Option<&EncodedValues<T>>, format: &'static str) -> Result<Self> {
        let nrows = u32::try_from(a.nrows())
            .map_err(|_| Error::format(format, format!("{} rows exceed 32-bit row indices", a.nrows())))?;
        let (name, threads) = match kernel {
            CsrKernel::Scalar => ("csr_scalar".to_string(), a.nrows() as u64),
            CsrKernel::Vector(lanes) => (format!("csr_vector_{lanes}"), a.nrows() as u64 * lanes as u64),
        };
        let config = grid_for(threads, BLOCK)?;
        let (values, plain, scaled) = match coded {
            None => (
                DeviceValues::upload_full(gpu, a.values())?,
                Kernel::new(gpu, &KERNELS, &format!("{name}_{}", T::SUFFIX), config)?,
                Some(Kernel::new(gpu, &KERNELS, &format!("{name}_ab_{}", T::SUFFIX), config)?),
            ),
            Some(v) => (
                DeviceValues::upload(gpu, v)?,
                Kernel::new(gpu, &KERNELS, &format!("{name}{}_{}", v.codec().kernel_suffix(), T::SUFFIX), config)?,
                None,
            ),
        };
        Ok(DeviceCsr {
            nrows,
            row_ptr: gpu.upload(&offsets_u32(format, a)?)?,
            col_idx: gpu.upload_nonempty(a.col_idx())?,
            values,
            plain,
            scaled,
        })
    }
}

// SAFETY (both launches): the arguments match CSR_ARGS(T) (then T alpha, T beta for `_ab`),
// the values as (codes, table) of the kernel's codec (DeviceValues::push); columns < ncols =
// x.len() by the CSR invariants, rows < nrows = y.len() by the bound check in the kernel;
// entries row_ptr[r]..row_ptr[r + 1] lie inside col_idx and the codes (one per entry; the
// pattern reads only table[0], a dictionary's codes index its table).
impl<T: Scalar> DeviceFormat<T> for DeviceCsr<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            self.plain.launch(gpu, |a| {
                a.arg(&self.nrows).arg(&self.row_ptr).arg(&self.col_idx);
                self.values.push(a);
                a.arg(x).arg(y);
            })
        }
    }
    unsafe fn launch_scaled(&self, gpu: &Gpu, alpha: T, x: &CudaSlice<T>, beta: T, y: &mut CudaSlice<T>) -> Option<Result<()>> {
        let scaled = self.scaled.as_ref()?;
        // SAFETY: see above.
        Some(unsafe {
            scaled.launch(gpu, |a| {
                a.arg(&self.nrows).arg(&self.row_ptr).arg(&self.col_idx);
                self.values.push(a);
                a.arg(x).arg(y).arg(&alpha).arg(&beta);
            })
        })
    }
}
