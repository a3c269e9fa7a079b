//! Upload and launch of HYB: the ELL kernel, then the warp-aggregated COO atomic kernel
//! (both from the `ell` and `coo` modules).

use cudarc::driver::CudaSlice;

use super::Hyb;
use crate::error::Result;
use crate::formats::atomic_add::{AtomicAdd, Atomics};
use crate::formats::ell;
use crate::formats::{DeviceFormat, OneKernel};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub(super) struct DeviceHyb<T> {
    ell: OneKernel<T>,
    coo: AtomicAdd<T>,
}

impl<T: Scalar> DeviceHyb<T> {
    pub(super) fn new(gpu: &Gpu, h: &Hyb<T>) -> Result<Self> {
        let ell = ell::gpu::upload(gpu, &h.ell, "hyb")?;
        Ok(DeviceHyb { ell, coo: AtomicAdd::new(gpu, &h.coo, Atomics::PerWarpRow)? })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceHyb<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // The ELL kernel writes every y[r]; the atomics then add the rows' remaining entries
        // (summed per row within each warp first).
        // SAFETY: the caller's guarantees are the ELL part's (same matrix, same vectors).
        unsafe { self.ell.launch(gpu, x, &mut *y) }?;
        self.coo.launch(gpu, x, y)
    }
}
