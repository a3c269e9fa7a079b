//! HDIA SpMV on the CPU: hacks over rayon's threads, each hack's block streamed diagonal by
//! diagonal into its rows of `y`.

use rayon::prelude::*;

use super::Hdia;
use crate::formats::dia::diagonals;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Hdia<T>, x: &[T], y: &mut [T]) {
    let h = a.hack_rows;
    let b = &a.blocks;
    y.par_chunks_mut(h).with_min_len((256 / h).max(1)).enumerate().for_each(|(k, out)| {
        let (begin, end) = (b.diag_ptr[k] as usize, b.diag_ptr[k + 1] as usize);
        out.fill(T::ZERO);
        diagonals::accumulate_block(out, k * h, &b.offsets[begin..end], &b.values[begin * h..end * h], h, x);
    });
}
