//! CSR5 (Liu & Vinter, ICS 2015): the entries of a CSR matrix cut into tiles of ω × σ
//! (ω = 32 lanes, σ entries per lane), each tile stored transposed so that a warp's loads are
//! coalesced while every lane walks σ consecutive entries, with a bit flag per entry marking
//! where rows start. Every lane does the same work whatever the row lengths.
//!
//! **Layout** (this project's version; the paper is not among the source papers, so the
//! details below are ours where they differ from its outline):
//! - Rows without entries are taken out (`row_map`, original row of each remaining row, and
//!   `empty_rows`, zeroed by the kernel) only when there are any, so in the tiles every row
//!   start is a distinct entry.
//! - The entries are padded to whole tiles, with at least one padding entry: entry `nnz`
//!   starts a *virtual* row (number `m'`, past the last) that closes the last real one.
//! - `col5`, `val5`: tile `t`'s entry `e = t·ωσ + l·σ + k` (lane `l`, step `k`) is stored at
//!   `t·ωσ + k·ω + l`: step `k` of all 32 lanes is one coalesced load.
//! - `bits[t·ω + l]`: bit `k` set when entry `t·ωσ + l·σ + k` starts a row (the paper's
//!   bit_flag).
//! - `tile_base[t]`: row starts before the tile (the paper's tile_ptr). A lane's first row is
//!   `tile_base[t] + (set bits of the lanes before it) − 1` (the paper's y_offset, computed
//!   in the kernel with a warp prefix sum of the bit counts instead of being stored).
//!
//! **Kernel** (one warp per tile): lane `l` loads its σ products (col and value coalesced,
//! x gathered), walks them: a set bit closes the open row (the lane's first such row goes to
//! the warp's carry scan, later ones are complete and written), then the carries are finished
//! exactly as merge-path CSR's (segmented warp scan keyed by row, `tile_head` for the row that
//! began in an earlier tile, and a fixup kernel for rows crossing tiles: [`super::carry`]).
//! This is the paper's segmented sum and calibration, done with a fixed order of additions
//! instead of atomics: **deterministic**, and the CPU path (`cpu.rs`) gives the GPU's bits.
//!
//! **σ**: the paper picks σ from the mean row length; `auto` here takes the smallest of
//! [`SIGMA_CHOICES`] that is at least the mean row length (so a lane walks about one row),
//! within 4..=16 for f64 (larger σ costs registers, which cost occupancy) and 4..=32 otherwise.
//!
//! Worked example (a test: `tests.rs`), σ = 2 and 2 lanes per tile (the GPU has 32):
//!
//! ```text
//!     | 1 . 2 . |      row_ptr = [0, 2, 2, 5, 6, 8]   row 1 empty: row_map = [0, 2, 3, 4],
//!     | . . . . |      col_idx = [0, 2, 0, 1, 2, 1, 2, 3]          empty_rows = [1]
//! A = | 3 4 5 . |      entries e0..e7, values 1..8; rows (after the map) start at e0, e2, e5, e6;
//!     | . 6 . . |      the virtual row 4 at e8 (padding e8..e11: 3 tiles of 4 entries)
//!     | . . 7 8 |
//!
//! tile 0: lane 0 = e0 e1, lane 1 = e2 e3   bits [0b01, 0b01]   tile_base 0   col5 = [0, 0, 2, 1]
//! tile 1: lane 0 = e4 e5, lane 1 = e6 e7   bits [0b10, 0b01]   tile_base 2
//! tile 2: lane 0 = e8 e9, lane 1 = pad     bits [0b01, 0b00]   tile_base 4
//! tile 0: lane 1 closes row 0 (e2 starts row 1): y0 = 0 + carry of lane 0 = 1·x0 + 2·x2;
//!         tile carry (row 1 = A's row 2) = 3·x0 + 4·x1
//! tile 1: lane 0 closes row 1, which began in tile 0: tile_head[1] = 5·x2;
//!         lane 1 closes row 2 (A's row 3): y3 = 0 + carry of lane 0 = 6·x1; tile carry 7·x2 + 8·x3
//! tile 2: lane 0 closes row 3 (A's row 4), begun in tile 1: tile_head[2] = 0
//! fixup: y2 = tile_head[1] + (3·x0 + 4·x1),  y4 = tile_head[2] + (7·x2 + 8·x3);  y1 = 0
//! ```
//!
//! Device indices are 32-bit: the padded entry count must stay below 2^32 (larger matrices
//! are refused with [`Error::Format`]). The conversion runs on the host (parallel), timed in
//! `conv ms`, or with `convert=gpu` on the GPU during the upload ([`Csr5OnGpu`], `convert.cu`:
//! the same arrays bit for bit).

mod convert;
mod cpu;
mod gpu;

use rayon::prelude::*;

use super::carry::{self, Segment};
use super::values::{EncodedValues, ValueChoice, ValueCodec};
use super::{values, FormatInfo, Param};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Precision, Scalar};

pub use convert::{Csr5OnGpu, CONVERT_KERNELS};

/// The tile kernel's template and the header it needs, shared by both kernel modules.
const HEADERS: &[&str] =
    &[super::carry::CUDA_HEADER, super::values::CUDA_HEADER, include_str!("tile.cuh")];

/// The kernels over full values.
pub const KERNELS: KernelModule =
    KernelModule { name: "csr5", source: include_str!("kernel.cu"), headers: HEADERS };

/// The kernels over coded values (a module of their own: only coded matrices compile it).
pub const CODED_KERNELS: KernelModule =
    KernelModule { name: "csr5_coded", source: include_str!("coded.cu"), headers: HEADERS };

const NAME: &str = "csr5";

/// Lanes per tile on the GPU (ω, one warp).
const OMEGA: usize = 32;

/// The values of σ (entries per lane) that have kernels.
pub const SIGMA_CHOICES: &[usize] = &[4, 8, 12, 16, 24, 32];

/// σ for `auto`: the smallest choice at least the mean row length, at most 16 in f64.
pub fn auto_sigma(mean_row_len: f64, precision: Precision) -> usize {
    let cap = if precision == Precision::F64 { 16 } else { 32 };
    SIGMA_CHOICES.iter().copied().find(|&s| s as f64 >= mean_row_len).unwrap_or(32).min(cap)
}

/// A CSR matrix in CSR5 tiles.
pub struct Csr5<T> {
    nrows: usize,
    ncols: usize,
    nnz: usize,
    sigma: usize,
    /// Lanes per tile: 32 on the GPU; smaller only in tests of the layout.
    lanes: usize,
    col5: Vec<u32>,
    /// The values in the same slots (empty when they are coded).
    val5: Vec<T>,
    /// The values coded narrower (`values` other than full), slot for slot.
    coded: Option<EncodedValues<T>>,
    bits: Vec<u32>,
    /// Row starts before each tile, and after the last (tiles + 1 entries).
    tile_base: Vec<u32>,
    /// Original row of each row with entries; empty when no row is empty (the identity).
    row_map: Vec<u32>,
    empty_rows: Vec<u32>,
    segments: Vec<Segment>,
    max_row_len: usize,
}

/// The entries of `a` padded to whole tiles of `tile`, with at least one padding entry (the
/// virtual row's start); an error past 32-bit device indices (of entries or of rows).
fn padded_entries<T: Scalar>(a: &Csr<T>, tile: usize) -> Result<usize> {
    let (m, nnz) = (a.nrows(), a.nnz());
    if m > u32::MAX as usize {
        return Err(Error::format(
            NAME,
            format!("{m} rows exceed the 2^32 - 1 of 32-bit row indices"),
        ));
    }
    let padded = (nnz + 1).div_ceil(tile) * tile;
    if padded as u64 > u32::MAX as u64 {
        return Err(Error::format(
            NAME,
            format!(
                "{nnz} entries (padded to {padded}) exceed the 2^32 - 1 of 32-bit device indices"
            ),
        ));
    }
    Ok(padded)
}

/// Device bytes of the tiles but their values (`padded` columns, `words` bit-flag words, tile
/// bases, per-tile carries and heads of type `A`) and of a row map of `mapped_rows` entries;
/// the segments not included.
fn layout_bytes<A>(padded: usize, tiles: usize, words: usize, mapped_rows: usize) -> usize {
    4 * (padded + words + tiles + 1 + mapped_rows) + 2 * std::mem::size_of::<A>() * tiles
}

/// The rows that cross tiles, numbered as the tiles number rows (before the row map): tile
/// `t` carries the row open at its end (it holds the tile's last entry) unless that is the
/// virtual row.
fn carry_segments(tile_base: &[u32], real_rows: u32) -> Vec<Segment> {
    let mut segments = Vec::new();
    for (t, next_base) in tile_base.iter().skip(1).enumerate() {
        let open = next_base - 1;
        if open < real_rows {
            carry::push_carry(&mut segments, t, open);
        }
    }
    segments
}

/// `sigma` must be one of [`SIGMA_CHOICES`].
fn check_sigma(sigma: usize) -> Result<()> {
    if SIGMA_CHOICES.contains(&sigma) {
        return Ok(());
    }
    Err(Error::Unsupported(format!(
        "format {NAME}: parameter sigma={sigma} must be one of {} or auto",
        SIGMA_CHOICES.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
    )))
}

impl<T: Scalar> Csr5<T> {
    /// Tiles of 32 lanes with σ = `sigma` (one of [`SIGMA_CHOICES`]).
    pub fn new(a: &Csr<T>, sigma: usize) -> Result<Self> {
        check_sigma(sigma)?;
        Self::with_lanes(a, sigma, OMEGA)
    }

    /// The same with `lanes` lanes per tile (the CPU path only; the worked example uses 2).
    fn with_lanes(a: &Csr<T>, sigma: usize, lanes: usize) -> Result<Self> {
        let (m, nnz) = (a.nrows(), a.nnz());
        let tile = lanes * sigma;
        let padded = padded_entries(a, tile)?;
        let tiles = padded / tile;
        // Rows with entries, and where each starts (strictly increasing).
        let row_ptr = a.row_ptr();
        let has_empty = (0..m).any(|r| row_ptr[r] == row_ptr[r + 1]);
        let (row_map, empty_rows): (Vec<u32>, Vec<u32>) = if has_empty {
            let (full, empty): (Vec<u32>, Vec<u32>) =
                (0..m as u32).partition(|&r| a.row_len(r as usize) > 0);
            (full, empty)
        } else {
            (Vec::new(), Vec::new())
        };
        let mapped_starts: Vec<usize>;
        let starts: &[usize] = if has_empty {
            mapped_starts = row_map.iter().map(|&r| row_ptr[r as usize]).collect();
            &mapped_starts
        } else {
            &row_ptr[..m]
        };
        // Starts before entry e: real rows starting below e, plus the virtual row at nnz.
        let starts_before = |e: usize| starts.partition_point(|&s| s < e) + usize::from(nnz < e);
        let tile_base: Vec<u32> =
            (0..=tiles).into_par_iter().map(|t| starts_before(t * tile) as u32).collect();
        let mut bits = vec![0u32; tiles * lanes];
        for &s in starts.iter().chain(std::iter::once(&nnz)) {
            let (t, within) = (s / tile, s % tile);
            bits[t * lanes + within / sigma] |= 1 << (within % sigma);
        }
        // Transposed entries: stored slot t·tile + k·lanes + l holds entry t·tile + l·σ + k.
        let (cols, vals) = (a.col_idx(), a.values());
        let mut col5 = vec![0u32; padded];
        let mut val5 = vec![T::ZERO; padded];
        col5.par_chunks_mut(tile).zip(val5.par_chunks_mut(tile)).enumerate().for_each(
            |(t, (c, v))| {
                for slot in 0..tile {
                    let (k, l) = (slot / lanes, slot % lanes);
                    let e = t * tile + l * sigma + k;
                    if e < nnz {
                        c[slot] = cols[e];
                        v[slot] = vals[e];
                    }
                }
            },
        );
        let mut segments = carry_segments(&tile_base, (m - empty_rows.len()) as u32);
        if has_empty {
            segments.iter_mut().for_each(|s| s.row = row_map[s.row as usize]);
        }
        Ok(Csr5 {
            nrows: m,
            ncols: a.ncols(),
            nnz,
            sigma,
            lanes,
            col5,
            val5,
            coded: None,
            bits,
            tile_base,
            row_map,
            empty_rows,
            segments,
            max_row_len: a.max_row_len(),
        })
    }

    /// Tiles with the values stored as `values` asks: declined, with the reason, when the
    /// matrix's values do not fit the codec. Padding slots (never read) take the first
    /// value, so that they do not break a pattern.
    pub fn with_values(a: &Csr<T>, sigma: usize, values: ValueChoice) -> Result<Self> {
        let mut f = Self::new(a, sigma)?;
        if values == ValueChoice::Codec(ValueCodec::Full) {
            return Ok(f);
        }
        let mut slots = std::mem::take(&mut f.val5);
        f.fill_padding(&mut slots, a.values().first().copied().unwrap_or(T::ZERO));
        let coded = EncodedValues::encode(&slots, values, NAME)?;
        if coded.codec() == ValueCodec::Full {
            f.fill_padding(&mut slots, T::ZERO); // auto chose full: the padding as before
            f.val5 = slots;
        } else {
            f.coded = Some(coded);
        }
        Ok(f)
    }

    /// Sets the padding slots (entries past nnz) of `slots` to `value`.
    fn fill_padding(&self, slots: &mut [T], value: T) {
        let (lanes, sigma) = (self.lanes, self.sigma);
        let tile = lanes * sigma;
        slots.par_chunks_mut(tile).enumerate().for_each(|(t, v)| {
            for (slot, stored) in v.iter_mut().enumerate() {
                if t * tile + (slot % lanes) * sigma + slot / lanes >= self.nnz {
                    *stored = value;
                }
            }
        });
    }

    /// The value in slot `slot` (decoded when coded).
    #[inline]
    fn value(&self, slot: usize) -> T {
        match &self.coded {
            None => self.val5[slot],
            Some(c) => c.get(slot),
        }
    }

    /// σ, the entries per lane of a tile.
    pub fn sigma(&self) -> usize {
        self.sigma
    }
    /// Number of tiles of ω × σ entries.
    pub fn tiles(&self) -> usize {
        self.tile_base.len() - 1
    }
    /// The rows that cross tile boundaries, with the tiles carrying a part of each.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }
    /// Rows with entries (the rows the tiles number).
    fn real_rows(&self) -> usize {
        self.nrows - self.empty_rows.len()
    }
    /// The row of `y` for tile row `r`.
    fn original_row(&self, r: usize) -> usize {
        if self.row_map.is_empty() {
            r
        } else {
            self.row_map[r] as usize
        }
    }

    /// Padded entries (column + value), bit flags, tile bases, the row map and empty rows,
    /// the segments (3 × u32) and the per-tile carries and heads.
    pub fn device_bytes(&self) -> usize {
        layout_bytes::<T::Acc>(
            self.col5.len(),
            self.tiles(),
            self.bits.len(),
            self.row_map.len() + self.empty_rows.len(),
        ) + 12 * self.segments.len()
            + self
                .coded
                .as_ref()
                .map_or(self.val5.len() * std::mem::size_of::<T>(), |c| c.device_bytes())
    }
}

impl<T: Scalar> SpmvFormat<T> for Csr5<T> {
    fn stats(&self) -> FormatStats {
        let mean = if self.nrows == 0 { 0.0 } else { self.nnz as f64 / self.nrows as f64 };
        FormatStats::new(self.device_bytes(), self.nnz, self.col5.len(), self.max_row_len, mean)
            .with([
                ("sigma", self.sigma as f64),
                ("tiles", self.tiles() as f64),
                ("segments", self.segments.len() as f64),
                ("empty_rows", self.empty_rows.len() as f64),
            ])
            .with(self.coded.iter().flat_map(|c| c.stats()))
    }
    fn bytes_read(&self) -> usize {
        // The kernel loads no padding entry (entry index checked against nnz).
        let padding = self.col5.len() - self.nnz;
        match &self.coded {
            None => self.device_bytes() - padding * (4 + std::mem::size_of::<T>()),
            Some(c) => {
                self.device_bytes() - padding * 4 - c.device_bytes() + c.bytes_read(self.nnz)
            }
        }
    }
    super::cpu_and_device!(gpu::DeviceCsr5::new);
}

/// The registry's entry for `csr5` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "csr5",
        "CSR5 (Liu & Vinter): tiles of 32 x sigma entries stored transposed, row-start bit flags, carries fixed up deterministically",
        |a, s| {
            let sigma = match s.auto_usize("sigma", 1)? {
                Some(sigma) => sigma,
                None => auto_sigma(a.mean_row_len(), T::PRECISION),
            };
            let values = values::ValueChoice::of_spec(s)?;
            match s.choice("convert", &["host", "gpu"])? {
                "gpu" if values != values::ValueChoice::Codec(values::ValueCodec::Full) => Err(Error::Unsupported(
                    "format csr5: convert=gpu stores full values only; use convert=host with values other than full".into(),
                )),
                "gpu" => Ok(Box::new(Csr5OnGpu::new(a, sigma)?)),
                _ => Ok(Box::new(Csr5::with_values(a, sigma, values)?)),
            }
        },
    )
    .params(&[
        Param { key: "sigma", default: "auto", doc: "entries per lane: 4, 8, 12, 16, 24 or 32 (auto: from the mean row length)" },
        Param {
            key: "convert",
            default: "host",
            doc: "where the tiles are built: host (parallel, in conv ms) or gpu (on upload from the CSR arrays, as the paper; its time in the JSON's device_convert_ms)",
        },
        values::VALUES,
    ])
    .kernels(&[KERNELS, CODED_KERNELS, CONVERT_KERNELS])
    .deterministic()
    .half()
}

#[cfg(test)]
mod tests;
