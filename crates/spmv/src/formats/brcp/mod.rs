//! BRCP, blocked row-column plus (Yang et al. 2019, the BRCP paper): BRC's sorted rows and
//! blocks of H = 32 slots, but filled row by row, with a block width chosen by the paper's
//! rule, a warp-level segmented sum per block and — here — a result that is bitwise the same
//! on every run.
//!
//! - **Sorting and T.** Rows sorted by length, longest first (stable); empty rows get no
//!   slot (they are listed in `empty_rows` and written as 0). `T = round(μ + σ)` as in BRC
//!   ([`brc::threshold`](super::brc::threshold)).
//! - **Row-major filling.** The sorted rows are scanned in order and every entry of a row is
//!   placed before the next row starts: a slot (one lane's row of a block) takes the next
//!   `V` entries of the current row, `V` being the current block's width; a row's last slot
//!   is padded with zeros (ELL-style) and the next row starts in the next slot, possibly in
//!   the next block. The last block is filled with dummy slots (no row, zeros) up to H.
//! - **Width rule** (the paper's eq. 3), decided when a block starts, with the "current row"
//!   the one its first slot continues or starts:
//!   `V = ceil(k / 2H)` if the current row has `k > 2H·T` entries (the paper's `64·T` and
//!   `nnz/64` for H = 32: such a row spans at most 64 slots), otherwise
//!   `V = min(T, max(remaining entries of the current row, entries of the next row))`.
//! - **Arrays** (the paper's names). `values` and `col_idx` column-major per block: entry
//!   `t` of the block's slot `l` at `block_ptr[b] + t·H + l`, padding holding 0 and the
//!   slot's last real column (0 in a dummy slot), so `x` is read without a branch;
//!   `block_ptr` (`blocks + 1` offsets, width `= (block_ptr[b+1] − block_ptr[b]) / H`);
//!   `row_perm[s]`, the original row of slot `s` (`NO_ROW` for a dummy); `row_seg_len[s]`,
//!   at the first slot of each run of slots of one row *inside a block*, the run's length,
//!   0 elsewhere (lane 0 always starts a run).
//! - **Kernel.** A warp takes a block: lane `l` sums the `V` products of its slot; a
//!   segmented inclusive scan with `__shfl_up_sync` (the sum restarts at every lane whose
//!   `row_seg_len` is non-zero) leaves each run's sum in its last lane, and the run's first
//!   lane fetches it (`__shfl_sync` from lane `l + row_seg_len − 1`). The paper's scan is
//!   unsegmented, `prefix[l + len − 1] − prefix[l] + in[l]`: deterministic too, but the
//!   difference cancels when an earlier run in the warp is much larger (two rows of sums
//!   1e16 and 1 leave nothing of the second); the segmented scan only adds a run's own values.
//!   Blocks of width ≥ [`WIDE_WIDTH`] (T ≥ 64, or a row above 2H·T widened by the rule)
//!   are cut into chunks of [`CHUNK_WIDTH`] entries per slot, each chunk a CUDA block of
//!   1024 threads: warp `w` sums the chunk's entries `t ≡ w (mod 32)` of every slot and warp 0
//!   adds the 32 partial sums in warp order. A block of one chunk goes on to its runs at
//!   once; in a block of several chunks each chunk stores its 32 lane sums, and the chunk
//!   that finishes last (an atomic counter per block says which) adds all chunks' sums in
//!   chunk order before the runs. Narrower blocks go 32 to a CUDA block, one per warp.
//!   (`tiles` and `tile_chunk` list the CUDA blocks' work.) This is the kernel's own division
//!   of the paper's layout: one warp per block, as the paper has it, would leave a row of
//!   millions of entries, which the rule packs into at most 64 slots, to one warp.
//!
//! **Determinism (bitwise identical results on every run).** The paper adds each run's sum
//! into `y` with one `atomicAdd` per (row, block); with two blocks per row the order does not
//! matter (0 + a + b = 0 + b + a), but from three on it does, and the paper only makes that
//! rare. Here no floating-point atomic is used at all: every value is computed by a fixed
//! thread in a fixed order and written once.
//! 1. A row whose slots all lie in one block is summed inside its warp (fixed lane order,
//!    fixed scan tree) and stored to `y[row]` by the run's first lane. In a block of
//!    several chunks, each lane's slot sum is ((chunk 0 + chunk 1) + …) in chunk order,
//!    whichever CUDA block happens to add them up: the atomic counter picks the thread, never
//!    the order of the additions.
//! 2. A row whose slots span blocks `b0 .. b1` (the list `spans`, built at conversion) has
//!    one run per block: the run that ends block `b0` is stored to `leave[b0]`, the run
//!    that starts block `b` (`b0 < b ≤ b1`, a middle block being a single run) to
//!    `enter[b]`. A second kernel, one thread per span, computes
//!    `y[row] = ((leave[b0] + enter[b0+1]) + …) + enter[b1]`, always left to right.
//!    (A block has at most one incoming and one outgoing run, so the two arrays of one
//!    slot per block never collide.)
//! 3. Empty rows are written 0 by the first kernel (a list, not a fill of all of `y`).
//!
//! Any number of blocks per row is therefore deterministic, and so is the width rule's
//! choice (T from exact integer sums, stable sorts). The cost: the second kernel (only
//! when some row spans blocks), 2·blocks partial slots and, when some block has several
//! chunks, 32 lane sums and a counter per tile.
//!
//! The paper's matrix A (§1.3) with 2 × 2 blocks (H = 2, T = 2) as in its Fig. 3:
//! ```text
//!     | 1 . 2 . |  row 0: 2 entries          sorted rows: 2 (3 entries), 0 (2), 3 (1); row 1 is empty
//! A = | . . . . |  row 1: 0
//!     | 3 4 . 5 |  row 2: 3                  block 0: current row 2, 3 left, next row 2 entries:
//!     | . . 6 . |  row 3: 1                      3 > 2H·T = 8? no: V = min(2, max(3, 2)) = 2
//!                                                slot 0 = row 2: 3 4     slot 1 = row 2: 5 (pad)
//!                                            block 1: current row 0, 2 left, next row 1 entry:
//!                                                V = min(2, max(2, 1)) = 2
//!                                                slot 2 = row 0: 1 2     slot 3 = row 3: 6 (pad)
//!   block_ptr   = [0, 4, 8]
//!   values      = [3, 5, 4, 0,  1, 6, 2, 0]    (column-major per block)
//!   col_idx     = [0, 3, 1, 3,  0, 2, 2, 2]
//!   row_perm    = [2, 2, 0, 3]
//!   row_seg_len = [2, 0, 1, 1]
//!   empty_rows  = [1]               spans = []  (no row leaves its block)
//! ```
//! Block 0's lanes hold 3·x0 + 4·x1 and 5·x3; the scan gives lane 1 their sum, which lane 0
//! (row_seg_len 2) stores to `y[2]`. The rule's own T for A is round(1.5 + 1.118) = 3: then
//! block 0 has V = 3 (row 2 in slot 0, row 0 in slot 1) and block 1 has V = 1 (row 3 and a
//! dummy). With T = 1 row 2 spans blocks 0 and 1 and row 0 blocks 1 and 2 (the unit tests
//! check all three layouts).
//!
//! The CPU path follows the same steps with rayon: blocks in parallel (each slot summed in
//! order, each run summed in slot order, rows inside a block written directly, `enter` and
//! `leave` returned per block), then the spans in parallel, each left to right.
//!
//! Device indices are 32-bit: conversion fails with [`Error::Format`] when the rows reach
//! 2^32 − 1 (all-ones is `NO_ROW`), the stored slots exceed 2^32 − 1 or the blocks 2^31.

mod cpu;
mod gpu;

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::brc::{block_width, coefficient_of_variation, threshold, NO_ROW, WARP_BLOCK_ROWS};
use super::jds::sort_rows_by_length;
use super::{DeviceFormat, FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};

pub const KERNELS: KernelModule = KernelModule { name: "brcp", source: include_str!("kernel.cu") };

/// Warps per CUDA block of the main kernel (`BRCP_TILE_WARPS` in kernel.cu): the number of
/// narrow blocks a CUDA block takes, and the warps that share one wide block.
pub const TILE_WARPS: usize = 32;

/// Blocks at least this wide are summed by all [`TILE_WARPS`] warps of a CUDA block.
pub const WIDE_WIDTH: usize = 64;

/// Entries per slot that one CUDA block sums of a wide block (`BRCP_CHUNK` in kernel.cu):
/// 32 per warp.
pub const CHUNK_WIDTH: usize = 1024;

/// Flag of a wide tile in `tiles` (`BRCP_WIDE` in kernel.cu).
const WIDE_TILE: u32 = 1 << 31;

const NAME: &str = "brcp";

/// A row whose slots span blocks `first ..= last` (`first < last`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub row: u32,
    pub first: u32,
    pub last: u32,
}

/// Where block `b` starts: `done` entries into sorted row `row`, `width` entries per slot.
#[derive(Clone, Copy, Debug)]
struct BlockStart {
    row: usize,
    done: usize,
    width: usize,
    /// The width came from the `ceil(k / 2H)` case of the rule.
    widened: bool,
}

/// The block layout of the width rule: a sequential scan over the sorted non-empty rows'
/// lengths (`lens`, longest first), jumping over whole rows, so it costs O(blocks + rows).
fn layout(lens: &[usize], h: usize, t: usize) -> Vec<BlockStart> {
    let wide_row = 2 * h * t;
    let mut blocks = Vec::new();
    let (mut idx, mut done) = (0usize, 0usize);
    while idx < lens.len() {
        let len = lens[idx];
        let remaining = len - done;
        let next = lens.get(idx + 1).copied().unwrap_or(0);
        let widened = len > wide_row;
        let width = if widened { len.div_ceil(2 * h) } else { t.min(remaining.max(next)) };
        blocks.push(BlockStart { row: idx, done, width, widened });
        let mut free = h;
        while free > 0 && idx < lens.len() {
            let need = (lens[idx] - done).div_ceil(width);
            if need <= free {
                free -= need;
                idx += 1;
                done = 0;
            } else {
                done += free * width;
                free = 0;
            }
        }
    }
    blocks
}

/// The CUDA blocks' work: `(tiles, tile_chunk)`. A wide block gets one tile per chunk of
/// [`CHUNK_WIDTH`] entries (flagged, `tile_chunk` = the chunk's number), else a tile holds up
/// to [`TILE_WARPS`] consecutive narrow blocks; the last entry of `tiles` is the block count.
fn tiles(widths: &[usize]) -> (Vec<u32>, Vec<u32>) {
    let (mut tiles, mut tile_chunk) = (Vec::new(), Vec::new());
    let mut b = 0;
    while b < widths.len() {
        if widths[b] >= WIDE_WIDTH {
            for chunk in 0..widths[b].div_ceil(CHUNK_WIDTH) {
                tiles.push(b as u32 | WIDE_TILE);
                tile_chunk.push(chunk as u32);
            }
            b += 1;
        } else {
            tiles.push(b as u32);
            tile_chunk.push(0);
            let end = (b + TILE_WARPS).min(widths.len());
            b += 1;
            while b < end && widths[b] < WIDE_WIDTH {
                b += 1;
            }
        }
    }
    tiles.push(widths.len() as u32);
    (tiles, tile_chunk)
}

/// A matrix in BRCP (see the module doc for the layout and the determinism).
pub struct Brcp<T> {
    nrows: usize,
    ncols: usize,
    nnz: usize,
    /// Slots per block (H).
    block_rows: usize,
    /// Width cap (T).
    threshold: usize,
    block_ptr: Vec<u32>,
    row_perm: Vec<u32>,
    row_seg_len: Vec<u8>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    empty_rows: Vec<u32>,
    spans: Vec<Span>,
    tiles: Vec<u32>,
    tile_chunk: Vec<u32>,
    block_nnz: Vec<usize>,
    widened_blocks: usize,
    max_row_len: usize,
    mean_row_len: f64,
    sort_ms: f64,
    layout_ms: f64,
    fill_ms: f64,
}

impl<T: Scalar> Brcp<T> {
    /// The registered configuration: H = 32, T = round(μ + σ).
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_params(a, WARP_BLOCK_ROWS, threshold(a))
    }

    /// BRCP with `block_rows` slots per block (H in 1..=32; the GPU takes only 32) and the
    /// width cap `threshold` (T ≥ 1).
    pub fn with_params(a: &Csr<T>, block_rows: usize, threshold: usize) -> Result<Self> {
        let (m, nnz) = (a.nrows(), a.nnz());
        if !(1..=WARP_BLOCK_ROWS).contains(&block_rows) {
            return Err(Error::format(NAME, format!("H = {block_rows} slots per block: H must be in 1..=32")));
        }
        if threshold == 0 {
            return Err(Error::format(NAME, "T = 0: a block must be at least one entry wide"));
        }
        if m >= NO_ROW as usize {
            return Err(Error::format(NAME, format!("{m} rows exceed the 2^32 - 2 that 32-bit row indices allow")));
        }
        let h = block_rows;

        let start = Instant::now();
        let row_ptr = a.row_ptr();
        let mut sorted: Vec<u32> = (0..m as u32).into_par_iter().collect();
        sort_rows_by_length(row_ptr, &mut sorted);
        let nonempty = sorted.partition_point(|&r| a.row_len(r as usize) > 0);
        let empty_rows = sorted.split_off(nonempty);
        let lens: Vec<usize> = sorted.par_iter().map(|&r| a.row_len(r as usize)).collect();
        let sort_ms = start.elapsed().as_secs_f64() * 1e3;

        let start = Instant::now();
        let starts = layout(&lens, h, threshold);
        let blocks = starts.len();
        if blocks >= WIDE_TILE as usize {
            return Err(Error::format(NAME, format!("{blocks} blocks exceed the 2^31 that the tile list addresses")));
        }
        let mut block_ptr = Vec::with_capacity(blocks + 1);
        block_ptr.push(0usize);
        for s in &starts {
            match block_ptr.last().and_then(|&p: &usize| p.checked_add(s.width * h)) {
                Some(p) if p <= u32::MAX as usize => block_ptr.push(p),
                _ => {
                    return Err(Error::format(
                        NAME,
                        format!("{nnz} entries in blocks of {h} slots need more than 2^32 - 1 stored slots"),
                    ))
                }
            }
        }
        let mut spans: Vec<Span> = Vec::new();
        for b in 1..blocks {
            if starts[b].done > 0 {
                let row = sorted[starts[b].row];
                match spans.last_mut() {
                    Some(s) if s.row == row && s.last as usize == b - 1 => s.last = b as u32,
                    _ => spans.push(Span { row, first: b as u32 - 1, last: b as u32 }),
                }
            }
        }
        let widths: Vec<usize> = starts.iter().map(|s| s.width).collect();
        let (tiles, tile_chunk) = tiles(&widths);
        let layout_ms = start.elapsed().as_secs_f64() * 1e3;

        let start = Instant::now();
        let stored = block_ptr[blocks];
        let mut col_idx = vec![0u32; stored];
        let mut values = vec![T::ZERO; stored];
        let mut row_perm = vec![NO_ROW; blocks * h];
        let mut row_seg_len = vec![0u8; blocks * h];
        let mut parts = Vec::with_capacity(blocks);
        let (mut cols_rest, mut vals_rest) = (col_idx.as_mut_slice(), values.as_mut_slice());
        for (b, (rows, segs)) in row_perm.chunks_mut(h).zip(row_seg_len.chunks_mut(h)).enumerate() {
            let n = block_ptr[b + 1] - block_ptr[b];
            let (cs, cr) = std::mem::take(&mut cols_rest).split_at_mut(n);
            let (vs, vr) = std::mem::take(&mut vals_rest).split_at_mut(n);
            (cols_rest, vals_rest) = (cr, vr);
            parts.push((b, rows, segs, cs, vs));
        }
        let block_nnz: Vec<usize> = parts
            .into_par_iter()
            .with_min_len(16)
            .map(|(b, rows, segs, cols, vals)| {
                let BlockStart { row: mut idx, mut done, width, .. } = starts[b];
                let mut entries = 0;
                for (lane, slot_row) in rows.iter_mut().enumerate() {
                    if idx == sorted.len() {
                        break; // dummy slots: NO_ROW, zeros
                    }
                    let (rc, rv) = a.row(sorted[idx] as usize);
                    let take = width.min(rc.len() - done);
                    let pad = rc[done + take - 1];
                    for t in 0..width {
                        let p = t * h + lane;
                        (cols[p], vals[p]) = if t < take { (rc[done + t], rv[done + t]) } else { (pad, T::ZERO) };
                    }
                    *slot_row = sorted[idx];
                    entries += take;
                    done += take;
                    if done == rc.len() {
                        idx += 1;
                        done = 0;
                    }
                }
                // Runs of equal rows inside the block: their length at their first slot.
                let mut lane = 0;
                while lane < h && rows[lane] != NO_ROW {
                    let run = rows[lane..].iter().take_while(|&&r| r == rows[lane]).count();
                    segs[lane] = run as u8; // run <= h <= 32
                    lane += run;
                }
                entries
            })
            .collect();
        let fill_ms = start.elapsed().as_secs_f64() * 1e3;

        Ok(Brcp {
            nrows: m,
            ncols: a.ncols(),
            nnz,
            block_rows: h,
            threshold,
            block_ptr: block_ptr.iter().map(|&p| p as u32).collect(),
            row_perm,
            row_seg_len,
            col_idx,
            values,
            empty_rows,
            spans,
            tiles,
            tile_chunk,
            block_nnz,
            widened_blocks: starts.iter().filter(|s| s.widened).count(),
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
            sort_ms,
            layout_ms,
            fill_ms,
        })
    }

    /// Slots per block (H).
    pub fn block_rows(&self) -> usize {
        self.block_rows
    }
    /// Width cap (T).
    pub fn threshold(&self) -> usize {
        self.threshold
    }
    pub fn blocks(&self) -> usize {
        self.block_ptr.len() - 1
    }
    /// Start of each block (`blocks + 1` entries; the last is the stored slot count).
    pub fn block_ptr(&self) -> &[u32] {
        &self.block_ptr
    }
    /// Width of block `b`: `(block_ptr[b+1] − block_ptr[b]) / H`.
    pub fn block_width(&self, b: usize) -> usize {
        block_width(&self.block_ptr, self.block_rows, b)
    }
    /// Row of each slot ([`NO_ROW`] for dummy slots).
    pub fn row_perm(&self) -> &[u32] {
        &self.row_perm
    }
    /// Length of each run of one row's slots inside a block, at its first slot; 0 elsewhere.
    pub fn row_seg_len(&self) -> &[u8] {
        &self.row_seg_len
    }
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Rows without entries (written 0).
    pub fn empty_rows(&self) -> &[u32] {
        &self.empty_rows
    }
    /// Rows whose slots span more than one block, in block order.
    pub fn spans(&self) -> &[Span] {
        &self.spans
    }
    /// Most blocks one row spans (1 when no row leaves its block, 0 for no entries).
    pub fn max_blocks_per_row(&self) -> usize {
        let longest = self.spans.iter().map(|s| (s.last - s.first) as usize + 1).max();
        longest.unwrap_or(usize::from(self.blocks() > 0))
    }
    /// The CUDA blocks' work list (see [`TILE_WARPS`], [`WIDE_WIDTH`]).
    pub fn tiles(&self) -> &[u32] {
        &self.tiles
    }
    /// The chunk number of each tile (0 for narrow tiles and one-chunk wide blocks).
    pub fn tile_chunk(&self) -> &[u32] {
        &self.tile_chunk
    }
    /// Tiles that share their block with other chunks: their lane sums and counters need
    /// device buffers (32 sums and one counter per tile, all tiles counted).
    fn has_chunked_blocks(&self) -> bool {
        self.tile_chunk.iter().any(|&c| c > 0)
    }
    /// Stored value slots, padding and dummy slots included.
    pub fn stored(&self) -> usize {
        self.values.len()
    }
    /// Device bytes: `block_ptr`, `row_perm`, `col_idx`, `empty_rows`, `tiles`,
    /// `tile_chunk`, the spans (3 × `u32` each) and the `enter`/`leave` partial sums (2 per
    /// block), `row_seg_len` (`u8`), `values` and, when a block has several chunks, 32 lane
    /// sums and a `u32` counter per tile.
    pub fn device_bytes(&self) -> usize {
        let size = std::mem::size_of::<T>();
        4 * (self.block_ptr.len()
            + self.row_perm.len()
            + self.col_idx.len()
            + self.empty_rows.len()
            + self.tiles.len()
            + self.tile_chunk.len()
            + 3 * self.spans.len())
            + self.row_seg_len.len()
            + size * (self.values.len() + 2 * self.blocks())
            + self.chunk_workspace_bytes()
    }
    /// Bytes of the chunks' lane sums and counters (0 when no block has several chunks).
    fn chunk_workspace_bytes(&self) -> usize {
        if self.has_chunked_blocks() {
            self.tile_chunk.len() * (32 * std::mem::size_of::<T>() + 4)
        } else {
            0
        }
    }
}

impl<T: Scalar> SpmvFormat<T> for Brcp<T> {
    fn stats(&self) -> FormatStats {
        let wide_tiles = self.tiles.iter().filter(|&&t| t & WIDE_TILE != 0).count();
        let wide = self.tile_chunk.iter().zip(&self.tiles).filter(|&(&c, &t)| c == 0 && t & WIDE_TILE != 0).count();
        FormatStats {
            bytes: self.device_bytes(),
            nnz: self.nnz,
            stored: self.stored(),
            max_row_len: self.max_row_len,
            mean_row_len: self.mean_row_len,
            extra: vec![
                ("threshold".into(), self.threshold as f64),
                ("blocks".into(), self.blocks() as f64),
                ("widened_blocks".into(), self.widened_blocks as f64),
                ("wide_blocks".into(), wide as f64),
                ("wide_chunks".into(), wide_tiles as f64),
                ("spanning_rows".into(), self.spans.len() as f64),
                ("max_blocks_per_row".into(), self.max_blocks_per_row() as f64),
                ("block_nnz_cv".into(), coefficient_of_variation(&self.block_nnz)),
                ("sort_ms".into(), self.sort_ms),
                ("layout_ms".into(), self.layout_ms),
                ("fill_ms".into(), self.fill_ms),
            ],
        }
    }
    /// What one product reads: everything but the written workspaces (`enter`/`leave`, the
    /// chunks' lane sums and counters).
    fn bytes_read(&self) -> usize {
        self.device_bytes() - 2 * self.blocks() * std::mem::size_of::<T>() - self.chunk_workspace_bytes()
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        cpu::spmv(self, x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(gpu::DeviceBrcp::new(gpu, self)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::{cpu_matches_oracle as check, random_csr};
    use crate::reference::test_vector;
    use crate::Coo;
    use proptest::prelude::*;

    /// Matrix A of the paper's §1.3.
    fn paper_matrix() -> Csr<f64> {
        Csr::new_checked(4, 4, vec![0, 2, 2, 5, 6], vec![0, 2, 0, 1, 3, 2], vec![1., 2., 3., 4., 5., 6.]).unwrap()
    }

    /// Rows of the given lengths (columns 0.., values exact in f32), in that order.
    fn rows_of(lens: &[usize], ncols: usize) -> Csr<f64> {
        let mut row_ptr = vec![0];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        for (r, &k) in lens.iter().enumerate() {
            for c in 0..k {
                cols.push(((c * 7 + r) % ncols) as u32);
                vals.push(((r * 31 + c * 3) % 64) as f64 / 16.0 - 2.0);
            }
            let row = row_ptr.len() - 1;
            let (lo, hi) = (row_ptr[row], cols.len());
            // Columns must be sorted and distinct.
            let mut pairs: Vec<(u32, f64)> = cols[lo..hi].iter().copied().zip(vals[lo..hi].iter().copied()).collect();
            pairs.sort_by_key(|p| p.0);
            pairs.dedup_by_key(|p| p.0);
            cols.truncate(lo);
            vals.truncate(lo);
            cols.extend(pairs.iter().map(|p| p.0));
            vals.extend(pairs.iter().map(|p| p.1));
            row_ptr.push(cols.len());
        }
        Csr::new_checked(lens.len(), ncols, row_ptr, cols, vals).unwrap()
    }

    #[test]
    fn paper_example_with_2x2_blocks_gives_the_documented_arrays() {
        let a = paper_matrix();
        let f = Brcp::with_params(&a, 2, 2).unwrap();
        assert_eq!(f.block_ptr(), &[0, 4, 8]);
        assert_eq!((f.block_width(0), f.block_width(1)), (2, 2));
        assert_eq!(f.values(), &[3., 5., 4., 0., 1., 6., 2., 0.]);
        assert_eq!(f.col_idx(), &[0, 3, 1, 3, 0, 2, 2, 2]);
        assert_eq!(f.row_perm(), &[2, 2, 0, 3]);
        assert_eq!(f.row_seg_len(), &[2, 0, 1, 1]);
        assert_eq!(f.empty_rows(), &[1]);
        assert!(f.spans().is_empty());
        assert_eq!(f.max_blocks_per_row(), 1);
        assert_eq!(f.tiles(), &[0, 2]);
        assert_eq!(f.tile_chunk(), &[0]);
        let s = f.stats();
        assert_eq!((s.nnz, s.stored, s.padded_zeros(), s.max_row_len), (6, 8, 2, 3));
        // block_ptr 3, row_perm 4, col_idx 8, empty_rows 1, tiles 2, tile_chunk 1;
        // row_seg_len 4 bytes; values 8 and enter/leave 2 x 2 doubles.
        assert_eq!(s.bytes, 4 * (3 + 4 + 8 + 1 + 2 + 1) + 4 + 8 * (8 + 4));
        let x = [1.0, 10.0, 100.0, 1000.0];
        let mut y = [f64::NAN; 4];
        f.spmv_cpu(&x, &mut y);
        assert_eq!(y, [201.0, 0.0, 5043.0, 600.0]);
    }

    #[test]
    fn paper_example_with_the_rules_own_t_and_with_t_1() {
        let a = paper_matrix();
        let x = [1.0, 10.0, 100.0, 1000.0];
        // T = 3: block 0 V = min(3, max(3, 2)) = 3: row 2, row 0; block 1: current row 3
        // with 1 entry and no next row: V = 1: row 3 and a dummy slot.
        let f = Brcp::with_params(&a, 2, threshold(&a)).unwrap();
        assert_eq!(f.threshold(), 3);
        assert_eq!(f.block_ptr(), &[0, 6, 8]);
        assert_eq!(f.values(), &[3., 1., 4., 2., 5., 0., 6., 0.]);
        assert_eq!(f.col_idx(), &[0, 0, 1, 2, 3, 2, 2, 0]);
        assert_eq!(f.row_perm(), &[2, 0, 3, NO_ROW]);
        assert_eq!(f.row_seg_len(), &[1, 1, 1, 0]);
        let mut y = [f64::NAN; 4];
        f.spmv_cpu(&x, &mut y);
        assert_eq!(y, [201.0, 0.0, 5043.0, 600.0]);

        // T = 1: every block is 1 wide. Block 0: row 2's first two entries; block 1: row 2's
        // last, row 0's first; block 2: row 0's last, row 3. Rows 2 and 0 span two blocks.
        let f = Brcp::with_params(&a, 2, 1).unwrap();
        assert_eq!(f.block_ptr(), &[0, 2, 4, 6]);
        assert_eq!(f.values(), &[3., 4., 5., 1., 2., 6.]);
        assert_eq!(f.row_perm(), &[2, 2, 2, 0, 0, 3]);
        assert_eq!(f.row_seg_len(), &[2, 0, 1, 1, 1, 1]);
        assert_eq!(f.spans(), &[Span { row: 2, first: 0, last: 1 }, Span { row: 0, first: 1, last: 2 }]);
        let mut y = [f64::NAN; 4];
        f.spmv_cpu(&x, &mut y);
        assert_eq!(y, [201.0, 0.0, 5043.0, 600.0]);
    }

    #[test]
    fn width_rule_widens_blocks_for_rows_above_2ht() {
        // H = 4, T = 2: rows above 2·4·2 = 16 entries get V = ceil(k / 8).
        let a = rows_of(&[40, 16, 3, 3, 1], 64);
        let f = Brcp::with_params(&a, 4, 2).unwrap();
        // Block 0: row 0 (40 > 16): V = 5, 4 slots of 5. Block 1: row 0 continues (20
        // left, still 40 > 16): V = 5, 4 slots. Block 2: row 1 (16, not above 16): V =
        // min(2, max(16, 3)) = 2: 4 slots. Block 3: row 1 continues, 8 left: V = 2, 4 slots.
        // Block 4: row 2, V = min(2, max(3, 3)) = 2: rows 2 (2 slots), 3 (2 slots).
        // Block 5: row 4: V = min(2, max(1, 0)) = 1: row 4 and 3 dummies.
        let widths: Vec<usize> = (0..f.blocks()).map(|b| f.block_width(b)).collect();
        assert_eq!(widths, [5, 5, 2, 2, 2, 1]);
        assert_eq!(f.stats().extra[2], ("widened_blocks".into(), 2.0));
        assert_eq!(f.spans(), &[Span { row: 0, first: 0, last: 1 }, Span { row: 1, first: 2, last: 3 }]);
        assert_eq!(&f.row_seg_len()[16..24], &[2, 0, 2, 0, 1, 0, 0, 0]);
        assert!(check(&f, &a));
    }

    #[test]
    fn rows_spanning_three_or_more_blocks() {
        // H = 4, T = 1: every row is at most 2H·T = 8 long, so V = 1 throughout. Row 0
        // fills blocks 0-1, row 1 block 2 and three slots of block 3, row 2 the last slot of
        // block 3, all of block 4 and two slots of block 5: three blocks.
        let a = rows_of(&[8, 7, 7, 2, 1], 32);
        let f = Brcp::with_params(&a, 4, 1).unwrap();
        assert_eq!(f.blocks(), 7);
        assert_eq!(
            f.spans(),
            &[
                Span { row: 0, first: 0, last: 1 },
                Span { row: 1, first: 2, last: 3 },
                Span { row: 2, first: 3, last: 5 },
            ]
        );
        assert_eq!(f.max_blocks_per_row(), 3);
        assert_eq!(&f.row_seg_len()[12..24], &[3, 0, 0, 1, 4, 0, 0, 0, 2, 0, 2, 0]);
        assert!(check(&f, &a));
        let x = test_vector::<f64>(32);
        let mut y = vec![f64::NAN; 5];
        f.spmv_cpu(&x, &mut y);
        let mut serial = vec![0.0; 5];
        a.spmv_serial(&x, &mut serial);
        // Values are multiples of 1/16 and x has 24-bit entries: every order gives the same bits.
        assert_eq!(y, serial);
        // A generous T keeps each row in one block.
        assert_eq!(Brcp::with_params(&a, 4, 100).unwrap().max_blocks_per_row(), 1);
    }

    #[test]
    fn tiles_group_narrow_blocks_and_chunk_wide_ones() {
        assert_eq!(tiles(&[]), (vec![0], vec![]));
        assert_eq!(tiles(&[1; 20]), (vec![0, 20], vec![0]));
        assert_eq!(tiles(&[1; 70]), (vec![0, 32, 64, 70], vec![0, 0, 0]));
        assert_eq!(tiles(&[100, 3, 3, 64, 63]), (vec![WIDE_TILE, 1, 3 | WIDE_TILE, 4, 5], vec![0; 4]));
        // A narrow run cut by a wide block.
        assert_eq!(tiles(&[1, 1, 70, 1]), (vec![0, 2 | WIDE_TILE, 3, 4], vec![0; 3]));
        // Wide blocks of 1024 and 2049 entries per slot: 1 and 3 chunks.
        let (t, c) = tiles(&[2049, 1024, 5]);
        assert_eq!(t, vec![WIDE_TILE, WIDE_TILE, WIDE_TILE, 1 | WIDE_TILE, 2, 3]);
        assert_eq!(c, vec![0, 1, 2, 0, 0]);
    }

    #[test]
    fn very_wide_blocks_are_cut_into_chunks() {
        // One row of 5000 entries and 40 of 30: T = round(μ + σ) = round(151.2 + 766.7) = 918;
        // 5000 is not above 2H·T, so block 0 is V = min(918, 5000) = 918 wide (one chunk)...
        let mut lens = vec![5000];
        lens.extend([30; 40]);
        let a = rows_of(&lens, 6000);
        let f = Brcp::new(&a).unwrap();
        assert_eq!(f.threshold(), 918);
        assert!(!f.has_chunked_blocks());
        // ... and with T = 3000 it is 3000 wide: 3 chunks of 1024.
        let f = Brcp::with_params(&a, 32, 3000).unwrap();
        assert_eq!(f.block_width(0), 3000);
        assert_eq!(&f.tile_chunk()[..3], &[0, 1, 2]);
        assert!(f.has_chunked_blocks());
        let tiles = f.tile_chunk().len();
        assert_eq!(f.device_bytes() - f.bytes_read(), 2 * f.blocks() * 8 + tiles * (32 * 8 + 4));
        assert!(check(&f, &a));
    }

    #[test]
    fn kernel_constants_match_the_rust_side() {
        let src = KERNELS.source;
        assert!(src.contains(&format!("#define BRCP_TILE_WARPS {TILE_WARPS}\n")));
        assert!(src.contains(&format!("#define BRCP_CHUNK {CHUNK_WIDTH}\n")));
        assert!(src.contains(&format!("#define BRCP_WIDE 0x{WIDE_TILE:x}u\n")));
        assert!(src.contains(&format!("#define BRCP_NO_ROW 0x{NO_ROW:x}u\n")));
    }

    #[test]
    fn bad_parameters_are_format_errors() {
        let a = paper_matrix();
        for (h, t) in [(0, 3), (33, 3), (32, 0)] {
            assert!(matches!(Brcp::with_params(&a, h, t), Err(Error::Format { .. })), "H = {h}, T = {t}");
        }
    }

    #[test]
    fn empty_matrices() {
        for (m, n) in [(0, 0), (0, 5), (5, 0), (70, 3)] {
            let a = Csr::<f32>::zeros(m, n);
            let f = Brcp::new(&a).unwrap();
            assert_eq!((f.stored(), f.blocks(), f.empty_rows().len()), (0, 0, m));
            assert_eq!(f.max_blocks_per_row(), 0);
            let mut y = vec![f32::NAN; m];
            f.spmv_cpu(&vec![1.0; n], &mut y);
            assert!(y.iter().all(|&v| v == 0.0));
        }
    }

    /// Power-law-like rows: mostly short, some of hundreds to thousands of entries.
    fn skewed(m: usize, n: usize, seed: u64) -> Csr<f64> {
        let mut state = seed;
        let mut next = |k: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % k
        };
        let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..m {
            let class = next(1000);
            let k = match class {
                0..=199 => 0,
                200..=899 => 1 + next(6),
                900..=989 => next(200),
                _ => next(4000),
            };
            for _ in 0..k {
                rows.push(r as u32);
                cols.push(next(n as u64) as u32);
                vals.push(next(1 << 20) as f64 / (1 << 19) as f64 - 1.0);
            }
        }
        Coo::new_checked(m, n, rows, cols, vals).unwrap().to_csr()
    }

    #[test]
    fn skewed_matrix_matches_the_oracle_with_spans_and_wide_blocks() {
        let a = skewed(20000, 20000, 7);
        let f = Brcp::new(&a).unwrap();
        assert!(check(&f, &a));
        assert!(check(&Brcp::new(&a.cast::<f32>()).unwrap(), &a.cast::<f32>()));
        assert!(!f.spans().is_empty());
        assert!(f.tiles().iter().any(|&t| t & WIDE_TILE != 0), "no wide block");
        // Every slot is accounted for: real slots hold every entry once.
        let real: usize = (0..f.blocks()).map(|b| f.block_nnz[b]).sum();
        assert_eq!(real, a.nnz());
        // Spans are consistent with row_perm.
        for s in f.spans() {
            let h = f.block_rows();
            assert_eq!(f.row_perm()[s.first as usize * h + h - 1], s.row);
            assert_eq!(f.row_perm()[s.last as usize * h], s.row);
        }
        for (h, t) in [(32, 1), (32, 5), (7, 3), (1, 2)] {
            let g = Brcp::with_params(&a, h, t).unwrap();
            assert!(check(&g, &a), "H = {h}, T = {t}");
        }
    }

    #[test]
    fn cpu_result_is_bit_reproducible() {
        let a = skewed(20000, 20000, 11);
        let f = Brcp::with_params(&a, 32, 3).unwrap();
        assert!(f.max_blocks_per_row() >= 3);
        let x: Vec<f64> = (0..a.ncols()).map(|i| 1.0 / (i as f64 + 3.0)).collect();
        let run = || {
            let mut y = vec![f64::NAN; a.nrows()];
            f.spmv_cpu(&x, &mut y);
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        let first = run();
        for _ in 0..5 {
            assert_eq!(run(), first);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn random_matrices_match_the_oracle(a in random_csr(), h in 1usize..=32, t in 1usize..20) {
            let f = Brcp::with_params(&a, h, t).unwrap();
            prop_assert!(check(&f, &a));
            prop_assert_eq!(*f.block_ptr().last().unwrap() as usize, f.stored());
            prop_assert_eq!(f.row_perm().len(), f.blocks() * h);
            prop_assert_eq!(f.block_nnz.iter().sum::<usize>(), a.nnz());
            prop_assert_eq!(f.empty_rows().len(), (0..a.nrows()).filter(|&r| a.row_len(r) == 0).count());
            // Each row's slots are consecutive, and row_seg_len sums to the real slots.
            let real = f.row_perm().iter().filter(|&&r| r != NO_ROW).count();
            prop_assert_eq!(f.row_seg_len().iter().map(|&l| l as usize).sum::<usize>(), real);
            let a32: Csr<f32> = a.cast();
            prop_assert!(check(&Brcp::with_params(&a32, h, t).unwrap(), &a32));
            prop_assert!(check(&Brcp::new(&a).unwrap(), &a));
        }
    }
}
