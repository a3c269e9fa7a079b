//! DASP (Lu & Liu, SC 2023; `../shared/FORMATS.md` §5): the host layout and its CPU
//! algorithm. **Not registered yet**: the tensor-core kernels (FP64 `m8n8k4` DMMA with the
//! diagonal trick, FP16 HMMA) are the next step of the DASP issue; this module fixes the
//! arrays they read.
//!
//! Rows are classified by length: **long** (more than `max_len`, 256 in the paper),
//! **medium** (5 ..= max_len), **short** (1 ..= 4) and **empty** (y = 0).
//!
//! - *Long rows* are cut into groups of 64 entries (2 MMAs of 8 pieces × 4), the last group
//!   zero-padded (value 0, column 0). `long_group_ptr[i]` is long row i's first group.
//! - *Medium rows* are sorted by length, longest first (stable); every 8 consecutive rows
//!   form a row-block, cut left to right into 8 × 4 tiles (tile t holds positions
//!   4t .. 4t + 3 of each of its 8 rows). A tile with at least `REGULAR_FILL` × 32 = 24 real
//!   entries is *regular*: stored whole (row-major, `A[i][k]` at `32·tile + 4·i + k`,
//!   padding value 0 / column 0) for the MMA. As rows are sorted, the regular tiles of a
//!   block are a prefix; every entry after them is *irregular*, stored CSR-like per row.
//! - *Short rows* are packed into pieces of 4 entries: a row of length 1 with one of length 3
//!   (group `1&3`), rows of length 4 and leftover length-3 rows padded to 4 (group `4`), rows
//!   of length 2 in pairs (group `2&2`); a leftover length-2 row is padded to 4 in group `4`
//!   too, and leftover length-1 rows form group `1`, one entry each.
//!
//! Worked example (`max_len` = 8 so that a small matrix has a long row):
//! ```text
//! row 0: 20 entries  long    → 1 group of 64 (20 real)
//! row 1: 0           empty
//! row 2..9: 6,6,6,6,6,6,6,6  medium → one row-block; tile 0 (positions 0-3): 32 real →
//!                             regular; tile 1 (positions 4-5): 16 real → irregular (2 per row)
//! row 10: 1, row 11: 3       short → one 1&3 piece [r10 e0, r11 e0, r11 e1, r11 e2]
//! row 12: 2, row 13: 2       short → one 2&2 piece [r12 e0, r12 e1, r13 e0, r13 e1]
//! row 14: 4                  short → one group-4 piece
//! ```
//! (checked by a test). Device indices are 32-bit. Padding slots hold value 0 at column 0,
//! as in the paper's code: they read `x[0]` (a non-finite `x[0]` would turn 0·x[0] into NaN).

mod cpu;
#[cfg(test)]
mod tests;

use rayon::prelude::*;

use super::FormatStats;
use crate::error::{Error, Result};
use crate::matrix::{Csr, Scalar};

const NAME: &str = "dasp";
/// Rows longer than this are long (the paper's MAX_LEN).
pub const MAX_LEN: usize = 256;
/// Entries per long-row group: 2 MMAs × 8 pieces × 4.
pub const LONG_GROUP: usize = 64;
/// Rows per medium row-block and entries per tile (8 × 4).
pub const BLOCK_ROWS: usize = 8;
pub const TILE: usize = 32;
/// A tile with at least this share of real entries is regular (MMA).
pub const REGULAR_FILL: f64 = 0.75;

/// Stored slots: a value and its column each; padding is value 0 at column 0.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Slots<T> {
    pub val: Vec<T>,
    pub cid: Vec<u32>,
}

impl<T: Scalar> Slots<T> {
    /// `n` padding slots.
    fn zeros(n: usize) -> Self {
        Slots { val: vec![T::ZERO; n], cid: vec![0; n] }
    }
    pub fn len(&self) -> usize {
        self.val.len()
    }
    pub fn is_empty(&self) -> bool {
        self.val.is_empty()
    }
    /// Appends a row's entries, padded to `width` slots.
    fn push_padded(&mut self, cols: &[u32], vals: &[T], width: usize) {
        self.val.extend(vals.iter().copied().chain(std::iter::repeat(T::ZERO)).take(width.max(vals.len())));
        self.cid.extend(cols.iter().copied().chain(std::iter::repeat(0)).take(width.max(cols.len())));
    }
    /// Σ val·x[cid] over the slots `range`.
    pub fn dot(&self, range: std::ops::Range<usize>, x: &[T]) -> T {
        self.val[range.clone()].iter().zip(&self.cid[range]).fold(T::ZERO, |s, (&v, &c)| s + v * x[c as usize])
    }
}

/// The short rows, packed (see the module doc); pieces are stored in the group order
/// 1&3, 4, 2&2, then the single entries of group 1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShortRows<T> {
    /// (length-1 row, length-3 row) of each 1&3 piece.
    pub rows_13: Vec<[u32; 2]>,
    /// The row of each group-4 piece (length 4, or a padded leftover of length 3 or 2).
    pub rows_4: Vec<u32>,
    /// The two rows of each 2&2 piece.
    pub rows_22: Vec<[u32; 2]>,
    /// Leftover rows of length 1.
    pub rows_1: Vec<u32>,
    /// 4 slots per piece, then one per group-1 row.
    pub slots: Slots<T>,
}

/// A matrix in the DASP layout.
pub struct Dasp<T> {
    nrows: usize,
    max_len: usize,
    /// Long rows (original ids), their first group (`len + 1` entries) and the groups.
    pub long_rows: Vec<u32>,
    pub long_group_ptr: Vec<u32>,
    pub long: Slots<T>,
    /// Medium rows sorted by length, longest first (original ids).
    pub medium_rows: Vec<u32>,
    /// Per row-block, its first regular tile (`blocks + 1` entries).
    pub block_tile_ptr: Vec<u32>,
    /// Regular tiles, 32 slots each, row-major within the tile.
    pub regular: Slots<T>,
    /// Per medium row (sorted order), its first irregular entry (`medium + 1` entries).
    pub irreg_ptr: Vec<u32>,
    pub irregular: Slots<T>,
    pub short: ShortRows<T>,
    pub empty_rows: Vec<u32>,
    nnz: usize,
    max_row_len: usize,
    mean_row_len: f64,
}

impl<T: Scalar> Dasp<T> {
    /// The paper's classification (long above 256 entries).
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_max_len(a, MAX_LEN)
    }

    /// Rows longer than `max_len` (≥ 4) are long.
    pub fn with_max_len(a: &Csr<T>, max_len: usize) -> Result<Self> {
        if max_len < 4 {
            return Err(Error::format(NAME, format!("max_len = {max_len}: rows of up to 4 entries are short, so it must be ≥ 4")));
        }
        if a.nrows() > u32::MAX as usize {
            return Err(Error::format(NAME, format!("{} rows exceed 32-bit row indices", a.nrows())));
        }
        let len = |r: usize| a.row_len(r);
        let (mut long_rows, mut medium_rows, mut empty_rows) = (Vec::new(), Vec::new(), Vec::new());
        let mut by_len: [Vec<u32>; 5] = Default::default();
        for r in 0..a.nrows() {
            match len(r) {
                0 => empty_rows.push(r as u32),
                l @ 1..=4 => by_len[l].push(r as u32),
                l if l > max_len => long_rows.push(r as u32),
                _ => medium_rows.push(r as u32),
            }
        }
        let (long_group_ptr, long) = long_groups(a, &long_rows);
        medium_rows.sort_by_key(|&r| std::cmp::Reverse(len(r as usize))); // stable
        let medium = medium_blocks(a, &medium_rows);
        let dasp = Dasp {
            nrows: a.nrows(),
            max_len,
            long_rows,
            long_group_ptr,
            long,
            medium_rows,
            block_tile_ptr: medium.block_tile_ptr,
            regular: medium.regular,
            irreg_ptr: medium.irreg_ptr,
            irregular: medium.irregular,
            short: short_pieces(a, by_len),
            empty_rows,
            nnz: a.nnz(),
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
        };
        if dasp.stored() > u32::MAX as usize {
            return Err(Error::format(NAME, format!("{} stored slots exceed 32-bit device offsets", dasp.stored())));
        }
        Ok(dasp)
    }

    pub fn nrows(&self) -> usize {
        self.nrows
    }
    pub fn max_len(&self) -> usize {
        self.max_len
    }
    /// Stored slots of every part, padding included.
    pub fn stored(&self) -> usize {
        self.long.len() + self.regular.len() + self.irregular.len() + self.short.slots.len()
    }
    /// Bytes of the arrays the kernels will read.
    pub fn device_bytes(&self) -> usize {
        let index = self.long_rows.len()
            + self.long_group_ptr.len()
            + self.medium_rows.len()
            + self.block_tile_ptr.len()
            + self.irreg_ptr.len()
            + 2 * (self.short.rows_13.len() + self.short.rows_22.len())
            + self.short.rows_4.len()
            + self.short.rows_1.len()
            + self.empty_rows.len();
        4 * (index + self.stored()) + std::mem::size_of::<T>() * self.stored()
    }

    pub fn stats(&self) -> FormatStats {
        let s = &self.short;
        FormatStats::new(self.device_bytes(), self.nnz, self.stored(), self.max_row_len, self.mean_row_len).with([
            ("long_rows", self.long_rows.len() as f64),
            ("medium_rows", self.medium_rows.len() as f64),
            ("short_rows", (2 * (s.rows_13.len() + s.rows_22.len()) + s.rows_4.len() + s.rows_1.len()) as f64),
            ("empty_rows", self.empty_rows.len() as f64),
            ("regular_tiles", (self.regular.len() / TILE) as f64),
            ("irregular_entries", self.irregular.len() as f64),
        ])
    }

    /// `y = A·x` on the CPU through the layout (`x.len() == ncols`, `y.len() == nrows`).
    pub fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        cpu::spmv(self, x, y)
    }
}

/// Long rows cut into zero-padded groups of [`LONG_GROUP`] entries: group pointers, slots.
fn long_groups<T: Scalar>(a: &Csr<T>, rows: &[u32]) -> (Vec<u32>, Slots<T>) {
    let mut ptr = vec![0u32];
    let mut slots = Slots::default();
    for &r in rows {
        let (c, v) = a.row(r as usize);
        let groups = v.len().div_ceil(LONG_GROUP);
        slots.push_padded(c, v, groups * LONG_GROUP);
        ptr.push(ptr.last().unwrap() + groups as u32);
    }
    (ptr, slots)
}

struct Medium<T> {
    block_tile_ptr: Vec<u32>,
    regular: Slots<T>,
    irreg_ptr: Vec<u32>,
    irregular: Slots<T>,
}

/// Regular tiles of a row-block of `lens` (sorted, longest first): the longest prefix of
/// tiles holding at least REGULAR_FILL of 32 real entries.
fn regular_tiles(lens: &[usize]) -> usize {
    let need = (REGULAR_FILL * TILE as f64).ceil() as usize;
    let mut t = 0;
    while lens.iter().map(|&l| l.saturating_sub(4 * t).min(4)).sum::<usize>() >= need {
        t += 1;
    }
    t
}

/// Medium rows (sorted) in row-blocks of 8: regular tiles, then each row's irregular rest.
fn medium_blocks<T: Scalar>(a: &Csr<T>, rows: &[u32]) -> Medium<T> {
    let blocks: Vec<&[u32]> = rows.chunks(BLOCK_ROWS).collect();
    let tiles: Vec<usize> = blocks
        .par_iter()
        .map(|b| regular_tiles(&b.iter().map(|&r| a.row_len(r as usize)).collect::<Vec<_>>()))
        .collect();
    let mut block_tile_ptr = vec![0u32];
    for &t in &tiles {
        block_tile_ptr.push(block_tile_ptr.last().unwrap() + t as u32);
    }
    let mut regular = Slots::zeros(*block_tile_ptr.last().unwrap() as usize * TILE);
    let mut irreg_ptr = vec![0u32];
    let mut irregular = Slots::default();
    for (b, block) in blocks.iter().enumerate() {
        let first_tile = block_tile_ptr[b] as usize;
        for (i, &r) in block.iter().enumerate() {
            let (c, v) = a.row(r as usize);
            let in_tiles = (4 * tiles[b]).min(v.len());
            for k in 0..in_tiles {
                let slot = (first_tile + k / 4) * TILE + 4 * i + k % 4;
                regular.val[slot] = v[k];
                regular.cid[slot] = c[k];
            }
            irregular.push_padded(&c[in_tiles..], &v[in_tiles..], 0);
            irreg_ptr.push(irregular.len() as u32);
        }
    }
    Medium { block_tile_ptr, regular, irreg_ptr, irregular }
}

/// Short rows (`by_len[l]`: the rows of length l) packed into pieces of 4 (module doc).
fn short_pieces<T: Scalar>(a: &Csr<T>, by_len: [Vec<u32>; 5]) -> ShortRows<T> {
    let [_, ones, twos, threes, fours] = by_len;
    let pairs_13 = ones.len().min(threes.len());
    let mut s = ShortRows {
        rows_13: ones.iter().zip(&threes).map(|(&p, &q)| [p, q]).collect(),
        rows_4: fours,
        rows_22: twos.chunks_exact(2).map(|p| [p[0], p[1]]).collect(),
        rows_1: ones[pairs_13..].to_vec(),
        ..Default::default()
    };
    // Leftover rows of length 3, and a last unpaired row of length 2, go to group 4 padded.
    s.rows_4.extend_from_slice(&threes[pairs_13..]);
    if twos.len() % 2 == 1 {
        s.rows_4.push(*twos.last().unwrap());
    }
    let push_row = |s: &mut ShortRows<T>, r: u32, width: usize| {
        let (c, v) = a.row(r as usize);
        s.slots.push_padded(c, v, width);
    };
    for [p, q] in s.rows_13.clone() {
        push_row(&mut s, p, 1);
        push_row(&mut s, q, 3);
    }
    for r in s.rows_4.clone() {
        push_row(&mut s, r, 4);
    }
    for [p, q] in s.rows_22.clone() {
        push_row(&mut s, p, 2);
        push_row(&mut s, q, 2);
    }
    for r in s.rows_1.clone() {
        push_row(&mut s, r, 1);
    }
    s
}
