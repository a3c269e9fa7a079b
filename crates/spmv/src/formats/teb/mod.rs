//! TEB, threshold-exchangeorder block (Wang, Zhang, He, Xu, Cui 2023; `../shared/papers/000`,
//! digest `FORMATS.md` §2): the rows are reordered and merged into bLN blocks of nearly
//! equal nnz, one CUDA thread block per TEB block.
//!
//! **Phase 1, threshold selection** (Algorithm 1, Fig. 11, eq. 10; [`partition`]). For a block
//! count bLN, AVG = NNZ / bLN and Threshold = AVG · k. The critical count is the first count
//! (from 2) whose merge with k = 1.01 has a lower block-nnz variance S² (eq. 5) than with
//! k = 1 (eq. 7); then k = 1.005 if AVG_bLN > AVG_critical, 1.01 if AVG_bLN > AVG_critical / 2,
//! else 1.03. The block count itself is searched: every candidate count (ascending) is
//! merged with its own k and threshold, the search stops at the first count whose threshold
//! is below half the longest row (eq. 10), and the count with the smallest S² is kept.
//!
//! **Phase 2, reordering row merge** (Algorithm 2). The rows are sorted by length, longest
//! first, stably (ties keep row order). Each block but the last starts with the longest row
//! left, then takes the shortest rows left while its nnz plus the next row's stays
//! **≤** Threshold (the printed pseudo-code says `<`; the paper's own Fig. 13 needs `≤`); the
//! last block takes every row left. Blocks formed after every row is taken stay empty.
//!
//! **Storage**: `values` and `col_idx` in block order, `blo_idx[b]` the first reordered row
//! of block b (bLN + 1 entries), `row_ptr` the offsets of the reordered rows (the paper's
//! RowNNZ_Sum) and `perm[row]` the original row of reordered row `row`.
//!
//! The paper's example (Fig. 1, 13–15), bLN = 4 and k = 1:
//! ```text
//!         C0 C1 C2 C3 C4 C5 C6 C7
//!     R0   .  .  2  .  .  .  1  8     row lengths {3, 1, 2, 2, 1, 2, 1, 4}, NNZ = 16
//!     R1   3  .  .  .  .  .  .  .     sorted: R7:4 R0:3 R2:2 R3:2 R5:2 R1:1 R4:1 R6:1
//!     R2   .  .  .  6  .  .  .  9
//! A = R3   6  7  .  .  .  .  .  .     Threshold = 16 / 4 · 1 = 4
//!     R4   .  .  .  .  .  .  2  .     block 0: R7 (4)              4 + 1 > 4: closed
//!     R5   .  .  .  .  5  8  .  .     block 1: R0 (3) + R6 (1)     = 4
//!     R6   .  .  .  .  6  .  .  .     block 2: R2 (2) + R4 + R1    = 4
//!     R7   5  .  .  .  .  4  2  1     block 3, the last: R3, R5    = 4     S² = 0
//!
//! perm    = [7, 0, 6, 2, 4, 1, 3, 5]
//! blo_idx = [0, 1, 3, 6, 8]
//! row_ptr = [0, 4, 7, 8, 10, 11, 12, 14, 16]
//! values  = [5 4 2 1 | 2 1 8 6 | 6 9 2 3 | 6 7 5 8]      (Fig. 15)
//! col_idx = [0 5 6 7 | 2 6 7 4 | 3 7 6 0 | 0 1 4 5]
//! ```
//! The registered format chooses bLN itself. On this matrix k = 1.01 never gives a lower S²
//! than k = 1 (no critical count), so k = 1.005 for every count; of the counts 2..=8, bLN = 4
//! (Threshold 4.02) has the smallest S², 0: the same four blocks.
//!
//! **Kernels.** `teb` is Algorithm 3: thread block b takes TEB block b, thread t its row t
//! with a serial loop (CSR-scalar inside balanced blocks), writing `y[perm[row]]`; a block
//! with more rows than threads loops (rows t, t + blockDim, ...). Threads per block: the
//! mean rows per block rounded up to a warp, within 32..=1024. `teb-lanes` keeps the arrays
//! and blocks and changes only the kernel: 256 threads per block (1024 when there are fewer
//! than 4 blocks per SM, 528 on the H200). A block's longest rows come first, so its leading
//! rows of at least blockDim entries get the whole thread block each (warp shuffles, then
//! shared memory); the other rows get L lanes each, L the smallest power of two ≥ a quarter
//! of their mean length (about four entries per lane, 1..=32, warp-shuffle sums), loads
//! unrolled 4 deep. The run of empty rows that the merge puts into one block (rule 5) is
//! zeroed by all thread blocks together ([`Teb::empty_rows`]). Both kernels are
//! deterministic: each row's sum has a fixed order, no atomics.
//!
//! **Rules this code had to choose** (the paper leaves them open):
//! 1. Candidate block counts (the paper's 2..=m is quadratic): every count 2..=131, then
//!    multiples of the H200's 132 SMs (one by one up to 64 waves, then doubling) up to one
//!    block per 32 rows; matrices of at most 132·32 rows try 2..=min(m, 132)
//!    ([`partition::candidate_counts`]).
//! 2. Algorithm 1 probes every count 2..=4096 (its printed loop starts at 0 and divides by
//!    it), then only the candidate counts above; no hit below bLN gives k = 1.005 (the
//!    tree's first branch: bLN is below the critical count).
//! 3. Ties of S² keep the smaller count. m = 1 is one block; m = 0 is none.
//! 4. The merge is computed on runs of equal row length, which is exactly Algorithm 2 (a
//!    test compares it with the row-by-row loop) at O(blocks + distinct lengths) per count.
//! 5. Empty rows have length 0, so the first block whose first row fits the threshold takes
//!    them all (0 ≤ Threshold): faithful, and costly when a matrix has many (the `teb`
//!    kernel's thread block then loops over all of them; `teb-lanes` spreads them).
//!
//! Statistics (`extra`): `blocks`, `k`, `threshold`, `critical_blocks` (0: none),
//! `candidates_tried`, `block_nnz_variance` (eq. 5), `max_block_nnz_over_mean`,
//! `threads_per_block`, `threshold_selection_ms` (phase 1: histogram, Algorithm 1, search),
//! `merge_ms` (phase 2: sort, merge, arrays) and `paper_flops` = 2·nnz − m (the paper's
//! operation count; GFLOPS headlines use 2·nnz).
//!
//! Device indices are 32-bit: conversion fails with [`Error::Format`] when nnz exceeds
//! 2^32 − 1 or the rows exceed 2^32 − 2049.

mod cpu;
mod gpu;
pub mod partition;

use std::time::Instant;

use rayon::prelude::*;

use super::{Builder, FormatInfo, FormatSpec, Param};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;
use partition::{merge_blocks, Choice, SortedLengths};

/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "teb", source: include_str!("kernel.cu"), headers: &[] };

/// Threads per block of `teb-lanes`: 256, or 1024 when there are fewer blocks than
/// `FEW_BLOCKS` (4 per SM of the H200), so that a few huge blocks still get many threads.
pub fn lanes_threads(blocks: usize) -> u32 {
    if blocks < FEW_BLOCKS {
        1024
    } else {
        256
    }
}
const FEW_BLOCKS: usize = 4 * partition::DEVICE_SMS;
/// Largest row count: `row += blockDim.x` in the kernels must not wrap a u32.
const MAX_ROWS: usize = u32::MAX as usize - 2048;

/// Which kernel runs the TEB arrays on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TebKernel {
    /// Algorithm 3: one thread per row inside each block (`teb`).
    RowPerThread,
    /// Lanes per row chosen per block (`teb-lanes`).
    LanesPerRow,
}

impl TebKernel {
    /// The registered format that runs this kernel: `teb` or `teb-lanes`.
    pub fn name(self) -> &'static str {
        match self {
            TebKernel::RowPerThread => "teb",
            TebKernel::LanesPerRow => "teb-lanes",
        }
    }
}

/// A matrix in TEB (see the module doc).
pub struct Teb<T> {
    nrows: usize,
    kernel: TebKernel,
    /// First reordered row of each block, `blocks + 1` entries.
    blo_idx: Vec<u32>,
    /// Offsets of the reordered rows (RowNNZ_Sum), `nrows + 1` entries.
    row_ptr: Vec<u32>,
    /// Reordered row → original row.
    perm: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    choice: Choice,
    threads_per_block: u32,
    threshold_selection_ms: f64,
    merge_ms: f64,
    max_row_len: usize,
    mean_row_len: f64,
}

/// Rows sorted by length, longest first; rows of equal length keep their order (a
/// stable counting sort, O(rows + longest row)).
pub(crate) fn rows_longest_first(row_ptr: &[usize]) -> Vec<u32> {
    let rows = row_ptr.len().saturating_sub(1);
    let max = row_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    // next[l]: where the next row of length l goes (longer lengths come first).
    let mut next = vec![0usize; max + 2];
    for w in row_ptr.windows(2) {
        next[w[1] - w[0]] += 1;
    }
    let mut at = 0;
    for l in (0..=max).rev() {
        (next[l], at) = (at, at + next[l]);
    }
    let mut order = vec![0u32; rows];
    for (r, w) in row_ptr.windows(2).enumerate() {
        let slot = &mut next[w[1] - w[0]];
        order[*slot] = r as u32;
        *slot += 1;
    }
    order
}

/// The entries of `a`'s rows in the order `perm`, at the offsets `row_ptr` (filled in
/// parallel, chunks of rows per task).
pub(crate) fn gather_rows<T: Scalar>(
    a: &Csr<T>, perm: &[u32], row_ptr: &[u32],
) -> (Vec<u32>, Vec<T>) {
    const CHUNK: usize = 2048;
    let mut col_idx = vec![0u32; a.nnz()];
    let mut values = vec![T::ZERO; a.nnz()];
    let mut pieces = Vec::with_capacity(perm.len().div_ceil(CHUNK));
    let (mut cols_rest, mut vals_rest) = (col_idx.as_mut_slice(), values.as_mut_slice());
    for (i, rows) in perm.chunks(CHUNK).enumerate() {
        let first = i * CHUNK;
        let n = (row_ptr[first + rows.len()] - row_ptr[first]) as usize;
        let (c, cr) = std::mem::take(&mut cols_rest).split_at_mut(n);
        let (v, vr) = std::mem::take(&mut vals_rest).split_at_mut(n);
        (cols_rest, vals_rest) = (cr, vr);
        pieces.push((rows, c, v));
    }
    pieces.into_par_iter().for_each(|(rows, c, v)| {
        let mut at = 0;
        for &r in rows {
            let (rc, rv) = a.row(r as usize);
            c[at..at + rc.len()].copy_from_slice(rc);
            v[at..at + rv.len()].copy_from_slice(rv);
            at += rc.len();
        }
    });
    (col_idx, values)
}

/// Threads per block of the `teb` kernel (and of PBC's): the mean rows per block rounded up
/// to a warp, within 32..=1024.
pub(crate) fn threads_for(rows: usize, blocks: usize) -> u32 {
    let mean = rows.div_ceil(blocks.max(1));
    (mean.div_ceil(32) * 32).clamp(32, 1024) as u32
}

impl<T: Scalar> Teb<T> {
    /// Converts from CSR with the heuristic threshold selection and block-count search.
    pub fn new(a: &Csr<T>, kernel: TebKernel) -> Result<Self> {
        Self::build(a, kernel, None)
    }

    /// Converts from CSR with a given block count (1..=m) and offset parameter k (> 0),
    /// as in the paper's worked example (bLN = 4, k = 1).
    pub fn with_blocks(a: &Csr<T>, blocks: usize, k: f64, kernel: TebKernel) -> Result<Self> {
        if !(k.is_finite() && k > 0.0) {
            return Err(Error::format(
                kernel.name(),
                format!("k = {k}: the offset parameter must be a positive number"),
            ));
        }
        if a.nrows() > 0 && !(1..=a.nrows()).contains(&blocks) {
            return Err(Error::format(
                kernel.name(),
                format!("{blocks} blocks for {} rows: bLN must be in 1..=rows", a.nrows()),
            ));
        }
        Self::build(a, kernel, Some((blocks, k)))
    }

    fn build(a: &Csr<T>, kernel: TebKernel, fixed: Option<(usize, f64)>) -> Result<Self> {
        let name = kernel.name();
        let (m, nnz) = (a.nrows(), a.nnz());
        if m > MAX_ROWS {
            return Err(Error::format(
                name,
                format!("{m} rows exceed the {MAX_ROWS} that 32-bit row indices allow"),
            ));
        }
        if nnz > u32::MAX as usize {
            return Err(Error::format(
                name,
                format!("{nnz} entries exceed 32-bit offsets (2^32 - 1)"),
            ));
        }

        // Phase 1: threshold selection (and the block-count search).
        let started = Instant::now();
        let lengths = SortedLengths::new(a.row_ptr());
        let choice = match fixed {
            None => partition::choose_blocks(&lengths),
            Some((blocks, k)) => {
                let blocks = if m == 0 { 0 } else { blocks };
                let threshold = partition::threshold(nnz, blocks.max(1), k);
                let variance = if blocks == 0 {
                    0.0
                } else {
                    partition::merge_variance(&lengths, blocks, threshold)
                };
                Choice { blocks, k, threshold, variance, critical: None, tried: 0 }
            }
        };
        let threshold_selection_ms = ms_since(started);

        // Phase 2: the reordering row merge and the arrays.
        let started = Instant::now();
        let order = rows_longest_first(a.row_ptr());
        let mut perm = Vec::with_capacity(m);
        let mut blo_idx = Vec::with_capacity(choice.blocks + 1);
        blo_idx.push(0u32);
        let (mut begin, mut end) = (0usize, m);
        for block in merge_blocks(&lengths, choice.blocks, choice.threshold) {
            perm.extend_from_slice(&order[begin..begin + block.head]);
            begin += block.head;
            perm.extend(order[end - block.tail..end].iter().rev());
            end -= block.tail;
            blo_idx.push(perm.len() as u32);
        }
        debug_assert_eq!(perm.len(), m);
        let mut row_ptr = Vec::with_capacity(m + 1);
        row_ptr.push(0u32);
        let mut at = 0u32;
        for &r in &perm {
            at += a.row_len(r as usize) as u32; // ≤ nnz ≤ u32::MAX, checked above
            row_ptr.push(at);
        }
        let (col_idx, values) = gather_rows(a, &perm, &row_ptr);
        let merge_ms = ms_since(started);

        Ok(Teb {
            nrows: m,
            kernel,
            threads_per_block: threads_for(m, choice.blocks),
            blo_idx,
            row_ptr,
            perm,
            col_idx,
            values,
            choice,
            threshold_selection_ms,
            merge_ms,
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
        })
    }

    /// The registered name of the kernel in use: `teb` or `teb-lanes`.
    pub fn name(&self) -> &'static str {
        self.kernel.name()
    }
    /// bLN, the number of blocks.
    pub fn blocks(&self) -> usize {
        self.blo_idx.len() - 1
    }
    /// How the block count, k and the threshold were found.
    pub fn choice(&self) -> &Choice {
        &self.choice
    }
    /// First reordered row of each block (`blocks + 1` entries).
    pub fn blo_idx(&self) -> &[u32] {
        &self.blo_idx
    }
    /// Offsets of the reordered rows (the paper's RowNNZ_Sum).
    pub fn row_ptr(&self) -> &[u32] {
        &self.row_ptr
    }
    /// Reordered row → original row.
    pub fn perm(&self) -> &[u32] {
        &self.perm
    }
    /// Column of each entry, row after row in the reordered order (see `row_ptr`).
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }
    /// Value of each entry, in the order of `col_idx`.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// nnz of each block.
    pub fn block_nnz(&self) -> Vec<usize> {
        self.blo_idx
            .windows(2)
            .map(|w| (self.row_ptr[w[1] as usize] - self.row_ptr[w[0] as usize]) as usize)
            .collect()
    }
    /// The block whose first row is followed by empty rows, with their range of reordered
    /// rows. The merge gives each block the shortest rows left after its first row, and an
    /// empty row always fits (unless the first row alone exceeds the threshold), so all empty
    /// rows usually sit in one block, right after its first row. `None` when no block but the
    /// last (which takes the rows left in sorted order) starts that way.
    pub fn empty_rows(&self) -> Option<(u32, u32, u32)> {
        let blocks = self.blocks();
        let empty = |r: u32| self.row_ptr[r as usize + 1] == self.row_ptr[r as usize];
        (0..blocks.saturating_sub(1)).find_map(|b| {
            let (begin, last) = (self.blo_idx[b] + 1, self.blo_idx[b + 1]);
            let end = (begin..last).find(|&r| !empty(r)).unwrap_or(last);
            (begin < last && end > begin).then_some((b as u32, begin, end))
        })
    }
    /// Threads per block of this format's kernel.
    pub fn threads_per_block(&self) -> u32 {
        match self.kernel {
            TebKernel::RowPerThread => self.threads_per_block,
            TebKernel::LanesPerRow => lanes_threads(self.blocks()),
        }
    }
    /// Milliseconds of phase 1 (threshold selection and block-count search).
    pub fn threshold_selection_ms(&self) -> f64 {
        self.threshold_selection_ms
    }
    /// Milliseconds of phase 2 (sort, merge and arrays).
    pub fn merge_ms(&self) -> f64 {
        self.merge_ms
    }
    /// Device bytes: `blo_idx`, `row_ptr`, `perm`, `col_idx` (u32) and `values`.
    pub fn device_bytes(&self) -> usize {
        4 * (self.blo_idx.len() + self.row_ptr.len() + self.perm.len() + self.col_idx.len())
            + std::mem::size_of::<T>() * self.values.len()
    }
}

impl<T: Scalar> SpmvFormat<T> for Teb<T> {
    fn stats(&self) -> FormatStats {
        let nnz = self.values.len();
        let block_nnz = self.block_nnz();
        let c = &self.choice;
        FormatStats::new(self.device_bytes(), nnz, nnz, self.max_row_len, self.mean_row_len).with([
            ("blocks", self.blocks() as f64),
            ("k", c.k),
            ("threshold", c.threshold),
            ("critical_blocks", c.critical.unwrap_or(0) as f64),
            ("candidates_tried", c.tried as f64),
            ("block_nnz_variance", partition::variance(&block_nnz)),
            ("max_block_nnz_over_mean", partition::max_over_mean(&block_nnz)),
            ("threads_per_block", self.threads_per_block() as f64),
            ("threshold_selection_ms", self.threshold_selection_ms),
            ("merge_ms", self.merge_ms),
            ("paper_flops", (2 * nnz) as f64 - self.nrows as f64),
        ])
    }
    super::cpu_and_device!(gpu::upload);
}

/// The parameters of teb and teb-lanes.
const PARAMS: &[Param] = &[
    Param {
        key: "blocks",
        default: "auto",
        doc: "bLN, the number of blocks (1..=rows; auto: the paper's search)",
    },
    Param {
        key: "k",
        default: "auto",
        doc: "the threshold's offset parameter (> 0; needs blocks; auto: 1 with given blocks)",
    },
];

/// TEB with `kernel` and the blocks and `k` of `s` ([`PARAMS`]).
fn with_spec<T: Scalar>(a: &Csr<T>, s: &FormatSpec, kernel: TebKernel) -> Result<Teb<T>> {
    let k = match s.get("k") {
        Some("auto") => None,
        _ => Some(s.f64("k", 0.0)?),
    };
    match (s.auto_usize("blocks", 1)?, k) {
        (None, None) => Teb::new(a, kernel),
        (Some(blocks), k) => Teb::with_blocks(a, blocks, k.unwrap_or(1.0), kernel),
        (None, Some(_)) => Err(Error::Unsupported(format!(
            "format {}: parameter k needs blocks (the search picks its own k)",
            s.name()
        ))),
    }
}

/// What the two TEB entries share: the parameters, the kernel module, determinism.
fn teb_entry<T: Scalar>(
    name: &'static str, description: &'static str, build: Builder<T>,
) -> FormatInfo<T> {
    FormatInfo::new(name, description, build).params(PARAMS).kernels(&[KERNELS]).deterministic()
}

/// The registry's entry for `teb` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    teb_entry(
        "teb",
        "TEB (threshold-exchangeorder block): rows merged into blocks of near-equal nnz, one thread block per block, one thread per row (Algorithm 3)",
        |a, s| Ok(Box::new(with_spec(a, s, TebKernel::RowPerThread)?)),
    )
}

/// The registry's entry for `teb-lanes` (listed in [`super::registry`]).
pub(crate) fn lanes_entry<T: Scalar>() -> FormatInfo<T> {
    teb_entry(
        "teb-lanes",
        "TEB arrays and blocks with an improved kernel: lanes per row chosen per block from its mean row length",
        |a, s| Ok(Box::new(with_spec(a, s, TebKernel::LanesPerRow)?)),
    )
}

#[cfg(test)]
mod tests;
