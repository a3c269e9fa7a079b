//! Upload and launch of merge-path CSR: the tile kernel (four one-warp tiles per block), then,
//! when rows cross tiles, the fixup kernel (one warp per segment) on the same stream; for a
//! block of vectors the same pair per 8 columns (block.cu), each column's carries apart.

use std::sync::OnceLock;

use cudarc::driver::{CudaSlice, LaunchArgs, PushKernelArg};

use super::{MergeCsr, BLOCK_KERNELS, KERNELS, NAME};
use crate::error::Result;
use crate::formats::carry::DeviceCarry;
use crate::formats::device::BLOCK_TILE;
use crate::formats::offsets::DeviceOffsets;
use crate::formats::{BlockKernel, DeviceEntries, DeviceFormat, PerLayout, Scaled};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;
use crate::operator::{Block, Layout};

/// One-warp tiles per block (MERGE_WARPS in merge_csr.cuh).
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
    /// The tile kernels' items and offsets suffix (`7`, `7_o64`).
    variant: String,
    /// A block product's parts, made on the first one.
    block: OnceLock<BlockParts<T>>,
}

/// What block products add: BLOCK_TILE columns' carries and heads per tile, and the tile and
/// fixup kernels of each layout (row-major, column-major), loaded on first use.
struct BlockParts<T: Scalar> {
    tile_carry: CudaSlice<T::Acc>,
    tile_head: CudaSlice<T::Acc>,
    kernels: PerLayout<(Kernel, Kernel)>,
}

impl<T: Scalar> DeviceMergeCsr<T> {
    pub(super) fn new(gpu: &Gpu, a: &MergeCsr<T>) -> Result<Self> {
        let tiles = a.tiles() as u64;
        let variant = format!("{}{}", a.items(), a.offsets.kernel_suffix());
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
                &format!("merge_csr_{variant}"),
                grid_for(tiles * 32, (32 * TILES_PER_BLOCK) as u32)?,
            )?,
            variant,
            block: OnceLock::new(),
        })
    }

    /// Pushes the matrix's arguments (MERGE_MATRIX_ARGS), which both tile kernels take first.
    fn push_matrix<'a>(&'a self, a: &mut LaunchArgs<'a>, path32: &'a u32) {
        a.arg(&self.nrows);
        match &self.row_ptr {
            DeviceOffsets::W32(_) => a.arg(path32),
            DeviceOffsets::W64(_) => a.arg(&self.path),
        };
        a.arg(&self.tile_row);
        self.row_ptr.push(a);
        self.entries.push(a);
    }

    /// The block product's parts and its kernels for `layout`, made on first use.
    fn block_parts(
        &self, gpu: &Gpu, layout: Layout,
    ) -> Result<(&BlockParts<T>, &(Kernel, Kernel))> {
        let parts = match self.block.get() {
            Some(parts) => parts,
            None => {
                let carries = (self.tiles as usize * BLOCK_TILE).max(1);
                let parts = BlockParts {
                    tile_carry: gpu.alloc(carries)?,
                    tile_head: gpu.alloc(carries)?,
                    kernels: Default::default(),
                };
                self.block.get_or_init(|| parts)
            }
        };
        let kernels = parts.kernels.get_or_load(layout, |layout| {
            let tile = format!("merge_csr_block_{}_{layout}", self.variant);
            let fixup = format!("merge_csr_fixup_block_{layout}");
            Ok((
                Kernel::for_type::<T>(gpu, &BLOCK_KERNELS, &tile, self.tile_kernel.config())?,
                Kernel::for_type::<T>(gpu, &BLOCK_KERNELS, &fixup, self.carry.fixup_config())?,
            ))
        })?;
        Ok((parts, kernels))
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
                self.push_matrix(a, &path32);
                a.arg(x)
                    .arg(&mut *y)
                    .arg(&self.carry.tile_carry)
                    .arg(&self.carry.tile_head)
                    .arg(&self.tiles);
            })?;
            self.carry.launch_fixup(gpu, y)
        }
    }

    fn block_kernel(&self) -> BlockKernel {
        BlockKernel::PerColumn
    }
    unsafe fn launch_block(&self, gpu: &Gpu, p: Scaled<'_, T>, block: Block) -> Option<Result<()>> {
        // Rows and columns are below 2^32 (the conversion checks them); past 2^32 vectors the
        // handle runs one product per column.
        let k = u32::try_from(block.k).ok()?;
        let (m, n) = (self.nrows, (p.x.len() / block.k) as u32);
        let (parts, (tile, fixup)) = match self.block_parts(gpu, block.layout) {
            Ok(got) => got,
            Err(e) => return Some(Err(e)),
        };
        let Scaled { alpha, x, beta, y } = p;
        let path32 = self.path as u32;
        let passes = (0..k).step_by(BLOCK_TILE);
        // SAFETY: as in `launch`, with MERGE_BLOCK_ARGS after the matrix's arguments: X of n·k
        // and Y of m·k entries (this method's contract), each pass touching columns j0 ..
        // min(j0 + BLOCK_TILE, k) - 1, and column q's carries and heads at q·tiles of buffers
        // of BLOCK_TILE·tiles; the fixup (CARRY_FIXUP_BLOCK_KERNEL) reads them after its tile
        // kernel on the same stream.
        Some(passes.into_iter().try_for_each(|j0| unsafe {
            tile.launch(gpu, |a| {
                self.push_matrix(a, &path32);
                a.arg(&parts.tile_carry).arg(&parts.tile_head).arg(&self.tiles);
                a.arg(&n).arg(&k).arg(&j0).arg(x).arg(&mut *y).arg(&alpha).arg(&beta);
            })?;
            let carries = (&parts.tile_carry, &parts.tile_head);
            self.carry.launch_block_fixup(gpu, fixup, carries, &mut *y, |a| {
                a.arg(&m).arg(&k).arg(&j0).arg(&self.tiles).arg(&alpha).arg(&beta);
            })
        }))
    }

    fn workspace_bytes(&self) -> usize {
        let acc = std::mem::size_of::<T::Acc>();
        self.block.get().map_or(0, |b| (b.tile_carry.len() + b.tile_head.len()) * acc)
    }
}
