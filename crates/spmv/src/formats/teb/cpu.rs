//! TEB SpMV on the CPU: the blocks over rayon's threads (Algorithm 3 with a task per TEB
//! block), each row of a block a serial loop, written to `y[perm[row]]`.

use rayon::prelude::*;

use super::Teb;
use crate::matrix::Scalar;

/// `y` shared by tasks that write disjoint elements through a permutation.
#[derive(Clone, Copy)]
pub(crate) struct PermutedWriter<T>(*mut T);
// SAFETY: the tasks write disjoint elements (see `write`).
unsafe impl<T: Send> Send for PermutedWriter<T> {}
unsafe impl<T: Send> Sync for PermutedWriter<T> {}

impl<T> PermutedWriter<T> {
    pub(crate) fn new(y: &mut [T]) -> Self {
        PermutedWriter(y.as_mut_ptr())
    }
    /// # Safety
    /// `i` is inside the slice given to `new`, which outlives every write, and no other
    /// task reads or writes element `i` meanwhile.
    pub(crate) unsafe fn write(&self, i: usize, v: T) {
        *self.0.add(i) = v;
    }
}

pub fn spmv<T: Scalar>(a: &Teb<T>, x: &[T], y: &mut [T]) {
    let (row_ptr, cols, vals, perm) = (&a.row_ptr, &a.col_idx, &a.values, &a.perm);
    let out = PermutedWriter::new(y);
    a.blo_idx.par_windows(2).for_each(|w| {
        for row in w[0] as usize..w[1] as usize {
            let (start, end) = (row_ptr[row] as usize, row_ptr[row + 1] as usize);
            let mut sum = T::ZERO;
            for (&c, &v) in cols[start..end].iter().zip(&vals[start..end]) {
                sum += v * x[c as usize];
            }
            // SAFETY: perm is a permutation of 0..nrows (built by Teb's conversion), y has
            // nrows elements, and each reordered row belongs to exactly one block.
            unsafe { out.write(perm[row] as usize, sum) };
        }
    });
}
