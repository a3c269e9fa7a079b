//! DASP on the CPU, through its layout: each class of rows summed as the GPU will (long rows
//! group by group, medium rows regular tiles then their irregular rest, short rows piece by
//! piece), rows over rayon's threads, sums in `T::Acc`, y written in the original row order.

use rayon::prelude::*;

use super::{Dasp, BLOCK_ROWS, LONG_GROUP, TILE};
use crate::formats::row_writer::RowWriter;
use crate::matrix::Scalar;

pub fn spmv<T: Scalar>(a: &Dasp<T>, x: &[T], y: &mut [T]) {
    let out = RowWriter::new(y, a.nrows());
    // SAFETY (every write below): each row of the matrix is in exactly one class and, in it,
    // in exactly one place (the conversion's classification), so each element of y — which
    // has nrows elements, checked by RowWriter::new — is written once, by one task.
    a.long.rows.par_iter().enumerate().for_each(|(i, &r)| {
        let groups = a.long.group_ptr[i] as usize..a.long.group_ptr[i + 1] as usize;
        let sum = groups.fold(T::Acc::ZERO, |s, g| {
            s + a.long.groups.dot(g * LONG_GROUP..(g + 1) * LONG_GROUP, x)
        });
        unsafe { out.write(r as usize, T::from_acc(sum)) };
    });
    a.medium.rows.par_chunks(BLOCK_ROWS).enumerate().for_each(|(b, rows)| {
        let tiles = a.medium.block_tile_ptr[b] as usize..a.medium.block_tile_ptr[b + 1] as usize;
        for (i, &r) in rows.iter().enumerate() {
            let mut sum = T::Acc::ZERO;
            for t in tiles.clone() {
                sum += a.medium.regular.dot(t * TILE + 4 * i..t * TILE + 4 * i + 4, x);
            }
            let m = b * BLOCK_ROWS + i;
            sum += a.medium.irregular.dot(a.medium.irreg_ptr[m]..a.medium.irreg_ptr[m + 1], x);
            unsafe { out.write(r as usize, T::from_acc(sum)) };
        }
    });
    let s = &a.short;
    let piece =
        |k: usize, width: usize, at: usize| T::from_acc(s.slots.dot(k + at..k + at + width, x));
    let (n13, n4, n22) = (s.rows_13.len(), s.rows_4.len(), s.rows_22.len());
    s.rows_13.par_iter().enumerate().for_each(|(p, &[r1, r3])| {
        unsafe { out.write(r1 as usize, piece(4 * p, 1, 0)) };
        unsafe { out.write(r3 as usize, piece(4 * p, 3, 1)) };
    });
    s.rows_4
        .par_iter()
        .enumerate()
        .for_each(|(p, &r)| unsafe { out.write(r as usize, piece(4 * (n13 + p), 4, 0)) });
    s.rows_22.par_iter().enumerate().for_each(|(p, &[r1, r2])| {
        let k = 4 * (n13 + n4 + p);
        unsafe { out.write(r1 as usize, piece(k, 2, 0)) };
        unsafe { out.write(r2 as usize, piece(k, 2, 2)) };
    });
    s.rows_1.par_iter().enumerate().for_each(|(p, &r)| unsafe {
        out.write(r as usize, piece(4 * (n13 + n4 + n22) + p, 1, 0))
    });
    a.empty_rows.par_iter().for_each(|&r| unsafe { out.write(r as usize, T::ZERO) });
}
