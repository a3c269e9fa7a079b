//! DIA SpMV on the CPU: chunks of rows over rayon's threads; within a chunk the diagonals
//! are streamed one after the other (each row adds them in ascending order, as the kernel).

use rayon::prelude::*;

use super::{diagonals, Dia};
use crate::matrix::Scalar;

/// Rows per task: long enough runs along each diagonal, enough tasks to balance.
const CHUNK: usize = 2048;

pub fn spmv<T: Scalar>(a: &Dia<T>, x: &[T], y: &mut [T]) {
    let m = a.nrows;
    y.par_chunks_mut(CHUNK).enumerate().for_each(|(k, out)| {
        let row0 = k * CHUNK;
        out.fill(T::ZERO);
        // Block = rows row0.. of every diagonal: data[i·m + row0 + l], stride m.
        diagonals::accumulate_block(out, row0, &a.offsets, &a.data[row0.min(a.data.len())..], m, x);
    });
}
