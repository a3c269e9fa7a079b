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

use std::time::Instant;

use rayon::prelude::*;

use super::brc::{
    block_offsets, coefficient_of_variation, fill_lane, sorted_rows, threshold, BlockArrays,
    NO_ROW, WARP_BLOCK_ROWS,
};
use super::{auto_or, brc, FormatInfo, Param, RowFigures};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "brcp", source: include_str!("kernel.cu"), headers: &[] };

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
    /// The original row.
    pub row: u32,
    /// The block its first slot is in (its run there is stored to `leave[first]`).
    pub first: u32,
    /// The block its last slot is in.
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

/// A matrix in BRCP (see the module doc for the layout and the determinism): its blocks
/// ([`BlockArrays`], which it dereferences to) and BRCP's own arrays and figures.
pub struct Brcp<T> {
    nrows: usize,
    rows: RowFigures,
    /// Width cap (T).
    threshold: usize,
    arrays: BlockArrays<T>,
    row_seg_len: Vec<u8>,
    empty_rows: Vec<u32>,
    spans: Vec<Span>,
    tiles: Vec<u32>,
    tile_chunk: Vec<u32>,
    widened_blocks: usize,
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
            return Err(Error::format(
                NAME,
                format!("H = {block_rows} slots per block: H must be in 1..=32"),
            ));
        }
        if threshold == 0 {
            return Err(Error::format(NAME, "T = 0: a block must be at least one entry wide"));
        }
        let h = block_rows;

        let start = Instant::now();
        let mut sorted = sorted_rows(NAME, a)?;
        let nonempty = sorted.partition_point(|&r| a.row_len(r as usize) > 0);
        let empty_rows = sorted.split_off(nonempty);
        let lens: Vec<usize> = sorted.par_iter().map(|&r| a.row_len(r as usize)).collect();
        let sort_ms = ms_since(start);

        let start = Instant::now();
        let starts = layout(&lens, h, threshold);
        let blocks = starts.len();
        if blocks >= WIDE_TILE as usize {
            return Err(Error::format(
                NAME,
                format!("{blocks} blocks exceed the 2^31 that the tile list addresses"),
            ));
        }
        let block_ptr = block_offsets(starts.iter().map(|s| s.width), h).ok_or_else(|| {
            Error::format(
                NAME,
                format!(
                    "{nnz} entries in blocks of {h} slots need more than 2^32 - 1 stored slots"
                ),
            )
        })?;
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
        let layout_ms = ms_since(start);

        let start = Instant::now();
        let mut row_seg_len = vec![0u8; blocks * h];
        let arrays =
            BlockArrays::fill(h, &block_ptr, &mut row_seg_len, |b, rows, segs, cols, vals| {
                let BlockStart { row: mut idx, mut done, width, .. } = starts[b];
                let mut entries = 0;
                for (lane, slot_row) in rows.iter_mut().enumerate() {
                    if idx == sorted.len() {
                        break; // dummy slots: NO_ROW, zeros
                    }
                    let (rc, rv) = a.row(sorted[idx] as usize);
                    let take = width.min(rc.len() - done);
                    fill_lane(cols, vals, (h, lane, width), (rc, rv), (done, take));
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
            });
        let fill_ms = ms_since(start);

        Ok(Brcp {
            nrows: m,
            rows: RowFigures::of(a),
            threshold,
            arrays,
            row_seg_len,
            empty_rows,
            spans,
            tiles,
            tile_chunk,
            widened_blocks: starts.iter().filter(|s| s.widened).count(),
            sort_ms,
            layout_ms,
            fill_ms,
        })
    }

    /// Width cap (T).
    pub fn threshold(&self) -> usize {
        self.threshold
    }
    /// Length of each run of one row's slots inside a block, at its first slot; 0 elsewhere.
    pub fn row_seg_len(&self) -> &[u8] {
        &self.row_seg_len
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
    /// Device bytes: `block_ptr`, `row_perm`, `col_idx`, `empty_rows`, `tiles`,
    /// `tile_chunk`, the spans (3 × `u32` each) and the `enter`/`leave` partial sums (2 per
    /// block), `row_seg_len` (`u8`), `values` and, when a block has several chunks, 32 lane
    /// sums and a `u32` counter per tile.
    pub fn device_bytes(&self) -> usize {
        self.arrays.device_bytes()
            + 4 * (self.empty_rows.len()
                + self.tiles.len()
                + self.tile_chunk.len()
                + 3 * self.spans.len())
            + self.row_seg_len.len()
            + 2 * self.blocks() * std::mem::size_of::<T>()
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

impl<T> std::ops::Deref for Brcp<T> {
    type Target = BlockArrays<T>;
    fn deref(&self) -> &BlockArrays<T> {
        &self.arrays
    }
}

impl<T: Scalar> SpmvFormat<T> for Brcp<T> {
    fn stats(&self) -> FormatStats {
        let wide_tiles = self.tiles.iter().filter(|&&t| t & WIDE_TILE != 0).count();
        let wide = self
            .tile_chunk
            .iter()
            .zip(&self.tiles)
            .filter(|&(&c, &t)| c == 0 && t & WIDE_TILE != 0)
            .count();
        self.rows.stats(self.device_bytes(), self.stored()).with([
            ("threshold", self.threshold as f64),
            ("blocks", self.blocks() as f64),
            ("widened_blocks", self.widened_blocks as f64),
            ("wide_blocks", wide as f64),
            ("wide_chunks", wide_tiles as f64),
            ("spanning_rows", self.spans.len() as f64),
            ("max_blocks_per_row", self.max_blocks_per_row() as f64),
            ("block_nnz_cv", coefficient_of_variation(self.block_nnz())),
            ("sort_ms", self.sort_ms),
            ("layout_ms", self.layout_ms),
            ("fill_ms", self.fill_ms),
        ])
    }
    /// What one product reads: everything but the written workspaces (`enter`/`leave`, the
    /// chunks' lane sums and counters).
    fn bytes_read(&self) -> usize {
        self.device_bytes()
            - 2 * self.blocks() * std::mem::size_of::<T>()
            - self.chunk_workspace_bytes()
    }
    super::cpu_and_device!(gpu::DeviceBrcp::new);
}

/// The registry's entry for `brcp` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "brcp",
        "BRCP: sorted rows filled row-major into blocks of 32 slots (the paper's width rule), warp segmented sum, rows across blocks summed in block order; deterministic",
        |a, s| {
            let with_threshold = |t| Brcp::with_params(a, brc::WARP_BLOCK_ROWS, t);
            auto_or(s, "threshold", 1, || Brcp::new(a), with_threshold)
        },
    )
    .params(&[Param { key: "threshold", default: "auto", doc: "T, the widest block (≥ 1; auto: round(mean + sd) of the row lengths)" }])
    .kernels(&[KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests;
