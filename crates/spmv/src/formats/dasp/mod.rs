//! DASP (Lu & Liu, SC 2023; `../shared/FORMATS.md` §5): SpMV on the tensor cores. This file
//! is the layout and its conversion; `cpu.rs` the same algorithm on the CPU; `kernel.cu` and
//! `gpu.rs` the one-launch kernel (FP64 tiles by DMMA `m8n8k4` with the diagonal trick, FP32
//! tiles on CUDA cores). docs/dasp.md has the design, determinism and measurements.
//!
//! Rows are classified by length: **long** (more than `max_len`, 256 in the paper),
//! **medium** (5 ..= max_len), **short** (1 ..= 4) and **empty** (y = 0).
//!
//! - *Long rows* are cut into groups of 64 entries (2 MMAs of 8 pieces × 4), the last group
//!   zero-padded (value 0, column 0). `long.group_ptr[i]` is long row i's first group.
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
//! (checked by a test). Device row ids and tile indices are 32-bit; slot indices (and
//! `irreg_ptr`) are 32-bit below 2^31 stored slots and 64-bit from there on (`offsets`,
//! formats/offsets.rs; coded values keep 32-bit kernels). Padding slots hold value 0 at column 0,
//! as in the paper's code: they read `x[0]` (a non-finite `x[0]` would turn 0·x[0] into NaN).

mod cpu;
mod gpu;
#[cfg(test)]
mod tests;

use std::time::Instant;

use rayon::prelude::*;

use super::offsets::{OffsetWidth, WIDE_ENTRIES};
use super::values::{EncodedValues, ValueChoice, ValueCodec};
use super::{offsets, values, FormatInfo, Param, RowFigures};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{mul_acc, Csr, Scalar};
use crate::measure::ms_since;

pub(crate) const NAME: &str = "dasp";
const HEADERS: &[&str] = &[super::values::CUDA_HEADER, include_str!("dasp.cuh")];
/// The kernels over full values.
pub const KERNELS: KernelModule =
    KernelModule { name: "dasp", source: include_str!("kernel.cu"), headers: HEADERS };
/// The kernels over coded values (`values=…`; a module of their own: only coded matrices
/// compile it).
pub const CODED_KERNELS: KernelModule =
    KernelModule { name: "dasp_coded", source: include_str!("coded.cu"), headers: HEADERS };
/// The block kernels (`Y = α·A·X + β·Y`, 8 columns per launch) over full values: a module of
/// its own, compiled on the first block product.
pub const BLOCK_KERNELS: KernelModule =
    KernelModule { name: "dasp_block", source: include_str!("block.cu"), headers: HEADERS };
/// The block kernels over coded values.
pub const CODED_BLOCK_KERNELS: KernelModule = KernelModule {
    name: "dasp_block_coded",
    source: include_str!("block_coded.cu"),
    headers: HEADERS,
};
/// Rows longer than this are long (the paper's MAX_LEN).
pub const MAX_LEN: usize = 256;
/// Entries per long-row group: 2 MMAs × 8 pieces × 4.
pub const LONG_GROUP: usize = 64;
/// Long groups per warp on the GPU: a long row of n groups takes ceil(n / 32) warps, whose
/// partial sums the last of them adds up (32 measured best of 2-128 on the H200's large
/// generated matrices: fewer warps per row, fewer partials and counter updates).
pub const LONG_WARP_GROUPS: usize = 32;
/// Rows per medium row-block (and per tile).
pub const BLOCK_ROWS: usize = 8;
/// Entries per medium tile: 8 rows × 4.
pub const TILE: usize = 32;
/// A tile with at least this share of real entries is regular (MMA).
pub const REGULAR_FILL: f64 = 0.75;

/// The format's thresholds (`dasp:max_len=256,regular_fill=0.75,loop_num=auto`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Rows longer than this are long (≥ 4: rows of 1-4 entries are short).
    pub max_len: usize,
    /// Least share of real entries in a regular medium tile (0 < f ≤ 1).
    pub regular_fill: f64,
    /// Medium row-blocks per warp; `None`: the paper's rule ([`loop_num_rule`]).
    pub loop_num: Option<usize>,
    /// Medium rows are sorted by length within windows of this many medium rows (in their
    /// original order); `None`: one window, the paper's global sort. Smaller windows keep
    /// the rows of a row-block close together in y, so that their scattered writes of y
    /// fill whole sectors in L2 (docs/dasp.md).
    pub sigma: Option<usize>,
    /// Width of the device slot indices; `None`: 64 bits from 2^31 stored slots on, else 32.
    pub offsets: Option<OffsetWidth>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            max_len: MAX_LEN,
            regular_fill: REGULAR_FILL,
            loop_num: None,
            sigma: None,
            offsets: None,
        }
    }
}

/// The paper's LOOP_NUM: medium row-blocks per warp, 1 below 59,990 row-blocks, 2 below
/// 400,000, else 4 (fewer, longer-lived warps when there are many blocks).
pub fn loop_num_rule(row_blocks: usize) -> usize {
    match row_blocks {
        0..59_990 => 1,
        59_990..400_000 => 2,
        _ => 4,
    }
}

/// Stored slots: a value and its column each; padding is value 0 at column 0.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Slots<T> {
    /// Value of each slot (0 in padding).
    pub val: Vec<T>,
    /// Column of each slot (0 in padding).
    pub cid: Vec<u32>,
}

impl<T: Scalar> Slots<T> {
    /// `n` padding slots of part `part`, refused with the sizes when the host cannot hold
    /// them (the counts come from the matrix).
    fn zeros(n: usize, part: &str) -> Result<Self> {
        let bytes = n as u64 * (4 + std::mem::size_of::<T>() as u64);
        crate::error::check_host_memory(|| format!("format {NAME}: {n} {part} slots"), bytes)?;
        Ok(Slots { val: vec![T::ZERO; n], cid: vec![0; n] })
    }
    /// Number of slots, padding included.
    pub fn len(&self) -> usize {
        self.val.len()
    }
    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.val.is_empty()
    }
    /// Σ val·x[cid] over the slots `range`, summed in `T::Acc`.
    pub fn dot(&self, range: std::ops::Range<usize>, x: &[T]) -> T::Acc {
        self.val[range.clone()]
            .iter()
            .zip(&self.cid[range])
            .fold(T::Acc::ZERO, |s, (&v, &c)| mul_acc(s, v, x[c as usize]))
    }

    /// The slots cut into consecutive pieces of `widths` slots (value and column parts), for
    /// filling in parallel.
    fn pieces(&mut self, widths: impl IntoIterator<Item = usize>) -> Vec<(&mut [T], &mut [u32])> {
        let (mut val, mut cid) = (self.val.as_mut_slice(), self.cid.as_mut_slice());
        let mut parts = Vec::new();
        for w in widths {
            let (v, rest_v) = std::mem::take(&mut val).split_at_mut(w);
            let (c, rest_c) = std::mem::take(&mut cid).split_at_mut(w);
            parts.push((v, c));
            (val, cid) = (rest_v, rest_c);
        }
        parts
    }

    /// Slots of the rows `rows`, row k taking `width(k)` slots (its entries then padding),
    /// filled in parallel.
    fn of_rows(
        a: &Csr<T>, rows: &[u32], part: &str, width: impl Fn(usize) -> usize + Sync,
    ) -> Result<Self> {
        let widths: Vec<usize> = (0..rows.len()).map(&width).collect();
        let mut slots = Slots::zeros(widths.iter().sum(), part)?;
        let parts = slots.pieces(widths);
        rows.par_iter().zip(parts).for_each(|(&r, (v, c))| {
            let (cols, vals) = a.row(r as usize);
            let n = vals.len().min(v.len());
            v[..n].copy_from_slice(&vals[..n]);
            c[..n].copy_from_slice(&cols[..n]);
        });
        Ok(slots)
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

impl<T> ShortRows<T> {
    /// Every short row in slot order: 1&3 pieces, group 4, 2&2, group 1 (the kernel's
    /// `short_rows` array and the order the slots are filled in).
    pub fn rows_in_order(&self) -> Vec<u32> {
        let (pairs_13, pairs_22) = (self.rows_13.iter().flatten(), self.rows_22.iter().flatten());
        pairs_13.chain(&self.rows_4).chain(pairs_22).chain(&self.rows_1).copied().collect()
    }
}

/// Milliseconds of each conversion phase (reported in the stats).
#[derive(Clone, Copy, Debug, Default)]
pub struct Phases {
    /// Sorting the rows into long, medium, short and empty.
    pub classify_ms: f64,
    /// Cutting the long rows into groups.
    pub long_ms: f64,
    /// Sorting the medium rows and cutting them into tiles.
    pub medium_ms: f64,
    /// Packing the short rows into pieces.
    pub short_ms: f64,
}

/// A matrix in the DASP layout.
pub struct Dasp<T> {
    nrows: usize,
    params: Params,
    /// The long rows and their groups.
    pub long: LongRows<T>,
    /// The medium rows and their tiles.
    pub medium: Medium<T>,
    /// The short rows, packed into pieces of 4.
    pub short: ShortRows<T>,
    /// Rows without entries (original ids): `A·x` is 0 there.
    pub empty_rows: Vec<u32>,
    /// Wall time of each conversion phase.
    pub phases: Phases,
    /// With `values=` other than full: the values of the long, regular, irregular and short
    /// slots coded with one codec (each part its own codes and table), for the GPU; the CPU
    /// path reads the slots' own values, which decode to the same bits.
    pub coded: Vec<EncodedValues<T>>,
    /// Width of the device slot indices and `irreg_ptr`.
    pub offsets: OffsetWidth,
    /// Entries of the long, medium and short rows (the paper's Figure 15).
    class_nnz: [usize; 3],
    rows: RowFigures,
}

impl<T: Scalar> Dasp<T> {
    /// The paper's thresholds.
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_params(a, Params::default())
    }

    /// The paper's thresholds but rows longer than `max_len` are long.
    pub fn with_max_len(a: &Csr<T>, max_len: usize) -> Result<Self> {
        Self::with_params(a, Params { max_len, ..Params::default() })
    }

    /// The layout with the thresholds `params`. `Error::Format` for a parameter out of range
    /// (`max_len` < 4, `regular_fill` outside (0, 1], `loop_num` or `sigma` 0), more rows than
    /// 32-bit ids hold, or more slots than the device indices do.
    pub fn with_params(a: &Csr<T>, params: Params) -> Result<Self> {
        let Params { max_len, regular_fill, loop_num, sigma, offsets } = params;
        if max_len < 4 {
            return Err(Error::format(
                NAME,
                format!(
                    "max_len = {max_len}: rows of up to 4 entries are short, so it must be ≥ 4"
                ),
            ));
        }
        if !(regular_fill > 0.0 && regular_fill <= 1.0) {
            return Err(Error::format(
                NAME,
                format!("regular_fill = {regular_fill} must be in (0, 1]"),
            ));
        }
        if loop_num == Some(0) || sigma == Some(0) {
            return Err(Error::format(NAME, "loop_num and sigma must be ≥ 1"));
        }
        if a.nrows() > u32::MAX as usize {
            return Err(Error::format(
                NAME,
                format!("{} rows exceed 32-bit row indices", a.nrows()),
            ));
        }
        let len = |r: u32| a.row_len(r as usize);
        let start = Instant::now();
        let class = |r: u32| match len(r) {
            0 => 0,
            l @ 1..=4 => l,
            l if l > max_len => 6,
            _ => 5,
        };
        let all: Vec<u32> = (0..a.nrows() as u32).collect();
        let mut by_class: Vec<Vec<u32>> = (0..7u8)
            .into_par_iter()
            .map(|c| all.iter().copied().filter(|&r| class(r) == c as usize).collect())
            .collect();
        let long_rows = std::mem::take(&mut by_class[6]);
        let mut medium_rows = std::mem::take(&mut by_class[5]);
        let empty_rows = std::mem::take(&mut by_class[0]);
        let by_len: [Vec<u32>; 5] = [
            Vec::new(),
            std::mem::take(&mut by_class[1]),
            std::mem::take(&mut by_class[2]),
            std::mem::take(&mut by_class[3]),
            std::mem::take(&mut by_class[4]),
        ];
        let class_nnz =
            [&long_rows, &medium_rows, &by_len.iter().flatten().copied().collect::<Vec<u32>>()]
                .map(|rows| rows.par_iter().map(|&r| len(r)).sum::<usize>());
        let classify_ms = ms_since(start);

        let start = Instant::now();
        let (mut long_group_ptr, mut long_warp_ptr) = (vec![0u32], vec![0u32]);
        let mut long_warp_row = Vec::new();
        for (i, &r) in long_rows.iter().enumerate() {
            let groups = len(r).div_ceil(LONG_GROUP);
            let warps = groups.div_ceil(LONG_WARP_GROUPS);
            long_group_ptr.push(long_group_ptr[i] + groups as u32);
            long_warp_ptr.push(long_warp_ptr[i] + warps as u32);
            long_warp_row.extend(std::iter::repeat_n(i as u32, warps));
        }
        let long = Slots::of_rows(a, &long_rows, "long-row", |i| {
            (long_group_ptr[i + 1] - long_group_ptr[i]) as usize * LONG_GROUP
        })?;
        let long_ms = ms_since(start);

        let start = Instant::now();
        let window = sigma.unwrap_or(medium_rows.len()).max(1);
        medium_rows
            .par_chunks_mut(window)
            .for_each(|w| w.sort_by_key(|&r| std::cmp::Reverse(len(r)))); // stable
        let need = (regular_fill * TILE as f64).ceil() as usize;
        let medium = medium_blocks(a, medium_rows, need)?;
        let medium_ms = ms_since(start);

        let start = Instant::now();
        let short = short_pieces(a, by_len)?;
        let short_ms = ms_since(start);

        let dasp = Dasp {
            nrows: a.nrows(),
            params,
            long: LongRows {
                rows: long_rows,
                group_ptr: long_group_ptr,
                warp_ptr: long_warp_ptr,
                warp_row: long_warp_row,
                groups: long,
            },
            medium,
            short,
            empty_rows,
            phases: Phases { classify_ms, long_ms, medium_ms, short_ms },
            coded: Vec::new(),
            offsets: OffsetWidth::W32,
            class_nnz,
            rows: RowFigures::of(a),
        };
        // Slots are indexed in the chosen width, tiles (32 slots) and long groups in 32 bits.
        let stored = dasp.stored();
        if stored / TILE > u32::MAX as usize - LONG_GROUP {
            return Err(Error::format(
                NAME,
                format!("{stored} stored slots exceed the 32-bit tile indices (2^37 slots)"),
            ));
        }
        let offsets = match offsets {
            Some(width) => width.fits(NAME, stored)?,
            None => OffsetWidth::auto(stored),
        };
        Ok(Dasp { offsets, ..dasp })
    }

    /// Number of rows of the matrix.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// The thresholds it was built with.
    pub fn params(&self) -> Params {
        self.params
    }
    /// Medium row-blocks per warp (the parameter, or the paper's rule).
    pub fn loop_num(&self) -> usize {
        self.params
            .loop_num
            .unwrap_or_else(|| loop_num_rule(self.medium.rows.len().div_ceil(BLOCK_ROWS)))
    }
    /// The layout with the values coded as `values` asks (f64 and f32): declined, with the
    /// reason, when the slots' values, padding zeros included, do not fit the codec.
    pub fn with_values(a: &Csr<T>, params: Params, values: ValueChoice) -> Result<Self> {
        let mut dasp = Self::with_params(a, params)?;
        if values == ValueChoice::Codec(ValueCodec::Full) {
            return Ok(dasp);
        }
        if T::PRECISION == crate::matrix::Precision::F16 {
            return Err(Error::format(
                NAME,
                "values other than full run in f64 and f32 (the f16 tiles load value pairs)",
            ));
        }
        if dasp.offsets == OffsetWidth::W64 {
            let why = format!("values other than full have 32-bit slot indices only (below {WIDE_ENTRIES} stored slots)");
            return Err(Error::format(NAME, why));
        }
        // One codec for the four parts (one kernel), chosen on all slots together; a codec
        // that fits them all fits each part.
        let parts = [
            &dasp.long.groups.val,
            &dasp.medium.regular.val,
            &dasp.medium.irregular.val,
            &dasp.short.slots.val,
        ];
        let all: Vec<T> = parts.iter().flat_map(|p| p.iter().copied()).collect();
        let codec = EncodedValues::codec_for(&all, values, NAME)?;
        drop(all);
        if codec == ValueCodec::Full {
            return Ok(dasp); // values=auto found nothing narrower
        }
        dasp.coded = parts.iter().map(|p| EncodedValues::with_codec(p, codec)).collect();
        Ok(dasp)
    }

    /// The coding's stats: bytes per slot and the table entries of the four parts.
    fn coded_stats(&self) -> Vec<(&'static str, f64)> {
        match self.coded.first() {
            None => Vec::new(),
            Some(c) => vec![
                ("value_bytes", c.codec().code_bytes::<T>() as f64),
                (
                    "value_table",
                    self.coded.iter().map(EncodedValues::table_len).sum::<usize>() as f64,
                ),
            ],
        }
    }

    /// Stored slots of every part, padding included.
    pub fn stored(&self) -> usize {
        self.long.groups.len()
            + self.medium.regular.len()
            + self.medium.irregular.len()
            + self.short.slots.len()
    }
    /// Bytes of the arrays the kernels read.
    pub fn device_bytes(&self) -> usize {
        let index = self.long.rows.len()
            + self.long.group_ptr.len()
            + self.long.warp_ptr.len()
            + self.long.warp_row.len()
            + self.medium.rows.len()
            + self.medium.block_tile_ptr.len()
            + 2 * (self.short.rows_13.len() + self.short.rows_22.len())
            + self.short.rows_4.len()
            + self.short.rows_1.len()
            + self.empty_rows.len();
        let values = if self.coded.is_empty() {
            std::mem::size_of::<T>() * self.stored()
        } else {
            self.coded.iter().map(EncodedValues::device_bytes).sum()
        };
        4 * (index + self.stored()) + self.offsets.bytes() * self.medium.irreg_ptr.len() + values
    }
}

impl<T: Scalar> SpmvFormat<T> for Dasp<T> {
    fn stats(&self) -> FormatStats {
        let s = &self.short;
        let p = &self.phases;
        self.rows
            .stats(self.device_bytes(), self.stored())
            .with([
                ("long_rows", self.long.rows.len() as f64),
                ("medium_rows", self.medium.rows.len() as f64),
                (
                    "short_rows",
                    (2 * (s.rows_13.len() + s.rows_22.len()) + s.rows_4.len() + s.rows_1.len())
                        as f64,
                ),
                ("empty_rows", self.empty_rows.len() as f64),
                ("long_nnz", self.class_nnz[0] as f64),
                ("medium_nnz", self.class_nnz[1] as f64),
                ("short_nnz", self.class_nnz[2] as f64),
                ("regular_tiles", (self.medium.regular.len() / TILE) as f64),
                ("irregular_entries", self.medium.irregular.len() as f64),
                ("loop_num", self.loop_num() as f64),
                ("offset_bytes", self.offsets.bytes() as f64),
                ("classify_ms", p.classify_ms),
                ("long_ms", p.long_ms),
                ("medium_ms", p.medium_ms),
                ("short_ms", p.short_ms),
            ])
            .with(self.coded_stats())
    }
    super::cpu_and_device!(gpu::DeviceDasp::new);
}

/// DASP's long rows: each cut into groups of [`LONG_GROUP`] slots, the last zero-padded.
pub struct LongRows<T> {
    /// The long rows (original ids).
    pub rows: Vec<u32>,
    /// Per long row, its first group in `groups` (`rows.len() + 1` entries).
    pub group_ptr: Vec<u32>,
    /// Per long row, its first GPU warp, [`LONG_WARP_GROUPS`] groups a warp (`len + 1` entries).
    pub warp_ptr: Vec<u32>,
    /// Per GPU warp, its long row (index into `rows`).
    pub warp_row: Vec<u32>,
    /// The groups, row after row.
    pub groups: Slots<T>,
}

/// DASP's medium rows: row-blocks of regular tiles, and the irregular rest of each row.
pub struct Medium<T> {
    /// The medium rows sorted by length, longest first (original ids).
    pub rows: Vec<u32>,
    /// Per row-block, its first regular tile (`blocks + 1` entries).
    pub block_tile_ptr: Vec<u32>,
    /// Regular tiles, 32 slots each, row-major within the tile.
    pub regular: Slots<T>,
    /// Per medium row (sorted order), its first irregular entry (`rows.len() + 1` entries).
    pub irreg_ptr: Vec<usize>,
    /// The irregular entries, row after row in sorted order.
    pub irregular: Slots<T>,
}

/// Regular tiles of a row-block of `lens` (sorted, longest first): the longest prefix of
/// tiles holding at least `need` real entries.
fn regular_tiles(lens: &[usize], need: usize) -> usize {
    let mut t = 0;
    while lens.iter().map(|&l| l.saturating_sub(4 * t).min(4)).sum::<usize>() >= need.max(1) {
        t += 1;
    }
    t
}

/// Medium rows (sorted) in row-blocks of 8: regular tiles, then each row's irregular rest.
fn medium_blocks<T: Scalar>(a: &Csr<T>, rows: Vec<u32>, need: usize) -> Result<Medium<T>> {
    let lens: Vec<usize> = rows.iter().map(|&r| a.row_len(r as usize)).collect();
    let tiles: Vec<usize> = lens.par_chunks(BLOCK_ROWS).map(|b| regular_tiles(b, need)).collect();
    let mut block_tile_ptr = vec![0u32];
    for &t in &tiles {
        block_tile_ptr.push(block_tile_ptr.last().unwrap() + t as u32);
    }
    // Regular tiles, block by block in parallel.
    let mut regular =
        Slots::zeros(*block_tile_ptr.last().unwrap() as usize * TILE, "regular-tile")?;
    let parts = regular.pieces(tiles.iter().map(|&t| t * TILE));
    parts.into_par_iter().zip(&tiles).enumerate().for_each(|(b, ((v, c), &t))| {
        for (i, &r) in rows[b * BLOCK_ROWS..].iter().take(BLOCK_ROWS).enumerate() {
            let (cols, vals) = a.row(r as usize);
            for k in 0..(4 * t).min(vals.len()) {
                let slot = (k / 4) * TILE + 4 * i + k % 4;
                v[slot] = vals[k];
                c[slot] = cols[k];
            }
        }
    });
    // The irregular rest of each row (the entries after its block's regular tiles).
    let in_tiles = |m: usize| (4 * tiles[m / BLOCK_ROWS]).min(lens[m]);
    let mut irreg_ptr = vec![0];
    for m in 0..rows.len() {
        irreg_ptr.push(irreg_ptr[m] + lens[m] - in_tiles(m));
    }
    let mut irregular = Slots::zeros(*irreg_ptr.last().unwrap(), "irregular")?;
    let parts = irregular.pieces(irreg_ptr.windows(2).map(|p| p[1] - p[0]));
    parts.into_par_iter().enumerate().for_each(|(m, (v, c))| {
        let (cols, vals) = a.row(rows[m] as usize);
        let skip = in_tiles(m);
        v.copy_from_slice(&vals[skip..]);
        c.copy_from_slice(&cols[skip..]);
    });
    Ok(Medium { rows, block_tile_ptr, regular, irreg_ptr, irregular })
}

/// Short rows (`by_len[l]`: the rows of length l) packed into pieces of 4 (module doc).
fn short_pieces<T: Scalar>(a: &Csr<T>, by_len: [Vec<u32>; 5]) -> Result<ShortRows<T>> {
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
    // Every row in slot order with its width: 1&3 pieces, group 4, 2&2, group 1.
    let rows = s.rows_in_order();
    let (n13, n4, n22) = (2 * s.rows_13.len(), s.rows_4.len(), 2 * s.rows_22.len());
    s.slots = Slots::of_rows(a, &rows, "short-row", |k| match k {
        k if k < n13 => [1, 3][k % 2],
        k if k < n13 + n4 => 4,
        k if k < n13 + n4 + n22 => 2,
        _ => 1,
    })?;
    Ok(s)
}

/// The registry's entry for `dasp` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "dasp",
        "DASP: long rows in 64-entry groups, medium rows in sorted 8-row blocks of 8x4 tiles, short rows packed in 4s; FP64 tiles on the tensor cores (DMMA m8n8k4, diagonal trick), FP32 on CUDA cores",
        |a, s| {
            let params = Params {
                max_len: s.usize("max_len", 4)?,
                regular_fill: s.f64("regular_fill", f64::MIN_POSITIVE)?,
                loop_num: s.auto_usize("loop_num", 1)?,
                sigma: s.auto_usize("sigma", 1)?,
                offsets: OffsetWidth::requested(s)?,
            };
            Ok(Box::new(Dasp::with_values(a, params, values::ValueChoice::of_spec(s)?)?))
        },
    )
    .params(&[
        Param { key: "max_len", default: "256", doc: "rows longer than this are long (≥ 4)" },
        Param { key: "regular_fill", default: "0.75", doc: "least share of real entries in a regular (MMA) medium tile, in (0, 1]" },
        Param { key: "loop_num", default: "auto", doc: "medium row-blocks per warp (≥ 1; auto: 1, 2 or 4 by the paper's rule)" },
        Param { key: "sigma", default: "auto", doc: "medium rows sorted by length within windows of sigma rows (≥ 1; auto: all, the paper's global sort)" },
        values::VALUES,
        offsets::OFFSETS,
    ])
    .kernels(&[KERNELS, CODED_KERNELS, BLOCK_KERNELS, CODED_BLOCK_KERNELS])
    .deterministic()
    .half()
    .wide()
}
