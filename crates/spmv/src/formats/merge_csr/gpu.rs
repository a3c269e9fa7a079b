//! Upload and launch of merge-path CSR: the tile kernel (four one-warp tiles per block), then,
//! when rows cross tiles, the fixup kernel (one warp per segment) on the same stream.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{MergeCsr, KERNELS, NAME};
use crate::error::Result;
use crate::formats::carry::DeviceCarry;
use crate::formats::offsets::DeviceOffsets;
use crate::formats::{DeviceEntries, DeviceFormat};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

/// One-warp tiles per block (MERGE_WARPS in kernel.cu).
const TILES_PER_BLOCK: u64 = 4;

pub(super) struct DeviceMergeCsr<T: Scalar> {
    nrows: u32,
    /// Merge items (rows + entries), pushed in the kernel's offset width.
    path: u64,
    tiles: u32,
    tile_row: CudaSlice<u32>,
    row_ptr: DeviceOffsets,
    entries: DeviceEntries<T>,
    carry: DeviceCarry<T>,
    tile_kernel: Kernel,
}

impl<T: Scalar> DeviceMergeCsr<T> {
    pub(super) fn new(gpu: &Gpu, a: &MergeCsr<T>) -> Result<Self> {
        let tiles = a.tiles() as u64;
        Ok(DeviceMergeCsr {
            // Rows and tiles below 2^32, and with 32-bit offsets rows + entries + one tile
            // below 2^31: checked on conversion.
            nrows: a.csr.nrows() as u32,
            path: (a.csr.nrows() + a.csr.nnz()) as u64,
            tiles: tiles as u32,
            tile_row: gpu.upload(a.tile_row())?,
            row_ptr: DeviceOffsets::upload(gpu, NAME, a.csr.row_ptr(), a.offsets)?,
            entries: DeviceEntries::upload(gpu, a.csr.col_idx(), a.csr.values())?,
            carry: DeviceCarry::new(gpu, &KERNELS, "merge_csr_fixup", a.tiles(), a.segments())?,
            tile_kernel: Kernel::for_type::<T>(
                gpu,
                &KERNELS,
                &format!("merge_csr_{}{}", a.items(), a.offsets.kernel_suffix()),
                grid_for(tiles * 32, (32 * TILES_PER_BLOCK) as u32)?,
            )?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceMergeCsr<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: the arguments match MERGE_ARGS(T, O) of the offsets' width and merge_csr_fixup's. Tile t reads the
        // path between diagonals t·TILE and min((t+1)·TILE, path), whose rows tile_row[t] ..=
        // tile_row[t+1] ≤ m and entries lie below nnz (row_ptr[m] = nnz); columns < ncols =
        // x.len(); it writes rows < m = y.len() and tile_carry/tile_head[t] (tiles entries).
        // Blocks are whole warps, as the shuffles need. The fixup follows on the same stream;
        // segment rows are rows of the matrix (< m).
        unsafe {
            // Below 2^31 with 32-bit offsets (checked on conversion).
            let path32 = self.path as u32;
            self.tile_kernel.launch(gpu, |a| {
                a.arg(&self.nrows);
                match &self.row_ptr {
                    DeviceOffsets::W32(_) => a.arg(&path32),
                    DeviceOffsets::W64(_) => a.arg(&self.path),
                };
                a.arg(&self.tile_row);
                self.row_ptr.push(a);
                self.entries.push(a);
                a.arg(x)
                    .arg(&mut *y)
                    .arg(&self.carry.tile_carry)
                    .arg(&self.carry.tile_head)
                    .arg(&self.tiles);
            })?;
            self.carry.launch_fixup(gpu, y)
        }
    }
}
