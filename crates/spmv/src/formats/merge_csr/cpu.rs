//! Merge-path CSR on the CPU: the GPU's algorithm step for step (rayon tasks over tiles in
//! place of warps), so that its result is the same bit for bit and documents the kernel's
//! order of additions.

use rayon::prelude::*;

use super::{merge_path_row_local, MergeCsr};
use crate::formats::carry::{self, Lane, TileOut};
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &MergeCsr<T>, x: &[T], y: &mut [T]) {
    debug_assert_eq!(x.len(), a.csr.ncols(), "callers check the lengths");
    let out = RowWriter::new(y, a.csr.nrows());
    let tiles: Vec<TileOut<T::Acc>> =
        (0..a.tiles()).into_par_iter().map(|t| tile(a, t, x, out)).collect();
    carry::fixup(&a.segments, &tiles, out);
}

/// One tile, as one warp computes it: each lane walks its items, then the carries are
/// combined ([`carry::finish_tile`]).
fn tile<T: Scalar>(a: &MergeCsr<T>, t: usize, x: &[T], out: RowWriter<T>) -> TileOut<T::Acc> {
    let (row_ptr, cols, vals) = (a.csr.row_ptr(), a.csr.col_idx(), a.csr.values());
    let m = a.csr.nrows();
    let path = m + a.csr.nnz();
    let (d0, d1) = (t * a.tile_items(), ((t + 1) * a.tile_items()).min(path));
    let (i0, i1) = (a.tile_row[t] as usize, a.tile_row[t + 1] as usize);
    let (j0, j1) = (d0 - i0, d1 - i1);
    // Row ends of the tile's rows, local row index; the sentinel j1 past the last one.
    let row_end = |li: usize| if i0 + li < i1 { row_ptr[i0 + li + 1] } else { j1 };
    let zero = <T::Acc as Scalar>::ZERO;
    let lanes: Vec<Lane<T::Acc>> = (0..a.lanes)
        .map(|lane| {
            let dl = (lane * a.items).min(d1 - d0);
            let mut li = merge_path_row_local(&row_end, i1 - i0, j1 - j0, j0, dl);
            let mut j = j0 + dl - li;
            let (mut sum, mut first) = (zero, None);
            for _ in 0..a.items.min(d1 - d0 - dl) {
                if j < row_end(li) {
                    sum += vals[j].to_acc() * x[cols[j] as usize].to_acc();
                    j += 1;
                } else {
                    if first.is_none() {
                        first = Some((i0 + li, sum));
                    } else {
                        // SAFETY: the row's end is this item; only this lane writes the row.
                        unsafe { out.write(i0 + li, T::from_acc(sum)) };
                    }
                    sum = zero;
                    li += 1;
                }
            }
            Lane { key: i0 + li, carry: sum, first }
        })
        .collect();
    // The tile's first row began in an earlier tile when the tile starts inside it.
    let head_row = (i0 < m && j0 > row_ptr[i0]).then_some(i0);
    // SAFETY (write): each row ends in exactly one lane, which alone writes it.
    carry::finish_tile(&lanes, head_row, |row, v| unsafe { out.write(row, T::from_acc(v)) })
}
