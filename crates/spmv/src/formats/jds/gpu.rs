//! Upload and launch of the JDS kernel.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Jds, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

pub struct DeviceJds<T> {
    gpu: Arc<Gpu>,
    nrows: u32,
    ncols: usize,
    diagonals: u32,
    perm: CudaSlice<u32>,
    iter_ptr: CudaSlice<u32>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
}

impl<T: Scalar> DeviceJds<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Jds<T>) -> Result<Self> {
        // Both hold by construction (Jds::new checks rows and nnz against u32::MAX, and
        // the diagonal count is at most the longest row ≤ nnz).
        let nrows = u32::try_from(a.nrows).map_err(|_| Error::format(NAME, "rows exceed 32-bit indices"))?;
        let diagonals = u32::try_from(a.jagged_diagonals())
            .map_err(|_| Error::format(NAME, "jagged diagonals exceed 32-bit indices"))?;
        Ok(DeviceJds {
            gpu: gpu.clone(),
            nrows,
            ncols: a.ncols,
            diagonals,
            perm: gpu.upload(&a.perm)?,
            iter_ptr: gpu.upload(&a.iter_ptr)?,
            col_idx: gpu.upload(&a.col_idx)?,
            values: gpu.upload(&a.values)?,
            function: gpu.function(&KERNELS, &format!("jds_{}", T::SUFFIX))?,
            config: grid_for(a.nrows as u64, BLOCK)?,
            bytes: a.device_bytes(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceJds<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows as usize, self.ncols, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch
            .arg(&self.nrows)
            .arg(&self.diagonals)
            .arg(&self.perm)
            .arg(&self.iter_ptr)
            .arg(&self.col_idx)
            .arg(&self.values)
            .arg(x)
            .arg(y);
        // SAFETY: the arguments match JDS_ARGS(T). Threads stop at nrows; offsets stay below
        // iter_ptr[diagonals] = nnz = the length of col_idx and values; columns < ncols =
        // x.len() by the CSR invariants; perm is a permutation of 0..nrows = y.len().
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}
