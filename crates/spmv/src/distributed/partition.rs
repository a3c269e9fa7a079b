//! Rows cut into contiguous parts of about equal entries, and each part's columns renumbered
//! into the part's own index space.
//!
//! The matrix is square and `x` is split like the rows: part `i` owns rows and `x` entries
//! `starts[i]..starts[i + 1]`. A part's *halo* is the columns its rows touch outside its own
//! range; their `x` entries come from the parts that own them before each product. The
//! part's local `x` is `[halo below | own | halo above]` — the halo columns below its range,
//! its own entries, the halo columns above — each run in column order, so the local column
//! of an entry is its rank among the sorted global columns the part touches. The renumbering
//! is therefore monotone: every row keeps its entries in the same order, so a format's sums
//! run in the same order as on the whole matrix and give the same bits.
//!
//! ```text
//!     | 1 . 2 . |   parts of 2 rows: starts = [0, 2, 4]
//!     | . 3 . . |   part 0: own columns 0..2, halo above {2}    local x = [x0 x1 | x2]
//! A = | 4 . 5 6 |   part 1: own columns 2..4, halo below {0, 1} local x = [x0 x1 | x2 x3]
//!     | . 7 . 8 |   part 1's rows in local columns: [0 2 3], [1 3]
//! ```

use std::ops::Range;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::matrix::{Csr, Scalar};

/// Where each part's rows begin: `parts + 1` row indices from 0 to `nrows`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    starts: Vec<usize>,
}

impl Partition {
    /// `parts` contiguous row ranges of about `nnz / parts` entries each (a part ends at the
    /// first row boundary past its share; rows are never split). An empty matrix's rows are
    /// split evenly.
    pub fn balanced<T: Scalar>(a: &Csr<T>, parts: usize) -> Result<Self> {
        if parts == 0 {
            return Err(Error::Unsupported("a distributed matrix needs at least one part".into()));
        }
        if a.nrows() != a.ncols() {
            return Err(Error::Unsupported(format!(
                "a distributed matrix is square (x is split like the rows); this one is {} x {}",
                a.nrows(),
                a.ncols()
            )));
        }
        let starts = a.balanced_row_starts(parts);
        Ok(Partition { starts })
    }
    /// A partition with these row starts (`0 = starts[0] ≤ … ≤ starts[p] = nrows`).
    pub fn from_starts(starts: Vec<usize>, nrows: usize) -> Result<Self> {
        let ok = starts.len() >= 2
            && starts[0] == 0
            && starts[starts.len() - 1] == nrows
            && starts.windows(2).all(|w| w[0] <= w[1]);
        if !ok {
            return Err(Error::Unsupported(format!(
                "row starts {starts:?} do not run from 0 to {nrows} in order"
            )));
        }
        Ok(Partition { starts })
    }
    /// Number of parts.
    pub fn parts(&self) -> usize {
        self.starts.len() - 1
    }
    /// First row of each part, then `nrows` (`parts + 1` entries).
    pub fn starts(&self) -> &[usize] {
        &self.starts
    }
    /// The rows (and own `x` entries) of part `i`.
    pub fn rows(&self, i: usize) -> Range<usize> {
        self.starts[i]..self.starts[i + 1]
    }
    /// The part that owns row (or column) `r`.
    pub fn owner(&self, r: usize) -> usize {
        self.starts.partition_point(|&s| s <= r) - 1
    }
}

/// One part of a distributed matrix on the host: its rows in local columns, and its halo.
#[derive(Clone, Debug)]
pub struct LocalPart<T> {
    /// The part's rows of the whole matrix.
    pub rows: Range<usize>,
    /// Those rows, with columns renumbered into the local `x` (see the module doc): an
    /// `own + halo` square-or-wider matrix.
    pub local: Csr<T>,
    /// Global columns of the halo below the part's range, in order (local 0..below.len()).
    pub below: Vec<u32>,
    /// Global columns of the halo above it, in order (after the own entries).
    pub above: Vec<u32>,
}

impl<T: Scalar> LocalPart<T> {
    /// Part `i` of `a` under `partition`.
    pub fn of(a: &Csr<T>, partition: &Partition, i: usize) -> Self {
        let rows = partition.rows(i);
        Self::from_block(rows.clone(), &a.row_block(rows))
    }

    /// Part `i` under `partition` from its rows alone (`own`: those rows, global columns),
    /// as one process of several holds them.
    pub fn of_rows(own: &Csr<T>, partition: &Partition, i: usize) -> Self {
        Self::from_block(partition.rows(i), own)
    }

    /// The part of rows `rows` from `block`, those rows in global columns. Only the columns
    /// are new (and not even they where the renumbering leaves every column as it is): the
    /// row offsets and values stay shared with `block`.
    fn from_block(rows: Range<usize>, block: &Csr<T>) -> Self {
        let cols = block.col_idx();
        let (lo, hi) = (rows.start as u32, rows.end as u32);
        // The halo: the columns outside the part's own, in order, each once (none can be
        // when the part's own range spans every column).
        let mut above: Vec<u32> = if rows.start == 0 && rows.end >= block.ncols() {
            Vec::new()
        } else {
            cols.par_iter().copied().filter(|&c| c < lo || c >= hi).collect()
        };
        above.par_sort_unstable();
        above.dedup();
        let below: Vec<u32> = above.drain(..above.partition_point(|&c| c < lo)).collect();
        let own = rows.len() as u32;
        let b = below.len() as u32;
        // Every column below the part's and a run straight above it (one part alone, say):
        // each column's rank among them is the column itself.
        let unchanged =
            b == lo && above.last().is_none_or(|&c| c as usize + 1 == rows.end + above.len());
        let local_cols = (!unchanged).then(|| {
            cols.par_iter()
                .map(|&c| {
                    if c < lo {
                        below.binary_search(&c).expect("collected above") as u32
                    } else if c < hi {
                        b + (c - lo)
                    } else {
                        b + own + above.binary_search(&c).expect("collected above") as u32
                    }
                })
                .collect()
        });
        let ncols = below.len() + rows.len() + above.len();
        // SAFETY: the renumbering is monotone in the global column (module doc), so each row's
        // local columns stay strictly increasing, and every one is below ncols.
        let local = unsafe { block.with_columns(ncols, local_cols) };
        LocalPart { rows, local, below, above }
    }
    /// Where the part's own `x` entries sit in its local `x`.
    pub fn own_offset(&self) -> usize {
        self.below.len()
    }
    /// Length of the local `x`: halo below, own, halo above.
    pub fn local_len(&self) -> usize {
        self.local.ncols()
    }
    /// The longest run of the part's rows (local row indices) that touch only its own `x`
    /// entries: the rows a product can run while the halo is still travelling. All rows when
    /// the part has no halo; empty when every row touches it.
    pub fn interior_rows(&self) -> Range<usize> {
        let n = self.rows.len();
        let (lo, hi) = (self.own_offset() as u32, (self.own_offset() + n) as u32);
        // Columns are sorted within a row: its first and last tell.
        let inner: Vec<bool> = (0..n)
            .into_par_iter()
            .map(|r| {
                let (cols, _) = self.local.row(r);
                match (cols.first(), cols.last()) {
                    (Some(&first), Some(&last)) => first >= lo && last < hi,
                    _ => true, // an empty row
                }
            })
            .collect();
        let (mut best, mut start) = (0..0, 0);
        for (r, &ok) in inner.iter().enumerate() {
            if !ok {
                start = r + 1;
            } else if r + 1 - start > best.len() {
                best = start..r + 1;
            }
        }
        best
    }
    /// Halo entries this part receives from part `j` (`partition` being the one it was cut
    /// by): the global columns, in order, and where they go in the local `x`.
    pub fn halo_from(&self, partition: &Partition, j: usize) -> (Vec<u32>, usize) {
        let range = partition.rows(j);
        let (lo, hi) = (range.start as u32, range.end as u32);
        let in_range = |v: &[u32]| v.partition_point(|&c| c < lo)..v.partition_point(|&c| c < hi);
        let below = in_range(&self.below);
        if !below.is_empty() {
            return (self.below[below.clone()].to_vec(), below.start);
        }
        let above = in_range(&self.above);
        (self.above[above.clone()].to_vec(), self.below.len() + self.rows.len() + above.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Csr<f64> {
        Csr::new_checked(
            4,
            4,
            vec![0, 2, 3, 6, 8],
            vec![0, 2, 1, 0, 2, 3, 1, 3],
            (1..=8).map(f64::from).collect(),
        )
        .unwrap()
    }

    #[test]
    fn the_worked_example() {
        let a = example();
        let p = Partition::from_starts(vec![0, 2, 4], 4).unwrap();
        let (p0, p1) = (LocalPart::of(&a, &p, 0), LocalPart::of(&a, &p, 1));
        assert_eq!(
            (p0.below.as_slice(), p0.above.as_slice(), p0.local_len()),
            (&[][..], &[2][..], 3)
        );
        assert_eq!(
            (p1.below.as_slice(), p1.above.as_slice(), p1.own_offset()),
            (&[0, 1][..], &[][..], 2)
        );
        assert_eq!(p1.local.col_idx(), &[0, 2, 3, 1, 3]);
        assert_eq!(p1.local.values(), &[4.0, 5.0, 6.0, 7.0, 8.0]);
        assert_eq!(p1.halo_from(&p, 0), (vec![0, 1], 0));
        assert_eq!(p0.halo_from(&p, 1), (vec![2], 2));
        assert_eq!(p0.halo_from(&p, 0), (vec![], 2));
        // Part 0's row 0 touches column 2 (part 1's): only row 1 is interior; part 1's rows
        // both touch part 0's columns.
        assert_eq!((p0.interior_rows(), p1.interior_rows()), (1..2, 0..0));
        let whole = Partition::from_starts(vec![0, 4], 4).unwrap();
        assert_eq!(LocalPart::of(&a, &whole, 0).interior_rows(), 0..4);
        // A 7-point stencil in two parts: each part's rows but the grid plane next to the
        // other part.
        let g = crate::io::gen::generate("poisson3d:n=10").unwrap();
        let halves = Partition::from_starts(vec![0, 500, 1000], 1000).unwrap();
        assert_eq!(LocalPart::of(&g, &halves, 0).interior_rows(), 0..400);
        assert_eq!(LocalPart::of(&g, &halves, 1).interior_rows(), 100..500);
    }

    #[test]
    fn a_part_shares_the_values_and_keeps_the_columns_the_renumbering_leaves_alone() {
        let g = crate::io::gen::generate("poisson3d:n=10").unwrap();
        let same = |a: &[u32], b: &[u32]| std::ptr::eq(a.as_ptr(), b.as_ptr());
        // One part: no halo, nothing renumbered, nothing copied.
        let whole = LocalPart::of(&g, &Partition::from_starts(vec![0, 1000], 1000).unwrap(), 0);
        assert!(same(whole.local.col_idx(), g.col_idx()));
        assert!(std::ptr::eq(whole.local.values().as_ptr(), g.values().as_ptr()));
        assert_eq!(whole.local, g);
        // Part 0's halo is the plane straight above it: its columns stay too. Part 1's halo is
        // the plane below it, so its columns move down, and its values are a run of g's.
        let halves = Partition::from_starts(vec![0, 500, 1000], 1000).unwrap();
        let (p0, p1) = (LocalPart::of(&g, &halves, 0), LocalPart::of(&g, &halves, 1));
        assert!(same(p0.local.col_idx(), g.col_idx()));
        assert_eq!((p0.local_len(), p1.local_len(), p1.own_offset()), (600, 600, 100));
        assert!(!same(p1.local.col_idx(), &g.col_idx()[g.row_ptr()[500]..]));
        assert!(std::ptr::eq(p1.local.values().as_ptr(), g.values()[g.row_ptr()[500]..].as_ptr()));
        let shifted: Vec<u32> = (g.col_idx()[g.row_ptr()[500]..].iter()).map(|c| c - 400).collect();
        assert_eq!(p1.local.col_idx(), shifted);
    }

    #[test]
    fn balanced_parts_split_the_entries_and_local_products_equal_the_whole() {
        for spec in ["poisson3d:n=12", "powerlaw:n=3000,mean=8,exp=2.1", "kron:scale=10"] {
            let a = crate::io::gen::generate(spec).unwrap();
            let x = crate::reference::test_vector::<f64>(a.ncols());
            let mut whole = vec![0.0; a.nrows()];
            a.spmv_serial(&x, &mut whole);
            for parts in [1, 2, 3, 7] {
                let p = Partition::balanced(&a, parts).unwrap();
                assert_eq!(p.parts(), parts);
                let mut y = Vec::new();
                for i in 0..parts {
                    let part = LocalPart::of(&a, &p, i);
                    let nnz = part.local.nnz() as f64;
                    assert!(
                        nnz <= a.nnz() as f64 / parts as f64 + a.max_row_len() as f64 + 1.0,
                        "{spec} part {i}"
                    );
                    // The local x from the whole x, through the halo lists of every owner.
                    let mut local_x = vec![f64::NAN; part.local_len()];
                    local_x[part.own_offset()..part.own_offset() + part.rows.len()]
                        .copy_from_slice(&x[part.rows.clone()]);
                    for j in (0..parts).filter(|&j| j != i) {
                        let (cols, at) = part.halo_from(&p, j);
                        for (k, &c) in cols.iter().enumerate() {
                            assert_eq!(p.owner(c as usize), j);
                            local_x[at + k] = x[c as usize];
                        }
                    }
                    let mut local_y = vec![0.0; part.rows.len()];
                    part.local.spmv_serial(&local_x, &mut local_y);
                    y.extend(local_y);
                }
                // The same sums in the same order: the same bits.
                assert_eq!(y, whole, "{spec} in {parts} parts");
            }
        }
        let rect = Csr::<f64>::zeros(3, 4);
        assert!(Partition::balanced(&rect, 2).unwrap_err().to_string().contains("square"));
        assert!(Partition::balanced(&Csr::<f64>::zeros(5, 5), 2).is_ok());
    }
}
