//! CSR5 on the CPU: the GPU's steps (rayon tasks over tiles in place of warps, the stored
//! transposed arrays read as the kernel reads them), so that its result is the same bit for
//! bit and documents the kernel's order of additions.

use rayon::prelude::*;

use super::Csr5;
use crate::formats::carry::{self, Lane, TileOut};
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Csr5<T>, x: &[T], y: &mut [T]) {
    debug_assert_eq!(x.len(), a.ncols, "callers check the lengths");
    let out = RowWriter::new(y, a.nrows);
    for &r in &a.empty_rows {
        // SAFETY: an empty row is written only here.
        unsafe { out.write(r as usize, T::ZERO) };
    }
    let tiles: Vec<TileOut<T::Acc>> =
        (0..a.tiles()).into_par_iter().map(|t| tile(a, t, x, out)).collect();
    carry::fixup(&a.segments, &tiles, out);
}

/// One tile as one warp computes it: each lane walks its σ entries (a set bit closes the open
/// row), then the carries are combined ([`carry::finish_tile`]).
fn tile<T: Scalar>(a: &Csr5<T>, t: usize, x: &[T], out: RowWriter<T>) -> TileOut<T::Acc> {
    let (lanes, sigma) = (a.lanes, a.sigma);
    let tile = lanes * sigma;
    let zero = <T::Acc as Scalar>::ZERO;
    let base = a.tile_base[t] as usize;
    let mut before = 0usize; // set bits of the lanes before this one
    let lane_out: Vec<Lane<T::Acc>> = (0..lanes)
        .map(|l| {
            let bits = a.bits[t * lanes + l];
            // The row open before the lane's first entry (usize::MAX before the first row).
            let mut row = (base + before).wrapping_sub(1);
            before += bits.count_ones() as usize;
            let (mut sum, mut first) = (zero, None);
            for k in 0..sigma {
                if bits >> k & 1 == 1 {
                    if first.is_none() {
                        first = Some((row, sum));
                    } else {
                        write_row(a, out, row, sum);
                    }
                    sum = zero;
                    row = row.wrapping_add(1);
                }
                if t * tile + l * sigma + k < a.nnz {
                    let slot = t * tile + k * lanes + l;
                    sum += a.value(slot).to_acc() * x[a.col5[slot] as usize].to_acc();
                }
            }
            Lane { key: row, carry: sum, first }
        })
        .collect();
    let head_row = base.checked_sub(1);
    carry::finish_tile(&lane_out, head_row, |row, v| write_row(a, out, row, v))
}

/// Writes tile row `row` (if it is a real row) to its row of `y`.
fn write_row<T: Scalar>(a: &Csr5<T>, out: RowWriter<T>, row: usize, v: T::Acc) {
    if row < a.real_rows() {
        // SAFETY: each real row is closed by exactly one set bit, in one lane, or by the fixup.
        unsafe { out.write(a.original_row(row), T::from_acc(v)) };
    }
}
