//! AMF-CSR, adaptive multi-row folding of CSR (Gao et al., ICPADS 2021), as the TEB paper
//! describes it (`../shared/papers/000` §2.3, digest `FORMATS.md` §2): consecutive rows are
//! folded into row-blocks while their total nnz stays below Ts, consecutive row-blocks into
//! sub-blocks while the total stays below Tl, and one thread block runs each sub-block.
//!
//! **Folding** (strict `<`, as the TEB paper's Fig. 5 example needs): a row-block starts with
//! the next row and takes the following row while the row-block's nnz plus that row's is
//! below Ts; so a row of Ts entries or more is a row-block of its own, and empty rows fold
//! into the row-block before them. Sub-blocks fold row-blocks the same way with Tl. Rows keep
//! their order (no reordering), so `values` and `col_idx` are exactly CSR's.
//!
//! **Arrays.** The paper's RowPtr has two parts: the row-block pointers (`row_block_ptr`,
//! first row of each row-block, row-blocks + 1 entries) and each sub-block's first and last
//! row-block (`sub_block_ptr`: sub-block s holds row-blocks `sub_block_ptr[s]` up to
//! `sub_block_ptr[s+1] − 1`, sub-blocks + 1 entries). The CSR `row_ptr` is kept too: the
//! kernel needs each row's end to split a folded row back into rows (the paper's text does
//! not say how its kernel finds them).
//!
//! Matrix A of the TEB paper's Fig. 1 (see [`teb`]) with the paper's Ts = 4, Tl = 7 (Fig. 5):
//! ```text
//! row lengths     3 | 1 2 | 2 1 | 2 1 | 4          row_block_ptr = [0, 1, 3, 5, 7, 8]
//! row-block nnz   3 |  3  |  3  |  3  | 4          (3 + 1 = 4 is not < 4: R0 alone)
//! sub-blocks      [3 3] [3 3] [4] = 6, 6, 4        sub_block_ptr = [0, 2, 4, 5]
//! ```
//! eq. (5) gives S² = 0.89 for (6, 6, 4) (the paper prints 1.29).
//!
//! **Kernel.** 256 threads per sub-block; warp w takes the sub-block's row-blocks w, w + 8, …
//! and reads each folded row's entries 32 at a time (coalesced, since the rows are
//! consecutive), finds each entry's row by a binary search in `row_ptr`, adds the products
//! of each row with a segmented warp scan and carries a row that continues into the next 32
//! entries; empty rows are written 0. Deterministic (fixed order, no atomics).
//!
//! **Rules this code had to choose** (the TEB paper: "thresholds preset from the matrix size
//! and nnz"; the original's formulas were not available):
//! 1. Ts = the mean row length rounded up to a multiple of 32, at least 32: a folded row is
//!    about one warp-width of entries (the unit the kernel reads), and rows longer than the
//!    mean stay alone.
//! 2. Tl = max(8·Ts, ⌈nnz / 8448⌉): at least one folded row per warp of the 8-warp thread
//!    block, and no more than about 8448 sub-blocks (8 waves of 8 resident 256-thread blocks
//!    on the H200's 132 SMs) on large matrices.
//!
//! Statistics (`extra`): `ts`, `tl`, `row_blocks`, `sub_blocks`, `sub_block_nnz_variance`
//! (eq. 5), `max_sub_block_nnz_over_mean`, `fold_ms`.
//!
//! [`teb`]: super::teb

mod cpu;
mod gpu;

use std::time::Instant;

use super::teb::partition::{max_over_mean, variance};
use super::{FormatInfo, Param};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// The format's CUDA kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "amf_csr", source: include_str!("kernel.cu"), headers: &[] };

const NAME: &str = "amf-csr";
/// Threads per block (8 warps).
const BLOCK: u32 = 256;
/// Sub-blocks aimed at on large matrices: 8 waves of 8 blocks of 256 threads on 132 SMs.
pub const TARGET_SUB_BLOCKS: usize = 8 * 8 * 132;
/// Largest row count and nnz: `r += 32` and `base + 32` in the kernel must not wrap a u32.
const MAX_INDEX: usize = u32::MAX as usize - 64;

/// A matrix in AMF-CSR (see the module doc).
pub struct AmfCsr<T> {
    ts: usize,
    tl: usize,
    /// First row of each row-block, `row_blocks + 1` entries (RowPtr, part 1).
    row_block_ptr: Vec<u32>,
    /// First row-block of each sub-block, `sub_blocks + 1` entries (RowPtr, part 2).
    sub_block_ptr: Vec<u32>,
    row_ptr: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    fold_ms: f64,
    max_row_len: usize,
    mean_row_len: f64,
}

/// Folds consecutive items (sizes `sizes`) into groups: a group starts with the next item
/// and takes the following one while its total plus that item's size is below `limit`.
/// Returns the first item of each group plus the item count.
fn fold(sizes: impl ExactSizeIterator<Item = usize>, limit: usize) -> Vec<u32> {
    let count = sizes.len();
    let mut starts = Vec::new();
    let mut total = 0usize;
    for (i, s) in sizes.enumerate() {
        if i == 0 || total + s >= limit {
            starts.push(i as u32);
            total = 0;
        }
        total += s;
    }
    starts.push(count as u32);
    starts
}

/// `(Ts, Tl)` by the module doc's rules 1 and 2 for `nnz` entries in `rows` rows: the
/// thresholds of [`AmfCsr::new`].
pub fn thresholds(rows: usize, nnz: usize) -> (usize, usize) {
    let mean = nnz.div_ceil(rows.max(1));
    let ts = (mean.div_ceil(32) * 32).max(32);
    (ts, sub_block_threshold(ts, nnz))
}

/// Tl for a given Ts (rule 2): `max(8·Ts, ⌈nnz / TARGET_SUB_BLOCKS⌉)`.
pub fn sub_block_threshold(ts: usize, nnz: usize) -> usize {
    (8 * ts).max(nnz.div_ceil(TARGET_SUB_BLOCKS))
}

impl<T: Scalar> AmfCsr<T> {
    /// Converts from CSR with the thresholds of [`thresholds`].
    pub fn new(a: &Csr<T>) -> Result<Self> {
        let (ts, tl) = thresholds(a.nrows(), a.nnz());
        Self::with_thresholds(a, ts, tl)
    }

    /// Converts from CSR with given thresholds (both ≥ 1).
    pub fn with_thresholds(a: &Csr<T>, ts: usize, tl: usize) -> Result<Self> {
        if ts == 0 || tl == 0 {
            return Err(Error::format(
                NAME,
                format!("Ts = {ts}, Tl = {tl}: both thresholds must be at least 1"),
            ));
        }
        let (m, nnz) = (a.nrows(), a.nnz());
        if m > MAX_INDEX || nnz > MAX_INDEX {
            return Err(Error::format(
                NAME,
                format!("{m} rows, {nnz} entries: both must be at most {MAX_INDEX} for 32-bit device indices"),
            ));
        }
        let started = Instant::now();
        let row_ptr = a.row_ptr();
        let row_block_ptr = fold(row_ptr.windows(2).map(|w| w[1] - w[0]), ts);
        let sub_block_ptr = fold(
            row_block_ptr.windows(2).map(|w| row_ptr[w[1] as usize] - row_ptr[w[0] as usize]),
            tl,
        );
        let fold_ms = ms_since(started);
        Ok(AmfCsr {
            ts,
            tl,
            row_block_ptr,
            sub_block_ptr,
            row_ptr: row_ptr.iter().map(|&p| p as u32).collect(),
            col_idx: a.col_idx().to_vec(),
            values: a.values().to_vec(),
            fold_ms,
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
        })
    }

    /// `(Ts, Tl)`: the nnz bounds of a row-block and of a sub-block.
    pub fn thresholds(&self) -> (usize, usize) {
        (self.ts, self.tl)
    }
    /// Number of row-blocks (folded runs of rows).
    pub fn row_blocks(&self) -> usize {
        self.row_block_ptr.len() - 1
    }
    /// Number of sub-blocks (folded runs of row-blocks, one thread block each).
    pub fn sub_blocks(&self) -> usize {
        self.sub_block_ptr.len() - 1
    }
    /// First row of each row-block (RowPtr, part 1).
    pub fn row_block_ptr(&self) -> &[u32] {
        &self.row_block_ptr
    }
    /// First row-block of each sub-block (RowPtr, part 2).
    pub fn sub_block_ptr(&self) -> &[u32] {
        &self.sub_block_ptr
    }
    /// nnz of each sub-block.
    pub fn sub_block_nnz(&self) -> Vec<usize> {
        self.sub_block_ptr
            .windows(2)
            .map(|s| {
                let (r0, r1) =
                    (self.row_block_ptr[s[0] as usize], self.row_block_ptr[s[1] as usize]);
                (self.row_ptr[r1 as usize] - self.row_ptr[r0 as usize]) as usize
            })
            .collect()
    }
    /// Device bytes: the three u32 offset arrays, `col_idx` and `values`.
    pub fn device_bytes(&self) -> usize {
        super::bytes_of!(
            self.row_block_ptr,
            self.sub_block_ptr,
            self.row_ptr,
            self.col_idx,
            self.values
        )
    }
}

impl<T: Scalar> SpmvFormat<T> for AmfCsr<T> {
    fn stats(&self) -> FormatStats {
        let nnz = self.values.len();
        let sub_nnz = self.sub_block_nnz();
        FormatStats::new(self.device_bytes(), nnz, nnz, self.max_row_len, self.mean_row_len).with([
            ("ts", self.ts as f64),
            ("tl", self.tl as f64),
            ("row_blocks", self.row_blocks() as f64),
            ("sub_blocks", self.sub_blocks() as f64),
            ("sub_block_nnz_variance", variance(&sub_nnz)),
            ("max_sub_block_nnz_over_mean", max_over_mean(&sub_nnz)),
            ("fold_ms", self.fold_ms),
        ])
    }
    super::cpu_and_device!(gpu::upload);
}

/// The registry's entry for `amf-csr` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "amf-csr",
        "AMF-CSR (adaptive multi-row folding): rows folded below Ts nnz, row-blocks into sub-blocks below Tl; a warp per folded row",
        |a, s| {
            let ts = s.auto_usize("ts", 1)?.unwrap_or(thresholds(a.nrows(), a.nnz()).0);
            let tl = s.auto_usize("tl", 1)?.unwrap_or(sub_block_threshold(ts, a.nnz()));
            Ok(Box::new(AmfCsr::with_thresholds(a, ts, tl)?))
        },
    )
    .params(&[
        Param { key: "ts", default: "auto", doc: "Ts, the folding threshold (≥ 1; auto: mean row length rounded up to 32)" },
        Param { key: "tl", default: "auto", doc: "Tl, the sub-block threshold (≥ 1; auto: max(8·Ts, nnz/8448))" },
    ])
    .kernels(&[KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests;
