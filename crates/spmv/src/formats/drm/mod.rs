//! DRM (divide, rearrange & merge; Wang et al. 2024, papers/004): segments of `nrows` rows
//! stored DIA-style, regrouped by Algorithm 1 into sub-blocks of similar operand counts,
//! one CUDA block per sub-block.
//!
//! 1. **Divide.** The rows are cut into segments of `nrows` rows (32 in the registered
//!    format, as in the paper; the last segment may be short). Segment `h` stores only the
//!    `dig_h` diagonals it touches, `nrows` slots each: `ope_h = dig_h × nrows` operands
//!    (entries plus padded zeros; the padding of a short last segment included).
//! 2. **Rearrange & merge** ([`merge::rearrange_and_merge`], Algorithm 1): small segments
//!    are merged while the largest count exceeds twice the two smallest, an odd count merges
//!    once more, then the largest group is paired with the smallest, the second with the
//!    second smallest ...: each pair is a sub-block. A sub-block of more than `1024 / nrows`
//!    segments (over 1024 rows, the most threads of a CUDA block) is split into the fewest
//!    parts of at most that many, as equal as possible ([`merge::split_large`]).
//! 3. **Storage**, the paper's five arrays, segments in merged order (sub-block after
//!    sub-block; the sub-blocks themselves are stored by descending segment count, so that
//!    the sub-blocks of one size are consecutive):
//!    - `drm_val`: each segment's diagonals, `nrows` slots each: the slot of local row `l`
//!      on stored diagonal `i` (counted over all segments) is `drm_val[i·nrows + l]`;
//!    - `drm_off`: the offset of each stored diagonal;
//!    - `drm_dnum`: cumulative diagonal count per segment (segment `k` in merged order holds
//!      diagonals `drm_dnum[k] .. drm_dnum[k+1]`);
//!    - `drm_index`: the original segment of each segment in merged order;
//!    - `drm_blo`: cumulative segment count per sub-block.
//!
//! The example matrix of [`dia`](super::dia) with segments of 2 rows (the paper's Fig. 5–9
//! use nrows = 2 too): segment operands P = {2, 4, 8, 6}; 8 > 2·2 but not 8 > 2·4, so
//! nothing merges; |P| = 4 is even; pairs (8, 2) and (6, 4) give two sub-blocks of 10
//! operands each (variance 0, against HDIA's 5 per hack):
//! ```text
//!      c0 c1 c2 c3 c4 c5 c6 c7
//! r0 |  1  .  .  .  .  .  .  . |   segment 0: {0}            2 operands
//! r1 |  .  2  .  .  .  .  .  . |
//! r2 |  .  .  3  4  .  .  .  . |   segment 1: {0, 1}         4
//! r3 |  .  .  .  5  6  .  .  . |
//! r4 |  .  .  7  .  8  9  . 10 |   segment 2: {-2, 0, 1, 3}  8
//! r5 |  .  .  . 11  . 12 13  . |
//! r6 |  .  .  .  . 14  . 15 16 |   segment 3: {-2, 0, 1}     6
//! r7 |  .  .  .  .  . 17  . 18 |
//!
//! sub-blocks = {segments 2, 0}, {segments 3, 1}
//! drm_blo    = [0, 2, 4]
//! drm_index  = [2, 0, 3, 1]
//! drm_dnum   = [0, 4, 5, 8, 10]
//! drm_off    = [-2, 0, 1, 3 | 0 | -2, 0, 1 | 0, 1]
//! drm_val    = [7, 11, 8, 12, 9, 13, 10, 0 | 1, 2 | 14, 17, 15, 18, 16, 0 | 3, 5, 4, 6]
//! ```
//!
//! **Kernel** (Algorithm 2). One CUDA block per sub-block, one thread per row: thread `tid`
//! of block `bid` takes segment `rnum = tid / nrows` of the sub-block, `rinx = drm_blo[bid] +
//! rnum`, row `drm_index[rinx]·nrows + tid mod nrows`, and adds `drm_val[i·nrows + tid mod
//! nrows] · x[row + drm_off[i]]` over `i` in `drm_dnum[rinx] .. drm_dnum[rinx+1]`, then writes
//! `y[row]`. Edge guards: threads past the sub-block's segments (the paper's
//! `rnum < drm_blo[bid+1] − drm_blo[bid]`), rows past the matrix (short last segment) and
//! columns outside the matrix are skipped. **Launches** ([`Drm::launch_plan`]): the paper's
//! guard implies one launch whose block size fits the largest sub-block, smaller sub-blocks
//! leaving threads idle. That is what runs when the whole grid fits on the GPU at once
//! (sub-blocks × largest block ≤ the device's resident threads, 132 × 2048 on the H200):
//! idle threads then cost nothing, and separate launches would only run one after the
//! other. A larger grid gets one launch per distinct segment count instead (each a run of
//! consecutive sub-blocks: they are stored by descending size), so that no block carries
//! idle warps: with sub-blocks of 32 segments beside pairs, a uniform block of 1024
//! threads would leave most of the GPU's thread slots idle. The statistics report the
//! number of sizes (`size_classes`). Rows add their diagonals in ascending order, one
//! thread per row: deterministic. The CPU path runs the sub-blocks in parallel with the
//! same per-segment block product as HDIA.
//!
//! DRM stores exactly HDIA's slots (same segments, reordered), so its padding equals HDIA's
//! with hacks of `nrows` rows, as the paper notes; what it changes is how the work is cut
//! into thread blocks. It is only meant for diagonal-structured matrices: it obeys the
//! family's padding limit (see [`dia`](super::dia)) and refuses anything beyond it.

mod cpu;
mod gpu;
pub mod merge;

use std::time::Instant;

use super::dia::diagonals::{self, OperandSpread, SegmentBlocks, SEGMENT_ROWS};
use super::{FormatInfo, Param};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The format's CUDA kernels (`kernel.cu`, after the diagonal family's `diagonals.cuh`).
pub const KERNELS: KernelModule = KernelModule {
    name: "drm",
    source: include_str!("kernel.cu"),
    headers: &[diagonals::CUDA_HEADER],
};

const NAME: &str = "drm";

/// Most threads of a CUDA block: sub-blocks are split to at most this many rows.
pub const MAX_SUB_BLOCK_ROWS: usize = 1024;

/// A run of consecutive sub-blocks launched together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// First sub-block of the run.
    pub first: u32,
    /// Sub-blocks in the run (the grid size).
    pub sub_blocks: u32,
    /// Segments per CUDA block (the block size is this times `nrows`): the run's largest.
    pub segments: u32,
}

/// A matrix in DRM (see the module doc for the layout).
pub struct Drm<T> {
    nrows: usize,
    /// Rows per segment (the paper's nrows).
    seg_rows: usize,
    /// `drm_blo`.
    blo: Vec<u32>,
    /// `drm_index`.
    index: Vec<u32>,
    /// `drm_dnum`, `drm_off`, `drm_val`.
    blocks: SegmentBlocks<T>,
    launches: Vec<Launch>,
    /// Slots whose row and column lie inside the matrix (what the kernel reads of `drm_val`).
    in_range: usize,
    segment_spread: OperandSpread,
    sub_block_spread: OperandSpread,
    conversion: diagonals::Conversion,
}

impl<T: Scalar> Drm<T> {
    /// Converts from CSR with segments of 32 rows (the paper's setting).
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_segment_rows(a, SEGMENT_ROWS)
    }

    /// Converts from CSR with segments of `seg_rows` rows, `1 ≤ seg_rows ≤ 1024`; refuses
    /// beyond the family's padding limit.
    pub fn with_segment_rows(a: &Csr<T>, seg_rows: usize) -> Result<Self> {
        diagonals::check_shape(NAME, a)?;
        if seg_rows == 0 || seg_rows > MAX_SUB_BLOCK_ROWS {
            return Err(Error::format(
                NAME,
                format!(
                    "{seg_rows} rows per segment: a segment must have 1 to {MAX_SUB_BLOCK_ROWS} rows (one CUDA block)"
                ),
            ));
        }
        let (m, n, h) = (a.nrows(), a.ncols(), seg_rows);

        // 1. Divide.
        let (seg_diagonals, divide_ms) = diagonals::scan_segments(NAME, a, h, "DRM", "segments")?;

        // 2. Rearrange & merge, split, and order the sub-blocks by size for the launches.
        let t = Instant::now();
        let operands: Vec<u64> = seg_diagonals.iter().map(|o| (o.len() * h) as u64).collect();
        let mut sub_blocks =
            merge::split_large(merge::rearrange_and_merge(&operands), MAX_SUB_BLOCK_ROWS / h);
        sub_blocks.sort_by_key(|b| std::cmp::Reverse(b.len())); // stable: pairing order within a size
        let mut blo = Vec::with_capacity(sub_blocks.len() + 1);
        blo.push(0u32);
        let mut launches: Vec<Launch> = Vec::new();
        for (k, b) in sub_blocks.iter().enumerate() {
            blo.push(blo[k] + b.len() as u32);
            match launches.last_mut() {
                Some(l) if l.segments as usize == b.len() => l.sub_blocks += 1,
                _ => launches.push(Launch {
                    first: k as u32,
                    sub_blocks: 1,
                    segments: b.len() as u32,
                }),
            }
        }
        let sub_block_spread = OperandSpread::of(
            sub_blocks.iter().map(|b| b.iter().map(|&s| operands[s as usize]).sum()),
        );
        let index: Vec<u32> = sub_blocks.concat();
        let merge_ms = ms_since(t);

        // 3. Storage.
        let t = Instant::now();
        let blocks = diagonals::build_segments(a, h, &seg_diagonals, &index);
        let in_range = diagonals::segment_slots_in_range(&seg_diagonals, h, m, n);
        let phases = [("divide_ms", divide_ms), ("merge_ms", merge_ms), ("fill_ms", ms_since(t))];
        Ok(Drm {
            nrows: m,
            seg_rows: h,
            blo,
            index,
            blocks,
            launches,
            in_range,
            segment_spread: OperandSpread::of(operands.iter().copied()),
            sub_block_spread,
            conversion: diagonals::Conversion::of(a, phases),
        })
    }

    /// Rows per segment (the paper's nrows).
    pub fn segment_rows(&self) -> usize {
        self.seg_rows
    }
    /// Number of segments (⌈m / nrows⌉).
    pub fn segments(&self) -> usize {
        self.index.len()
    }
    /// Number of sub-blocks after rearranging and merging (one CUDA block each).
    pub fn sub_blocks(&self) -> usize {
        self.blo.len() - 1
    }
    /// `drm_blo`: cumulative segment count per sub-block.
    pub fn drm_blo(&self) -> &[u32] {
        &self.blo
    }
    /// `drm_index`: original segment of each segment in merged order.
    pub fn drm_index(&self) -> &[u32] {
        &self.index
    }
    /// `drm_dnum`: cumulative diagonal count per segment in merged order.
    pub fn drm_dnum(&self) -> &[u32] {
        &self.blocks.diag_ptr
    }
    /// `drm_off`: offset of each stored diagonal.
    pub fn drm_off(&self) -> &[i32] {
        &self.blocks.offsets
    }
    /// `drm_val`: `nrows` slots per stored diagonal.
    pub fn drm_val(&self) -> &[T] {
        &self.blocks.values
    }
    /// Runs of sub-blocks of one segment count, largest first (the size classes).
    pub fn launches(&self) -> &[Launch] {
        &self.launches
    }
    /// The launches for a device holding `resident_threads` threads at once: a single
    /// launch sized for the largest sub-block when its grid fits, else one per size class
    /// (see the module doc).
    pub fn launch_plan(&self, resident_threads: usize) -> Vec<Launch> {
        match self.launches.first() {
            Some(&largest) if self.launches.len() > 1 => {
                let threads = self.sub_blocks() * largest.segments as usize * self.seg_rows;
                if threads <= resident_threads {
                    return vec![Launch {
                        first: 0,
                        sub_blocks: self.sub_blocks() as u32,
                        segments: largest.segments,
                    }];
                }
                self.launches.clone()
            }
            _ => self.launches.clone(),
        }
    }
    /// Stored slots, padding included.
    pub fn stored(&self) -> usize {
        self.blocks.values.len()
    }
    /// Operands per sub-block (the GPU's thread blocks).
    pub fn operand_spread(&self) -> OperandSpread {
        self.sub_block_spread
    }
    /// Operands per segment, before merging (= HDIA's per hack).
    pub fn segment_operand_spread(&self) -> OperandSpread {
        self.segment_spread
    }
    fn index_bytes(&self) -> usize {
        4 * (self.blo.len()
            + self.index.len()
            + self.blocks.diag_ptr.len()
            + self.blocks.offsets.len())
    }
    /// Device bytes of the five arrays.
    pub fn device_bytes(&self) -> usize {
        self.index_bytes() + std::mem::size_of::<T>() * self.stored()
    }
}

impl<T: Scalar> SpmvFormat<T> for Drm<T> {
    fn stats(&self) -> FormatStats {
        let own = [
            ("segment_rows", self.seg_rows as f64),
            ("segments", self.segments() as f64),
            ("sub_blocks", self.sub_blocks() as f64),
            ("size_classes", self.launches.len() as f64),
            ("max_segments_per_sub_block", self.launches.first().map_or(0, |l| l.segments) as f64),
            ("diagonals", self.blocks.offsets.len() as f64),
        ];
        let spreads =
            [("operand", self.sub_block_spread), ("segment_operand", self.segment_spread)];
        self.conversion.stats(self.device_bytes(), self.stored(), own, &spreads)
    }
    /// All but the slots outside the matrix.
    fn bytes_read(&self) -> usize {
        self.index_bytes() + std::mem::size_of::<T>() * self.in_range
    }
    super::cpu_and_device!(gpu::DeviceDrm::new);
}

/// The registry's entry for `drm` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "drm",
        "DRM, DIA segments of segment_rows rows (default 32) merged into balanced sub-blocks (Algorithm 1), one CUDA block per sub-block",
        |a, s| Ok(Box::new(Drm::with_segment_rows(a, s.usize("segment_rows", 1)?)?)),
    )
    .params(&[Param { key: "segment_rows", default: "32", doc: "rows per DIA segment (1..=1024)" }])
    .kernels(&[KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests;
