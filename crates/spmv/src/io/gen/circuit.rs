//! Patterns modelled on two application classes that the other families miss: circuit
//! simulation (`circuit`: short rows near the diagonal, a few nets that touch many nodes) and
//! linear programming (`lp`: rectangular staircase blocks, heavy-tailed row lengths, a few
//! dense linking rows).
//!
//! Row `r` draws from its own stream, so a row window builds only its rows; values are
//! hashes of the position ([`super::rng::entry_value`]).

use super::build::{build_from_columns, check_dim, check_mean, check_size, err};
use super::random::sample_distinct;
use super::rng::{entry_value, pareto_weight, Rng};
use crate::{Csr, Result};

const TAG_CIRCUIT: u64 = 0x0063_6972_6375_6974; // "circuit"
const TAG_LP: u64 = 0x6C70; // "lp"

/// Parameters of [`circuit`]. Start from [`CircuitParams::new`] and set what differs.
#[derive(Clone, Debug, PartialEq)]
pub struct CircuitParams {
    /// Nodes (rows and columns).
    pub n: usize,
    /// Mean entries per ordinary row besides the diagonal, within `window` of it (lengths
    /// uniform on 0..=⌊2·local⌋).
    pub local: f64,
    /// How far from the diagonal a node's local connections reach (≥ 1).
    pub window: usize,
    /// Nets (supply, ground, clock) among the nodes: rows of `net_len` entries anywhere.
    pub nets: usize,
    /// Entries in a net's row.
    pub net_len: usize,
    /// Probability that an ordinary row also holds a net's column: the nets' columns are
    /// as dense as their rows.
    pub net_share: f64,
    /// Seed of the pattern and the values.
    pub seed: u64,
}

impl CircuitParams {
    /// `n` nodes, 3 local connections within ±1000, `n / 10⁵` nets (at least 1) of
    /// `n / 100` entries (the nets hold `n²/10⁷` entries: a tenth of the local ones at 10⁶
    /// nodes), a net column in 5% of the rows, seed 1.
    pub fn new(n: usize) -> Self {
        CircuitParams {
            n,
            local: 3.0,
            window: 1000,
            nets: (n / 100_000).max(1).min(n),
            net_len: n / 100,
            net_share: 0.05,
            seed: 1,
        }
    }

    pub(crate) fn check(&self) -> Result<()> {
        const F: &str = "circuit";
        check_dim(F, "n", self.n as u64)?;
        check_mean(F, self.local)?;
        if self.window == 0 {
            return err(format!("{F}: window must be at least 1"));
        }
        if self.nets > self.n {
            return err(format!("{F}: nets = {} do not fit in n = {} nodes", self.nets, self.n));
        }
        if self.n > 0 && self.net_len > self.n {
            return err(format!(
                "{F}: netlen = {} entries per net exceed the n = {} columns",
                self.net_len, self.n
            ));
        }
        if !(0.0..=1.0).contains(&self.net_share) {
            return err(format!(
                "{F}: netp must be a probability in [0, 1], got {}",
                self.net_share
            ));
        }
        let ordinary = (self.n - self.nets) as f64 * (1.0 + self.local.min(self.n as f64) + 1.0);
        let nnz = ordinary + self.nets as f64 * (self.net_len as f64 + 1.0);
        check_size(F, self.n as u64, nnz, 4.0 * self.nets as f64)
    }
}

/// A circuit-simulation-like matrix: every node has its diagonal (1 + the sum of the row's
/// magnitudes: diagonally dominant) and about `local` connections within `window` of it,
/// plus, with probability `net_share`, one net's column; the `nets` net nodes (chosen at
/// random) have rows of `net_len` entries at random columns. Not symmetric.
pub fn circuit(p: &CircuitParams) -> Result<Csr<f64>> {
    p.check()?;
    let (n, seed) = (p.n, p.seed);
    let mut nets = Vec::new();
    sample_distinct(&mut Rng::stream(seed, TAG_CIRCUIT, u64::MAX), n as u64, p.nets, &mut nets);
    let nets = &nets;
    let width = 2.0 * p.local + 1.0;
    let columns = move |r: usize, out: &mut Vec<u32>| {
        let mut rng = Rng::stream(seed, TAG_CIRCUIT, r as u64);
        if nets.binary_search(&(r as u32)).is_ok() {
            sample_distinct(&mut rng, n as u64, p.net_len, out);
        } else {
            let (from, to) = (r.saturating_sub(p.window), (r + p.window + 1).min(n));
            let k = ((rng.unit() * width) as usize).min(to - from);
            sample_distinct(&mut rng, (to - from) as u64, k, out);
            for c in out.iter_mut() {
                *c += from as u32;
            }
            if !nets.is_empty() && rng.unit() < p.net_share {
                out.push(nets[rng.below(nets.len() as u64) as usize]);
            }
        }
        out.push(r as u32);
        out.sort_unstable();
        out.dedup();
    };
    let values = move |r: usize, cols: &[u32], vals: &mut [f64]| {
        let mut sum = 0.0;
        for (v, &c) in vals.iter_mut().zip(cols) {
            *v = entry_value(seed, r, c);
            sum += v.abs();
        }
        let diagonal = cols.binary_search(&(r as u32)).expect("every row holds its diagonal");
        vals[diagonal] = 1.0 + sum;
    };
    Ok(build_from_columns(n, n, columns, values))
}

/// Parameters of [`lp`]. Start from [`LpParams::new`] and set what differs.
#[derive(Clone, Debug, PartialEq)]
pub struct LpParams {
    /// Constraints (rows).
    pub rows: usize,
    /// Variables (columns).
    pub cols: usize,
    /// Stages of the staircase (≥ 1): the rows of stage s hold columns of stages s and s + 1.
    pub stages: usize,
    /// Mean entries of an ordinary row (≥ 1; heavy-tailed: Pareto with exponent 2.5).
    pub mean: f64,
    /// Linking rows: `dense_len` entries over all columns.
    pub dense: usize,
    /// Entries of a linking row.
    pub dense_len: usize,
    /// Seed of the pattern and the values.
    pub seed: u64,
}

impl LpParams {
    /// `rows × 2·rows`, 100 stages, 6 entries per row on average, 10 linking rows of
    /// `cols / 20` entries (as many entries as rows), seed 1.
    pub fn new(rows: usize) -> Self {
        let cols = 2 * rows;
        LpParams {
            rows,
            cols,
            stages: 100,
            mean: 6.0,
            dense: rows.min(10),
            dense_len: cols / 20,
            seed: 1,
        }
    }

    pub(crate) fn check(&self) -> Result<()> {
        const F: &str = "lp";
        check_dim(F, "rows", self.rows as u64)?;
        check_dim(F, "cols", self.cols as u64)?;
        if self.stages == 0 {
            return err(format!("{F}: stages must be at least 1"));
        }
        if !(self.mean.is_finite() && self.mean >= 1.0) {
            return err(format!("{F}: mean must be a finite number >= 1, got {}", self.mean));
        }
        if self.dense > self.rows {
            return err(format!(
                "{F}: dense = {} linking rows do not fit in rows = {}",
                self.dense, self.rows
            ));
        }
        if self.dense_len > self.cols {
            return err(format!(
                "{F}: denselen = {} entries exceed the cols = {} columns",
                self.dense_len, self.cols
            ));
        }
        let nnz = (self.rows - self.dense) as f64 * self.mean.min(self.cols as f64)
            + self.dense as f64 * self.dense_len as f64;
        check_size(F, self.rows as u64, nnz, 4.0 * self.dense as f64)
    }
}

/// A linear-programming-like constraint matrix (`rows × cols`, any shape): row `r` of stage
/// `s = ⌊r·stages/rows⌋` holds a Pareto-distributed number of entries (mean `mean`, at
/// least one) at random columns of stages `s` and `s + 1` of the columns; `dense` randomly
/// chosen linking rows hold `dense_len` entries anywhere. Values in (-1, 1).
pub fn lp(p: &LpParams) -> Result<Csr<f64>> {
    p.check()?;
    let (rows, cols, stages, seed) = (p.rows, p.cols, p.stages, p.seed);
    let mut dense = Vec::new();
    sample_distinct(&mut Rng::stream(seed, TAG_LP, u64::MAX), rows as u64, p.dense, &mut dense);
    let dense = &dense;
    // A Pareto weight of exponent 2.5 has mean 3: scaled by mean/3 it has mean `mean`.
    let scale = p.mean / 3.0;
    let columns = move |r: usize, out: &mut Vec<u32>| {
        let mut rng = Rng::stream(seed, TAG_LP, r as u64);
        if dense.binary_search(&(r as u32)).is_ok() {
            return sample_distinct(&mut rng, cols as u64, p.dense_len, out);
        }
        let stage = (r as u128 * stages as u128 / rows as u128) as usize;
        let at = |s: usize| (s as u128 * cols as u128 / stages as u128) as usize;
        let (from, to) = (at(stage), at((stage + 2).min(stages)));
        let weight = pareto_weight(1.0 - rng.unit(), 1.0 / 1.5);
        let k = ((scale * weight + rng.unit()) as usize).max(1).min(to - from);
        sample_distinct(&mut rng, (to - from) as u64, k, out);
        for c in out.iter_mut() {
            *c += from as u32;
        }
    };
    let values = move |r: usize, cols: &[u32], vals: &mut [f64]| {
        for (v, &c) in vals.iter_mut().zip(cols) {
            *v = entry_value(seed, r, c);
        }
    };
    Ok(build_from_columns(rows, cols, columns, values))
}
