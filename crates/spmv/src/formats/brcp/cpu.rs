//! BRCP SpMV on the CPU, the GPU's steps with rayon: blocks in parallel (slot sums, then
//! run sums in slot order; rows inside one block written directly, the runs of spanning
//! rows returned as the block's `enter`/`leave` values), then every span summed left to
//! right, and the empty rows set to 0. Every element of `y` is written exactly once.

use rayon::prelude::*;

use super::{Brcp, NO_ROW};
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Brcp<T>, x: &[T], y: &mut [T]) {
    let (h, blocks) = (a.block_rows(), a.blocks());
    let (row_perm, cols, vals) = (a.row_perm(), a.col_idx(), a.values());
    let out = RowWriter::new(y, a.nrows);
    // SAFETY (all writes below): rows are < nrows = y.len() (built by Brcp::with_params);
    // each row is written by exactly one of: its only run (a row inside one block), its span,
    // or the empty-row list, which are disjoint by construction.
    a.empty_rows.par_iter().for_each(|&r| unsafe { out.write(r as usize, T::ZERO) });

    // (enter, leave) of every block: the sums of its runs that continue a row from the
    // previous block / into the next one (0 where there is none).
    let partial: Vec<(T, T)> = (0..blocks)
        .into_par_iter()
        .with_min_len((256 / h).max(1))
        .map(|b| {
            let (base, w) = (a.block_ptr()[b] as usize, a.block_width(b));
            let slots = &row_perm[b * h..b * h + h];
            let mut lane_sum = [T::ZERO; 32]; // h <= 32
            for (lane, sum) in lane_sum.iter_mut().enumerate().take(h) {
                if slots[lane] == NO_ROW {
                    break;
                }
                for t in 0..w {
                    let p = base + t * h + lane;
                    *sum += vals[p] * x[cols[p] as usize];
                }
            }
            let (mut enter, mut leave) = (T::ZERO, T::ZERO);
            for lane in 0..h {
                let len = a.row_seg_len[b * h + lane] as usize;
                if len == 0 {
                    continue;
                }
                let row = slots[lane];
                let mut sum = lane_sum[lane];
                for &v in &lane_sum[lane + 1..lane + len] {
                    sum += v;
                }
                let from_previous = lane == 0 && b > 0 && row_perm[b * h - 1] == row;
                let into_next = lane + len == h && b + 1 < blocks && row_perm[b * h + h] == row;
                if from_previous {
                    enter = sum;
                } else if into_next {
                    leave = sum;
                } else {
                    unsafe { out.write(row as usize, sum) };
                }
            }
            (enter, leave)
        })
        .collect();

    a.spans.par_iter().for_each(|s| {
        let mut sum = partial[s.first as usize].1;
        for p in &partial[s.first as usize + 1..=s.last as usize] {
            sum += p.0;
        }
        unsafe { out.write(s.row as usize, sum) };
    });
}
