//! Upload and launch of the BRCP kernels.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::{Brcp, KERNELS, NAME, TILE_WARPS};
use crate::error::{Error, Result};
use crate::formats::brc::WARP_BLOCK_ROWS;
use crate::formats::coo::gpu::upload_or_one;
use crate::formats::{check_vectors, DeviceSpmv};
use crate::gpu::{grid_for, Gpu};
use crate::matrix::Scalar;

/// Threads per CUDA block of the main kernel (`BRCP_BLOCK` in kernel.cu).
const BLOCK: u32 = 32 * TILE_WARPS as u32;
/// Most CUDA blocks added to the grid only to zero empty rows (the loop is grid-stride).
const EMPTY_ROW_BLOCKS: u64 = 1024;

pub struct DeviceBrcp<T> {
    gpu: Arc<Gpu>,
    nrows: usize,
    ncols: usize,
    tile_count: u32,
    blocks: u32,
    empty_count: u32,
    span_count: u32,
    tiles: CudaSlice<u32>,
    tile_chunk: CudaSlice<u32>,
    block_ptr: CudaSlice<u32>,
    row_perm: CudaSlice<u32>,
    row_seg_len: CudaSlice<u8>,
    col_idx: CudaSlice<u32>,
    values: CudaSlice<T>,
    empty_rows: CudaSlice<u32>,
    span_row: CudaSlice<u32>,
    span_first: CudaSlice<u32>,
    span_last: CudaSlice<u32>,
    enter: CudaSlice<T>,
    leave: CudaSlice<T>,
    /// 32 lane sums per tile and one arrival counter per tile (blocks of several chunks).
    chunk_sums: CudaSlice<T>,
    chunk_count: CudaSlice<u32>,
    main: CudaFunction,
    spans: CudaFunction,
    main_config: LaunchConfig,
    span_config: LaunchConfig,
    bytes: usize,
    bytes_read: usize,
}

impl<T: Scalar> DeviceBrcp<T> {
    pub fn new(gpu: &Arc<Gpu>, a: &Brcp<T>) -> Result<Self> {
        if a.block_rows != WARP_BLOCK_ROWS {
            return Err(Error::format(
                NAME,
                format!("the GPU kernel runs one warp per block: H must be 32, not {}", a.block_rows),
            ));
        }
        // All hold by construction (rows < 2^32 - 1, blocks < 2^31).
        let count = |n: usize, what: &str| {
            u32::try_from(n).map_err(|_| Error::format(NAME, format!("{n} {what} exceed 32-bit counts")))
        };
        let tile_count = count(a.tiles.len() - 1, "tiles")?;
        let empty_count = count(a.empty_rows.len(), "empty rows")?;
        let blocks_for_empty = (a.empty_rows.len() as u64).div_ceil(BLOCK as u64).min(EMPTY_ROW_BLOCKS);
        let grid = (tile_count as u64).max(blocks_for_empty).max(1) as u32;
        let rows: Vec<u32> = a.spans.iter().map(|s| s.row).collect();
        let firsts: Vec<u32> = a.spans.iter().map(|s| s.first).collect();
        let lasts: Vec<u32> = a.spans.iter().map(|s| s.last).collect();
        // Counters start at 0 (alloc zeroes them) and the kernel resets each one it completes.
        let chunk_tiles = if a.has_chunked_blocks() { a.tile_chunk.len() } else { 1 };
        Ok(DeviceBrcp {
            gpu: gpu.clone(),
            nrows: a.nrows,
            ncols: a.ncols,
            tile_count,
            blocks: count(a.blocks(), "blocks")?,
            empty_count,
            span_count: count(a.spans.len(), "spanning rows")?,
            tiles: gpu.upload(&a.tiles)?,
            tile_chunk: upload_or_one(gpu, &a.tile_chunk)?,
            block_ptr: gpu.upload(&a.block_ptr)?,
            row_perm: upload_or_one(gpu, &a.row_perm)?,
            row_seg_len: upload_or_one(gpu, &a.row_seg_len)?,
            col_idx: upload_or_one(gpu, &a.col_idx)?,
            values: upload_or_one(gpu, &a.values)?,
            empty_rows: upload_or_one(gpu, &a.empty_rows)?,
            span_row: upload_or_one(gpu, &rows)?,
            span_first: upload_or_one(gpu, &firsts)?,
            span_last: upload_or_one(gpu, &lasts)?,
            enter: gpu.alloc(a.blocks().max(1))?,
            leave: gpu.alloc(a.blocks().max(1))?,
            chunk_sums: gpu.alloc(32 * chunk_tiles)?,
            chunk_count: gpu.alloc(chunk_tiles)?,
            main: gpu.function(&KERNELS, &format!("brcp_{}", T::SUFFIX))?,
            spans: gpu.function(&KERNELS, &format!("brcp_spans_{}", T::SUFFIX))?,
            main_config: LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 },
            span_config: grid_for(a.spans.len() as u64, 256)?,
            bytes: a.device_bytes(),
            bytes_read: a.bytes_read(),
        })
    }
}

impl<T: Scalar> DeviceSpmv<T> for DeviceBrcp<T> {
    fn spmv(&self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        check_vectors(NAME, self.nrows, self.ncols, x, y)?;
        if self.nrows == 0 {
            return Ok(());
        }
        {
            let mut launch = self.gpu.stream().launch_builder(&self.main);
            launch
                .arg(&self.tile_count)
                .arg(&self.tiles)
                .arg(&self.tile_chunk)
                .arg(&self.blocks)
                .arg(&self.block_ptr)
                .arg(&self.row_perm)
                .arg(&self.row_seg_len)
                .arg(&self.col_idx)
                .arg(&self.values)
                .arg(x)
                .arg(&mut *y)
                .arg(&self.enter)
                .arg(&self.leave)
                .arg(&self.empty_count)
                .arg(&self.empty_rows)
                .arg(&self.chunk_sums)
                .arg(&self.chunk_count);
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
            unsafe { launch.launch(self.main_config) }?;
        }
        if self.span_count > 0 {
            let mut launch = self.gpu.stream().launch_builder(&self.spans);
            launch
                .arg(&self.span_count)
                .arg(&self.span_row)
                .arg(&self.span_first)
                .arg(&self.span_last)
                .arg(&self.enter)
                .arg(&self.leave)
                .arg(y);
            // SAFETY: matches brcp_spans_<T>(u32, const u32*, const u32*, const u32*, const T*,
            // const T*, T*); threads past span_count return; first < last < blocks index enter
            // and leave; rows < nrows. Runs after the main kernel on the same stream, which
            // wrote leave[first] and enter[first + 1 ..= last] of every span.
            unsafe { launch.launch(self.span_config) }?;
        }
        Ok(())
    }
    fn device_bytes(&self) -> usize {
        self.bytes
    }
    fn bytes_read(&self) -> usize {
        self.bytes_read
    }
}
