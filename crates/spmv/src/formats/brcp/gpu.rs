//! Upload and launch of the BRCP kernels.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::{Brcp, KERNELS, NAME, TILE_WARPS};
use crate::error::Result;
use crate::formats::brc::check_warp_blocks;
use crate::formats::carry::DeviceSpans;
use crate::formats::{arg_u32, DeviceEntries, DeviceFormat};
use crate::gpu::{grid_for, Gpu, Kernel};
use crate::matrix::Scalar;

/// Threads per CUDA block of the main kernel (`BRCP_BLOCK` in kernel.cu).
const BLOCK: u32 = 32 * TILE_WARPS as u32;
/// Most CUDA blocks added to the grid only to zero empty rows (the loop is grid-stride).
const EMPTY_ROW_BLOCKS: u64 = 1024;

pub struct DeviceBrcp<T> {
    tile_count: u32,
    blocks: u32,
    empty_count: u32,
    tiles: CudaSlice<u32>,
    tile_chunk: CudaSlice<u32>,
    block_ptr: CudaSlice<u32>,
    row_perm: CudaSlice<u32>,
    row_seg_len: CudaSlice<u8>,
    entries: DeviceEntries<T>,
    empty_rows: CudaSlice<u32>,
    spans: DeviceSpans,
    enter: CudaSlice<T>,
    leave: CudaSlice<T>,
    /// 32 lane sums per tile and one arrival counter per tile (blocks of several chunks).
    chunk_sums: CudaSlice<T>,
    chunk_count: CudaSlice<u32>,
    main: Kernel,
    spans_kernel: Kernel,
}

impl<T: Scalar> DeviceBrcp<T> {
    pub fn new(gpu: &Gpu, a: &Brcp<T>) -> Result<Self> {
        check_warp_blocks(NAME, a.block_rows())?;
        // All hold by construction (rows < 2^32 - 1, blocks < 2^31).
        let count = |n: usize, what: &str| arg_u32(NAME, what, n);
        let tile_count = count(a.tiles.len() - 1, "tiles")?;
        let empty_count = count(a.empty_rows.len(), "empty rows")?;
        let blocks_for_empty =
            (a.empty_rows.len() as u64).div_ceil(BLOCK as u64).min(EMPTY_ROW_BLOCKS);
        let grid = (tile_count as u64).max(blocks_for_empty).max(1) as u32;
        let main_config =
            LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
        // Counters start at 0 (alloc zeroes them) and the kernel resets each one it completes.
        let chunk_tiles = if a.has_chunked_blocks() { a.tile_chunk.len() } else { 1 };
        Ok(DeviceBrcp {
            tile_count,
            blocks: count(a.blocks(), "blocks")?,
            empty_count,
            tiles: gpu.upload(&a.tiles)?,
            tile_chunk: gpu.upload_nonempty(&a.tile_chunk)?,
            block_ptr: gpu.upload(a.block_ptr())?,
            row_perm: gpu.upload_nonempty(a.row_perm())?,
            row_seg_len: gpu.upload_nonempty(&a.row_seg_len)?,
            entries: DeviceEntries::upload(gpu, a.col_idx(), a.values())?,
            empty_rows: gpu.upload_nonempty(&a.empty_rows)?,
            spans: DeviceSpans::upload(gpu, NAME, &a.spans, |s| [s.row, s.first, s.last])?,
            enter: gpu.alloc(a.blocks().max(1))?,
            leave: gpu.alloc(a.blocks().max(1))?,
            chunk_sums: gpu.alloc(32 * chunk_tiles)?,
            chunk_count: gpu.alloc(chunk_tiles)?,
            main: Kernel::for_type::<T>(gpu, &KERNELS, "brcp", main_config)?,
            spans_kernel: Kernel::for_type::<T>(
                gpu,
                &KERNELS,
                "brcp_spans",
                grid_for(a.spans.len() as u64, 256)?,
            )?,
        })
    }
}

impl<T: Scalar> DeviceFormat<T> for DeviceBrcp<T> {
    unsafe fn launch(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        // SAFETY: the arguments match brcp_<T>(u32, const u32*, const u32*, u32, const u32*,
        // const u32*, const u8*, const u32*, const T*, const T*, T*, T*, T*, u32, const u32*,
        // T*, u32*). CUDA blocks past tile_count only run the grid-stride loop over the
        // empty_count entries of empty_rows (rows < nrows = y.len()). Tile t reads
        // tiles[t + 1] (tile_count + 1 entries) and tile_chunk[t] (tile_count entries); a
        // chunk of a block of several chunks uses chunk_sums[t'*32 .. t'*32 + 31] and
        // chunk_count[t'] for tiles t' of its block only (both sized for every tile when
        // some block has several chunks, and only then used); its blocks b < blocks read
        // block_ptr[b + 1], slots b*32 .. b*32 + 31 of
        // row_perm and row_seg_len (blocks * 32 entries, and slot ± 1 only when b > 0 or
        // b + 1 < blocks), entries block_ptr[b] .. block_ptr[b + 1] of col_idx and values;
        // columns < ncols = x.len(); stored rows < nrows; enter and leave have one slot per
        // block. Blocks are BLOCK = 32 whole warps, as the shuffles and `partial` need.
        unsafe {
            self.main.launch(gpu, |a| {
                a.arg(&self.tile_count).arg(&self.tiles).arg(&self.tile_chunk);
                a.arg(&self.blocks).arg(&self.block_ptr).arg(&self.row_perm).arg(&self.row_seg_len);
                self.entries.push(a);
                a.arg(x).arg(&mut *y);
                a.arg(&self.enter).arg(&self.leave).arg(&self.empty_count).arg(&self.empty_rows);
                a.arg(&self.chunk_sums).arg(&self.chunk_count);
            })
        }?;
        // SAFETY: matches brcp_spans_<T>(u32, const u32*, const u32*, const u32*, const T*,
        // const T*, T*); threads past the spans' count return; first < last < blocks index enter
        // and leave; rows < nrows = y.len(). Runs after the main kernel on the same stream,
        // which wrote leave[first] and enter[first + 1 ..= last] of every span.
        unsafe { self.spans.launch(&self.spans_kernel, gpu, (&self.enter, &self.leave), y) }
    }
}
