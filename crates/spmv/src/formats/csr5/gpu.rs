//! Upload and launch of CSR5: the tile kernel (four one-warp tiles per block; it also zeroes
//! the empty rows), then, when rows cross tiles, the fixup kernel on the same stream.

use cudarc::driver::{CudaSlice, PushKernelArg};

use super::{Csr5, KERNELS};
use crate::error::Result;
use crate::formats::carry::DeviceCarry;
use crate::formats::DeviceFormat;
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

/// One-warp tiles per block (CSR5_WARPS in kernel.cu).
const TILES_PER_BLOCK: u64 = 4;

pub(super) struct DeviceCsr5<T: Scalar> {
    nnz: u32,
    real_rows: u32,
    tiles: u32,
    has_map: u32,
    empty: u32,
    tile_base: CudaSlice<u32>,
    bits: CudaSlice<u32>,
    col5: CudaSlice<u32>,
    val5: CudaSlice<T>,
    row_map: CudaSlice<u32>,
    empty_rows: CudaSlice<u32>,
    carry: DeviceCarry<T>,
    tile_kernel: Kernel,
}

impl<T: Scalar> DeviceCsr5<T> {
    pub(super) fn new(gpu: &Gpu, a: &Csr5<T>) -> Result<Self> {
        let tiles = a.tiles() as u64;
        Ok(DeviceCsr5 {
            // All below 2^32: checked on conversion (padded entries < 2^32).
            nnz: a.nnz as u32,
            real_rows: a.real_rows() as u32,
            tiles: tiles as u32,
            has_map: u32::from(!a.row_map.is_empty()),
            empty: a.empty_rows.len() as u32,
            tile_base: gpu.upload(&a.tile_base)?,
            bits: gpu.upload(&a.bits)?,
            col5: gpu.upload(&a.col5)?,
            val5: gpu.upload(&a.val5)?,
            row_map: gpu.upload_nonempty(&a.row_map)?,
            empty_rows: gpu.upload_nonempty(&a.empty_rows)?,
            carry: DeviceCarry::new(gpu, &KERNELS, "csr5_fixup", a.tiles(), a.segments())?,
            tile_kernel: Kernel::new(
                gpu,
                &KERNELS,
                &format!("csr5_{}_{}", a.sigma(), T::SUFFIX),
                grid_for(tiles * 32, (32 * TILES_PER_BLOCK) as u32)?,
            )?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceCsr5<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: the arguments match CSR5_ARGS(T) and the fixup's. Tile t reads slots
        // t·TILE .. (t+1)·TILE of col5/val5 (tiles·TILE = their length), loads only entries
        // below nnz (columns < ncols = x.len()), bits[t·32 + lane] and tile_base[t]; it writes
        // rows < real_rows through row_map (original rows < m = y.len()), the empty rows
        // (< m), and tile_carry/tile_head[t]. Blocks are whole warps, as the shuffles need.
        // The fixup follows on the same stream; segment rows are original rows (< m).
        unsafe {
            self.tile_kernel.launch(gpu, |a| {
                a.arg(&self.nnz)
                    .arg(&self.real_rows)
                    .arg(&self.tiles)
                    .arg(&self.tile_base)
                    .arg(&self.bits)
                    .arg(&self.col5)
                    .arg(&self.val5)
                    .arg(&self.row_map)
                    .arg(&self.has_map)
                    .arg(&self.empty_rows)
                    .arg(&self.empty)
                    .arg(x)
                    .arg(&mut *y)
                    .arg(&self.carry.tile_carry)
                    .arg(&self.carry.tile_head);
            })?;
            self.carry.launch_fixup(gpu, y)
        }
    }
}
