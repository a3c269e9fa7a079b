//! HDC SpMV on the CPU: chunks of rows over rayon's threads; the DIA part streamed diagonal
//! by diagonal, then each row's CSR entries.

use rayon::prelude::*;

use super::Hdc;
use crate::formats::dia::diagonals;
use crate::matrix::Scalar;

const CHUNK: usize = 2048;

pub fn spmv<T: Scalar>(a: &Hdc<T>, x: &[T], y: &mut [T]) {
    let m = a.nrows;
    y.par_chunks_mut(CHUNK).enumerate().for_each(|(k, out)| {
        let row0 = k * CHUNK;
        out.fill(T::ZERO);
        diagonals::accumulate_block(out, row0, &a.offsets, &a.data[row0.min(a.data.len())..], m, x);
        for (l, s) in out.iter_mut().enumerate() {
            let (begin, end) = (a.row_ptr[row0 + l] as usize, a.row_ptr[row0 + l + 1] as usize);
            for (&c, &v) in a.col_idx[begin..end].iter().zip(&a.values[begin..end]) {
                *s += v * x[c as usize];
            }
        }
    });
}
