//! Graph500-style Kronecker (R-MAT) graphs.

use rayon::prelude::*;

use super::build::{check_size, err, window};
use super::rng::Rng;
use crate::{Csr, Result};

const TAG_EDGES: u64 = 0x6B72_6F6E_6564; // "kroned"
const TAG_PERM: u64 = 0x6B72_6F6E_7065_726D; // "kronperm"

/// R-MAT quadrant probabilities of the Graph500 benchmark: top-left `A`, top-right `B`,
/// bottom-left `C` and (the rest) bottom-right `D = 0.05`.
pub const RMAT_A: f64 = 0.57;
/// Probability of the top-right quadrant.
pub const RMAT_B: f64 = 0.19;
/// Probability of the bottom-left quadrant.
pub const RMAT_C: f64 = 0.19;

/// Largest supported scale: vertex numbers must fit `u32`.
pub const MAX_SCALE: u32 = 32;

/// Edges drawn per random stream (and per parallel task).
const CHUNK: usize = 1 << 16;

/// Parameters of [`kronecker_with`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KroneckerParams {
    /// `2^scale` vertices (rows and columns), at most [`MAX_SCALE`].
    pub scale: u32,
    /// `edge_factor · 2^scale` edges are drawn (before self-loops and repeats are dropped).
    pub edge_factor: usize,
    /// Seed of the random streams: the same seed gives the same graph.
    pub seed: u64,
    /// Store every edge in both directions (an undirected graph, a symmetric matrix), as
    /// Graph500 does. Otherwise edge `u → v` is entry `(u, v)` only.
    pub symmetric: bool,
    /// Relabel the vertices by a seeded random permutation (Graph500 does this too).
    /// Without it vertex 0 is the highest-degree one and the heavy rows sit at the top.
    pub permute: bool,
}

impl KroneckerParams {
    /// The Graph500 setting: edge factor 16, symmetric, permuted, seed 1.
    pub fn new(scale: u32) -> Self {
        KroneckerParams { scale, edge_factor: 16, seed: 1, symmetric: true, permute: true }
    }

    pub(crate) fn check(&self) -> Result<()> {
        const F: &str = "kron";
        if self.scale > MAX_SCALE {
            return err(format!(
                "{F}: scale = {} gives 2^{} vertices, too many for 32-bit indices (scale at most {MAX_SCALE})",
                self.scale, self.scale
            ));
        }
        let n = (self.scale as f64).exp2();
        let edges = (self.edge_factor as f64) * n;
        // The edge list (8 bytes an edge) lives until the adjacency is built.
        check_size(F, n as u64, edges * if self.symmetric { 2.0 } else { 1.0 }, 8.0 * edges)
    }
}

/// The Graph500 Kronecker graph: `2^scale` vertices, `edge_factor · 2^scale` R-MAT edges
/// (probabilities [`RMAT_A`], [`RMAT_B`], [`RMAT_C`]), symmetric and randomly permuted.
/// See [`kronecker_with`].
pub fn kronecker(scale: u32, edge_factor: usize, seed: u64) -> Result<Csr<f64>> {
    kronecker_with(&KroneckerParams { edge_factor, seed, ..KroneckerParams::new(scale) })
}

/// A Kronecker / R-MAT graph as a `2^scale × 2^scale` adjacency matrix with values 1.0.
///
/// Each edge picks one of the four quadrants `scale` times (probabilities A, B, C, D) to
/// fix one bit of its source and target. Self-loops are dropped (the diagonal is empty),
/// repeated edges are stored once. With `symmetric`, `(v, u)` is stored for every `(u, v)`;
/// with `permute`, vertex `v` becomes `π(v)` for a random permutation `π` from the seed.
/// The row lengths follow a heavy-tailed (roughly power-law) distribution: a few hub rows
/// with thousands of entries, many empty rows.
pub fn kronecker_with(p: &KroneckerParams) -> Result<Csr<f64>> {
    p.check()?;
    let n = 1usize << p.scale;
    let m = p.edge_factor << p.scale;
    let (seed, scale) = (p.seed, p.scale);
    // Quadrant thresholds on 32-bit draws.
    let t = |x: f64| (x * 4294967296.0).round() as u64;
    let (ta, tab, tabc) = (t(RMAT_A), t(RMAT_A + RMAT_B), t(RMAT_A + RMAT_B + RMAT_C));

    let perm: Option<Vec<u32>> = p.permute.then(|| {
        let mut perm: Vec<u32> = (0..n).map(|v| v as u32).collect();
        let mut rng = Rng::stream(seed, TAG_PERM, 0);
        for i in (1..n).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            perm.swap(i, j);
        }
        perm
    });

    // Edges (source, target), permuted; chunk i draws from stream i.
    let mut edges = vec![(0u32, 0u32); m];
    edges.par_chunks_mut(CHUNK).enumerate().for_each(|(chunk, out)| {
        let mut rng = Rng::stream(seed, TAG_EDGES, chunk as u64);
        for e in out.iter_mut() {
            let (mut u, mut v) = (0u64, 0u64);
            let mut bits = 0u64;
            for level in 0..scale {
                if level % 2 == 0 {
                    bits = rng.next_u64();
                }
                let x = (bits >> (32 * (level % 2))) & 0xFFFF_FFFF;
                // Quadrants: [0, A) top-left, [A, A+B) top-right, [A+B, A+B+C) bottom-left,
                // the rest bottom-right; computed without branches (they are unpredictable).
                let bu = (x >= tab) as u64;
                let bv = ((x >= ta) & (x < tab) | (x >= tabc)) as u64;
                u = (u << 1) | bu;
                v = (v << 1) | bv;
            }
            *e = match &perm {
                Some(pi) => (pi[u as usize], pi[v as usize]),
                None => (u as u32, v as u32),
            };
        }
    });
    drop(perm);
    Ok(adjacency(n, &edges, p.symmetric))
}

/// The `n × n` adjacency matrix of `edges` (values 1.0), without self-loops and repeats;
/// under a row window ([`super::build::in_window`]) only the window's rows.
fn adjacency(n: usize, edges: &[(u32, u32)], symmetric: bool) -> Csr<f64> {
    let rows = window(n);
    let (first, n_all, n) = (rows.start, n, rows.len());
    // The window's row of a source: `None` outside it.
    let row = |u: u32| (u as usize).checked_sub(first).filter(|&r| r < n);
    // Counting sort by row.
    let mut row_ptr = vec![0usize; n + 1];
    for &(u, v) in edges {
        if u != v {
            if let Some(r) = row(u) {
                row_ptr[r + 1] += 1;
            }
            if let Some(r) = row(v).filter(|_| symmetric) {
                row_ptr[r + 1] += 1;
            }
        }
    }
    for r in 0..n {
        row_ptr[r + 1] += row_ptr[r];
    }
    let mut cols = vec![0u32; row_ptr[n]];
    let mut next = row_ptr.clone();
    for &(u, v) in edges {
        if u != v {
            if let Some(r) = row(u) {
                cols[next[r]] = v;
                next[r] += 1;
            }
            if let Some(r) = row(v).filter(|_| symmetric) {
                cols[next[r]] = u;
                next[r] += 1;
            }
        }
    }
    drop(next);
    // Sort and deduplicate each row in place.
    let lens: Vec<usize> = crate::matrix::coo::split_rows_mut(&mut cols, &row_ptr)
        .into_par_iter()
        .with_min_len(1024)
        .map(|row| {
            row.sort_unstable();
            let mut len = 0;
            for i in 0..row.len() {
                if len == 0 || row[len - 1] != row[i] {
                    row[len] = row[i];
                    len += 1;
                }
            }
            len
        })
        .collect();
    // Compact to the front.
    let mut write = 0;
    for r in 0..n {
        let start = row_ptr[r];
        cols.copy_within(start..start + lens[r], write);
        row_ptr[r] = write;
        write += lens[r];
    }
    row_ptr[n] = write;
    cols.truncate(write);
    cols.shrink_to_fit();
    let values = vec![1.0; write];
    // SAFETY: columns are vertices < n_all, sorted and deduplicated per row.
    unsafe { Csr::new_unchecked(n, n_all, row_ptr, cols, values) }
}
