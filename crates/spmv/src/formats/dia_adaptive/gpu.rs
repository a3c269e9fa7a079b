//! Upload and launch of the BRCSD-I and BRCSD-II kernels (the DIA layout uses DIA's).

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Brcsd1, Brcsd2, KERNELS, NAME};
use crate::error::{Error, Result};
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

const BLOCK: u32 = 256;

fn dim(v: usize) -> Result<u32> {
    // Below 2^31 by the conversion's checks.
    u32::try_from(v).map_err(|_| Error::format(NAME, "dimension exceeds 32 bits"))
}

pub struct DeviceBrcsd1<T> {
    gpu: Arc<Gpu>,
    nrows: u32,
    ncols: u32,
    piece_row: CudaSlice<u32>,
    piece_block: CudaSlice<u32>,
    block_row: CudaSlice<u32>,
    block_diag: CudaSlice<u32>,
    offsets: CudaSlice<i32>,
    block_data: CudaSlice<u64>,
    data: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
}

impl<T: Scalar> DeviceBrcsd1<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Brcsd1<T>, nrows: usize, ncols: usize) -> Result<Self> {
        let config = LaunchConfig {
            grid_dim: (dim(a.pieces())?.max(1), 1, 1),
            block_dim: (dim(a.piece_rows)?, 1, 1),
            shared_mem_bytes: 0,
        };
        Ok(DeviceBrcsd1 {
            gpu: gpu.clone(),
            nrows: dim(nrows)?,
            ncols: dim(ncols)?,
            piece_row: gpu.upload(&a.piece_row)?,
            piece_block: upload_or_one(gpu, &a.piece_block)?,
            block_row: gpu.upload(&a.block_row)?,
            block_diag: gpu.upload(&a.block_diag)?,
            offsets: upload_or_one(gpu, &a.offsets)?,
            block_data: gpu.upload(&a.block_data)?,
            data: upload_or_one(gpu, &a.data)?,
            function: gpu.function(&KERNELS, &format!("brcsd1_{}", T::SUFFIX))?,
            config,
            bytes: a.device_bytes(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceBrcsd1<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows as usize, self.ncols as usize, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch
            .arg(&self.ncols)
            .arg(&self.piece_row)
            .arg(&self.piece_block)
            .arg(&self.block_row)
            .arg(&self.block_diag)
            .arg(&self.offsets)
            .arg(&self.block_data)
            .arg(&self.data)
            .arg(x)
            .arg(y);
        // SAFETY: the arguments match BRCSD1_ARGS(T). One CUDA block per piece (m > 0 gives at
        // least one), pieces at most blockDim rows: rows piece_row[p] + tid < piece_row[p+1]
        // ≤ m = y.len(); the piece's block b < blocks indexes block_row/diag/data (blocks + 1
        // entries); slots block_data[b] + i·h + l < block_data[b+1] ≤ data.len(); the column
        // guard keeps x indices below n = x.len(). Pieces partition the rows: one write each.
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}

pub struct DeviceBrcsd2<T> {
    gpu: Arc<Gpu>,
    nrows: u32,
    ncols: u32,
    block_rows: u32,
    groups: u32,
    group_block: CudaSlice<u32>,
    group_diag: CudaSlice<u32>,
    offsets: CudaSlice<i32>,
    group_data: CudaSlice<u64>,
    data: CudaSlice<T>,
    function: CudaFunction,
    config: LaunchConfig,
    bytes: usize,
}

impl<T: Scalar> DeviceBrcsd2<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Brcsd2<T>, nrows: usize, ncols: usize) -> Result<Self> {
        Ok(DeviceBrcsd2 {
            gpu: gpu.clone(),
            nrows: dim(nrows)?,
            ncols: dim(ncols)?,
            block_rows: dim(a.block_rows)?,
            groups: dim(a.groups())?,
            group_block: gpu.upload(&a.group_block)?,
            group_diag: gpu.upload(&a.group_diag)?,
            offsets: upload_or_one(gpu, &a.offsets)?,
            group_data: gpu.upload(&a.group_data)?,
            data: upload_or_one(gpu, &a.data)?,
            function: gpu.function(&KERNELS, &format!("brcsd2_{}", T::SUFFIX))?,
            config: grid_for(nrows as u64, BLOCK)?,
            bytes: a.device_bytes(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceBrcsd2<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows as usize, self.ncols as usize, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        let mut launch = self.gpu.stream().launch_builder(&self.function);
        launch
            .arg(&self.nrows)
            .arg(&self.ncols)
            .arg(&self.block_rows)
            .arg(&self.groups)
            .arg(&self.group_block)
            .arg(&self.group_diag)
            .arg(&self.offsets)
            .arg(&self.group_data)
            .arg(&self.data)
            .arg(x)
            .arg(y);
        // SAFETY: the arguments match BRCSD2_ARGS(T). Threads stop at m = y.len(); m > 0 gives
        // groups ≥ 1 and the search keeps lo < groups with group_block[lo] ≤ r / bh <
        // group_block[groups] = blocks; group_diag/group_data have groups + 1 entries; the
        // block's slots lie below group_data[lo + 1] ≤ data.len(); the column guard keeps x
        // indices below n = x.len().
        unsafe { launch.launch(self.config) }?;
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
}
