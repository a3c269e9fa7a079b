//! Coded values on the device: the two pointers a kernel with a `values.cuh` loader takes.

use cudarc::driver::{CudaSlice, LaunchArgs, PushKernelArg};

use super::{EncodedValues, ValueCodec};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub(crate) struct DeviceValues<T> {
    codec: ValueCodec,
    /// The values (`full`); one unread element otherwise.
    full: CudaSlice<T>,
    /// The codes; one unread byte for `full` and `pattern`.
    codes: CudaSlice<u8>,
    /// The pattern's value or the dictionary; one unread element otherwise.
    table: CudaSlice<T>,
}

impl<T: Scalar> DeviceValues<T> {
    pub(crate) fn upload(gpu: &Gpu, v: &EncodedValues<T>) -> Result<Self> {
        Ok(DeviceValues {
            codec: v.codec,
            full: gpu.upload_nonempty(&v.full)?,
            codes: gpu.upload_nonempty(&v.codes)?,
            table: gpu.upload_nonempty(&v.table)?,
        })
    }

    /// The values themselves (the `full` codec), uploaded without a host copy.
    pub(crate) fn upload_full(gpu: &Gpu, values: &[T]) -> Result<Self> {
        Ok(DeviceValues {
            codec: ValueCodec::Full,
            full: gpu.upload_nonempty(values)?,
            codes: gpu.alloc(1)?,
            table: gpu.alloc(1)?,
        })
    }

    /// Full values already on the device (built there by a conversion).
    pub(crate) fn from_device(gpu: &Gpu, full: CudaSlice<T>) -> Result<Self> {
        Ok(DeviceValues {
            codec: ValueCodec::Full,
            full,
            codes: gpu.alloc(1)?,
            table: gpu.alloc(1)?,
        })
    }

    pub(crate) fn codec(&self) -> ValueCodec {
        self.codec
    }

    /// The values themselves, when the codec is `full`.
    #[cfg(test)]
    pub(crate) fn full(&self) -> Option<&CudaSlice<T>> {
        (self.codec == ValueCodec::Full).then_some(&self.full)
    }

    /// Pushes the loader's two arguments, `(const void* codes, const T* table)`.
    pub(crate) fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        if self.codec == ValueCodec::Full {
            args.arg(&self.full);
        } else {
            args.arg(&self.codes);
        }
        args.arg(&self.table);
    }
}
