//! Merge-path CSR on the CPU: the GPU's algorithm step for step (rayon tasks over tiles in
//! place of warps), so that its result is the same bit for bit and documents the kernel's
//! order of additions.

use rayon::prelude::*;

use super::{merge_path_row_local, MergeCsr};
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

/// What a tile leaves for the fixup: its carry (its last row's part) and, when its first row
/// began in an earlier tile, that row's part in this tile (`head`).
#[derive(Clone, Copy, Default)]
struct TileOut<A> {
    carry: A,
    head: A,
}

pub fn spmv<T: Scalar>(a: &MergeCsr<T>, x: &[T], y: &mut [T]) {
    debug_assert_eq!(x.len(), a.csr.ncols(), "callers check the lengths");
    let out = RowWriter::new(y, a.csr.nrows());
    let tiles: Vec<TileOut<T::Acc>> = (0..a.tiles()).into_par_iter().map(|t| tile(a, t, x, out)).collect();
    a.segments.par_iter().for_each(|s| {
        let mut partial = [<T::Acc as Scalar>::ZERO; 32];
        for (k, t) in (s.first..s.end).enumerate() {
            partial[k % 32] += tiles[t as usize].carry;
        }
        let sum = tree_sum(partial);
        // SAFETY: segment rows are written only here, once (each row has one segment).
        unsafe { out.write(s.row as usize, T::from_acc(tiles[s.end as usize].head + sum)) };
    });
}

/// The sum of 32 partial sums in the order of a shuffle-down tree (offsets 16, 8, 4, 2, 1).
pub(super) fn tree_sum<A: Scalar>(mut p: [A; 32]) -> A {
    let mut offset = 16;
    while offset > 0 {
        for l in 0..offset {
            let other = p[l + offset];
            p[l] += other;
        }
        offset /= 2;
    }
    p[0]
}

/// One tile, as one warp computes it: each lane walks its items, then a segmented scan of
/// the lanes' carries completes the rows that cross lanes.
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
    let lanes = a.lanes;
    let mut key = vec![0usize; lanes];
    let mut carry = vec![zero; lanes];
    let mut first: Vec<Option<(usize, T::Acc)>> = vec![None; lanes];
    for lane in 0..lanes {
        let dl = (lane * a.items).min(d1 - d0);
        let mut li = merge_path_row_local(&row_end, i1 - i0, j1 - j0, j0, dl);
        let mut j = j0 + dl - li;
        let mut sum = zero;
        for _ in 0..a.items.min(d1 - d0 - dl) {
            if j < row_end(li) {
                sum += vals[j].to_acc() * x[cols[j] as usize].to_acc();
                j += 1;
            } else {
                if first[lane].is_none() {
                    first[lane] = Some((li, sum));
                } else {
                    // SAFETY: the row's end is this item; only this lane writes the row.
                    unsafe { out.write(i0 + li, T::from_acc(sum)) };
                }
                sum = zero;
                li += 1;
            }
        }
        key[lane] = li;
        carry[lane] = sum;
    }
    // Segmented inclusive scan of the carries, keyed by row (Hillis–Steele, as the shuffles).
    let mut scan = carry;
    let mut offset = 1;
    while offset < lanes {
        let before = scan.clone();
        for l in offset..lanes {
            if key[l - offset] == key[l] {
                scan[l] = before[l - offset] + before[l];
            }
        }
        offset *= 2;
    }
    let continues = i0 < m && j0 > row_ptr[i0];
    let mut head = zero;
    for lane in 0..lanes {
        let Some((li, own)) = first[lane] else { continue };
        let total = if lane > 0 && key[lane - 1] == li { own + scan[lane - 1] } else { own };
        if li == 0 && continues {
            head = total; // the row began in an earlier tile: the fixup finishes it
        } else {
            // SAFETY: row i0 + li ends in this lane; only it writes the row.
            unsafe { out.write(i0 + li, T::from_acc(total)) };
        }
    }
    TileOut { carry: scan[lanes - 1], head }
}
