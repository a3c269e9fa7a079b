//! Merge-path CSR (Merrill & Garland, SC 2016): plain CSR, with the work split into equal
//! pieces of the *merge path* of the row ends and the entries, so that every warp and every
//! thread does the same amount of work however the row lengths are spread.
//!
//! **The merge path.** Merging the list of row ends (`row_ptr[1..]`, `m` items) with the list
//! of entry positions (`0..nnz`) visits `m + nnz` items: at position `(i, j)` (row `i`, entry
//! `j`) the next item is the entry `j` if `j < row_ptr[i + 1]` (it belongs to row `i`), else
//! the end of row `i`. Any diagonal `d` of the path (`i + j = d`) is found by a binary search
//! on `row_ptr`, so the path can be cut into equal pieces without reading it.
//!
//! **Tiles and threads.** A *tile* is one warp's share: `32 · items` consecutive items of the
//! path (`items` per lane, the spec's parameter). The conversion computes where every tile
//! starts (`tile_row`, one binary search per tile: the only preprocessing, timed as
//! `preprocess_ms`), and which rows cross tile boundaries (`segments`, below). In a launch a
//! warp loads its tile's products `a_ij · x_j` (coalesced) and row ends into shared memory;
//! each lane finds its own start by a binary search there and walks its `items` items: an
//! entry adds its product to the running sum, a row end writes the row and restarts the sum.
//!
//! **Rows that cross lanes and tiles (the carry-out), deterministically** ([`super::carry`]).
//! A lane's running sum at its end is its *carry* for the row it is in. The first row a lane
//! ends may have begun in earlier lanes: a segmented inclusive scan of the carries over the
//! warp's 32 lanes (keyed by the carry's row) gives every lane the sum of the carries of the
//! lanes before it in the same row, which the lane adds to its own part. Lane 31's scan value
//! is the tile's carry for its last row. A row that crosses tiles is finished by a second,
//! small kernel: for each *segment* (a row and the run of consecutive tiles that carry a part
//! of it, found at conversion), one warp sums those tiles' carries and adds the part that the
//! tile completing the row left in `tile_head`; only then is the row written, so it is rounded
//! once (f16 too). No atomics and every sum has a fixed order: the result is bitwise identical
//! from run to run, and the CPU path (`cpu.rs`) reproduces it bit for bit (products are
//! rounded on their own on both sides, so no fused multiply-add differs).
//!
//! Worked example (a test: `tests.rs`), with 3 items per lane and 2 lanes per tile (the GPU
//! has 32 lanes; the arithmetic is the same):
//!
//! ```text
//!     | 1 . 2 . |      row_ptr = [0, 2, 2, 5, 6, 8]      row ends (R0..R4) = 2, 2, 5, 6, 8
//!     | . . . . |      col_idx = [0, 2, 0, 1, 2, 1, 2, 3]
//! A = | 3 4 5 . |      values  = [1, 2, 3, 4, 5, 6, 7, 8]      entries e0..e7
//!     | . 6 . . |
//!     | . . 7 8 |      merge path (13 items): e0 e1 R0 R1 e2 e3 | e4 R2 e5 R3 e6 e7 | R4
//!
//! tiles of 6 items: tile_row = [0, 2, 4, 5]  (the row at diagonals 0, 6, 12, 13)
//! tile 0: lane 0 = e0 e1 R0 -> y0 = 1·x0 + 2·x2;  lane 1 = R1 e2 e3 -> y1 = 0, carry 3·x0 + 4·x1 (row 2)
//! tile 1: lane 0 = e4 R2 e5 -> row 2 began in tile 0: tile_head[1] = 5·x2, carry 6·x1 (row 3)
//!         lane 1 = R3 e6 e7 -> y3 = 0 + scan(lane 0) = 6·x1, carry 7·x2 + 8·x3 (row 4)
//! tile 2: lane 0 = R4       -> row 4 began in tile 1: tile_head[2] = 0
//! segments (row, tiles carrying it): (2, tile 0), (4, tile 1)
//! fixup: y2 = tile_head[1] + (3·x0 + 4·x1),  y4 = tile_head[2] + (7·x2 + 8·x3)
//! ```
//!
//! Tiles whose last row has no entry in them carry nothing and are left out of the segments
//! (their carry is exactly zero). Rows and tiles are 32-bit on the device; the row offsets and
//! the path's coordinates are 32-bit while `m + nnz` stays below 2^31 and 64-bit from there on
//! ([`OffsetWidth`]; the row ends a tile stages are counted from its first entry, so they
//! stay 32-bit either way).

mod cpu;
mod gpu;

use std::time::Instant;

use rayon::prelude::*;

pub use super::carry::Segment;
use super::offsets::OffsetWidth;
use super::{offsets, FormatInfo, Param};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The format's tile walk (`merge_csr.cuh`) after the shared carry code (`carry.cuh`).
const HEADERS: &[&str] = &[super::carry::CUDA_HEADER, include_str!("merge_csr.cuh")];
/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "merge_csr", source: include_str!("kernel.cu"), headers: HEADERS };
/// The block kernels (`Y = α·A·X + β·Y`, 8 columns per launch, `block.cu`): a module of its
/// own, compiled on the first block product.
pub const BLOCK_KERNELS: KernelModule =
    KernelModule { name: "merge_csr_block", source: include_str!("block.cu"), headers: HEADERS };

const NAME: &str = "merge-csr";

/// Lanes per tile on the GPU (one warp).
const WARP: usize = 32;

/// The values of `items` (merge items per lane) that have kernels.
pub const ITEMS_CHOICES: &[usize] = &[3, 5, 7, 9, 11, 15];

/// `items` when the spec says `auto`: the fastest on the default set's large generated
/// matrices in f64 and f32 on the H200 (docs/load-balanced.md).
pub const DEFAULT_ITEMS: usize = 9;

/// A CSR matrix with its merge-path tiles.
pub struct MergeCsr<T> {
    csr: Csr<T>,
    /// Merge items per lane.
    items: usize,
    /// Lanes per tile: 32 on the GPU; smaller only in tests of the layout.
    lanes: usize,
    /// The width of the device row offsets and path coordinates.
    offsets: OffsetWidth,
    /// Row coordinate of the path at each tile's first diagonal, and at the path's end.
    tile_row: Vec<u32>,
    segments: Vec<Segment>,
    preprocess_ms: f64,
}

impl<T: Scalar> MergeCsr<T> {
    /// Tiles of 32 lanes with `items` merge items each (one of [`ITEMS_CHOICES`]).
    pub fn new(a: &Csr<T>, items: usize) -> Result<Self> {
        if !ITEMS_CHOICES.contains(&items) {
            return Err(Error::Unsupported(format!(
                "format {NAME}: parameter items={items} must be one of {} or auto",
                ITEMS_CHOICES.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            )));
        }
        Self::with_lanes(a, items, WARP)
    }

    /// The same with `lanes` lanes per tile (the CPU path only; the worked example uses 2).
    fn with_lanes(a: &Csr<T>, items: usize, lanes: usize) -> Result<Self> {
        let path = a.nrows() as u64 + a.nnz() as u64;
        let tile = (items * lanes) as u64;
        // Rows and tile indices are 32-bit on the device; path coordinates (rows + entries,
        // up to the end of the last partial tile) take the offsets' width.
        if a.nrows() > u32::MAX as usize {
            return Err(Error::format(
                NAME,
                format!("{} rows exceed 32-bit row indices", a.nrows()),
            ));
        }
        let offsets = OffsetWidth::auto((path + tile) as usize);
        let start = Instant::now();
        let tiles = path.div_ceil(tile) as usize;
        let tile_row: Vec<u32> = (0..=tiles)
            .into_par_iter()
            .map(|t| merge_path_row(a.row_ptr(), ((t as u64 * tile).min(path)) as usize) as u32)
            .collect();
        let segments = segments(a.row_ptr(), &tile_row, tile as usize);
        let preprocess_ms = ms_since(start);
        Ok(MergeCsr { csr: a.clone(), items, lanes, offsets, tile_row, segments, preprocess_ms })
    }

    /// The same with row offsets and path coordinates of `offsets` bits (refused when 32
    /// bits cannot hold rows + entries).
    pub fn with_offsets(mut self, offsets: OffsetWidth) -> Result<Self> {
        let items = self.csr.nrows() + self.csr.nnz() + self.tile_items();
        self.offsets = offsets.fits(NAME, items)?;
        Ok(self)
    }
    /// Merge items (row ends and entries) per lane.
    pub fn items(&self) -> usize {
        self.items
    }
    /// Merge items per tile.
    pub fn tile_items(&self) -> usize {
        self.items * self.lanes
    }
    /// Number of tiles along the merge path.
    pub fn tiles(&self) -> usize {
        self.tile_row.len() - 1
    }
    /// Row coordinate of the path at each tile's start, then at its end (`tiles + 1` entries).
    pub fn tile_row(&self) -> &[u32] {
        &self.tile_row
    }
    /// The rows that cross tile boundaries, with the tiles carrying a part of each.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// CSR (row offsets of the chosen width), plus `tile_row`, the segments (3 × u32 each) and
    /// the per-tile carries and heads (two accumulators per tile).
    pub fn device_bytes(&self) -> usize {
        let acc = std::mem::size_of::<T::Acc>();
        let a = &self.csr;
        let csr = self.offsets.bytes() * (a.nrows() + 1) + (4 + std::mem::size_of::<T>()) * a.nnz();
        csr + 4 * self.tile_row.len() + 12 * self.segments.len() + 2 * acc * self.tiles()
    }
}

/// The row `i` of the merge path at diagonal `d`: the number of row ends among the path's
/// first `d` items. (A binary search over `row_ptr`, the paper's MergePathSearch.)
pub(crate) fn merge_path_row(row_ptr: &[usize], d: usize) -> usize {
    let (m, nnz) = (row_ptr.len() - 1, row_ptr[row_ptr.len() - 1]);
    let (mut lo, mut hi) = (d.saturating_sub(nnz), d.min(m));
    while lo < hi {
        let mid = (lo + hi) / 2;
        // Row end `mid` comes before entry `d - mid - 1` on the path: at least mid + 1 row ends.
        if row_ptr[mid + 1] < d - mid {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// [`merge_path_row`] inside a tile: the local row at the tile's diagonal `dl`, for a tile of
/// `rows` row ends (`row_end(li)`, absolute entry positions) and `entries` entries from `j0`.
pub(crate) fn merge_path_row_local(
    row_end: &impl Fn(usize) -> usize, rows: usize, entries: usize, j0: usize, dl: usize,
) -> usize {
    let (mut lo, mut hi) = (dl.saturating_sub(entries), dl.min(rows));
    while lo < hi {
        let mid = (lo + hi) / 2;
        if row_end(mid) < j0 + dl - mid {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The rows that cross tile boundaries and the runs of tiles carrying a part of each. A tile
/// carries its last row (`tile_row[t + 1]`) when that row has an entry in the tile.
fn segments(row_ptr: &[usize], tile_row: &[u32], tile: usize) -> Vec<Segment> {
    let m = row_ptr.len() - 1;
    let mut out: Vec<Segment> = Vec::new();
    for t in 0..tile_row.len() - 1 {
        let row = tile_row[t + 1] as usize;
        let tile_end = ((t + 1) * tile).min(m + row_ptr[m]);
        let entry_end = tile_end - row; // j at the tile's end
        if row >= m || entry_end <= row_ptr[row] {
            continue; // past the last row, or the row has no entry in this tile
        }
        super::carry::push_carry(&mut out, t, row as u32);
    }
    out
}

impl<T: Scalar> SpmvFormat<T> for MergeCsr<T> {
    fn stats(&self) -> FormatStats {
        FormatStats::unpadded(&self.csr, self.device_bytes()).with([
            ("items_per_lane", self.items as f64),
            ("tiles", self.tiles() as f64),
            ("segments", self.segments.len() as f64),
            ("offset_bytes", self.offsets.bytes() as f64),
            ("preprocess_ms", self.preprocess_ms),
        ])
    }
    super::cpu_and_device!(gpu::DeviceMergeCsr::new);
}

/// The registry's entry for `merge-csr` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "merge-csr",
        "merge-path CSR (Merrill & Garland): equal shares of row ends + entries per lane, carries fixed up deterministically",
        |a, s| {
            let items = s.auto_usize("items", 1)?.unwrap_or(DEFAULT_ITEMS);
            let merge = MergeCsr::new(a, items)?;
            Ok(Box::new(match OffsetWidth::requested(s)? {
                Some(width) => merge.with_offsets(width)?,
                None => merge,
            }))
        },
    )
    .params(&[Param { key: "items", default: "auto", doc: "merge items per lane: 3, 5, 7, 9, 11 or 15 (auto: 9)" }, offsets::OFFSETS])
    .kernels(&[KERNELS, BLOCK_KERNELS])
    .deterministic()
    .half()
    .wide()
}

#[cfg(test)]
mod tests;
