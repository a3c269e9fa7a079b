//! DRM SpMV on the CPU: sub-blocks over rayon's threads (their balance is the point of the
//! format); each segment of a sub-block is a DIA-style block streamed into its rows of `y`.

use rayon::prelude::*;

use super::Drm;
use crate::formats::dia::diagonals;
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Drm<T>, x: &[T], y: &mut [T]) {
    let (m, h) = (a.nrows, a.seg_rows);
    let b = &a.blocks;
    let out = RowWriter::new(y, a.nrows);
    (0..a.sub_blocks()).into_par_iter().for_each_init(
        || vec![T::ZERO; h],
        |acc, sub_block| {
            for k in a.blo[sub_block] as usize..a.blo[sub_block + 1] as usize {
                let row0 = a.index[k] as usize * h;
                let rows = h.min(m - row0);
                let (begin, end) = (b.diag_ptr[k] as usize, b.diag_ptr[k + 1] as usize);
                let acc = &mut acc[..rows];
                acc.fill(T::ZERO);
                diagonals::accumulate_block(
                    acc,
                    row0,
                    &b.offsets[begin..end],
                    &b.values[begin * h..end * h],
                    h,
                    x,
                );
                for (l, &v) in acc.iter().enumerate() {
                    // SAFETY: drm_index is a permutation of the segments (each appears in
                    // exactly one sub-block), so the rows row0..row0 + rows < m = y.len() of
                    // segment k are written by this task alone, once.
                    unsafe { out.write(row0 + l, v) };
                }
            }
        },
    );
}
