//! Krylov solvers for A·x = b: conjugate gradients (symmetric positive definite A), MINRES
//! (symmetric A), BiCGSTAB and restarted GMRES (general A), optionally preconditioned by the inverse diagonal ([`jacobi`]), f64 or
//! f32: the settings, outcomes and shared pieces. The methods are written once over each
//! backend's engine ([`super::methods`], [`super::engine`]); the host engine is the reference
//! of the GPU's ([`super::krylov_gpu`]), the same steps in the same order.
//!
//! Every run starts from x = 0 and stops when the recurrence's residual reaches the tolerance,
//! ‖r‖² ≤ (tol·‖b‖)², tested every iteration, or after `max_iter` iterations. The result says
//! what happened ([`Outcome`]): converged, not converged, a breakdown (naming the quantity that
//! vanished), non-finite values, or a recurrence that reached the tolerance while the true
//! residual ‖b − A·x‖/‖b‖, recomputed at the end, did not. A breakdown or NaN is never returned
//! as a solution that looks fine.
//!
//! Vectors are stored in T; scalars and dot products are f64. Dot products are summed in the
//! GPU kernels' order on the host too ([`device_order_sum`]), and every product and sum is
//! rounded on its own on both sides, so a run gives the same bits on any number of threads,
//! and the GPU solver gives the host solver's bits when both use the same product.

use rayon::prelude::*;

use super::engine::slot::GM_MAX_M;
use crate::error::{Error, Result};
use crate::gpu::jit::cuda_constants;
use crate::matrix::{Csr, Precision, Scalar};

/// Threads per block of the GPU's vector kernels (krylov.cu's KR_BLOCK).
pub(crate) const BLOCK: usize = 256;
/// Blocks of the GPU's vector kernels at most: a grid fixed by n alone, so the sums' order is too.
pub(crate) const MAX_BLOCKS: usize = 1024;
/// Elements below which the host's vector steps stay on one thread: a few µs of work, less
/// than handing a share to another thread.
pub(crate) const MIN_SHARE: usize = 1 << 13;

/// Unknowns up to which the vector kernels run as one block: small systems are bound by the
/// round trips of a grid's reduction (partial sums, the block counter), not by bandwidth, and
/// one block lets GMRES run an Arnoldi step as one kernel (krylov.cu's kr_gm_fused).
/// Measured (H100, GMRES(30) µs per step at 1024 / 2048 / 4096): `bcsstk09` (1083 unknowns)
/// 37 / 32 / 32, but `ex3` (1821) 38 / 47 / 47 and `ex9` (3363) 39 / 39 / 76: one block's
/// 256 threads fall behind the grid's kernels soon after 1024.
pub(crate) const ONE_BLOCK_ROWS: usize = 1024;

/// The blocks of the GPU's vector kernels for n unknowns.
pub(crate) fn blocks(n: usize) -> usize {
    if n <= ONE_BLOCK_ROWS {
        1
    } else {
        n.div_ceil(BLOCK).clamp(1, MAX_BLOCKS)
    }
}

/// Progress while a solve runs: called with the iterations done and the recurrence's
/// ‖r‖/‖b‖ (on the GPU at every read-back, on the host every `check_every` iterations).
pub type Progress = std::sync::Arc<dyn Fn(usize, f64) + Send + Sync>;

/// When to stop, how the GPU solvers run, and who hears of the progress.
#[derive(Clone)]
pub struct KrylovSettings {
    /// Relative residual ‖r‖/‖b‖ to reach (> 0).
    pub tol: f64,
    /// Iterations at most (≥ 1).
    pub max_iter: usize,
    /// GPU: the host reads the device's scalars (and reports progress) every this many
    /// iterations (≥ 1). The convergence test itself runs on the device every iteration, so
    /// the result does not depend on it; up to `check_every − 1` launches queued past the
    /// stop change nothing but cost their time. The host solvers ignore it.
    pub check_every: usize,
    /// GPU: capture one iteration as a CUDA graph and replay it (falls back to plain
    /// launches, and says so in [`Solution::graph`], where a format's launches cannot be
    /// captured). The capture records on a stream of its own ([`crate::gpu::Gpu::capture`]),
    /// so other threads may use the same `Gpu` meanwhile (docs/solve.md).
    pub graph: bool,
    /// Called as the solve goes (see [`Progress`]); `None`: nothing is called.
    pub progress: Option<Progress>,
    /// GMRES: the basis' size m before a restart (1 to 256; the other methods ignore it).
    pub restart: usize,
}

impl std::fmt::Debug for KrylovSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KrylovSettings")
            .field("tol", &self.tol)
            .field("max_iter", &self.max_iter)
            .field("check_every", &self.check_every)
            .field("graph", &self.graph)
            .field("progress", &self.progress.is_some())
            .field("restart", &self.restart)
            .finish()
    }
}

impl Default for KrylovSettings {
    fn default() -> Self {
        KrylovSettings {
            tol: 1e-8,
            max_iter: 10_000,
            check_every: 10,
            graph: true,
            progress: None,
            restart: 30,
        }
    }
}

impl KrylovSettings {
    /// Checks the ranges: `Error::Argument` for a tolerance that is not positive and finite,
    /// or a `max_iter` or `check_every` of 0.
    pub fn validate(&self) -> Result<()> {
        if !(self.tol > 0.0 && self.tol.is_finite()) {
            return Err(Error::Argument(format!(
                "tol = {}: the tolerance must be a positive finite number",
                self.tol
            )));
        }
        for (name, value) in [("max_iter", self.max_iter), ("check_every", self.check_every)] {
            if value == 0 {
                return Err(Error::Argument(format!("{name} = 0: must be at least 1")));
            }
        }
        if !(1..=GM_MAX_M).contains(&self.restart) {
            return Err(Error::Argument(format!(
                "restart = {}: GMRES's basis must hold 1 to {GM_MAX_M} vectors",
                self.restart
            )));
        }
        Ok(())
    }
}

/// How a solve ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// ‖r‖/‖b‖ ≤ tol, and the true residual agrees (≤ 10·tol).
    Converged,
    /// `max_iter` iterations without reaching the tolerance.
    NotConverged,
    /// A quantity the method divides by vanished (or, for CG, p·A·p ≤ 0: A is not positive
    /// definite); the text names it.
    Breakdown(String),
    /// CG met p·A·p ≤ 0: A is not positive definite (MINRES solves symmetric indefinite
    /// systems); the text says where.
    Indefinite(String),
    /// A NaN or infinity appeared (in A, b, or the iteration).
    NonFinite,
    /// The recurrence reached the tolerance but the true residual ‖b − A·x‖/‖b‖ is above
    /// 10·tol (accuracy lost to rounding: ask less of this precision).
    InaccurateResidual,
}

/// What a solve returns.
#[derive(Clone, Debug)]
pub struct Solution<T> {
    /// The computed solution.
    pub x: Vec<T>,
    /// How the solve ended.
    pub outcome: Outcome,
    /// The iteration that stopped the solve (or the iterations done, when none did).
    pub iterations: usize,
    /// ‖r‖/‖b‖ of the recurrence at the stop.
    pub residual: f64,
    /// ‖b − A·x‖/‖b‖, recomputed at the end.
    pub true_residual: f64,
    /// Wall time of the solve in milliseconds (uploads of b and the vectors, the iterations,
    /// the true residual and the download of x; not the matrix's conversion or upload).
    pub ms: f64,
    /// Mean wall time of one iteration in milliseconds (on the GPU: the launches and
    /// read-backs over the iterations queued, those past the stop included).
    pub iteration_ms: f64,
    /// GPU: the iteration ran as a replayed CUDA graph.
    pub graph: bool,
}

impl<T> Solution<T> {
    /// Whether the outcome is [`Outcome::Converged`].
    pub fn converged(&self) -> bool {
        self.outcome == Outcome::Converged
    }
}

/// The Krylov methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Conjugate gradients, for symmetric positive definite A.
    Cg,
    /// BiCGSTAB, for general (non-symmetric) A.
    Bicgstab,
    /// MINRES, for symmetric A, definite or not (a preconditioner must be positive definite).
    Minres,
    /// Restarted GMRES(m) (m = [`KrylovSettings::restart`]), for general A; right-preconditioned,
    /// the basis orthogonalised by classical Gram–Schmidt twice (CGS2).
    Gmres,
}

impl Method {
    /// Products with A per iteration (GMRES: per Arnoldi step, the restarts' products aside).
    pub fn products_per_iteration(self) -> usize {
        match self {
            Method::Cg | Method::Minres | Method::Gmres => 1,
            Method::Bicgstab => 2,
        }
    }

    /// Bytes the GPU solver's vector kernels read and write per iteration for n unknowns of
    /// `value_bytes` each (krylov.cu; the f64 scalars and partial sums are negligible);
    /// `restart`: GMRES's m.
    pub fn vector_bytes_per_iteration(
        self, n: usize, value_bytes: usize, preconditioned: bool, restart: usize,
    ) -> usize {
        let vectors = match (self, preconditioned) {
            // p·q 2, update 6 (+ d, z), direction 3
            (Method::Cg, false) => 11,
            (Method::Cg, true) => 13,
            // direction 4 (+ d, p̂), r̂·v 2, s 3 (+ d, ŝ), t·t and t·s 2, update 7 (+ ŝ)
            (Method::Bicgstab, false) => 18,
            (Method::Bicgstab, true) => 23,
            // α 3, β 4 (+ d, y), update 9
            (Method::Minres, false) => 16,
            (Method::Minres, true) => 18,
            // Arnoldi step j: two dots over j + 2 vectors, two subtractions over j + 3, the
            // normalisation 2 (+ d, z): 4j + 12 (+ 2), 2m + 10 on average over a cycle; the
            // cycle's update and restart add about one vector per step
            (Method::Gmres, false) => 2 * restart + 11,
            (Method::Gmres, true) => 2 * restart + 14,
        };
        vectors * n * value_bytes
    }
}

cuda_constants! {
    /// Why an iteration stopped (krylov.cu's STATUS codes, as `KR_ST_<NAME>`; the host
    /// solvers use them too, so both report a stop in the same words).
    pub(crate) mod stop: u32 = "KR_ST_" {
        RUNNING = 0,
        CONVERGED = 1,
        NON_FINITE = 2,
        /// CG: p·A·p ≤ 0.
        NOT_SPD = 3,
        /// CG: r·M⁻¹r = 0 with r ≠ 0.
        RZ_ZERO = 4,
        /// BiCGSTAB: ρ = r̂·r = 0.
        RHO_ZERO = 5,
        /// BiCGSTAB: r̂·v = 0.
        RV_ZERO = 6,
        /// BiCGSTAB: t·t = 0.
        TT_ZERO = 7,
        /// BiCGSTAB: ω = 0.
        OMEGA_ZERO = 8,
        /// MINRES: γ = 0 (A singular on the Krylov space).
        GAMMA_ZERO = 9,
        /// MINRES: r·M⁻¹r < 0 (the preconditioner is not positive definite).
        PRECONDITIONER = 10,
        /// GMRES: the Hessenberg matrix is singular.
        SINGULAR = 11,
        /// GMRES: max_iter Arnoldi steps without convergence.
        LIMIT = 12,
    }
}

/// The outcome of a stop with code `code` at iteration `k` (`value`: p·A·p for NOT_SPD).
pub(crate) fn stop_outcome(code: u32, k: usize, value: f64) -> Outcome {
    let vanished = |what: &str| Outcome::Breakdown(format!("{what} = 0 at iteration {k}"));
    match code {
        stop::RUNNING => Outcome::NotConverged,
        stop::CONVERGED => Outcome::Converged,
        stop::NOT_SPD => Outcome::Indefinite(format!(
            "p·A·p = {value:e} ≤ 0 at iteration {k}: the matrix is not positive definite"
        )),
        stop::RZ_ZERO => vanished("r·M⁻¹r"),
        stop::RHO_ZERO => vanished("ρ = r̂·r"),
        stop::RV_ZERO => vanished("r̂·v"),
        stop::TT_ZERO => vanished("t·t"),
        stop::OMEGA_ZERO => vanished("ω"),
        stop::GAMMA_ZERO => Outcome::Breakdown(format!(
            "γ = 0 at iteration {k}: the matrix is singular on the Krylov space"
        )),
        stop::PRECONDITIONER => Outcome::Breakdown(format!(
            "r·M⁻¹r = {value:e} < 0 at iteration {k}: the preconditioner is not positive definite"
        )),
        stop::SINGULAR => Outcome::Breakdown(format!(
            "the Hessenberg matrix is singular at iteration {k}: GMRES stagnates"
        )),
        stop::LIMIT => Outcome::NotConverged,
        _ => Outcome::NonFinite,
    }
}

/// The squared residual norm the tolerance asks for.
pub(crate) fn threshold(tol: f64, bnorm: f64) -> f64 {
    (tol * bnorm).powi(2)
}

/// The inverse of A's diagonal (Jacobi preconditioner); an error names the first row whose
/// diagonal entry is missing, zero or not finite.
pub fn jacobi<T: Scalar>(a: &Csr<T>) -> Result<Vec<T>> {
    if a.nrows() != a.ncols() {
        return Err(Error::Shape(format!(
            "Jacobi needs a square matrix, this one is {} x {}",
            a.nrows(),
            a.ncols()
        )));
    }
    jacobi_rows(a, 0)
}

/// [`jacobi`] of a row block whose first row is row `first` of the matrix (the block of one
/// process of several): the diagonal entry of its row `r` is in column `first + r`.
pub fn jacobi_rows<T: Scalar>(a: &Csr<T>, first: usize) -> Result<Vec<T>> {
    let inverse: Vec<Option<T>> = (0..a.nrows())
        .into_par_iter()
        .map(|r| {
            let (cols, vals) = a.row(r);
            let d = cols
                .iter()
                .zip(vals)
                .filter(|(&c, _)| c as usize == first + r)
                .map(|(_, v)| v.to_f64())
                .sum::<f64>();
            (d != 0.0 && d.is_finite()).then(|| T::from_f64(1.0 / d))
        })
        .collect();
    match inverse.iter().position(Option::is_none) {
        Some(r) => Err(Error::Unsupported(format!(
            "Jacobi: row {} has a zero, missing or non-finite diagonal entry",
            first + r + 1
        ))),
        None => Ok(inverse.into_iter().flatten().collect()),
    }
}

/// The sum of `term(i)` for i < n in the order of the GPU kernels (krylov.cu): `blocks(n)`
/// blocks of BLOCK threads, each thread summing its grid-stride terms in order, each block
/// its threads' sums by a halving tree, then thread t of one block the block sums t,
/// t + BLOCK, … in order, and a halving tree of those.
pub fn device_order_sum(n: usize, term: impl Fn(usize) -> f64 + Sync) -> f64 {
    fn tree(lanes: &mut [f64; BLOCK]) -> f64 {
        let mut half = BLOCK / 2;
        while half > 0 {
            for t in 0..half {
                lanes[t] += lanes[t + half];
            }
            half /= 2;
        }
        lanes[0]
    }
    let grid = blocks(n);
    let stride = grid * BLOCK;
    let blocks_per_share = (MIN_SHARE * grid).div_ceil(n.max(1)).max(1);
    let block_sums: Vec<f64> = (0..grid)
        .into_par_iter()
        .with_min_len(blocks_per_share)
        .map(|b| {
            let mut lanes = [0.0f64; BLOCK];
            for (t, lane) in lanes.iter_mut().enumerate() {
                let mut i = b * BLOCK + t;
                while i < n {
                    *lane += term(i);
                    i += stride;
                }
            }
            tree(&mut lanes)
        })
        .collect();
    let mut lanes = [0.0f64; BLOCK];
    for (b, &sum) in block_sums.iter().enumerate() {
        lanes[b % BLOCK] += sum;
    }
    tree(&mut lanes)
}

pub(crate) fn dot<T: Scalar>(a: &[T], b: &[T]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    device_order_sum(a.len(), |i| a[i].to_f64() * b[i].to_f64())
}

/// z = M⁻¹·r (with a preconditioner only).
fn precondition<T: Scalar>(d: &[T], r: &[T], z: &mut [T]) {
    z.par_iter_mut()
        .zip(r)
        .zip(d)
        .for_each(|((z, &r), &d)| *z = T::from_f64(r.to_f64() * d.to_f64()));
}

/// M⁻¹·b on the host: the start of the preconditioned recurrences (b itself without one).
pub(crate) fn preconditioned<T: Scalar>(m_inv: Option<&[T]>, b: &[T]) -> Vec<T> {
    let mut z = b.to_vec();
    if let Some(d) = m_inv {
        precondition(d, b, &mut z);
    }
    z
}

/// ‖b − A·x‖/‖b‖ given `ax` = A·x (overwritten with the residual, rounded to T as the
/// solvers' own vectors are).
/// `rr` gives r·r as the backend sums it.
pub(crate) fn relative_residual<T: Scalar>(
    b: &[T], ax: &mut [T], bnorm: f64, rr: impl Fn(&[T]) -> Result<f64>,
) -> Result<f64> {
    ax.par_iter_mut().zip(b).for_each(|(r, &b)| *r = T::from_f64(b.to_f64() - r.to_f64()));
    let norm = rr(ax)?.sqrt();
    Ok(if bnorm == 0.0 { norm } else { norm / bnorm })
}

/// Checks the inputs shared by every method and backend.
pub(crate) fn check_inputs<T: Scalar>(
    b: &[T], m_inv: Option<&[T]>, settings: &KrylovSettings,
) -> Result<()> {
    settings.validate()?;
    if T::PRECISION == Precision::F16 {
        return Err(Error::Unsupported("the solvers run in f64 and f32".into()));
    }
    if let Some(d) = m_inv {
        if d.len() != b.len() {
            return Err(Error::Shape(format!(
                "preconditioner of length {} for a right-hand side of length {}",
                d.len(),
                b.len()
            )));
        }
    }
    Ok(())
}

/// The answer without iterating, for b = 0 (x = 0) and a non-finite b.
pub(crate) fn trivial_outcome(bnorm: f64) -> Option<Outcome> {
    if bnorm == 0.0 {
        Some(Outcome::Converged)
    } else if !bnorm.is_finite() {
        Some(Outcome::NonFinite)
    } else {
        None
    }
}

/// A converged recurrence that the true residual contradicts is reported as such.
pub(crate) fn judge(outcome: Outcome, true_residual: f64, tol: f64) -> Outcome {
    match outcome {
        Outcome::Converged if !true_residual.is_finite() => Outcome::NonFinite,
        Outcome::Converged if true_residual > 10.0 * tol => Outcome::InaccurateResidual,
        other => other,
    }
}
