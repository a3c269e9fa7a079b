//! PBC, partition-block-CSR (Cui et al., J. Supercomputing 2022), as the TEB paper describes
//! it (`../shared/papers/000` §2.2, digest `FORMATS.md` §2): the rows are reordered, every
//! candidate partition into blocks is scored by the standard deviation of the blocks' nnz,
//! and the partition with the smallest one is stored, one thread block per block.
//!
//! The TEB paper names five arrays: the reordered values (`values`, its Val_Data), the
//! reordered row indices (`perm`, Dev_blockPos), each block's largest row length
//! (`block_width`, Dev_w), each block's row offset (`block_row_ptr`, Dev_p) and the column
//! indices (`col_idx`, Dev_offset). A per-block width only means something if a block is
//! stored padded to it, so each block is an ELL array of its own width, column-major; the
//! sixth array `block_slot_ptr` (each block's first slot) is the prefix sum the kernel
//! would otherwise recompute.
//!
//! **Rules this code had to choose** (the original paper was not available; the TEB paper
//! gives only the outline above, and its Fig. 3–4 are images):
//! 1. Reordering: rows sorted by length, longest first, stably (TEB's order). Blocks are
//!    runs of consecutive sorted rows, so the rows of a block have similar lengths and the
//!    padding to the block's width stays small.
//! 2. Candidate partitions: for a block count P, cut i (1 ≤ i < P) goes to the row boundary
//!    whose prefix nnz is nearest to i·NNZ/P (the earlier boundary on a tie). P ranges over
//!    TEB's whole-wave counts ([`teb::partition::wave_counts`]: 2..=min(m, 132) for small
//!    matrices, multiples of the H200's 132 SMs up to one block per 32 rows otherwise), so
//!    both formats are searched over the same counts. Counts below one wave are not tried
//!    on large matrices: PBC has no eq. (10) stop, and with a standard deviation that is
//!    nearly flat in P the minimum could otherwise land on a count that idles most SMs.
//! 3. The partition with the smallest standard deviation (eq. 5's variance, square-rooted)
//!    is kept; ties keep the smaller count.
//! 4. A block's padding slots hold 0 and a valid column (the row's last one, or 0). A
//!    conversion whose slots exceed 20·nnz (and 2^20) is refused like ELL's
//!    ([`ell::PADDING_LIMIT_RATIO`]), e.g. a block that mixes one long row with many short
//!    ones.
//! 5. Kernel: thread block b takes PBC block b, thread t its row t (looping over rows
//!    t + blockDim, ...); threads per block as TEB's: the mean rows per block rounded up to a
//!    warp, within 32..=1024. One thread per row, fixed order: deterministic.
//!
//! Matrix A of the TEB paper's Fig. 1 (see [`teb`]): sorted rows R7:4 R0:3 R2:2 R3:2 R5:2
//! R1:1 R4:1 R6:1, prefix nnz 0 4 7 9 11 13 14 15 16. Of P = 2..=8 the smallest variance is
//! P = 4 (cuts at 4, 8, 12 → boundaries 1, 2, 4; S² = 0.5):
//! ```text
//! perm           = [7, 0, 2, 3, 5, 1, 4, 6]
//! block_row_ptr  = [0, 1, 2, 4, 8]               blocks {R7} {R0} {R2,R3} {R5,R1,R4,R6}
//! block_width    = [4, 3, 2, 2]                  block nnz 4, 3, 4, 5
//! block_slot_ptr = [0, 4, 7, 11, 19]             19 slots, 3 padding
//! values         = [5 4 2 1 | 2 1 8 | 6 6 9 7 | 5 3 2 6 8 0 0 0]
//! col_idx        = [0 5 6 7 | 2 6 7 | 3 0 7 1 | 4 0 6 4 5 0 6 4]
//! ```
//! (The TEB paper's Fig. 3 shows PBC with three blocks of 5, 6, 5 entries, S² = 0.23; its
//! partition rule is not given in the text.)
//!
//! Statistics (`extra`): `blocks`, `block_nnz_std`, `block_nnz_variance`,
//! `max_block_nnz_over_mean`, `candidates_tried`, `threads_per_block`, `partition_ms` (the
//! search over partitions) and `layout_ms` (sort and ELL blocks).
//!
//! [`teb`]: super::teb
//! [`teb::partition::wave_counts`]: super::teb::partition::wave_counts
//! [`ell::PADDING_LIMIT_RATIO`]: super::ell::PADDING_LIMIT_RATIO

mod cpu;
mod gpu;

use std::time::Instant;

use rayon::prelude::*;

use super::ell::{PADDING_FLOOR_SLOTS, PADDING_LIMIT_RATIO};
use super::teb::partition::{max_over_mean, variance, wave_counts};
use super::teb::{rows_longest_first, threads_for};
use super::{auto_or, FormatStats, RowFigures, SpmvFormat};
use super::{FormatInfo, Param};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "pbc", source: include_str!("kernel.cu"), headers: &[] };

const NAME: &str = "pbc";
/// Largest row count: `lane += blockDim.x` in the kernel must not wrap a u32.
const MAX_ROWS: usize = u32::MAX as usize - 2048;

/// A matrix in PBC (see the module doc).
pub struct Pbc<T> {
    rows: RowFigures,
    /// Sorted position → original row (Dev_blockPos).
    perm: Vec<u32>,
    /// First sorted row of each block, `blocks + 1` entries (Dev_p).
    block_row_ptr: Vec<u32>,
    /// Longest row of each block (Dev_w).
    block_width: Vec<u32>,
    /// First slot of each block, `blocks + 1` entries.
    block_slot_ptr: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    block_nnz: Vec<usize>,
    candidates_tried: usize,
    threads_per_block: u32,
    partition_ms: f64,
    layout_ms: f64,
}

/// Boundaries (sorted positions, `blocks + 1` of them) of the partition into `blocks`
/// blocks: cut i at the boundary whose prefix nnz is nearest to i·NNZ/blocks (the earlier
/// one on a tie).
pub fn cuts(prefix: &[usize], blocks: usize) -> Vec<usize> {
    let rows = prefix.len() - 1;
    let nnz = prefix[rows] as f64;
    let mut cuts = Vec::with_capacity(blocks + 1);
    cuts.push(0);
    for i in 1..blocks {
        let target = nnz * i as f64 / blocks as f64;
        let p = prefix.partition_point(|&s| (s as f64) < target).min(rows);
        let p = if p > 0 && target - prefix[p - 1] as f64 <= prefix[p] as f64 - target {
            p - 1
        } else {
            p
        };
        cuts.push(p.max(*cuts.last().unwrap()));
    }
    if blocks > 0 {
        cuts.push(rows);
    }
    cuts
}

/// nnz of each block of a partition.
fn block_nnz(prefix: &[usize], cuts: &[usize]) -> Vec<usize> {
    cuts.windows(2).map(|w| prefix[w[1]] - prefix[w[0]]).collect()
}

impl<T: Scalar> Pbc<T> {
    /// Converts from CSR, searching the partitions (see the module doc).
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::build(a, None)
    }

    /// Converts from CSR into exactly `blocks` blocks (1..=m).
    pub fn with_blocks(a: &Csr<T>, blocks: usize) -> Result<Self> {
        if a.nrows() > 0 && !(1..=a.nrows()).contains(&blocks) {
            return Err(Error::format(
                NAME,
                format!("{blocks} blocks for {} rows: P must be in 1..=rows", a.nrows()),
            ));
        }
        Self::build(a, Some(blocks))
    }

    fn build(a: &Csr<T>, fixed: Option<usize>) -> Result<Self> {
        let (m, nnz) = (a.nrows(), a.nnz());
        if m > MAX_ROWS {
            return Err(Error::format(
                NAME,
                format!("{m} rows exceed the {MAX_ROWS} that 32-bit row indices allow"),
            ));
        }

        // The search over partitions.
        let started = Instant::now();
        let order = rows_longest_first(a.row_ptr());
        let mut prefix = Vec::with_capacity(m + 1);
        prefix.push(0usize);
        for &r in &order {
            prefix.push(prefix.last().unwrap() + a.row_len(r as usize));
        }
        let (blocks, candidates_tried) = match fixed {
            _ if m == 0 => (0, 0),
            Some(b) => (b, 0),
            None if m == 1 => (1, 0),
            None => {
                let candidates = wave_counts(m);
                let scores: Vec<f64> = candidates
                    .par_iter()
                    .map(|&p| variance(&block_nnz(&prefix, &cuts(&prefix, p))))
                    .collect();
                let best =
                    (0..scores.len())
                        .fold(0, |best, i| if scores[i] < scores[best] { i } else { best });
                (candidates[best], candidates.len())
            }
        };
        let cuts = cuts(&prefix, blocks);
        let partition_ms = ms_since(started);

        // ELL blocks, column-major; slot offsets counted in 64 bits before the u32 check.
        let started = Instant::now();
        let widths: Vec<usize> = cuts
            .windows(2)
            .map(|w| if w[0] < w[1] { a.row_len(order[w[0]] as usize) } else { 0 })
            .collect();
        let mut slot_ptr = Vec::with_capacity(blocks + 1);
        slot_ptr.push(0u64);
        for (w, &width) in cuts.windows(2).zip(&widths) {
            slot_ptr.push(slot_ptr.last().unwrap() + ((w[1] - w[0]) * width) as u64);
        }
        let stored = *slot_ptr.last().unwrap();
        let within_padding = stored <= PADDING_FLOOR_SLOTS as u64
            || stored <= (PADDING_LIMIT_RATIO * nnz.max(1)) as u64;
        if !within_padding || stored > u32::MAX as u64 {
            return Err(Error::format(
                NAME,
                format!(
                    "{blocks} blocks padded to their longest rows need {stored} slots for {nnz} entries \
                     (limits: {PADDING_LIMIT_RATIO} x nnz and 2^32 - 1)"
                ),
            ));
        }
        let mut col_idx = vec![0u32; stored as usize];
        let mut values = vec![T::ZERO; stored as usize];
        let mut pieces = Vec::with_capacity(blocks);
        let (mut cols_rest, mut vals_rest) = (col_idx.as_mut_slice(), values.as_mut_slice());
        for b in 0..blocks {
            let n = (slot_ptr[b + 1] - slot_ptr[b]) as usize;
            let (c, cr) = std::mem::take(&mut cols_rest).split_at_mut(n);
            let (v, vr) = std::mem::take(&mut vals_rest).split_at_mut(n);
            (cols_rest, vals_rest) = (cr, vr);
            pieces.push((b, c, v));
        }
        pieces.into_par_iter().for_each(|(b, cols, vals)| {
            let rows = &order[cuts[b]..cuts[b + 1]];
            let h = rows.len();
            for (lane, &r) in rows.iter().enumerate() {
                let (rc, rv) = a.row(r as usize);
                let pad = rc.last().copied().unwrap_or(0);
                for t in 0..widths[b] {
                    (cols[t * h + lane], vals[t * h + lane]) =
                        if t < rc.len() { (rc[t], rv[t]) } else { (pad, T::ZERO) };
                }
            }
        });
        let layout_ms = ms_since(started);

        Ok(Pbc {
            rows: RowFigures::of(a),
            block_nnz: block_nnz(&prefix, &cuts),
            perm: order,
            block_row_ptr: cuts.iter().map(|&c| c as u32).collect(),
            block_width: widths.iter().map(|&w| w as u32).collect(),
            block_slot_ptr: slot_ptr.iter().map(|&s| s as u32).collect(),
            col_idx,
            values,
            candidates_tried,
            threads_per_block: threads_for(m, blocks),
            partition_ms,
            layout_ms,
        })
    }

    /// Number of blocks of the partition kept.
    pub fn blocks(&self) -> usize {
        self.block_width.len()
    }
    /// Sorted position → original row (Dev_blockPos).
    pub fn perm(&self) -> &[u32] {
        &self.perm
    }
    /// First sorted row of each block (Dev_p), `blocks + 1` entries.
    pub fn block_row_ptr(&self) -> &[u32] {
        &self.block_row_ptr
    }
    /// Longest row of each block (Dev_w).
    pub fn block_width(&self) -> &[u32] {
        &self.block_width
    }
    /// First slot of each block, `blocks + 1` entries.
    pub fn block_slot_ptr(&self) -> &[u32] {
        &self.block_slot_ptr
    }
    /// Column of each slot (Dev_offset), block after block, column-major within a block; padding
    /// repeats the row's last column (0 for an empty row).
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Value of each slot (Val_Data), in the order of `col_idx`; 0 in padding.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// nnz of each block.
    pub fn block_nnz(&self) -> &[usize] {
        &self.block_nnz
    }
    /// Stored slots, padding included.
    pub fn stored(&self) -> usize {
        self.values.len()
    }
    /// Device bytes: the five u32 arrays and `values`.
    pub fn device_bytes(&self) -> usize {
        super::bytes_of!(
            self.perm,
            self.block_row_ptr,
            self.block_width,
            self.block_slot_ptr,
            self.col_idx,
            self.values
        )
    }
}

impl<T: Scalar> SpmvFormat<T> for Pbc<T> {
    fn stats(&self) -> FormatStats {
        let var = variance(&self.block_nnz);
        self.rows.stats(self.device_bytes(), self.stored()).with([
            ("blocks", self.blocks() as f64),
            ("block_nnz_std", var.sqrt()),
            ("block_nnz_variance", var),
            ("max_block_nnz_over_mean", max_over_mean(&self.block_nnz)),
            ("candidates_tried", self.candidates_tried as f64),
            ("threads_per_block", self.threads_per_block as f64),
            ("partition_ms", self.partition_ms),
            ("layout_ms", self.layout_ms),
        ])
    }
    super::cpu_and_device!(gpu::upload);
}

/// The registry's entry for `pbc` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "pbc",
        "PBC (partition-block-CSR): rows sorted by length, cut into blocks of near-equal nnz (smallest std), each an ELL of its own width",
        |a, s| auto_or(s, "blocks", 1, || Pbc::new(a), |p| Pbc::with_blocks(a, p)),
    )
    .params(&[Param { key: "blocks", default: "auto", doc: "P, the number of blocks (1..=rows; auto: the smallest-std search)" }])
    .kernels(&[KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests;
