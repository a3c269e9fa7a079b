//! PageRank by power iteration on any format: `r ← α·(Gᵀ·r + (d·r)/n·e) + (1 − α)·e`.
//!
//! **The graph.** The input is an adjacency matrix `A` (n × n): a stored entry `A[i][j]` is an
//! edge from node `i` to node `j` (row = source, the BRCP paper's `G_ij`, the probability of
//! moving from `P_i` to `P_j`). [`Transition::new`] builds the transposed transition matrix
//! `Gᵀ`, with `Gᵀ[j][i] = w_ij / Σ_k w_ik`, so that every column of `Gᵀ` with out-edges sums
//! to 1 (column-stochastic). The weights `w` are chosen by [`EdgeWeights`]:
//! - `Pattern` (the default, and the paper's formula (1), `r(P_j)/|P_j|`): every stored entry
//!   is an edge of weight 1, so each out-edge of `i` gets `1/outdeg(i)`; the stored values,
//!   explicit zeros included, are ignored. Graph files are mostly `pattern` anyway, and the
//!   generators' values are not meaningful as weights (they are signed).
//! - `Values`: `w_ij = |A[i][j]|`, for weighted graphs; zero entries carry no weight.
//!
//! Self-loops are ordinary edges. A node whose row has no (weighted) edge is **dangling**.
//!
//! **The iteration.** A dangling node's rank would leak out of the chain; it is instead
//! redistributed uniformly over all nodes (the usual fix: the surfer jumps anywhere from a
//! page without links):
//! ```text
//! r_{k+1} = α·(Gᵀ·r_k + (d·r_k)/n · e) + (1 − α)·e,    r_0 = e,    d·r = Σ_{i dangling} r_i
//! ```
//! with `e` the all-ones vector. This keeps `Σ r_k = n` for every k (ranks have mean 1), the
//! scaling of the paper's formula (1), `r = α·Σ r(P_j)/|P_j| + (1 − α)`; divide by n for
//! probabilities. The ranking is the same in either scaling, but the stopping rule is not:
//! the iteration stops at the first k with `max_i |r_{k+1,i} − r_{k,i}| < tol` (tol = 1e-5 by
//! default, as in the paper), which, with mean-1 ranks, is a tolerance relative to the average
//! rank whatever the size of the graph (with probabilities it would be met by any large graph
//! after one step). α = 0.85 by default; [`Settings`] holds both.
//!
//! **On the GPU** ([`pagerank`] on a `DeviceMatrix`) the whole iteration stays on the device: the format's
//! `spmv` computes `y = Gᵀ·r`; `pagerank_update` (`pagerank.cu`) turns `y` into `r_{k+1}` in
//! place and writes per-block partials of the residual and of the dangling sum of `r_{k+1}`;
//! `pagerank_finish` reduces them into two device scalars, the dangling sum the next update
//! reads (never the host) and the residual. The host reads the residual, one scalar, every
//! `check_every` iterations (1 by default, as the paper does; with k > 1 up to k − 1 extra
//! iterations run past convergence, and the residual reported is the last one read). Both
//! reductions have a fixed order, so the solver adds no run-to-run variation of its own: a
//! deterministic format gives bitwise identical ranks every run.
//!
//! **On the CPU** ([`pagerank`] on a host operator) the same steps run with any host [`LinearOperator`] (a
//! format's `spmv_cpu`, the oracle, CSR), the vector update split over rayon's threads in
//! fixed chunks (deterministic too). [`pagerank_exact`] iterates with the oracle SpMV in f64
//! to a tight tolerance: the reference ranking.
//!
//! **Ranking agreement** ([`top_k_agreement`]), as in the paper's §3.4: the nodes are sorted
//! by rank, highest first (ties by node index), and position `p` of the top k counts when the
//! method puts the same node there as the exact ranking (A > B > C against A > C > B: 1
//! position agrees). Nodes with equal exact ranks (symmetric nodes are common in graphs)
//! make that count depend on rounding, so a second count also accepts a node whose exact rank
//! equals, within a tie tolerance, the exact rank of the node that belongs there.

use std::time::Instant;

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;
use serde::Serialize;

use super::OracleOperator;
use crate::error::{Error, Result};
use crate::formats::DeviceMatrix;
use crate::gpu::{Gpu, Kernel, KernelModule};
use crate::matrix::{Csr, Scalar};
use crate::measure::ms_since;
use crate::operator::LinearOperator;

/// The CUDA kernels of the GPU iteration.
pub const KERNELS: KernelModule =
    KernelModule { name: "pagerank", source: include_str!("pagerank.cu"), headers: &[super::TREE] };

/// Threads per block of `pagerank_update` and `pagerank_finish` (`PR_UPDATE_BLOCK`,
/// `PR_FINISH_BLOCK` in `pagerank.cu`).
pub(crate) const UPDATE_BLOCK: u32 = 256;
const FINISH_BLOCK: u32 = 1024;
/// Most blocks of `pagerank_update` (a grid-stride loop covers the rest); the grid depends
/// on n alone, which fixes the reduction order.
const MAX_UPDATE_BLOCKS: usize = 1024;
/// Nodes per task of the CPU update (fixed, so the CPU reductions have a fixed order too).
const HOST_CHUNK: usize = 8192;

/// What an edge weighs in the transition matrix (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeWeights {
    /// Every stored entry is an edge of weight 1 (values ignored).
    #[default]
    Pattern,
    /// `|A[i][j]|` is the weight of edge `i → j`.
    Values,
}

/// Parameters of the iteration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Settings {
    /// Damping factor α, in [0, 1).
    pub alpha: f64,
    /// Stop when `max_i |r_{k+1,i} − r_{k,i}| < tol` (ranks have mean 1).
    pub tol: f64,
    /// Stop after this many iterations at most (`converged` is then false).
    pub max_iter: usize,
    /// Read the residual every this many iterations (GPU; the CPU checks every iteration).
    pub check_every: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { alpha: 0.85, tol: 1e-5, max_iter: 1000, check_every: 1 }
    }
}

impl Settings {
    /// Checks the parameters; a bad one is an [`Error::Argument`] naming it.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::Argument(format!("PageRank: {what}")));
        if !(0.0..1.0).contains(&self.alpha) {
            return bad(format!("alpha = {} must be in [0, 1)", self.alpha));
        }
        if !(self.tol >= 0.0 && self.tol.is_finite()) {
            return bad(format!("tol = {} must be a finite number >= 0", self.tol));
        }
        if self.check_every == 0 {
            return bad("check_every must be at least 1".into());
        }
        Ok(())
    }
}

/// The transposed transition matrix `Gᵀ` of a graph and its dangling nodes.
#[derive(Clone, Debug)]
pub struct Transition {
    gt: Csr<f64>,
    /// 1 for a dangling node (no weighted out-edge), else 0; the GPU reads it as bytes.
    dangling: Vec<u8>,
    dangling_count: usize,
    weights: EdgeWeights,
    build_ms: f64,
}

impl Transition {
    /// Builds `Gᵀ` from an adjacency matrix (row = source, column = target). Refuses a
    /// matrix that is not square.
    pub fn new(adjacency: &Csr<f64>, weights: EdgeWeights) -> Result<Self> {
        let start = Instant::now();
        let n = adjacency.nrows();
        if adjacency.ncols() != n {
            return Err(Error::Unsupported(format!(
                "PageRank needs a square adjacency matrix (nodes x nodes), got {} x {}",
                n,
                adjacency.ncols()
            )));
        }
        let weight = |v: f64| match weights {
            EdgeWeights::Pattern => 1.0,
            EdgeWeights::Values => v.abs(),
        };
        // Out-weight of every node, then the entries of Gᵀ per row (= per target node).
        let out_weight: Vec<f64> = (0..n)
            .into_par_iter()
            .map(|i| adjacency.row(i).1.iter().map(|&v| weight(v)).sum())
            .collect();
        if let Some(i) = out_weight.iter().position(|w| !w.is_finite()) {
            return Err(Error::Unsupported(format!(
                "PageRank with value weights: the weights of row {} (1-based) do not sum to a finite number",
                i + 1
            )));
        }
        let mut row_ptr = vec![0usize; n + 1];
        for i in 0..n {
            let (cols, vals) = adjacency.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                if weight(v) > 0.0 {
                    row_ptr[j as usize + 1] += 1;
                }
            }
        }
        for j in 0..n {
            row_ptr[j + 1] += row_ptr[j];
        }
        // Counting-sort transpose: sources are visited in increasing order, so every row of
        // Gᵀ gets its columns sorted, and A has no duplicates, so neither has Gᵀ.
        let nnz = row_ptr[n];
        let mut next = row_ptr[..n].to_vec();
        let mut col_idx = vec![0u32; nnz];
        let mut values = vec![0.0f64; nnz];
        for (i, &total) in out_weight.iter().enumerate() {
            let (cols, vals) = adjacency.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                let w = weight(v);
                if w > 0.0 {
                    let p = &mut next[j as usize];
                    col_idx[*p] = i as u32;
                    values[*p] = w / total;
                    *p += 1;
                }
            }
        }
        let dangling: Vec<u8> = out_weight.par_iter().map(|&w| u8::from(w == 0.0)).collect();
        let dangling_count = dangling.iter().map(|&d| d as usize).sum();
        let gt = Csr::new_checked(n, n, row_ptr, col_idx, values)?;
        Ok(Transition { gt, dangling, dangling_count, weights, build_ms: ms_since(start) })
    }

    /// Nodes of the graph.
    pub fn nodes(&self) -> usize {
        self.gt.nrows()
    }
    /// Edges that carry weight (the entries of `Gᵀ`).
    pub fn edges(&self) -> usize {
        self.gt.nnz()
    }
    /// `Gᵀ` in f64: build any format from it (cast it for f32).
    pub fn matrix(&self) -> &Csr<f64> {
        &self.gt
    }
    /// 1 for each dangling node, else 0.
    pub fn dangling(&self) -> &[u8] {
        &self.dangling
    }
    /// Number of dangling nodes (without weighted out-edges).
    pub fn dangling_count(&self) -> usize {
        self.dangling_count
    }
    /// How the entries were weighted.
    pub fn weights(&self) -> EdgeWeights {
        self.weights
    }
    /// Host time of [`Transition::new`], in milliseconds.
    pub fn build_ms(&self) -> f64 {
        self.build_ms
    }
}

/// The outcome of a PageRank run.
#[derive(Clone, Debug)]
pub struct PageRank<T> {
    /// The ranks, mean 1 (sum n).
    pub ranks: Vec<T>,
    /// Iterations run (on the GPU, past convergence up to the next residual read).
    pub iterations: usize,
    /// The residual went below the tolerance (false: stopped by `max_iter`).
    pub converged: bool,
    /// `max_i |r_{k+1,i} − r_{k,i}|` of the last residual read (∞ before any).
    pub residual: f64,
    /// Wall time of the iterations (every product, update, reduction and residual read),
    /// in milliseconds; set-up (buffers, the transition matrix) not included.
    pub total_ms: f64,
}

impl<T: Scalar> PageRank<T> {
    /// The result for a graph without nodes.
    pub(crate) fn empty() -> Self {
        PageRank { ranks: Vec::new(), iterations: 0, converged: true, residual: 0.0, total_ms: 0.0 }
    }
    /// Milliseconds per iteration (NaN with no iteration).
    pub fn ms_per_iteration(&self) -> f64 {
        if self.iterations == 0 {
            f64::NAN
        } else {
            self.total_ms / self.iterations as f64
        }
    }
    /// The ranks in f64.
    pub fn scores(&self) -> Vec<f64> {
        self.ranks.iter().map(|r| r.to_f64()).collect()
    }
    /// The `k` highest-ranked nodes with their ranks, highest first (ties by node index).
    pub fn top(&self, k: usize) -> Vec<(usize, f64)> {
        let scores = self.scores();
        top_k(&scores, k).into_iter().map(|i| (i, scores[i])).collect()
    }
}

/// Indices of the `k` largest scores, largest first; equal scores by increasing index; NaN
/// counts as the lowest score.
pub fn top_k(scores: &[f64], k: usize) -> Vec<usize> {
    let key = |i: usize| if scores[i].is_nan() { f64::NEG_INFINITY } else { scores[i] };
    let order = |a: &usize, b: &usize| key(*b).total_cmp(&key(*a)).then(a.cmp(b));
    let k = k.min(scores.len());
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    if k == 0 {
        return Vec::new();
    }
    if k < idx.len() {
        idx.select_nth_unstable_by(k - 1, order);
        idx.truncate(k);
    }
    idx.sort_unstable_by(order);
    idx
}

/// How well a computed ranking's top k matches the exact one (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Agreement {
    /// The number of top positions compared.
    pub k: usize,
    /// Positions of the top k holding the same node as the exact ranking (the paper's count).
    pub same_position: usize,
    /// Positions whose node has, within the tie tolerance, the exact rank that belongs there.
    pub same_position_up_to_ties: usize,
    /// Nodes in both top-k sets, whatever their order.
    pub overlap: usize,
    /// Positions p < k of the exact ranking whose rank ties (within the tolerance) with
    /// position p + 1: how much room rounding has to reorder the top k.
    pub exact_ties: usize,
}

/// Compares the top `k` of `computed` with the top `k` of `exact` (both full score vectors of
/// the same length); exact ranks within `tie_tol` of each other count as tied.
pub fn top_k_agreement(exact: &[f64], computed: &[f64], k: usize, tie_tol: f64) -> Agreement {
    assert_eq!(exact.len(), computed.len(), "score vectors of different lengths");
    let exact_top = top_k(exact, k.saturating_add(1));
    let k = k.min(exact.len());
    let computed_top = top_k(computed, k);
    let tied = |a: f64, b: f64| (a - b).abs() <= tie_tol;
    let same_position = (0..k).filter(|&p| computed_top[p] == exact_top[p]).count();
    let same_position_up_to_ties =
        (0..k).filter(|&p| tied(exact[computed_top[p]], exact[exact_top[p]])).count();
    let exact_set: std::collections::HashSet<usize> = exact_top[..k].iter().copied().collect();
    let overlap = computed_top.iter().filter(|i| exact_set.contains(i)).count();
    let exact_ties = (0..k)
        .filter(|&p| p + 1 < exact_top.len() && tied(exact[exact_top[p]], exact[exact_top[p + 1]]))
        .count();
    Agreement { k, same_position, same_position_up_to_ties, overlap, exact_ties }
}

/// Nodes per block and blocks of `pagerank_update` for n nodes.
pub(crate) fn update_blocks(n: usize) -> usize {
    n.div_ceil(UPDATE_BLOCK as usize).clamp(1, MAX_UPDATE_BLOCKS)
}

/// Checks the settings; for a graph with nodes, its node count and α, 1 − α and 1/n in T.
pub(crate) fn start<T: Scalar>(
    t: &Transition, settings: &Settings,
) -> Result<Option<(usize, [T; 3])>> {
    settings.validate()?;
    let n = t.nodes();
    let factors = [settings.alpha, 1.0 - settings.alpha, 1.0 / n as f64].map(T::from_f64);
    Ok((n > 0).then_some((n, factors)))
}

/// A backend's power iteration: its two rank vectors and the update of pagerank.cu (the
/// control of the iteration, [`power_iteration`], is written once).
#[doc(hidden)]
pub trait PowerEngine<T: Scalar> {
    /// One iteration: y = Gᵀ·rank, the update into the next rank (and the next dangling sum
    /// and the largest change), rank ← next.
    fn iterate(&mut self) -> Result<()>;
    /// The largest change of the last iteration where it is known anyway, or where `due` (on
    /// one GPU a read-back, made only when due); else `None`.
    fn residual(&mut self, due: bool) -> Result<Option<f64>>;
    /// Waits for the queued work.
    fn synchronize(&self) -> Result<()>;
    /// The ranks on the host.
    fn ranks(&mut self) -> Result<Vec<T>>;
}

/// The power iteration on engine `e`: stops at the first residual read below the tolerance
/// (read every `check_every` iterations where it costs a read-back, else every iteration).
pub(crate) fn power_iteration<T: Scalar>(
    e: &mut dyn PowerEngine<T>, settings: &Settings,
) -> Result<PageRank<T>> {
    e.synchronize()?;
    let start = Instant::now();
    let (mut iterations, mut residual, mut converged) = (0, f64::INFINITY, false);
    while iterations < settings.max_iter {
        e.iterate()?;
        iterations += 1;
        let due = iterations % settings.check_every == 0 || iterations == settings.max_iter;
        if let Some(r) = e.residual(due)? {
            residual = r;
            if residual < settings.tol {
                converged = true;
                break;
            }
        }
    }
    e.synchronize()?;
    let total_ms = ms_since(start);
    Ok(PageRank { ranks: e.ranks()?, iterations, converged, residual, total_ms })
}

/// PageRank on `gt` = `Gᵀ` of `t` (`t.matrix()` in any format) on gt's backend: a host
/// operator, the front door's operator, one GPU's matrix or a distributed one.
pub fn pagerank<T: Scalar, A: super::Solvable<T> + ?Sized>(
    gt: &A, t: &Transition, settings: &Settings,
) -> Result<PageRank<T>> {
    let Some((n, factors)) = start::<T>(t, settings)? else {
        return Ok(PageRank::empty());
    };
    let mut engine: Box<dyn PowerEngine<T> + '_> = match gt.backing() {
        super::Backing::Host(h) => Box::new(host_engine(h, t, n, factors)),
        super::Backing::Gpu(d) => Box::new(GpuPower::new(d, t, n, factors)?),
        super::Backing::Own(d) => d.power(t, n, factors)?,
    };
    power_iteration(engine.as_mut(), settings)
}

/// One GPU's engine: the whole iteration on the device (module doc).
struct GpuPower<'a, T: Scalar> {
    gt: &'a DeviceMatrix<T>,
    gpu: &'a Gpu,
    n32: u32,
    factors: [T; 3],
    update: Kernel,
    finish: Kernel,
    blocks32: u32,
    dangling: CudaSlice<u8>,
    rank: CudaSlice<T>,
    next: CudaSlice<T>,
    block_max_diff: CudaSlice<T>,
    block_dangling_sum: CudaSlice<T>,
    dangling_sum: CudaSlice<T>,
    max_diff: CudaSlice<T>,
}

impl<'a, T: Scalar> GpuPower<'a, T> {
    fn new(gt: &'a DeviceMatrix<T>, t: &Transition, n: usize, factors: [T; 3]) -> Result<Self> {
        let gpu = &**gt.gpu();
        let n32 = u32::try_from(n).map_err(|_| {
            Error::Unsupported(format!("PageRank on the GPU: {n} nodes exceed 32-bit indices"))
        })?;
        let blocks = update_blocks(n);
        let mut rank: CudaSlice<T> = gpu.alloc(n)?;
        gpu.fill(&mut rank, T::ONE)?;
        let kernel = |name: &str, blocks: u32, threads: u32| {
            let grid = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: 0,
            };
            Kernel::for_type::<T>(gpu, &KERNELS, name, grid)
        };
        Ok(GpuPower {
            gt,
            gpu,
            n32,
            factors,
            update: kernel("pagerank_update", blocks as u32, UPDATE_BLOCK)?,
            finish: kernel("pagerank_finish", 1, FINISH_BLOCK)?,
            blocks32: blocks as u32,
            dangling: gpu.upload(t.dangling())?,
            rank,
            next: gpu.alloc(n)?,
            block_max_diff: gpu.alloc(blocks)?,
            block_dangling_sum: gpu.alloc(blocks)?,
            dangling_sum: gpu.upload(&[T::from_f64(t.dangling_count() as f64)])?,
            max_diff: gpu.alloc(1)?,
        })
    }
}

impl<T: Scalar> PowerEngine<T> for GpuPower<'_, T> {
    fn iterate(&mut self) -> Result<()> {
        self.gt.spmv(&self.rank, &mut self.next)?;
        let [alpha, teleport, inv_n] = &self.factors;
        // SAFETY: matches pagerank_update_<T>(u32, T, T, T, const T*, const u8*, const T*,
        // T*, T*, T*); the grid-stride loop stays below n = the length of dangling, rank
        // and next; block b < blocks writes slot b of the two partial arrays (length blocks).
        unsafe {
            self.update.launch(self.gpu, |l| {
                l.arg(&self.n32).arg(alpha).arg(teleport).arg(inv_n).arg(&self.dangling_sum);
                l.arg(&self.dangling).arg(&self.rank).arg(&mut self.next);
                l.arg(&self.block_max_diff).arg(&self.block_dangling_sum);
            })
        }?;
        // SAFETY: matches pagerank_finish_<T>(u32, const T*, const T*, T*, T*) on one block
        // of FINISH_BLOCK threads; it reads blocks partials and writes element 0 of the two
        // one-element scalars.
        unsafe {
            self.finish.launch(self.gpu, |l| {
                l.arg(&self.blocks32).arg(&self.block_max_diff).arg(&self.block_dangling_sum);
                l.arg(&mut self.dangling_sum).arg(&mut self.max_diff);
            })
        }?;
        std::mem::swap(&mut self.rank, &mut self.next);
        Ok(())
    }
    fn residual(&mut self, due: bool) -> Result<Option<f64>> {
        Ok(if due { Some(self.gpu.download(&self.max_diff)?[0].to_f64()) } else { None })
    }
    fn synchronize(&self) -> Result<()> {
        self.gpu.synchronize()
    }
    fn ranks(&mut self) -> Result<Vec<T>> {
        self.gpu.download(&self.rank)
    }
}

/// The host engine: any host operator's product, the update over rayon's threads in fixed
/// chunks (a fixed order).
struct HostPower<'a, T, A: ?Sized> {
    gt: &'a A,
    dangling: &'a [u8],
    factors: [T; 3],
    rank: Vec<T>,
    next: Vec<T>,
    dangling_sum: T,
    residual: f64,
}

impl<T: Scalar, A: LinearOperator<T, Vector = [T]> + ?Sized> PowerEngine<T>
    for HostPower<'_, T, A>
{
    fn iterate(&mut self) -> Result<()> {
        self.gt.apply(T::ONE, &self.rank, T::ZERO, &mut self.next)?;
        let [alpha, teleport, inv_n] = self.factors;
        let share = self.dangling_sum * inv_n;
        let partials: Vec<(f64, T)> = self
            .next
            .par_chunks_mut(HOST_CHUNK)
            .zip(self.rank.par_chunks(HOST_CHUNK))
            .zip(self.dangling.par_chunks(HOST_CHUNK))
            .map(|((next, rank), dangling)| {
                let (mut max_diff, mut dangling_part) = (0.0f64, T::ZERO);
                for ((v, &r), &d) in next.iter_mut().zip(rank).zip(dangling) {
                    *v = alpha * (*v + share) + teleport;
                    let diff = (*v - r).abs().to_f64();
                    max_diff = max_diff.max(if diff.is_nan() { f64::INFINITY } else { diff });
                    if d != 0 {
                        dangling_part += *v;
                    }
                }
                (max_diff, dangling_part)
            })
            .collect();
        self.residual = partials.iter().fold(0.0f64, |m, p| m.max(p.0));
        self.dangling_sum = partials.iter().fold(T::ZERO, |s, p| s + p.1);
        std::mem::swap(&mut self.rank, &mut self.next);
        Ok(())
    }
    fn residual(&mut self, _due: bool) -> Result<Option<f64>> {
        Ok(Some(self.residual))
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    fn ranks(&mut self) -> Result<Vec<T>> {
        Ok(std::mem::take(&mut self.rank))
    }
}

/// The host engine with `gt` computing `y = Gᵀ·x` for the `Gᵀ` of `t` (n nodes).
fn host_engine<'a, T: Scalar, A: LinearOperator<T, Vector = [T]> + ?Sized>(
    gt: &'a A, t: &'a Transition, n: usize, factors: [T; 3],
) -> HostPower<'a, T, A> {
    HostPower {
        gt,
        dangling: t.dangling(),
        factors,
        rank: vec![T::ONE; n],
        next: vec![T::ZERO; n],
        dangling_sum: T::from_f64(t.dangling_count() as f64),
        residual: f64::INFINITY,
    }
}

/// The reference ranks: the host engine in f64 with the oracle SpMV (exact products,
/// compensated sums), to `tol` (1e-12 is a good choice; ranks have mean 1).
pub fn pagerank_exact(
    t: &Transition, alpha: f64, tol: f64, max_iter: usize,
) -> Result<PageRank<f64>> {
    let settings = Settings { alpha, tol, max_iter, check_every: 1 };
    let Some((n, factors)) = start::<f64>(t, &settings)? else {
        return Ok(PageRank::empty());
    };
    power_iteration(&mut host_engine(&OracleOperator(t.matrix()), t, n, factors), &settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::registry;
    use crate::Coo;
    use proptest::prelude::*;

    /// The adjacency matrix of a graph given by its edges (source, target).
    fn graph(n: usize, edges: &[(u32, u32)]) -> Csr<f64> {
        let rows = edges.iter().map(|e| e.0).collect();
        let cols = edges.iter().map(|e| e.1).collect();
        Coo::new_checked(n, n, rows, cols, vec![1.0; edges.len()]).unwrap().to_csr()
    }

    fn tight() -> Settings {
        Settings { tol: 1e-14, ..Settings::default() }
    }

    fn run(a: &Csr<f64>) -> PageRank<f64> {
        let t = Transition::new(a, EdgeWeights::Pattern).unwrap();
        pagerank(t.matrix(), &t, &tight()).unwrap()
    }

    fn assert_close(got: &[f64], want: &[f64], tol: f64) {
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!((g - w).abs() <= tol, "node {i}: {g} vs {w}\n{got:?}\n{want:?}");
        }
    }

    #[test]
    fn transition_is_column_stochastic_and_finds_dangling_nodes() {
        // 0 -> 1, 0 -> 2, 1 -> 2, 2 has no out-edge; 3 -> 3 (self-loop).
        let a = graph(4, &[(0, 1), (0, 2), (1, 2), (3, 3)]);
        let t = Transition::new(&a, EdgeWeights::Pattern).unwrap();
        let gt = t.matrix();
        // Gᵀ rows are targets: row 1 = {0: 1/2}, row 2 = {0: 1/2, 1: 1}, row 3 = {3: 1}.
        assert_eq!(gt.row_ptr(), &[0, 0, 1, 3, 4]);
        assert_eq!(gt.col_idx(), &[0, 0, 1, 3]);
        assert_eq!(gt.values(), &[0.5, 0.5, 1.0, 1.0]);
        assert_eq!(t.dangling(), &[0, 0, 1, 0]);
        assert_eq!((t.nodes(), t.edges(), t.dangling_count()), (4, 4, 1));

        // Weighted: |values| normalised per source row; zero entries carry no weight.
        let w =
            Csr::new_checked(3, 3, vec![0, 2, 3, 3], vec![1, 2, 0], vec![-3.0, 1.0, 0.0]).unwrap();
        let tw = Transition::new(&w, EdgeWeights::Values).unwrap();
        assert_eq!(tw.matrix().values(), &[0.75, 0.25]);
        assert_eq!(tw.dangling(), &[0, 1, 1]);
        let tp = Transition::new(&w, EdgeWeights::Pattern).unwrap();
        assert_eq!(tp.matrix().values(), &[1.0, 0.5, 0.5]);
        assert_eq!(tp.dangling(), &[0, 0, 1]);

        assert!(matches!(
            Transition::new(&Csr::zeros(3, 4), EdgeWeights::Pattern),
            Err(Error::Unsupported(_))
        ));
    }

    #[test]
    fn a_cycle_has_equal_ranks_after_one_step() {
        let r = run(&graph(3, &[(0, 1), (1, 2), (2, 0)]));
        assert_eq!(r.ranks, vec![1.0; 3]);
        assert!(r.converged);
        assert_eq!((r.iterations, r.residual), (1, 0.0));
    }

    #[test]
    fn a_graph_without_edges_is_all_dangling_and_uniform() {
        let r = run(&Csr::zeros(5, 5));
        assert_close(&r.ranks, &[1.0; 5], 1e-15);
        assert!(r.converged);
    }

    #[test]
    fn hand_computed_ranks_with_a_dangling_node() {
        // 0 -> 1, 0 -> 2, 1 -> 2; node 2 is dangling. With a = α, c = 1 − α and d = r2:
        //   r0 = a·r2/3 + c
        //   r1 = a·(r0/2 + r2/3) + c
        //   r2 = a·(r0/2 + r1 + r2/3) + c,   and r0 + r1 + r2 = 3.
        // Substituting r0 into r1: r1 = r2·(a²/6 + a/3) + c·(a/2 + 1); then the sum gives
        //   r2 = (3 − c·(2 + a/2)) / (1 + 2a/3 + a²/6).
        let (a, c) = (0.85f64, 0.15f64);
        let r2 = (3.0 - c * (2.0 + a / 2.0)) / (1.0 + 2.0 * a / 3.0 + a * a / 6.0);
        let r0 = a * r2 / 3.0 + c;
        let r1 = a * (r0 / 2.0 + r2 / 3.0) + c;
        let r = run(&graph(3, &[(0, 1), (0, 2), (1, 2)]));
        assert!(r.converged);
        assert_close(&r.ranks, &[r0, r1, r2], 1e-12);
        assert!((r.ranks.iter().sum::<f64>() - 3.0).abs() < 1e-12);
        assert_eq!(r.top(3).iter().map(|p| p.0).collect::<Vec<_>>(), vec![2, 1, 0]);
    }

    #[test]
    fn hand_computed_star() {
        // Leaves 1..=4 link to the hub 0, the hub links back to leaf 1 only.
        //   hub:    h = a·4ℓ' ... with leaves 2..4 equal (ℓ) and leaf 1 (m):
        //   h = a·(m + 3ℓ) + c,   m = a·h + c,   ℓ = c,   and h + m + 3ℓ = 5.
        // So ℓ = c, and h = a·(a·h + c + 3c) + c  ->  h = (4ac + c) / (1 − a²).
        let (a, c) = (0.85f64, 0.15f64);
        let h = (4.0 * a * c + c) / (1.0 - a * a);
        let m = a * h + c;
        let r = run(&graph(5, &[(1, 0), (2, 0), (3, 0), (4, 0), (0, 1)]));
        assert_close(&r.ranks, &[h, m, c, c, c], 1e-12);
        assert!((h + m + 3.0 * c - 5.0).abs() < 1e-12, "the closed form keeps the sum");
    }

    #[test]
    fn weighted_edges_shift_the_rank() {
        // 0 -> 1 (weight 3) and 0 -> 2 (weight 1), 1 -> 0, 2 -> 0.
        let a =
            Csr::new_checked(3, 3, vec![0, 2, 3, 4], vec![1, 2, 0, 0], vec![3.0, 1.0, 1.0, 1.0])
                .unwrap();
        let t = Transition::new(&a, EdgeWeights::Values).unwrap();
        let r = pagerank(t.matrix(), &t, &tight()).unwrap();
        // r1 = a·(3/4)·r0 + c, r2 = a·(1/4)·r0 + c, r0 = a·(r1 + r2) + c.
        let (al, c) = (0.85f64, 0.15f64);
        let r0 = (al * 2.0 * c + c) / (1.0 - al * al);
        assert_close(&r.ranks, &[r0, al * 0.75 * r0 + c, al * 0.25 * r0 + c], 1e-12);
        let p = run(&a);
        assert!((p.ranks[1] - p.ranks[2]).abs() < 1e-12, "pattern weights: leaves 1 and 2 tie");
    }

    #[test]
    fn stops_at_max_iter_and_reports_it() {
        let a = graph(3, &[(0, 1), (0, 2), (1, 2)]);
        let t = Transition::new(&a, EdgeWeights::Pattern).unwrap();
        let s = Settings { max_iter: 3, tol: 0.0, ..Settings::default() };
        let r = pagerank(t.matrix(), &t, &s).unwrap();
        assert_eq!((r.iterations, r.converged), (3, false));
        assert!(r.residual > 0.0 && r.residual.is_finite());
        let none =
            pagerank(t.matrix(), &t, &Settings { max_iter: 0, ..Settings::default() }).unwrap();
        assert_eq!((none.iterations, none.converged, none.ranks), (0, false, vec![1.0; 3]));
    }

    #[test]
    fn bad_settings_are_errors() {
        let t = Transition::new(&graph(2, &[(0, 1)]), EdgeWeights::Pattern).unwrap();
        for s in [
            Settings { alpha: 1.0, ..Settings::default() },
            Settings { alpha: -0.1, ..Settings::default() },
            Settings { alpha: f64::NAN, ..Settings::default() },
            Settings { tol: -1.0, ..Settings::default() },
            Settings { tol: f64::NAN, ..Settings::default() },
            Settings { check_every: 0, ..Settings::default() },
        ] {
            assert!(matches!(pagerank(t.matrix(), &t, &s), Err(Error::Argument(_))), "{s:?}");
        }
    }

    #[test]
    fn an_agreement_past_the_node_count_compares_every_node() {
        let a = top_k_agreement(&[3.0, 2.0, 1.0], &[3.0, 1.0, 2.0], usize::MAX, 0.0);
        assert_eq!((a.k, a.same_position, a.overlap), (3, 1, 3));
    }

    #[test]
    fn top_k_and_agreement_follow_the_papers_count() {
        // The paper's example: exact A > B > C.
        let exact = [3.0, 2.0, 1.0];
        assert_eq!(top_k(&exact, 3), vec![0, 1, 2]);
        let a = top_k_agreement(&exact, &[3.0, 1.0, 2.0], 3, 0.0); // A > C > B
        assert_eq!((a.same_position, a.overlap), (1, 3));
        let b = top_k_agreement(&exact, &[1.0, 3.0, 2.0], 3, 0.0); // B > C > A
        assert_eq!((b.same_position, b.overlap), (0, 3));
        let same = top_k_agreement(&exact, &exact, 2, 0.0);
        assert_eq!(
            same,
            Agreement {
                k: 2,
                same_position: 2,
                same_position_up_to_ties: 2,
                overlap: 2,
                exact_ties: 0
            }
        );
        // Ties: nodes 1 and 2 have the same exact rank; a computed ranking that swaps them
        // loses positions in the strict count, not in the tie-aware one.
        let tied = [5.0, 2.0, 2.0, 1.0];
        let swapped = top_k_agreement(&tied, &[5.0, 2.0, 2.0 + 1e-12, 1.0], 3, 1e-9);
        assert_eq!(
            (swapped.same_position, swapped.same_position_up_to_ties, swapped.exact_ties),
            (1, 3, 1)
        );
        // Ties go by index; NaN is lowest; k beyond n is clamped; top-k overlap.
        assert_eq!(top_k(&[1.0, f64::NAN, 1.0, 2.0], 4), vec![3, 0, 2, 1]);
        assert_eq!(top_k(&[1.0, 2.0], 10), vec![1, 0]);
        assert!(top_k(&[1.0], 0).is_empty());
        let partial = top_k_agreement(&[4.0, 3.0, 2.0, 1.0], &[4.0, 1.0, 2.0, 3.0], 2, 0.0);
        assert_eq!((partial.same_position, partial.overlap), (1, 1));
    }

    #[test]
    fn every_format_gives_the_exact_ranking() {
        let a = crate::io::gen::generate("powerlaw:n=3000,mean=6,exp=2.1").unwrap();
        let t = Transition::new(&a, EdgeWeights::Pattern).unwrap();
        let exact = pagerank_exact(&t, 0.85, 1e-13, 2000).unwrap();
        assert!(exact.converged);
        let settings = Settings { tol: 1e-11, ..Settings::default() };
        for info in registry::<f64>() {
            let format = match info.build(t.matrix()) {
                Ok(f) => f,
                Err(Error::Format { .. }) => continue, // a format may decline a matrix
                Err(e) => panic!("{}: {e}", info.name),
            };
            let r = pagerank(&format, &t, &settings).unwrap();
            assert!(r.converged, "{}", info.name);
            let agreement = top_k_agreement(&exact.ranks, &r.scores(), 100, 1e-9);
            assert_eq!(agreement.same_position_up_to_ties, 100, "{}: {agreement:?}", info.name);
            assert_close(&r.ranks, &exact.ranks, 1e-9);
        }
        // f32 keeps the top of the ranking too (its ranks are only good to ~1e-6 relative).
        let t32 = t.matrix().cast::<f32>();
        let r = pagerank(&t32, &t, &Settings::default()).unwrap();
        assert!(r.converged);
        assert!(top_k_agreement(&exact.ranks, &r.scores(), 10, 1e-9).overlap == 10);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]
        #[test]
        fn ranks_sum_to_n_and_stay_above_the_teleport_share(
            n in 1usize..40,
            edges in prop::collection::vec((0u32..40, 0u32..40), 0..150),
            alpha in 0.0f64..0.95,
        ) {
            let edges: Vec<(u32, u32)> = edges.into_iter().filter(|e| (e.0 as usize) < n && (e.1 as usize) < n).collect();
            let mut unique = edges.clone();
            unique.sort_unstable();
            unique.dedup();
            let a = graph(n, &unique);
            let t = Transition::new(&a, EdgeWeights::Pattern).unwrap();
            let r = pagerank(t.matrix(), &t, &Settings { alpha, tol: 1e-13, ..Settings::default() }).unwrap();
            prop_assert!(r.converged);
            let sum: f64 = r.ranks.iter().sum();
            prop_assert!((sum - n as f64).abs() < 1e-9 * n as f64, "sum {}", sum);
            prop_assert!(r.ranks.iter().all(|&v| v >= 1.0 - alpha - 1e-12));
            // A fixed point of the formula: one more step changes nothing beyond the tolerance.
            let mut y = vec![0.0; n];
            t.matrix().spmv_serial(&r.ranks, &mut y);
            let d: f64 = (0..n).filter(|&i| t.dangling()[i] != 0).map(|i| r.ranks[i]).sum();
            for (&yi, &ri) in y.iter().zip(&r.ranks) {
                let v = alpha * (yi + d / n as f64) + 1.0 - alpha;
                prop_assert!((v - ri).abs() < 1e-11);
            }
        }
    }
}
