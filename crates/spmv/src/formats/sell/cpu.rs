//! SELL-C-σ SpMV on the CPU: slices over rayon's threads.
//!
//! Each slice is an ELL block of `h` rows by `w` columns stored column-major, so column `t`
//! of the slice is `h` contiguous slots: [`slice_sums`] streams over it into a per-row
//! accumulator (in groups of `GROUP` rows, so any C works with a fixed-size accumulator),
//! padding included (value 0, valid column), then `y[perm[i]]` is written.

use rayon::prelude::*;

use super::SellCSigma;
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

/// Rows of a slice accumulated together.
const GROUP: usize = 64;

pub fn spmv<T: Scalar>(a: &SellCSigma<T>, x: &[T], y: &mut [T]) {
    debug_assert_eq!(x.len(), a.ncols, "callers check the lengths");
    let (m, c) = (a.nrows, a.c);
    let (cols, vals, perm) = (&a.col_idx, &a.values, &a.perm);
    let out = RowWriter::new(y, a.nrows);
    let min_len = (256 / c).max(1);
    (0..a.slices()).into_par_iter().with_min_len(min_len).for_each(|s| {
        let first = s * c;
        let h = c.min(m - first);
        let (base, w) = (a.slice_ptr[s], a.slice_width[s] as usize);
        slice_sums(cols, vals, base, h, w, x, |lane, sum| {
            // SAFETY: perm is a permutation of 0..m (built by SellCSigma::new) and
            // y.len() == m, so every element of y is written by exactly one task, once.
            unsafe { out.write(perm[first + lane] as usize, sum) };
        });
    });
}

/// The row sums of one column-major ELL block of `h` rows and width `w` whose slots start
/// at `base` (row `l`'s slot `t` at `base + t·h + l`), padding included: `write(l, sum)` for
/// each row, in order. A SELL-C-σ slice, or any other block stored that way.
pub(crate) fn slice_sums<T: Scalar>(
    cols: &[u32], vals: &[T], base: usize, h: usize, w: usize, x: &[T],
    mut write: impl FnMut(usize, T),
) {
    for g0 in (0..h).step_by(GROUP) {
        let g1 = (g0 + GROUP).min(h);
        let mut acc = [T::ZERO; GROUP];
        for t in 0..w {
            let off = base + t * h;
            let (c, v) = (&cols[off + g0..off + g1], &vals[off + g0..off + g1]);
            for ((s, &c), &v) in acc.iter_mut().zip(c).zip(v) {
                *s += v * x[c as usize];
            }
        }
        for lane in g0..g1 {
            write(lane, acc[lane - g0]);
        }
    }
}
