//! PBC SpMV on the CPU: the blocks over rayon's threads; inside a block the ELL columns are
//! streamed into per-row accumulators (groups of `GROUP` rows), padding included, and each
//! row is written to `y[perm[row]]`.

use rayon::prelude::*;

use super::Pbc;
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

/// Rows of a block accumulated together.
const GROUP: usize = 64;

pub fn spmv<T: Scalar>(a: &Pbc<T>, x: &[T], y: &mut [T]) {
    let (cols, vals, perm) = (&a.col_idx, &a.values, &a.perm);
    let out = RowWriter::new(y, a.perm.len());
    (0..a.blocks()).into_par_iter().for_each(|b| {
        let first = a.block_row_ptr[b] as usize;
        let h = a.block_row_ptr[b + 1] as usize - first;
        let (base, w) = (a.block_slot_ptr[b] as usize, a.block_width[b] as usize);
        for g0 in (0..h).step_by(GROUP) {
            let g1 = (g0 + GROUP).min(h);
            let mut acc = [T::ZERO; GROUP];
            for t in 0..w {
                let off = base + t * h;
                for ((s, &c), &v) in
                    acc.iter_mut().zip(&cols[off + g0..off + g1]).zip(&vals[off + g0..off + g1])
                {
                    *s += v * x[c as usize];
                }
            }
            for lane in g0..g1 {
                // SAFETY: perm is a permutation of 0..nrows (built by Pbc's conversion),
                // y has nrows elements, and each sorted row belongs to exactly one block.
                unsafe { out.write(perm[first + lane] as usize, acc[lane - g0]) };
            }
        }
    });
}
