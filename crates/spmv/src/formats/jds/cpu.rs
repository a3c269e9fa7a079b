//! JDS SpMV on the CPU: blocks of consecutive sorted rows over rayon's threads.
//!
//! A block of `BLOCK` sorted rows walks the jagged diagonals like a GPU warp does: in
//! diagonal `t` its rows' entries are contiguous (`iter_ptr[t] + i` for the block's `i`),
//! so each diagonal is one short streaming loop into a per-block accumulator. The block
//! stops at the first diagonal that holds none of its rows, and writes `y[perm[i]]`.

use rayon::prelude::*;

use super::Jds;
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

/// Sorted rows per rayon task.
const BLOCK: usize = 64;

pub fn spmv<T: Scalar>(a: &Jds<T>, x: &[T], y: &mut [T]) {
    debug_assert_eq!(x.len(), a.ncols, "callers check the lengths");
    let (m, ptr, cols, vals, perm) = (a.nrows, &a.iter_ptr, &a.col_idx, &a.values, &a.perm);
    let out = RowWriter::new(y, a.nrows);
    (0..m.div_ceil(BLOCK)).into_par_iter().with_min_len(4).for_each(|b| {
        let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(m));
        let mut acc = [T::ZERO; BLOCK];
        for t in 0..ptr.len() - 1 {
            let (start, n) = (ptr[t] as usize, (ptr[t + 1] - ptr[t]) as usize);
            if n <= lo {
                break; // rows are sorted: no later diagonal holds this block either
            }
            let end = n.min(hi);
            let (c, v) = (&cols[start + lo..start + end], &vals[start + lo..start + end]);
            for ((s, &c), &v) in acc.iter_mut().zip(c).zip(v) {
                *s += v * x[c as usize];
            }
        }
        for i in lo..hi {
            // SAFETY: perm is a permutation of 0..m (built by Jds::new) and y.len() == m,
            // so every element of y is written by exactly one task, once.
            unsafe { out.write(perm[i] as usize, acc[i - lo]) };
        }
    });
}
