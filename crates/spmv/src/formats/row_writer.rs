//! Writing `y` through a row permutation from parallel tasks (JDS, SELL-C-σ and the other
//! formats that sort rows): each task owns a disjoint set of output rows.

/// `y` shared by rayon tasks, each writing its own rows.
#[derive(Clone, Copy)]
pub(crate) struct RowWriter<T>(*mut T);
// SAFETY: the tasks write disjoint elements (see `write`).
unsafe impl<T: Send> Send for RowWriter<T> {}
unsafe impl<T: Send> Sync for RowWriter<T> {}

impl<T> RowWriter<T> {
    /// `rows` is the format's row count, which bounds every index it writes. `SpmvFormat::spmv_cpu`
    /// is safe to call directly, so a wrong `y` must stop here (a panic) rather than be
    /// written out of bounds; `HostMatrix::apply` checks first and returns an error.
    pub(crate) fn new(y: &mut [T], rows: usize) -> Self {
        assert_eq!(y.len(), rows, "y has {} entries for a matrix of {rows} rows", y.len());
        RowWriter(y.as_mut_ptr())
    }

    /// # Safety
    /// `i` is inside the slice, and no other task reads or writes element `i` meanwhile.
    pub(crate) unsafe fn write(&self, i: usize, v: T) {
        *self.0.add(i) = v;
    }
}
