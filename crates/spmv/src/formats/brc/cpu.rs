//! BRC SpMV on the CPU: blocks over rayon's threads, each slot's sum as the GPU's lane
//! computes it; rows of one piece are written directly, the pieces of split rows are added
//! afterwards in slot order (what the GPU's atomics do in an unspecified order).

use rayon::prelude::*;

use super::{Brc, NO_ROW};
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Brc<T>, x: &[T], y: &mut [T]) {
    let h = a.block_rows();
    let (row_perm, cols, vals) = (a.row_perm(), a.col_idx(), a.values());
    y.par_iter_mut().for_each(|v| *v = T::ZERO);
    let out = RowWriter::new(y, a.nrows);
    // Partial sums of the split rows' pieces, per block in slot order.
    let split_sums: Vec<Vec<(u32, T)>> = (0..a.blocks())
        .into_par_iter()
        .with_min_len((256 / h).max(1))
        .map(|b| {
            let (base, w) = (a.block_ptr()[b] as usize, a.block_width(b));
            let mut split = Vec::new();
            for lane in 0..h {
                let slot = b * h + lane;
                let row = row_perm[slot];
                if row == NO_ROW {
                    break; // dummy slots are the last block's tail
                }
                let mut sum = T::ZERO;
                for t in 0..w {
                    let p = base + t * h + lane;
                    sum += vals[p] * x[cols[p] as usize];
                }
                if a.split[slot] {
                    split.push((row, sum));
                } else {
                    // SAFETY: a row with one piece has exactly one slot, and row < nrows = y.len()
                    // (built by Brc::with_params), so no other task touches y[row].
                    unsafe { out.write(row as usize, sum) };
                }
            }
            split
        })
        .collect();
    for (row, sum) in split_sums.into_iter().flatten() {
        y[row as usize] += sum;
    }
}
