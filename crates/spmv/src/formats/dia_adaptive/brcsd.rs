//! DIA-Adaptive's two blocked layouts, BRCSD-I and BRCSD-II (see the module doc).

use std::time::Instant;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::formats::dia::diagonals::{self, Diagonal, OperandSpread};
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;

/// BRCSD-I's cut of the rows at the cross points, and the slots it would store.
pub(crate) struct CrossPointPlan {
    /// First row of each block, then `m` (`blocks + 1` entries).
    pub block_row: Vec<u32>,
    /// Diagonals active in each block: those whose first..=last row covers it.
    pub active: Vec<u32>,
    pub stored: u128,
}

impl CrossPointPlan {
    pub fn blocks(&self) -> usize {
        self.active.len()
    }
}

/// Cuts rows `0..m` wherever a diagonal starts (its first entry's row) or ends (one past its
/// last entry's row): between two cuts the set of diagonals is constant. O(S log S).
pub(crate) fn cross_points(census: &[Diagonal], m: usize) -> CrossPointPlan {
    let mut cuts: Vec<u32> = Vec::with_capacity(2 * census.len() + 2);
    cuts.extend([0, m as u32]);
    for d in census {
        cuts.extend([d.first_row, d.last_row + 1]);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let blocks = cuts.len() - 1;
    let block_of = |row: u32| cuts.binary_search(&row).expect("every extent's ends are cuts");
    let mut change = vec![0i64; blocks + 1];
    for d in census {
        change[block_of(d.first_row)] += 1;
        change[block_of(d.last_row + 1)] -= 1;
    }
    let mut active = Vec::with_capacity(blocks);
    let (mut now, mut stored) = (0i64, 0u128);
    for b in 0..blocks {
        now += change[b];
        active.push(now as u32);
        stored += now as u128 * (cuts[b + 1] - cuts[b]) as u128;
    }
    CrossPointPlan { block_row: cuts, active, stored }
}

/// BRCSD-I: blocks of rows with constant diagonal sets, each DIA-style with its own height
/// as stride, cut into pieces of at most `piece_rows` rows for the GPU.
pub struct Brcsd1<T> {
    /// First row of each block, then m.
    pub(crate) block_row: Vec<u32>,
    /// Cumulative diagonal count per block.
    pub(crate) block_diag: Vec<u32>,
    pub(crate) offsets: Vec<i32>,
    /// First slot of each block, then the slot count.
    pub(crate) block_data: Vec<u64>,
    /// Block `b`'s slot of local row `l` on its diagonal `i` at `block_data[b] + i·h_b + l`.
    pub(crate) data: Vec<T>,
    /// First row of each piece, then m.
    pub(crate) piece_row: Vec<u32>,
    /// The block of each piece.
    pub(crate) piece_block: Vec<u32>,
    pub(crate) piece_rows: usize,
}

/// Blocks of at most this many slots are filled one task per block; taller ones diagonal by
/// diagonal in parallel.
const SMALL_BLOCK_SLOTS: u64 = 1 << 16;

impl<T: Scalar> Brcsd1<T> {
    /// The layout of `plan` (the caller has checked the padding limit).
    pub(crate) fn build(
        format: &'static str, a: &Csr<T>, census: &[Diagonal], plan: &CrossPointPlan,
        piece_rows: usize,
    ) -> Result<Self> {
        let blocks = plan.blocks();
        let total: u64 = plan.active.iter().map(|&k| k as u64).sum();
        if total > u32::MAX as u64 {
            return Err(Error::format(
                format,
                format!("BRCSD-I: {total} block diagonals exceed 32-bit indices"),
            ));
        }
        let height = |b: usize| (plan.block_row[b + 1] - plan.block_row[b]) as u64;
        let mut block_diag = Vec::with_capacity(blocks + 1);
        let mut block_data = Vec::with_capacity(blocks + 1);
        block_diag.push(0u32);
        block_data.push(0u64);
        for b in 0..blocks {
            block_diag.push(block_diag[b] + plan.active[b]);
            block_data.push(block_data[b] + plan.active[b] as u64 * height(b));
        }
        // Diagonals in ascending order, each appended to the blocks it spans: every block's
        // list comes out sorted.
        let mut offsets = vec![0i32; total as usize];
        let mut cursor: Vec<u32> = block_diag[..blocks].to_vec();
        for d in census {
            let b0 = plan.block_row.partition_point(|&r| r <= d.first_row) - 1;
            let b1 = plan.block_row.partition_point(|&r| r <= d.last_row);
            for c in &mut cursor[b0..b1] {
                offsets[*c as usize] = d.offset;
                *c += 1;
            }
        }
        let mut data = vec![T::ZERO; block_data[blocks] as usize];
        let (mut small, mut tall) = (Vec::new(), Vec::new());
        let mut rest = data.as_mut_slice();
        for b in 0..blocks {
            let (part, tail) = std::mem::take(&mut rest)
                .split_at_mut((block_data[b + 1] - block_data[b]) as usize);
            rest = tail;
            if part.len() as u64 <= SMALL_BLOCK_SLOTS {
                small.push((b, part))
            } else {
                tall.push((b, part))
            }
        }
        let rows = |b: usize| plan.block_row[b] as usize..plan.block_row[b + 1] as usize;
        let list = |b: usize| &offsets[block_diag[b] as usize..block_diag[b + 1] as usize];
        small
            .into_par_iter()
            .for_each(|(b, part)| diagonals::fill_block(a, rows(b), list(b), rows(b).len(), part));
        for (b, part) in tall {
            diagonals::fill_diagonals(a, rows(b), list(b), part);
        }
        let (mut piece_row, mut piece_block) = (Vec::new(), Vec::new());
        for b in 0..blocks {
            for row in rows(b).step_by(piece_rows) {
                piece_row.push(row as u32);
                piece_block.push(b as u32);
            }
        }
        piece_row.push(a.nrows() as u32);
        Ok(Brcsd1 {
            block_row: plan.block_row.clone(),
            block_diag,
            offsets,
            block_data,
            data,
            piece_row,
            piece_block,
            piece_rows,
        })
    }

    /// Row blocks between cross points.
    pub fn blocks(&self) -> usize {
        self.block_row.len() - 1
    }
    /// Pieces of at most `piece_rows` rows (the GPU's thread blocks).
    pub fn pieces(&self) -> usize {
        self.piece_block.len()
    }
    /// Operands per piece (the GPU's thread blocks): the block's diagonals times its rows.
    pub fn operand_spread(&self) -> OperandSpread {
        OperandSpread::of((0..self.pieces()).map(|p| {
            let b = self.piece_block[p] as usize;
            (self.block_diag[b + 1] - self.block_diag[b]) as u64
                * (self.piece_row[p + 1] - self.piece_row[p]) as u64
        }))
    }
    /// Device bytes of the layout's arrays.
    pub fn device_bytes(&self) -> usize {
        crate::formats::bytes_of!(
            self.block_row,
            self.block_diag,
            self.offsets,
            self.piece_row,
            self.piece_block,
            self.block_data,
            self.data
        )
    }
}

/// BRCSD-II: fixed blocks of `block_rows` rows stored DIA-style (HDIA's data), consecutive
/// blocks with the same diagonals sharing one offset list.
pub struct Brcsd2<T> {
    pub(crate) block_rows: usize,
    /// First block of each group, then the block count.
    pub(crate) group_block: Vec<u32>,
    /// Cumulative offset count per group.
    pub(crate) group_diag: Vec<u32>,
    /// Each group's offsets, once.
    pub(crate) offsets: Vec<i32>,
    /// First slot of each group, then the slot count.
    pub(crate) group_data: Vec<u64>,
    /// Block after block, `block_rows` slots per diagonal.
    pub(crate) data: Vec<T>,
    pub(crate) operands: OperandSpread,
}

impl<T: Scalar> Brcsd2<T> {
    /// The layout from each block's offsets (the caller has checked the padding limit).
    pub(crate) fn build(
        format: &'static str, a: &Csr<T>, block_offsets: &[Vec<i32>], block_rows: usize,
    ) -> Result<Self> {
        let blocks = block_offsets.len();
        let total: usize = block_offsets.iter().map(Vec::len).sum();
        if total > u32::MAX as usize || blocks > u32::MAX as usize {
            return Err(Error::format(
                format,
                format!("BRCSD-II: {total} block diagonals exceed 32-bit indices"),
            ));
        }
        let order: Vec<u32> = (0..blocks as u32).collect();
        let segments = diagonals::build_segments(a, block_rows, block_offsets, &order);
        let (mut group_block, mut group_diag, mut offsets, mut group_data) =
            (Vec::new(), vec![0u32], Vec::new(), Vec::new());
        for (k, list) in block_offsets.iter().enumerate() {
            if k == 0 || *list != block_offsets[k - 1] {
                if k > 0 {
                    group_diag.push(offsets.len() as u32);
                }
                group_block.push(k as u32);
                group_data.push(segments.diag_ptr[k] as u64 * block_rows as u64);
                offsets.extend_from_slice(list);
            }
        }
        if blocks > 0 {
            group_diag.push(offsets.len() as u32);
        }
        group_block.push(blocks as u32);
        group_data.push(segments.values.len() as u64);
        let operands =
            OperandSpread::of(block_offsets.iter().map(|o| (o.len() * block_rows) as u64));
        Ok(Brcsd2 {
            block_rows,
            group_block,
            group_diag,
            offsets,
            group_data,
            data: segments.values,
            operands,
        })
    }

    /// Groups of consecutive blocks that share one offset list.
    pub fn groups(&self) -> usize {
        self.group_block.len() - 1
    }
    /// Device bytes of the layout's arrays.
    pub fn device_bytes(&self) -> usize {
        crate::formats::bytes_of!(
            self.group_block,
            self.group_diag,
            self.offsets,
            self.group_data,
            self.data
        )
    }
}

/// Milliseconds of a closure's run and its result.
pub(crate) fn timed<R>(f: impl FnOnce() -> R) -> (R, f64) {
    let t = Instant::now();
    let r = f();
    (r, ms_since(t))
}
