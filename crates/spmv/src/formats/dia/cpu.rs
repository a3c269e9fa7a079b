//! DIA SpMV on the CPU: chunks of rows over rayon's threads; within a chunk the diagonals
//! are streamed one after the other (each row adds them in ascending order, as the kernel).

use rayon::prelude::*;

use super::{diagonals, Dia};
use crate::formats::values::EncodedValues;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Dia<T>, x: &[T], y: &mut [T]) {
    diagonals::spmv_dia(&a.offsets, &a.data, x, y, |_, _| {});
}

/// Rows per task of [`spmv_coded`].
const CHUNK: usize = 2048;

/// The same sums as [`spmv`] with the slots decoded from `coded`, a chunk of rows at a time
/// (the chunk's block of every diagonal decoded, then streamed as `spmv` streams it).
pub fn spmv_coded<T: Scalar>(a: &Dia<T>, coded: &EncodedValues<T>, x: &[T], y: &mut [T]) {
    let m = y.len();
    y.par_chunks_mut(CHUNK).enumerate().for_each(|(k, out)| {
        let (row0, h) = (k * CHUNK, out.len());
        let block: Vec<T> = (0..a.offsets.len())
            .flat_map(|i| (0..h).map(move |l| coded.get(i * m + row0 + l)))
            .collect();
        out.fill(T::ZERO);
        diagonals::accumulate_block(out, row0, &a.offsets, &block, h, x);
    });
}
