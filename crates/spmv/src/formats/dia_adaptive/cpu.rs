//! BRCSD-I and BRCSD-II SpMV on the CPU (the DIA layout uses DIA's). Both stream DIA-style
//! blocks diagonal by diagonal into their rows of `y`.

use rayon::prelude::*;

use super::{Brcsd1, Brcsd2};
use crate::formats::dia::diagonals;
use crate::matrix::Scalar;

/// Pieces (contiguous rows, at most `piece_rows` each) over rayon's threads.
pub fn brcsd1<T: Scalar>(a: &Brcsd1<T>, x: &[T], y: &mut [T]) {
    let mut parts = Vec::with_capacity(a.pieces());
    let mut rest = y;
    for p in 0..a.pieces() {
        let (part, tail) =
            std::mem::take(&mut rest).split_at_mut((a.piece_row[p + 1] - a.piece_row[p]) as usize);
        parts.push((p, part));
        rest = tail;
    }
    parts.into_par_iter().with_min_len(8).for_each(|(p, out)| {
        let b = a.piece_block[p] as usize;
        let (row0, first) = (a.piece_row[p] as usize, a.block_row[b] as usize);
        let h = a.block_row[b + 1] as usize - first;
        let (begin, end) = (a.block_diag[b] as usize, a.block_diag[b + 1] as usize);
        out.fill(T::ZERO);
        if begin < end {
            // The piece's rows of the block's first diagonal onwards, stride h.
            let data = &a.data[a.block_data[b] as usize + (row0 - first)..];
            diagonals::accumulate_block(out, row0, &a.offsets[begin..end], data, h, x);
        }
    });
}

/// Blocks of `block_rows` rows over rayon's threads, each finding its offset group.
pub fn brcsd2<T: Scalar>(a: &Brcsd2<T>, x: &[T], y: &mut [T]) {
    let h = a.block_rows;
    diagonals::spmv_row_blocks(h, x, y, |k| {
        let g = a.group_block.partition_point(|&b| b as usize <= k) - 1;
        let (begin, end) = (a.group_diag[g] as usize, a.group_diag[g + 1] as usize);
        let start = a.group_data[g] as usize + (k - a.group_block[g] as usize) * (end - begin) * h;
        (&a.offsets[begin..end], &a.data[start..])
    });
}
