//! DIA-Adaptive (Gao et al.): classifies the matrix, then stores it in DIA, BRCSD-I or
//! BRCSD-II, each with its own kernel.
//!
//! - **DIA** ([`dia`](super::dia)): for matrices whose diagonals run the whole length.
//! - **BRCSD-I** (diagonal storage on row blocks, I): the rows are cut at the *cross
//!   points*, the rows where a diagonal starts (its first entry) or ends (one past its last
//!   entry), so that the set of diagonals is constant within a block; each block is stored
//!   DIA-style with its own offsets and its height as stride. This removes the padding of
//!   long offsets (a diagonal far from the main one only spans part of the rows) and of
//!   diagonals that start or stop. For the GPU each block is cut into pieces of at most 64
//!   rows (the paper's re-blocking threshold), one CUDA block of 64 threads per piece.
//!   Arrays: `block_row` (first row per block), `block_diag` (cumulative diagonal count),
//!   `offsets`, `block_data` (first slot per block, 64-bit), `data`; `piece_row`,
//!   `piece_block`.
//! - **BRCSD-II**: fixed blocks of 32 rows (the paper's setting) stored DIA-style as in
//!   HDIA, consecutive blocks with identical offsets sharing one offset list (the paper's
//!   `{2|[0,1,3], 1|[-3,0]}`): `group_block` (first block per group), `group_diag`
//!   (cumulative offset count), `offsets`, `group_data` (first slot per group), `data`. One
//!   thread per row; a thread finds its block's group by binary search over `group_block`
//!   (the same for the whole warp). For scattered points and long broken diagonals.
//!
//! **Classification.** The DRM paper only summarises the original "search engine", so this
//! module uses its own documented rule, on the slots each layout would store (computed
//! before anything is allocated): `dia = S·m`, `brcsd1 = Σ_b dig_b·h_b` over the cross-point
//! blocks, `brcsd2 = Σ_k dig_k·32`.
//! 1. BRCSD-I is a candidate only if its blocks average at least 32 rows (no more blocks than
//!    BRCSD-II has): a short block leaves most of its 64 threads idle, and a matrix whose
//!    diagonal set changes every few rows is the scattered case BRCSD-II is for.
//! 2. With `best` the fewest slots among the candidates, take DIA if `dia ≤ 1.1·best`, else
//!    BRCSD-I if it is a candidate and `brcsd1 ≤ 1.1·best`, else BRCSD-II: the simpler kernel
//!    wins unless the next one saves more than 10% of the traffic.
//!
//! The chosen layout then obeys the family's default padding limit (see [`dia`](super::dia)).
//!
//! The example matrix of [`dia`](super::dia): DIA stores 32 slots, BRCSD-I 18 in 5 blocks
//! (no padding at all: the cross points are rows 0, 2, 4, 5, 7, 8), BRCSD-II 128 (one block of
//! 32 rows, 24 of them padding rows). BRCSD-I has more blocks than BRCSD-II and is no
//! candidate, so DIA is chosen. Forced, the two blocked layouts are (BRCSD-II with blocks of
//! 2 rows to keep it short):
//! ```text
//!      c0 c1 c2 c3 c4 c5 c6 c7
//! r0 |  1  .  .  .  .  .  .  . |   BRCSD-I  block_row  = [0, 2, 4, 5, 7, 8]
//! r1 |  .  2  .  .  .  .  .  . |            block_diag = [0, 1, 3, 7, 10, 12]
//! r2 |  .  .  3  4  .  .  .  . |            offsets    = [0 | 0, 1 | -2, 0, 1, 3 | -2, 0, 1 | -2, 0]
//! r3 |  .  .  .  5  6  .  .  . |            block_data = [0, 2, 6, 10, 16, 18]
//! r4 |  .  .  7  .  8  9  . 10 |            data       = [1, 2 | 3, 5, 4, 6 | 7, 8, 9, 10 |
//! r5 |  .  .  . 11  . 12 13  . |                          11, 14, 12, 15, 13, 16 | 17, 18]
//! r6 |  .  .  .  . 14  . 15 16 |   BRCSD-II group_block = [0, 1, 2, 3, 4] (no two equal blocks)
//! r7 |  .  .  .  .  . 17  . 18 |            data = HDIA's with hacks of 2 rows
//! ```
//!
//! All three kernels run one thread per row, adding its diagonals in ascending order:
//! deterministic. The statistics report the chosen layout (0 DIA, 1 BRCSD-I, 2 BRCSD-II),
//! the three slot counts, and the operand spread over the chosen layout's work units (DIA:
//! warps of 32 rows; BRCSD-I: pieces; BRCSD-II: blocks).

mod brcsd;
mod cpu;
mod gpu;

use std::sync::Arc;

pub use brcsd::{Brcsd1, Brcsd2};

use super::dia::diagonals::{self, OperandSpread, PADDING_LIMIT_RATIO, SEGMENT_ROWS};
use super::dia::Dia;
use super::{dia, FormatInfo, Param};
use super::{DeviceFormat, FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};

/// The kernels of the three layouts.
pub const KERNELS: KernelModule = KernelModule {
    name: "dia_adaptive",
    source: include_str!("kernel.cu"),
    headers: &[diagonals::CUDA_HEADER],
};

const NAME: &str = "dia-adaptive";

/// Rows per BRCSD-II block (the paper's setting).
pub const BLOCK_ROWS: usize = SEGMENT_ROWS;
/// Most rows of a BRCSD-I piece, the threads of its CUDA block (the paper's setting).
pub const PIECE_ROWS: usize = 64;
/// A simpler layout is kept unless a later one stores this factor fewer slots.
pub const PREFERENCE: f64 = 1.1;

/// The three layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Plain DIA: full-length diagonals.
    Dia,
    /// BRCSD-I: row blocks cut at the cross points, each stored DIA-style.
    Brcsd1,
    /// BRCSD-II: fixed blocks of rows, equal neighbours sharing one offset list.
    Brcsd2,
}

/// The slot counts the classification compares, and its choice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Classification {
    /// Slots DIA would store (diagonals × rows).
    pub dia_slots: u128,
    /// Slots BRCSD-I would store.
    pub brcsd1_slots: u128,
    /// BRCSD-I's row blocks (between cross points).
    pub brcsd1_blocks: usize,
    /// Slots BRCSD-II would store.
    pub brcsd2_slots: u128,
    /// BRCSD-II's blocks of rows.
    pub brcsd2_blocks: usize,
    /// The layout taken (by the rule, or forced).
    pub chosen: Layout,
}

/// The rule of the module doc.
pub fn classify(
    dia_slots: u128, brcsd1_slots: u128, brcsd1_blocks: usize, brcsd2_slots: u128,
    brcsd2_blocks: usize,
) -> Layout {
    let brcsd1_candidate = brcsd1_blocks <= brcsd2_blocks;
    let best =
        dia_slots.min(brcsd2_slots).min(if brcsd1_candidate { brcsd1_slots } else { u128::MAX });
    let within = |slots: u128| slots as f64 <= PREFERENCE * best as f64;
    if within(dia_slots) {
        Layout::Dia
    } else if brcsd1_candidate && within(brcsd1_slots) {
        Layout::Brcsd1
    } else {
        Layout::Brcsd2
    }
}

enum Stored<T> {
    Dia(Dia<T>),
    Brcsd1(Brcsd1<T>),
    Brcsd2(Brcsd2<T>),
}

/// A matrix in DIA-Adaptive (see the module doc).
pub struct DiaAdaptive<T> {
    nrows: usize,
    stored: Stored<T>,
    classification: Classification,
    conversion: diagonals::Conversion,
}

impl<T: Scalar> DiaAdaptive<T> {
    /// Classifies and converts (BRCSD-II blocks of 32 rows, BRCSD-I pieces of 64).
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_layout(a, None, BLOCK_ROWS, PIECE_ROWS)
    }

    /// Converts into `layout` (or the classification's choice when `None`) with BRCSD-II
    /// blocks of `block_rows ≥ 1` rows and BRCSD-I pieces of `piece_rows` in 1..=1024 rows.
    pub fn with_layout(
        a: &Csr<T>, layout: Option<Layout>, block_rows: usize, piece_rows: usize,
    ) -> Result<Self> {
        diagonals::check_shape(NAME, a)?;
        if block_rows == 0 || block_rows > i32::MAX as usize || piece_rows == 0 || piece_rows > 1024
        {
            return Err(Error::format(
                NAME,
                format!(
                    "{block_rows} rows per BRCSD-II block, {piece_rows} per BRCSD-I piece: need 1..2^31 and 1..=1024"
                ),
            ));
        }
        let m = a.nrows();
        let elem = std::mem::size_of::<T>();
        let ((census, plan, block_offsets), classify_ms) = brcsd::timed(|| {
            let census = diagonals::census(a);
            let plan = brcsd::cross_points(&census, m);
            (census, plan, diagonals::segment_offsets(a, block_rows))
        });
        let dia_slots = census.len() as u128 * m as u128;
        let brcsd2_slots = diagonals::segment_slots(&block_offsets, block_rows);
        let chosen = layout.unwrap_or_else(|| {
            classify(dia_slots, plan.stored, plan.blocks(), brcsd2_slots, block_offsets.len())
        });
        let classification = Classification {
            dia_slots,
            brcsd1_slots: plan.stored,
            brcsd1_blocks: plan.blocks(),
            brcsd2_slots,
            brcsd2_blocks: block_offsets.len(),
            chosen,
        };
        let (stored, fill_ms) = match chosen {
            Layout::Dia => {
                let offsets = census.iter().map(|d| d.offset).collect();
                let (dia, ms) = brcsd::timed(|| {
                    Dia::with_offsets(NAME, a, offsets, 0.0, PADDING_LIMIT_RATIO as f64)
                });
                (Stored::Dia(dia?), ms)
            }
            Layout::Brcsd1 => {
                let layout = format!("BRCSD-I with {} row blocks", plan.blocks());
                diagonals::check_padding(
                    NAME,
                    &layout,
                    plan.stored,
                    a.nnz(),
                    elem,
                    PADDING_LIMIT_RATIO as f64,
                )?;
                let (f, ms) = brcsd::timed(|| Brcsd1::build(NAME, a, &census, &plan, piece_rows));
                (Stored::Brcsd1(f?), ms)
            }
            Layout::Brcsd2 => {
                let layout =
                    format!("BRCSD-II with {} blocks of {block_rows} rows", block_offsets.len());
                diagonals::check_padding(
                    NAME,
                    &layout,
                    brcsd2_slots,
                    a.nnz(),
                    elem,
                    PADDING_LIMIT_RATIO as f64,
                )?;
                let (f, ms) = brcsd::timed(|| Brcsd2::build(NAME, a, &block_offsets, block_rows));
                (Stored::Brcsd2(f?), ms)
            }
        };
        let conversion =
            diagonals::Conversion::of(a, [("classify_ms", classify_ms), ("fill_ms", fill_ms)]);
        Ok(DiaAdaptive { nrows: m, stored, classification, conversion })
    }

    /// The slot counts the classification compared, and the layout taken.
    pub fn classification(&self) -> Classification {
        self.classification
    }
    /// The layout in use.
    pub fn layout(&self) -> Layout {
        match self.stored {
            Stored::Dia(_) => Layout::Dia,
            Stored::Brcsd1(_) => Layout::Brcsd1,
            Stored::Brcsd2(_) => Layout::Brcsd2,
        }
    }
    /// The BRCSD-I layout, when in use.
    pub fn brcsd1(&self) -> Option<&Brcsd1<T>> {
        match &self.stored {
            Stored::Brcsd1(f) => Some(f),
            _ => None,
        }
    }
    /// The BRCSD-II layout, when in use.
    pub fn brcsd2(&self) -> Option<&Brcsd2<T>> {
        match &self.stored {
            Stored::Brcsd2(f) => Some(f),
            _ => None,
        }
    }
    /// Stored slots, padding included.
    pub fn stored(&self) -> usize {
        match &self.stored {
            Stored::Dia(f) => f.stored(),
            Stored::Brcsd1(f) => f.data.len(),
            Stored::Brcsd2(f) => f.data.len(),
        }
    }
    /// Operands per work unit of the layout in use.
    pub fn operand_spread(&self) -> OperandSpread {
        match &self.stored {
            Stored::Dia(f) => f.operand_spread(),
            Stored::Brcsd1(f) => f.operand_spread(),
            Stored::Brcsd2(f) => f.operands,
        }
    }
    /// Device bytes of the layout in use.
    pub fn device_bytes(&self) -> usize {
        match &self.stored {
            Stored::Dia(f) => f.device_bytes(),
            Stored::Brcsd1(f) => f.device_bytes(),
            Stored::Brcsd2(f) => f.device_bytes(),
        }
    }
}

impl<T: Scalar> SpmvFormat<T> for DiaAdaptive<T> {
    fn stats(&self) -> FormatStats {
        let c = &self.classification;
        let units = match &self.stored {
            Stored::Dia(_) => 0.0,
            Stored::Brcsd1(f) => f.blocks() as f64,
            Stored::Brcsd2(f) => f.groups() as f64,
        };
        let own = [
            ("layout", self.layout() as u8 as f64),
            ("dia_slots", c.dia_slots as f64),
            ("brcsd1_slots", c.brcsd1_slots as f64),
            ("brcsd1_blocks", c.brcsd1_blocks as f64),
            ("brcsd2_slots", c.brcsd2_slots as f64),
            // BRCSD-I: its blocks; BRCSD-II: its offset groups; DIA: 0.
            ("blocks_or_groups", units),
        ];
        let spreads = [("operand", self.operand_spread())];
        self.conversion.stats(self.device_bytes(), self.stored(), own, &spreads)
    }
    /// DIA's figure for the DIA layout (its kernel skips the slots outside the matrix); the
    /// BRCSD kernels read every stored slot.
    fn bytes_read(&self) -> usize {
        match &self.stored {
            Stored::Dia(f) => f.bytes_read(),
            _ => self.device_bytes(),
        }
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        match &self.stored {
            Stored::Dia(f) => f.spmv_cpu(x, y),
            Stored::Brcsd1(f) => cpu::brcsd1(f, x, y),
            Stored::Brcsd2(f) => cpu::brcsd2(f, x, y),
        }
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        match &self.stored {
            Stored::Dia(f) => Ok(Box::new(super::dia::gpu::DeviceDia::new(gpu, f, NAME)?)),
            Stored::Brcsd1(f) => Ok(Box::new(gpu::upload_brcsd1(gpu, f)?)),
            Stored::Brcsd2(f) => Ok(Box::new(gpu::upload_brcsd2(gpu, f, self.nrows)?)),
        }
    }
}

/// The registry's entry for `dia-adaptive` (listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>() -> FormatInfo<T> {
    FormatInfo::new(
        "dia-adaptive",
        "DIA-Adaptive, picks DIA, BRCSD-I (cross-point row blocks) or BRCSD-II (32-row blocks) by stored slots",
        |a, s| {
            use Layout;
            let layout = match s.choice("layout", &["auto", "dia", "brcsd1", "brcsd2"])? {
                "dia" => Some(Layout::Dia),
                "brcsd1" => Some(Layout::Brcsd1),
                "brcsd2" => Some(Layout::Brcsd2),
                _ => None,
            };
            let (block_rows, piece_rows) = (s.usize("block_rows", 1)?, s.usize("piece_rows", 1)?);
            Ok(Box::new(DiaAdaptive::with_layout(a, layout, block_rows, piece_rows)?))
        },
    )
    .params(&[
        Param { key: "layout", default: "auto", doc: "auto (the classification), dia, brcsd1 or brcsd2" },
        Param { key: "block_rows", default: "32", doc: "rows per BRCSD-II block (≥ 1)" },
        Param { key: "piece_rows", default: "64", doc: "rows per BRCSD-I piece (1..=1024)" },
    ])
    .kernels(&[dia::KERNELS, KERNELS])
    .deterministic()
}

#[cfg(test)]
mod tests;
