//! Upload and launch of HYB: the ELL kernel, then the warp-aggregated COO atomic kernel
//! (both from the `ell` and `coo` modules).

use std::sync::Arc;

use cudarc::driver::CudaSlice;

use super::Hyb;
use crate::error::Result;
use crate::formats::coo::gpu::{AtomicAdd, Atomics};
use crate::formats::ell::gpu::DeviceEll;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::Gpu;
use crate::matrix::Scalar;

pub struct DeviceHyb<T> {
    nrows: usize,
    ncols: usize,
    ell: DeviceEll<T>,
    coo: AtomicAdd<T>,
    bytes: usize,
}

impl<T: Scalar> DeviceHyb<T> {
    pub fn new(gpu: &Arc<Gpu>, h: &Hyb<T>) -> Result<Self> {
        let ell = DeviceEll::new(gpu, &h.ell, "hyb")?;
        let bytes = ell.bytes() + h.coo.bytes();
        Ok(DeviceHyb { nrows: h.nrows, ncols: h.ncols, ell, coo: AtomicAdd::new(gpu, &h.coo, Atomics::PerWarpRow)?, bytes })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceHyb<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors("hyb", self.nrows, self.ncols, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        // The ELL kernel writes every y[r]; the atomics then add the rows' remaining entries
        // (summed per row within each warp first).
        self.ell.launch(x, &mut *y)?;
        self.coo.launch(x, y)
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
    fn bytes_read(&self) -> usize {
        self.bytes - self.ell.bytes() + self.ell.bytes_read()
    }
}
