//! Upload and launch of the BRCSD-I and BRCSD-II kernels (the DIA layout uses DIA's).

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::{Brcsd1, Brcsd2, KERNELS, NAME};
use crate::error::Result;
use crate::formats::arg_u32;
use crate::formats::dia::diagonals;
use crate::formats::DeviceFormat;
use crate::gpu::{Gpu, Kernel};
use crate::matrix::Scalar;

pub struct DeviceBrcsd1<T> {
    piece_row: CudaSlice<u32>,
    piece_block: CudaSlice<u32>,
    block_row: CudaSlice<u32>,
    block_diag: CudaSlice<u32>,
    offsets: CudaSlice<i32>,
    block_data: CudaSlice<u64>,
    data: CudaSlice<T>,
    /// One CUDA block per piece, `piece_rows` threads each.
    kernel: Kernel,
}

impl<T: Scalar> DeviceBrcsd1<T> {
    pub fn new(gpu: &Gpu, a: &Brcsd1<T>) -> Result<Self> {
        // Pieces below 2^31 (at most one per row), piece_rows ≤ 1024 by the conversion's checks.
        let config = LaunchConfig {
            grid_dim: (arg_u32(NAME, "pieces", a.pieces())?.max(1), 1, 1),
            block_dim: (arg_u32(NAME, "piece rows", a.piece_rows)?, 1, 1),
            shared_mem_bytes: 0,
        };
        Ok(DeviceBrcsd1 {
            piece_row: gpu.upload(&a.piece_row)?,
            piece_block: gpu.upload_nonempty(&a.piece_block)?,
            block_row: gpu.upload(&a.block_row)?,
            block_diag: gpu.upload(&a.block_diag)?,
            offsets: gpu.upload_nonempty(&a.offsets)?,
            block_data: gpu.upload(&a.block_data)?,
            data: gpu.upload_nonempty(&a.data)?,
            kernel: Kernel::for_type::<T>(gpu, &KERNELS, "brcsd1", config)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceBrcsd1<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let (_, n) = diagonals::launch_dims(x, y);
        // SAFETY: the arguments match BRCSD1_ARGS(T). One CUDA block per piece (m > 0 gives at
        // least one), pieces at most blockDim rows: rows piece_row[p] + tid < piece_row[p+1]
        // ≤ m = y.len(); the piece's block b < blocks indexes block_row/diag/data (blocks + 1
        // entries); slots block_data[b] + i·h + l < block_data[b+1] ≤ data.len(); the column
        // guard keeps x indices below n = x.len(). Pieces partition the rows: one write each.
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&n)
                    .arg(&self.piece_row)
                    .arg(&self.piece_block)
                    .arg(&self.block_row)
                    .arg(&self.block_diag);
                a.arg(&self.offsets).arg(&self.block_data).arg(&self.data).arg(x).arg(y);
            })
        }
    }
}

pub struct DeviceBrcsd2<T> {
    block_rows: u32,
    groups: u32,
    group_block: CudaSlice<u32>,
    group_diag: CudaSlice<u32>,
    offsets: CudaSlice<i32>,
    group_data: CudaSlice<u64>,
    data: CudaSlice<T>,
    kernel: Kernel,
}

impl<T: Scalar> DeviceBrcsd2<T> {
    pub fn new(gpu: &Gpu, a: &Brcsd2<T>, nrows: usize) -> Result<Self> {
        Ok(DeviceBrcsd2 {
            // Below 2^31 by the conversion's checks.
            block_rows: arg_u32(NAME, "block rows", a.block_rows)?,
            groups: arg_u32(NAME, "groups", a.groups())?,
            group_block: gpu.upload(&a.group_block)?,
            group_diag: gpu.upload(&a.group_diag)?,
            offsets: gpu.upload_nonempty(&a.offsets)?,
            group_data: gpu.upload(&a.group_data)?,
            data: gpu.upload_nonempty(&a.data)?,
            kernel: diagonals::row_kernel::<T>(gpu, &KERNELS, "brcsd2", nrows)?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceBrcsd2<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        let (m, n) = diagonals::launch_dims(x, y);
        // SAFETY: the arguments match BRCSD2_ARGS(T). Threads stop at m = y.len(); m > 0 gives
        // groups ≥ 1 and the search keeps lo < groups with group_block[lo] ≤ r / bh <
        // group_block[groups] = blocks; group_diag/group_data have groups + 1 entries; the
        // block's slots lie below group_data[lo + 1] ≤ data.len(); the column guard keeps x
        // indices below n = x.len().
        unsafe {
            self.kernel.launch(gpu, |a| {
                a.arg(&m).arg(&n).arg(&self.block_rows).arg(&self.groups).arg(&self.group_block);
                a.arg(&self.group_diag)
                    .arg(&self.offsets)
                    .arg(&self.group_data)
                    .arg(&self.data)
                    .arg(x)
                    .arg(y);
            })
        }
    }
}
