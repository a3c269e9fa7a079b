//! The deterministic carry-out shared by the formats that split rows between the lanes of a
//! warp and between warps' tiles (merge-path CSR, CSR5): everything after a lane has walked
//! its share.
//!
//! A lane leaves a *carry* (its running sum for the row still open at its end, keyed by that
//! row) and, when it completed a row, its *first* completed row with the lane's own part of it.
//! A segmented inclusive scan of the carries over the warp's lanes (Hillis–Steele, keyed by
//! row: five shuffle steps on the GPU) gives each lane the parts of the lanes before it in the
//! same row; its first row is then complete, unless the row began in an earlier tile: that
//! part goes to `tile_head[t]`. The last lane's scan value is the tile's carry. A *segment* is
//! a row and the run of tiles carrying a part of it; one warp per segment sums those carries
//! (lane `l` takes tiles `first + l, first + l + 32, …` in order, then a fixed shuffle tree)
//! and writes the row as `tile_head[end] + sum`, so the row is rounded once. Every addition
//! has a fixed order: results are bitwise identical from run to run, and this module's CPU
//! emulation ([`finish_tile`], [`fixup`]) reproduces the GPU's bits (`carry.cuh`).

mod gpu;

use rayon::prelude::*;

pub(crate) use gpu::{DeviceCarry, DeviceSpans};

use super::row_writer::RowWriter;
use super::shuffle_down_sum;
use crate::matrix::Scalar;

/// CUDA helpers of the same steps (`finish_tile_lanes`, the fixup kernel's body); a module
/// that uses them lists this header.
pub const CUDA_HEADER: &str = include_str!("carry.cuh");

/// A row whose parts lie in several tiles: tiles `first..end` carry a part of it, tile `end`
/// completes it (its part is in `tile_head[end]`). `row` is the row of `y` written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The row of `y` the parts add up to.
    pub row: u32,
    /// First tile that carries a part of the row.
    pub first: u32,
    /// The tile that completes the row (one past the last carrying tile).
    pub end: u32,
}

/// Appends tile `t`'s carry of row `row` to `segments` (extending the last segment when the
/// previous tile carried the same row).
pub(crate) fn push_carry(segments: &mut Vec<Segment>, t: usize, row: u32) {
    match segments.last_mut() {
        Some(s) if s.row == row && s.end as usize == t => s.end = t as u32 + 1,
        _ => segments.push(Segment { row, first: t as u32, end: t as u32 + 1 }),
    }
}

/// What one lane leaves after its walk: the row open at its end (`key`) and its sum for it
/// (`carry`), and its first completed row with its own part of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lane<A> {
    pub key: usize,
    pub carry: A,
    pub first: Option<(usize, A)>,
}

/// What a tile leaves for the fixup.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct TileOut<A> {
    pub carry: A,
    pub head: A,
}

/// The lanes of one tile after their walks: completes each lane's first row (writing it with
/// `write(row, total)`, or keeping it as the tile's head when it is `head_row`, the row that
/// began in an earlier tile), and returns the tile's carry and head. The order of additions
/// is the GPU's (`finish_tile_lanes` in carry.cuh).
pub(crate) fn finish_tile<A: Scalar>(
    lanes: &[Lane<A>], head_row: Option<usize>, mut write: impl FnMut(usize, A),
) -> TileOut<A> {
    let n = lanes.len();
    let mut scan: Vec<A> = lanes.iter().map(|l| l.carry).collect();
    let mut offset = 1;
    while offset < n {
        let before = scan.clone();
        for l in offset..n {
            if lanes[l - offset].key == lanes[l].key {
                scan[l] = before[l - offset] + before[l];
            }
        }
        offset *= 2;
    }
    let mut head = A::ZERO;
    for (l, lane) in lanes.iter().enumerate() {
        let Some((row, own)) = lane.first else { continue };
        let total = if l > 0 && lanes[l - 1].key == row { own + scan[l - 1] } else { own };
        if Some(row) == head_row {
            head = total;
        } else {
            write(row, total);
        }
    }
    TileOut { carry: scan[n - 1], head }
}

/// The fixup of the rows that cross tiles: `y[row] = head of the completing tile + the
/// carries of the tiles before it`, summed as one warp of 32 lanes sums them.
pub(crate) fn fixup<T: Scalar>(segments: &[Segment], tiles: &[TileOut<T::Acc>], out: RowWriter<T>) {
    segments.par_iter().for_each(|s| {
        let mut partial = [<T::Acc as Scalar>::ZERO; 32];
        for (k, t) in (s.first..s.end).enumerate() {
            partial[k % 32] += tiles[t as usize].carry;
        }
        let sum = shuffle_down_sum(&mut partial);
        // SAFETY: a segment's row is written only here, once (each row has one segment).
        unsafe { out.write(s.row as usize, T::from_acc(tiles[s.end as usize].head + sum)) };
    });
}
