//! Locality-improving reordering: a symmetric permutation `P·A·Pᵀ` computed once, the product
//! run on the permuted matrix in any format, and `x` and `y` given and returned in the
//! original order ([`Reordered`], which gathers `x` and scatters `y` around every product;
//! on the GPU two small kernels, included in every timing).
//!
//! - `rcm`: reverse Cuthill–McKee on the pattern of `A + Aᵀ`: a breadth-first order from a
//!   pseudo-peripheral vertex of each connected component (neighbours by increasing degree),
//!   reversed. It gathers the entries near the diagonal, so the rows a warp processes touch
//!   nearby `x` entries (and diagonal formats see fewer diagonals).
//! - `degree`: rows by decreasing degree (row length + column count; ties by index), hubs
//!   first (degree-based grouping, as in graph analytics): the `x` entries most gathered sit
//!   together in few cache lines.
//!
//! Both are deterministic (same matrix, same permutation) and need a square matrix.

mod format;

use std::cmp::Reverse;

use rayon::prelude::*;

pub use format::{build_reordered, Reordered, KERNELS};

use crate::error::{check_host_memory, Error, Result};
use crate::matrix::{Csr, Scalar};

/// Which permutation to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reordering {
    /// No reordering: the matrix as given.
    None,
    /// Reverse Cuthill–McKee (`rcm`).
    Rcm,
    /// Rows by decreasing degree, hubs first (`degree`).
    Degree,
}

impl Reordering {
    /// The names [`Reordering::parse`] takes.
    pub const NAMES: &'static [&'static str] = &["none", "rcm", "degree"];

    /// The lowercase name: "none", "rcm" or "degree".
    pub fn name(self) -> &'static str {
        match self {
            Reordering::None => "none",
            Reordering::Rcm => "rcm",
            Reordering::Degree => "degree",
        }
    }

    /// A reordering by name (any case); `Error::Unsupported` listing the names otherwise.
    pub fn parse(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "none" => Ok(Reordering::None),
            "rcm" => Ok(Reordering::Rcm),
            "degree" => Ok(Reordering::Degree),
            _ => Err(Error::Unsupported(format!(
                "reordering '{name}': must be one of {}",
                Self::NAMES.join(", ")
            ))),
        }
    }
}

impl std::fmt::Display for Reordering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A permutation of `0..n`: new index `i` holds old index `old_of_new[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permutation {
    old_of_new: Vec<u32>,
    new_of_old: Vec<u32>,
}

impl Permutation {
    /// From the old index of each new position (checked to be a permutation).
    pub fn from_old_of_new(old_of_new: Vec<u32>) -> Result<Self> {
        let n = old_of_new.len();
        let mut new_of_old = vec![u32::MAX; n];
        for (new, &old) in old_of_new.iter().enumerate() {
            let slot = new_of_old.get_mut(old as usize).filter(|s| **s == u32::MAX);
            match slot {
                Some(s) => *s = new as u32,
                None => {
                    return Err(Error::Unsupported(format!(
                        "not a permutation of 0..{n}: index {old} at position {new}"
                    )))
                }
            }
        }
        Ok(Permutation { old_of_new, new_of_old })
    }

    /// The permutation of `0..n` that moves nothing.
    pub fn identity(n: usize) -> Self {
        let v: Vec<u32> = (0..n as u32).collect();
        Permutation { old_of_new: v.clone(), new_of_old: v }
    }

    /// `n`, the number of indices permuted.
    pub fn len(&self) -> usize {
        self.old_of_new.len()
    }
    /// Whether it permutes no indices.
    pub fn is_empty(&self) -> bool {
        self.old_of_new.is_empty()
    }
    /// Old index of each new position.
    pub fn old_of_new(&self) -> &[u32] {
        &self.old_of_new
    }
    /// New position of each old index (the inverse).
    pub fn new_of_old(&self) -> &[u32] {
        &self.new_of_old
    }

    /// `out[i] = v[old_of_new[i]]`: a vector in the original order, permuted.
    pub fn gather<T: Copy + Send + Sync>(&self, v: &[T], out: &mut [T]) {
        out.par_iter_mut()
            .with_min_len(1 << 14)
            .zip(&self.old_of_new)
            .for_each(|(o, &old)| *o = v[old as usize]);
    }

    /// `out[old_of_new[i]] = v[i]`: a permuted vector back in the original order.
    pub fn scatter<T: Copy + Send + Sync>(&self, v: &[T], out: &mut [T]) {
        out.par_iter_mut()
            .with_min_len(1 << 14)
            .zip(&self.new_of_old)
            .for_each(|(o, &new)| *o = v[new as usize]);
    }

    /// `P·A·Pᵀ`: row `i` is row `old_of_new[i]` of `a`, its columns renumbered and sorted.
    pub fn apply<T: Scalar>(&self, a: &Csr<T>) -> Result<Csr<T>> {
        check_square(a)?;
        let bytes = (a.nnz() * (4 + std::mem::size_of::<T>()) + 16 * (a.nrows() + 1)) as u64;
        check_host_memory(|| format!("P·A·Pᵀ of a {} x {} matrix", a.nrows(), a.ncols()), bytes)?;
        if a.nrows() != self.len() {
            return Err(Error::Shape(format!(
                "a permutation of {} indices given for a {} x {} matrix",
                self.len(),
                a.nrows(),
                a.ncols()
            )));
        }
        let lens: Vec<usize> =
            self.old_of_new.par_iter().map(|&old| a.row_len(old as usize)).collect();
        let mut row_ptr = Vec::with_capacity(lens.len() + 1);
        row_ptr.push(0usize);
        for len in &lens {
            row_ptr.push(row_ptr.last().unwrap() + len);
        }
        let mut cols = vec![0u32; a.nnz()];
        let mut vals = vec![T::ZERO; a.nnz()];
        // Split the outputs at the row boundaries, one slice pair per new row.
        let mut rows: Vec<(&mut [u32], &mut [T])> = Vec::with_capacity(lens.len());
        let (mut c_rest, mut v_rest) = (cols.as_mut_slice(), vals.as_mut_slice());
        for &len in &lens {
            let (c, c_tail) = std::mem::take(&mut c_rest).split_at_mut(len);
            let (v, v_tail) = std::mem::take(&mut v_rest).split_at_mut(len);
            rows.push((c, v));
            (c_rest, v_rest) = (c_tail, v_tail);
        }
        rows.into_par_iter().enumerate().for_each(|(new, (c, v))| {
            let (old_cols, old_vals) = a.row(self.old_of_new[new] as usize);
            let mut entries: Vec<(u32, T)> = old_cols
                .iter()
                .map(|&k| self.new_of_old[k as usize])
                .zip(old_vals.iter().copied())
                .collect();
            entries.sort_unstable_by_key(|e| e.0);
            for (k, (col, val)) in entries.into_iter().enumerate() {
                c[k] = col;
                v[k] = val;
            }
        });
        Csr::new_checked(a.nrows(), a.ncols(), row_ptr, cols, vals)
    }
}

fn check_square<T: Scalar>(a: &Csr<T>) -> Result<()> {
    if a.nrows() != a.ncols() {
        return Err(Error::Unsupported(format!(
            "reordering permutes rows and columns alike: it needs a square matrix, not {} x {}",
            a.nrows(),
            a.ncols()
        )));
    }
    Ok(())
}

/// The permutation `method` gives for `a` (square).
pub fn permutation<T: Scalar>(a: &Csr<T>, method: Reordering) -> Result<Permutation> {
    check_square(a)?;
    // The transpose's pattern, the orders and the marks, before they are allocated.
    let (n, nnz) = (a.nrows() as u64, a.nnz() as u64);
    check_host_memory(
        || format!("the {method} reordering of a {n} x {n} matrix"),
        4 * nnz + 8 * (n + 1) + 16 * n,
    )?;
    let order = match method {
        Reordering::None => return Ok(Permutation::identity(a.nrows())),
        Reordering::Rcm => rcm(&Graph::of(a)),
        Reordering::Degree => by_degree(&Graph::of(a)),
    };
    Permutation::from_old_of_new(order)
}

/// The pattern of `A` (borrowed) and of `Aᵀ`: vertex `v`'s neighbours are row `v` of both.
struct Graph<'a> {
    n: usize,
    row_ptr: &'a [usize],
    col_idx: &'a [u32],
    t_ptr: Vec<usize>,
    t_idx: Vec<u32>,
}

impl<'a> Graph<'a> {
    fn of<T: Scalar>(a: &'a Csr<T>) -> Self {
        let n = a.nrows();
        let mut t_ptr = vec![0usize; n + 1];
        for &c in a.col_idx() {
            t_ptr[c as usize + 1] += 1;
        }
        for i in 0..n {
            t_ptr[i + 1] += t_ptr[i];
        }
        let mut next = t_ptr.clone();
        let mut t_idx = vec![0u32; a.nnz()];
        for r in 0..n {
            for &c in a.row(r).0 {
                t_idx[next[c as usize]] = r as u32;
                next[c as usize] += 1;
            }
        }
        Graph { n, row_ptr: a.row_ptr(), col_idx: a.col_idx(), t_ptr, t_idx }
    }

    /// Row length + column count.
    fn degree(&self, v: usize) -> usize {
        self.row_ptr[v + 1] - self.row_ptr[v] + self.t_ptr[v + 1] - self.t_ptr[v]
    }

    fn neighbours(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        let out = &self.col_idx[self.row_ptr[v]..self.row_ptr[v + 1]];
        let inc = &self.t_idx[self.t_ptr[v]..self.t_ptr[v + 1]];
        out.iter().chain(inc).map(|&u| u as usize)
    }
}

/// `seen[v]` of a vertex already placed in the final order.
const DONE: u32 = u32::MAX;

/// Breadth-first search of the component of `start` over the vertices not yet placed
/// (`seen` neither `stamp` nor [`DONE`]), neighbours by increasing (degree, index): appends
/// them to `out` in that order and marks them `stamp`. Returns where the last level begins in
/// `out` and the number of levels.
fn bfs(
    g: &Graph, start: usize, seen: &mut [u32], stamp: u32, out: &mut Vec<u32>, degree: &[u32],
) -> (usize, usize) {
    seen[start] = stamp;
    out.push(start as u32);
    let (mut level_begin, mut levels) = (out.len() - 1, 0);
    let mut fresh = Vec::new();
    loop {
        let level_end = out.len();
        levels += 1;
        for h in level_begin..level_end {
            fresh.clear();
            for w in g.neighbours(out[h] as usize) {
                if seen[w] != stamp && seen[w] != DONE {
                    seen[w] = stamp;
                    fresh.push(w as u32);
                }
            }
            fresh.sort_unstable_by_key(|&w| (degree[w as usize], w));
            out.extend_from_slice(&fresh);
        }
        if out.len() == level_end {
            return (level_begin, levels);
        }
        level_begin = level_end;
    }
}

/// Reverse Cuthill–McKee over every connected component of `A + Aᵀ`, components in order of
/// their lowest-degree vertex.
fn rcm(g: &Graph) -> Vec<u32> {
    let n = g.n;
    let degree: Vec<u32> =
        (0..n).into_par_iter().map(|v| g.degree(v).min(u32::MAX as usize) as u32).collect();
    let mut by_degree: Vec<u32> = (0..n as u32).collect();
    by_degree.par_sort_unstable_by_key(|&v| (degree[v as usize], v));
    let mut seen = vec![0u32; n];
    let mut stamp = 0u32;
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut trial: Vec<u32> = Vec::new();
    for &candidate in &by_degree {
        if seen[candidate as usize] == DONE {
            continue;
        }
        // A pseudo-peripheral start: from the lowest-degree vertex, move to the lowest-degree
        // vertex of the last level while that deepens the level structure (at most 4 rounds).
        let mut start = candidate as usize;
        let mut depth = 0;
        for _ in 0..4 {
            if stamp == DONE - 1 {
                // Trial stamps exhausted (past 4 billion searches): forget them.
                seen.iter_mut().filter(|s| **s != DONE).for_each(|s| *s = 0);
                stamp = 0;
            }
            stamp += 1;
            trial.clear();
            let (last, levels) = bfs(g, start, &mut seen, stamp, &mut trial, &degree);
            let next = trial[last..]
                .iter()
                .copied()
                .min_by_key(|&w| (degree[w as usize], w))
                .unwrap_or(start as u32) as usize;
            if levels <= depth || next == start {
                break;
            }
            (depth, start) = (levels, next);
        }
        bfs(g, start, &mut seen, DONE, &mut order, &degree);
    }
    order.reverse();
    order
}

/// Vertices by decreasing degree, ties by index.
fn by_degree(g: &Graph) -> Vec<u32> {
    let mut order: Vec<u32> = (0..g.n as u32).collect();
    order.par_sort_unstable_by_key(|&v| (Reverse(g.degree(v as usize)), v));
    order
}

#[cfg(test)]
mod tests;
