//! What a backend gives the Krylov methods: its vectors and the fused steps of one iteration
//! ([`Engine`]), so that each method ([`super::methods`]) is written once. The steps are those
//! of krylov.cu, with the scalars of a solve in one array `s` (indices in [`slot`]): on one
//! GPU the array lives on the device and every step runs there, the iteration captured as a
//! CUDA graph ([`super::krylov_gpu`]); on the host ([`HostEngine`]) and over several GPUs
//! (`distributed`) the scalar steps run in [`step`], the same code as krylov.cu's `kr_step`.
//! A step does nothing once the status says stopped, so iterations queued past the stop change
//! nothing and x is the iterate at the stop.

use std::cell::RefCell;
use std::time::Instant;

use rayon::prelude::*;

use super::krylov::{dot, stop, KrylovSettings, Progress, MIN_SHARE};
use crate::error::Result;
use crate::gpu::jit::cuda_constants;
use crate::matrix::Scalar;
use crate::measure::ms_since;
use crate::operator::{Block, LinearOperator};

cuda_constants! {
    /// The solve's scalars (krylov.cu's `s[]`, as `KR_<NAME>`).
    pub(crate) mod slot: usize = "KR_" {
        // Every method's: the status (one of `stop`'s codes), the iteration that set it,
        // iterations completed, (tol·‖b‖)², r·r of the last test, the quantity a breakdown
        // reports (p·A·p).
        STATUS = 0, STATUS_ITER = 1, ITER = 2, TOL2 = 3, RR = 4, VALUE = 5,
        // Each method's own, from 6 (the methods share the slots).
        CG_RZ = 6, CG_ALPHA = 7, CG_BETA = 8,
        BI_RHO = 6, BI_ALPHA = 7, BI_OMEGA = 8, BI_BETA = 9, BI_S_CONVERGED = 10,
        MR_BETA = 6, MR_OLDB = 7, MR_ALPHA = 8, MR_DBAR = 9, MR_EPS = 10, MR_OLDEPS = 11,
        MR_DELTA = 12, MR_GAMMA = 13, MR_PHI = 14, MR_PHIBAR = 15, MR_CS = 16, MR_SN = 17,
        // MINRES: ‖b‖/β₁, φ̄ in ‖b‖'s units.
        MR_SCALE = 18,
        // GMRES: the basis' size before a restart, Arnoldi steps at most, the cycle is done
        // (its remaining steps do nothing), the basis vectors the update uses, h_{j+1,j} (or
        // β after a restart: the next normalisation), H was singular (stop after the update).
        GM_M = 6, GM_MAX_ITER = 7, GM_DONE = 8, GM_J = 9, GM_HNEXT = 10, GM_BREAK = 11,
        // A sum's two totals, for engines that finish the step on the host (`Op::Totals`).
        U = 28, V = 29,
        // The scalars of every method (GMRES's arrays follow: `GmAt`), and the largest GMRES
        // basis (the shared memory of krylov.cu's kr_gm_update).
        SCALARS = 32, GM_MAX_M = 256,
    }
}

/// Where GMRES's arrays sit after the scalars, for a basis of m + 1 vectors (krylov.cu's
/// `kr_gm_at`): the dots' totals t and g (m + 1 each), the rotations c and s (m each), H
/// (column-major, m + 1 rows, m columns).
#[derive(Clone, Copy)]
pub(crate) struct GmAt {
    pub m: usize,
}

impl GmAt {
    pub fn of(s: &[f64]) -> Self {
        GmAt { m: s[slot::GM_M] as usize }
    }
    /// The length of the scalars with GMRES's arrays.
    pub fn len(self) -> usize {
        self.h(0, self.m)
    }
    pub fn t(self, k: usize) -> usize {
        slot::SCALARS + k
    }
    pub fn g(self, k: usize) -> usize {
        slot::SCALARS + (self.m + 1) + k
    }
    pub fn c(self, k: usize) -> usize {
        slot::SCALARS + 2 * (self.m + 1) + k
    }
    pub fn sn(self, k: usize) -> usize {
        slot::SCALARS + 2 * (self.m + 1) + self.m + k
    }
    pub fn h(self, row: usize, col: usize) -> usize {
        slot::SCALARS + 2 * (self.m + 1) + 2 * self.m + col * (self.m + 1) + row
    }
}

/// The finishing steps after a sum (krylov.cu's `KR_OP_*`: the discriminant is the kernels'
/// `u32 op`); an enum so that [`step`] matches every one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Op {
    CgPq = 0,
    CgRz = 1,
    BiRv = 2,
    BiS = 3,
    BiOmega = 4,
    BiRho = 5,
    /// Only store the totals in `U` and `V` (the step runs on the host).
    Totals = 6,
    MrAlpha = 7,
    MrBeta = 8,
    MrCheck = 9,
    GmH1 = 10,
    GmH2 = 11,
    GmArnoldi = 12,
    GmRestart = 13,
}

/// √(a² + b²) rounded step by step, as krylov.cu's `kr_norm2` (not `hypot`: the same bits).
fn norm2(a: f64, b: f64) -> f64 {
    (a * a + b * b).sqrt()
}

/// The scalar step `op` on the totals `u`, `v` (krylov.cu's `kr_step`, line for line; GMRES's
/// steps are [`gm_step`]).
pub(crate) fn step(s: &mut [f64], u: f64, v: f64, op: Op) {
    use slot::*;
    if s[STATUS] != stop::RUNNING as f64 {
        return;
    }
    let k = s[ITER] + 1.0;
    let halt = |s: &mut [f64], code: u32| {
        s[STATUS] = code as f64;
        s[STATUS_ITER] = k;
    };
    match op {
        Op::CgPq => {
            s[VALUE] = u;
            if !u.is_finite() || !s[CG_RZ].is_finite() {
                halt(s, stop::NON_FINITE);
            } else if u <= 0.0 {
                halt(s, stop::NOT_SPD);
            } else {
                s[CG_ALPHA] = s[CG_RZ] / u;
            }
        }
        Op::CgRz => {
            s[ITER] = k;
            s[RR] = v;
            if !u.is_finite() || !v.is_finite() {
                halt(s, stop::NON_FINITE);
            } else if v <= s[TOL2] {
                halt(s, stop::CONVERGED);
            } else if u == 0.0 {
                halt(s, stop::RZ_ZERO);
            } else {
                s[CG_BETA] = u / s[CG_RZ];
                s[CG_RZ] = u;
            }
        }
        Op::BiRv => {
            if !u.is_finite() {
                halt(s, stop::NON_FINITE);
            } else if u == 0.0 {
                halt(s, stop::RV_ZERO);
            } else {
                s[BI_ALPHA] = s[BI_RHO] / u;
            }
        }
        Op::BiS => {
            if !u.is_finite() {
                halt(s, stop::NON_FINITE);
            } else if u <= s[TOL2] {
                s[BI_S_CONVERGED] = 1.0;
                s[RR] = u;
            }
        }
        Op::BiOmega => {
            if s[BI_S_CONVERGED] != 0.0 {
                s[BI_OMEGA] = 0.0;
            } else if !u.is_finite() || !v.is_finite() {
                halt(s, stop::NON_FINITE);
            } else if u == 0.0 {
                halt(s, stop::TT_ZERO);
            } else {
                s[BI_OMEGA] = v / u;
            }
        }
        Op::BiRho => {
            s[ITER] = k;
            if s[BI_S_CONVERGED] != 0.0 {
                halt(s, stop::CONVERGED);
                return;
            }
            s[RR] = v;
            if !u.is_finite() || !v.is_finite() {
                halt(s, stop::NON_FINITE);
            } else if v <= s[TOL2] {
                halt(s, stop::CONVERGED);
            } else if s[BI_OMEGA] == 0.0 {
                halt(s, stop::OMEGA_ZERO);
            } else if u == 0.0 {
                halt(s, stop::RHO_ZERO);
            } else {
                s[BI_BETA] = (u / s[BI_RHO]) * (s[BI_ALPHA] / s[BI_OMEGA]);
                s[BI_RHO] = u;
            }
        }
        Op::Totals => {
            s[U] = u;
            s[V] = v;
        }
        Op::MrAlpha => {
            s[MR_ALPHA] = u;
            if !u.is_finite() {
                halt(s, stop::NON_FINITE);
            }
        }
        Op::MrBeta => {
            if !u.is_finite() {
                return halt(s, stop::NON_FINITE);
            }
            if u < 0.0 {
                s[VALUE] = u;
                return halt(s, stop::PRECONDITIONER);
            }
            let (alpha, cs, sn, dbar) = (s[MR_ALPHA], s[MR_CS], s[MR_SN], s[MR_DBAR]);
            let beta = u.sqrt();
            s[MR_OLDB] = s[MR_BETA];
            s[MR_BETA] = beta;
            s[MR_OLDEPS] = s[MR_EPS];
            s[MR_DELTA] = cs * dbar + sn * alpha;
            let gbar = sn * dbar - cs * alpha;
            s[MR_EPS] = sn * beta;
            s[MR_DBAR] = -(cs * beta);
            let gamma = norm2(gbar, beta);
            s[MR_GAMMA] = gamma;
            if !gamma.is_finite() {
                halt(s, stop::NON_FINITE);
            } else if gamma == 0.0 {
                halt(s, stop::GAMMA_ZERO);
            } else {
                let (c, sn2, phibar) = (gbar / gamma, beta / gamma, s[MR_PHIBAR]);
                s[MR_CS] = c;
                s[MR_SN] = sn2;
                s[MR_PHI] = c * phibar;
                s[MR_PHIBAR] = sn2 * phibar;
            }
        }
        Op::MrCheck => {
            s[ITER] = k;
            let r = s[MR_PHIBAR] * s[MR_SCALE];
            s[RR] = r * r;
            if !s[RR].is_finite() {
                halt(s, stop::NON_FINITE);
            } else if s[RR] <= s[TOL2] {
                halt(s, stop::CONVERGED);
            }
        }
        Op::GmH1 | Op::GmH2 | Op::GmArnoldi | Op::GmRestart => {
            unreachable!("GMRES's steps go through gm_step")
        }
    }
}

/// GMRES's scalar step `op` of Arnoldi step j: u is ‖v_{j+1}‖² or the restart's ‖r‖²; the
/// dots' totals are in t. The same operations as krylov.cu's `kr_gm_restart_step`,
/// `kr_gm_arnoldi_step` and, for H1 and H2, the end of `kr_gm_multidot` (which updates H's
/// column in parallel there).
pub(crate) fn gm_step(s: &mut [f64], u: f64, op: Op, j: usize) {
    use slot::*;
    if s[STATUS] != stop::RUNNING as f64 {
        return;
    }
    if op == Op::Totals {
        s[U] = u;
        return;
    }
    let at = GmAt::of(s);
    let halt = |s: &mut [f64], code: u32, k: f64| {
        s[STATUS] = code as f64;
        s[STATUS_ITER] = k;
    };
    if op == Op::GmRestart {
        let k = s[ITER];
        s[RR] = u;
        if !u.is_finite() {
            halt(s, stop::NON_FINITE, k);
        } else if u <= s[TOL2] {
            halt(s, stop::CONVERGED, k);
        } else if s[GM_BREAK] != 0.0 {
            halt(s, stop::SINGULAR, k);
        } else if k >= s[GM_MAX_ITER] {
            halt(s, stop::LIMIT, k);
        } else {
            let beta = u.sqrt();
            s[GM_HNEXT] = beta;
            s[at.g(0)] = beta;
            (1..=at.m).for_each(|i| s[at.g(i)] = 0.0);
            s[GM_DONE] = 0.0;
            s[GM_J] = 0.0;
        }
        return;
    }
    if s[GM_DONE] != 0.0 {
        return;
    }
    if op == Op::GmH1 || op == Op::GmH2 {
        for i in 0..=j {
            s[at.h(i, j)] = if op == Op::GmH1 { s[at.t(i)] } else { s[at.h(i, j)] + s[at.t(i)] };
        }
        return;
    }
    debug_assert_eq!(op, Op::GmArnoldi);
    let k = s[ITER] + 1.0;
    s[ITER] = k;
    let hnext = u.sqrt();
    s[GM_HNEXT] = hnext;
    let mut a = s[at.h(0, j)];
    for i in 0..j {
        let (b, c, sn) = (s[at.h(i + 1, j)], s[at.c(i)], s[at.sn(i)]);
        s[at.h(i, j)] = c * a + sn * b;
        a = c * b - sn * a;
    }
    let r = norm2(a, hnext);
    if !r.is_finite() {
        return halt(s, stop::NON_FINITE, k);
    }
    if r == 0.0 {
        s[GM_BREAK] = 1.0;
        s[GM_DONE] = 1.0;
        s[GM_J] = j as f64;
        return;
    }
    let (c, sn, g) = (a / r, hnext / r, s[at.g(j)]);
    s[at.c(j)] = c;
    s[at.sn(j)] = sn;
    s[at.h(j, j)] = r;
    s[at.g(j)] = c * g;
    s[at.g(j + 1)] = -(sn * g);
    s[RR] = s[at.g(j + 1)] * s[at.g(j + 1)];
    if s[RR] <= s[TOL2] || hnext == 0.0 || k >= s[GM_MAX_ITER] || j + 1 == at.m {
        s[GM_DONE] = 1.0;
        s[GM_J] = (j + 1) as f64;
    }
}

/// y = R⁻¹·g for the GM_J columns of the rotated H (krylov.cu's `kr_gm_solve`).
pub(crate) fn gm_solve(s: &[f64]) -> Vec<f64> {
    let at = GmAt::of(s);
    let big_j = s[slot::GM_J] as usize;
    let mut y = vec![0.0; big_j];
    for k in (0..big_j).rev() {
        let mut acc = s[at.g(k)];
        for l in k + 1..big_j {
            acc -= s[at.h(k, l)] * y[l];
        }
        y[k] = acc / s[at.h(k, k)];
    }
    y
}

/// What the scalars said at the stop.
pub(crate) struct Stopped {
    pub code: u32,
    /// Iterations (GMRES: cycles) launched, those past the stop included.
    pub launched: usize,
    /// Mean wall time per iteration queued, in milliseconds.
    pub iteration_ms: f64,
    /// The iteration that stopped (or the iterations done, when none did).
    pub iterations: usize,
    pub rr: f64,
    pub value: f64,
    pub graph: bool,
}

impl Stopped {
    /// The stop the scalars `s` describe after `launched` iterations since `started`.
    pub fn from_scalars(s: &[f64], launched: usize, started: Instant, graph: bool) -> Self {
        let code = s[slot::STATUS] as u32;
        let iterations =
            if code == stop::RUNNING { s[slot::ITER] } else { s[slot::STATUS_ITER] } as usize;
        Stopped {
            code,
            launched,
            iteration_ms: ms_since(started) / launched.max(1) as f64,
            iterations,
            rr: s[slot::RR],
            value: s[slot::VALUE],
            graph,
        }
    }
}

/// How often a method's iteration (the closure [`Engine::run`] repeats) is launched and read
/// back: at most `launches` times, the scalars read every `check_every` launches.
#[derive(Clone, Copy)]
pub(crate) struct Pace {
    pub launches: usize,
    pub check_every: usize,
}

impl Pace {
    /// One launch per iteration, as the settings say.
    pub fn of(settings: &KrylovSettings) -> Self {
        Pace { launches: settings.max_iter, check_every: settings.check_every }
    }
}

/// Runs `iteration` in batches of `check_every` until `scalars` report a stop or `launches`
/// iterations ran, calling the progress callback at every read-back; `replay` runs one
/// iteration (a CUDA graph's launch, or `iteration` itself).
pub(crate) fn drive(
    pace: Pace, progress: Option<&Progress>, bnorm: f64, replay: &mut dyn FnMut() -> Result<()>,
    scalars: &dyn Fn() -> Result<Vec<f64>>, graph: bool,
) -> Result<Stopped> {
    let started = Instant::now();
    let mut launched = 0;
    loop {
        let batch = pace.check_every.min(pace.launches - launched);
        for _ in 0..batch {
            replay()?;
        }
        launched += batch;
        let s = scalars()?;
        let code = s[slot::STATUS] as u32;
        if let Some(progress) = progress {
            progress(s[slot::ITER] as usize, s[slot::RR].sqrt() / bnorm);
        }
        if code != stop::RUNNING || launched == pace.launches {
            return Ok(Stopped::from_scalars(&s, launched, started, graph));
        }
    }
}

/// A backend's vectors and the fused steps of krylov.cu on them (module doc). Vectors have
/// the system's n entries; the optional ones (z, p̂, ŝ: only with a preconditioner) may be
/// placeholders that are never read.
pub(crate) trait Engine<T: Scalar> {
    /// The backend's vector.
    type Vector;
    /// A vector of n entries: `init`'s, or zeros.
    fn vector(&self, init: Option<&[T]>) -> Result<Self::Vector>;
    /// A vector that is stored only with a preconditioner: `vector(init)` with one, else a
    /// placeholder.
    fn optional(&self, init: Option<&[T]>) -> Result<Self::Vector>;
    /// `a·b` of two host vectors of the engine's rows, in the one-GPU kernels' order (a
    /// backend of several parts: summed per part and over the parts in part order).
    fn host_dot(&self, a: &[T], b: &[T]) -> Result<f64> {
        Ok(super::krylov::dot(a, b))
    }
    /// The vector's entries on the host.
    fn download(&self, v: &Self::Vector) -> Result<Vec<T>>;
    /// Sets starting scalars.
    fn set_scalars(&mut self, values: &[(usize, f64)]) -> Result<()>;
    /// `y = A·x` (also after a stop: the true residual's product).
    fn product(&self, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// Whether a preconditioner is applied (the optional vectors are stored).
    fn preconditioned(&self) -> bool;
    /// a·b and a·c, then the step `op`.
    fn dots(&self, a: &Self::Vector, b: &Self::Vector, c: &Self::Vector, op: Op) -> Result<()>;
    /// CG: x += α·p, r −= α·q, z = M⁻¹·r, r·z and r·r, step CG_RZ.
    fn cg_update(&self, vs: &mut CgVectors<Self::Vector>) -> Result<()>;
    /// CG: p = z + β·p (z is r without a preconditioner: [`CgVectors::direction`]).
    fn cg_direction(&self, vs: &mut CgVectors<Self::Vector>) -> Result<()>;
    /// BiCGSTAB: p = r + β·(p − ω·v), p̂ = M⁻¹·p.
    fn bi_direction(&self, vs: &mut BiVectors<Self::Vector>) -> Result<()>;
    /// BiCGSTAB: s = r − α·v (in r), ŝ = M⁻¹·s, s·s, step BI_S.
    fn bi_s(&self, vs: &mut BiVectors<Self::Vector>) -> Result<()>;
    /// BiCGSTAB: x += α·p̂ + ω·ŝ, r = s − ω·t, r̂·r and r·r, step BI_RHO (p̂ is p and ŝ
    /// unread without a preconditioner: [`BiVectors::update`]).
    fn bi_update(&self, vs: &mut BiVectors<Self::Vector>) -> Result<()>;
    /// MINRES: q −= (β/β_old)·r1, v·q, step MR_ALPHA.
    fn mr_alpha(&self, vs: &mut MrVectors<Self::Vector>) -> Result<()>;
    /// MINRES: q −= (α/β)·r2, r1 = r2, r2 = q, y = M⁻¹·r2, r2·y, step MR_BETA.
    fn mr_beta(&self, vs: &mut MrVectors<Self::Vector>) -> Result<()>;
    /// MINRES: the directions, x += φ·w, v = y/β, step MR_CHECK.
    fn mr_update(&self, vs: &mut MrVectors<Self::Vector>) -> Result<()>;
    /// GMRES: makes the basis addressable by the engine's kernels (once, before `run`).
    fn gm_basis(&mut self, vs: &GmVectors<Self::Vector>) -> Result<()>;
    /// GMRES's first step after v_{j+1} = A·M⁻¹·v_j: v_j /= h and v_{j+1} /= h (h: the
    /// normalisation the step before deferred, h_{j,j−1} or β), t = V_{≤j}·v_{j+1}, step H1.
    fn gm_dots(&self, vs: &mut GmVectors<Self::Vector>, j: usize) -> Result<()>;
    /// GMRES: v_{j+1} −= V_{≤j}·t; then without `norm` t = V_{≤j}·v_{j+1} and step H2 (the
    /// second pass of CGS2), with `norm` ‖v_{j+1}‖², z = M⁻¹·v_{j+1} and step ARNOLDI.
    fn gm_subtract(&self, vs: &mut GmVectors<Self::Vector>, j: usize, norm: bool) -> Result<()>;
    /// GMRES: `gm_dots`, `gm_subtract(.., false)` and `gm_subtract(.., true)` of step j in
    /// one launch, with the same bits, where the engine has one (a GPU's grid of one block);
    /// `false` where it has not, and nothing ran.
    fn gm_fused(&self, _vs: &mut GmVectors<Self::Vector>, _j: usize) -> Result<bool> {
        Ok(false)
    }
    /// GMRES at a cycle's end: y = R⁻¹·g, x += M⁻¹·V·y.
    fn gm_update(&self, vs: &mut GmVectors<Self::Vector>) -> Result<()>;
    /// GMRES's restart (v_0 holds A·x): v_0 = b − v_0, ‖v_0‖², z = M⁻¹·v_0, step RESTART.
    fn gm_restart(&self, vs: &mut GmVectors<Self::Vector>) -> Result<()>;
    /// Whether the host knows that GMRES's cycle is done, so that its remaining products
    /// may be skipped (engines whose scalars live on the host; a GPU's never knows).
    fn cycle_done(&self) -> bool {
        false
    }
    /// The solve's scalars, a copy (a GPU's read back).
    fn scalars(&self) -> Result<Vec<f64>>;
    /// `ys[j] = A·xs[j]` for several vectors of solves in lock step ([`super::lockstep`]):
    /// one block product through [`LinearOperator::apply_block`] (the matrix read once per
    /// block of vectors) after [`Engine::reserve_products`], else one product each.
    fn products(&self, xs: &[&Self::Vector], ys: &mut [&mut Self::Vector]) -> Result<()> {
        xs.iter().zip(ys).try_for_each(|(x, y)| self.product(x, y))
    }
    /// Makes room for [`Engine::products`] of k vectors, and runs one, so that none
    /// allocates or loads a module inside a captured iteration.
    fn reserve_products(&mut self, _k: usize) -> Result<()> {
        Ok(())
    }
    /// Runs `iteration` (one iteration's steps) until `scalars` report a stop or
    /// `pace.launches` iterations ran ([`drive`]).
    fn run_until(
        &self, iteration: &mut dyn FnMut() -> Result<()>, pace: Pace,
        scalars: &dyn Fn() -> Result<Vec<f64>>,
    ) -> Result<Stopped>;
    /// [`Engine::run_until`] this engine's own scalars report a stop.
    fn run(&self, iteration: &mut dyn FnMut() -> Result<()>, pace: Pace) -> Result<Stopped> {
        self.run_until(iteration, pace, &|| self.scalars())
    }
}

/// MINRES's vectors (y stored only with a preconditioner: it is r2 without one).
#[derive(Default)]
pub(crate) struct MrVectors<V> {
    pub x: V,
    pub v: V,
    pub q: V,
    pub r1: V,
    pub r2: V,
    pub y: V,
    pub w1: V,
    pub w2: V,
}

impl<V> MrVectors<V> {
    /// M⁻¹·r2: y, or r2 without a preconditioner.
    pub fn y_used(&self, preconditioned: bool) -> &V {
        if preconditioned {
            &self.y
        } else {
            &self.r2
        }
    }
}

/// GMRES's vectors: the basis V (m + 1 vectors; v_j is normalised by step j's first kernel,
/// after the product that reads it), z = M⁻¹·v_j (only with a preconditioner).
#[derive(Default)]
pub(crate) struct GmVectors<V> {
    pub x: V,
    pub b: V,
    pub basis: Vec<V>,
    pub z: V,
}

/// CG's vectors (z stored only with a preconditioner), one argument for every step.
#[derive(Default)]
pub(crate) struct CgVectors<V> {
    pub x: V,
    pub r: V,
    pub z: V,
    pub p: V,
    pub q: V,
}

impl<V> CgVectors<V> {
    /// The direction's operands: z (r without a preconditioner) read, p written.
    pub fn direction(&mut self, preconditioned: bool) -> (&V, &mut V) {
        (if preconditioned { &self.z } else { &self.r }, &mut self.p)
    }
}

/// BiCGSTAB's vectors (p̂ and ŝ stored only with a preconditioner; s is kept in r).
#[derive(Default)]
pub(crate) struct BiVectors<V> {
    pub x: V,
    pub r: V,
    pub r_hat: V,
    pub p: V,
    pub v: V,
    pub t: V,
    pub p_hat: V,
    pub s_hat: V,
}

impl<V> BiVectors<V> {
    /// The update's operands: (p̂ or p, ŝ, t, r̂) read, (x, r) written.
    pub fn update(&mut self, preconditioned: bool) -> ((&V, &V, &V, &V), (&mut V, &mut V)) {
        let p_used = if preconditioned { &self.p_hat } else { &self.p };
        ((p_used, &self.s_hat, &self.t, &self.r_hat), (&mut self.x, &mut self.r))
    }
}

/// The host engine: vectors in host memory, the steps in Rust over rayon's threads, summed in
/// the GPU kernels' order ([`super::krylov::device_order_sum`]), rounded one operation at a
/// time as the kernels do, so that with the GPU's product it gives the GPU's bits.
pub(crate) struct HostEngine<'a, T, A: ?Sized> {
    pub a: &'a A,
    pub n: usize,
    pub m_inv: Option<&'a [T]>,
    pub settings: &'a KrylovSettings,
    pub bnorm: f64,
    pub s: RefCell<Vec<f64>>,
    /// The block product's X and Y (n·k each, row by row) once [`Engine::reserve_products`]
    /// ran.
    pub block: RefCell<Vec<T>>,
}

impl<T: Scalar, A: LinearOperator<T, Vector = [T]> + ?Sized> HostEngine<'_, T, A> {
    fn running(&self) -> bool {
        self.s.borrow()[slot::STATUS] == stop::RUNNING as f64
    }
    fn get(&self, i: usize) -> f64 {
        self.s.borrow()[i]
    }
    fn finish(&self, u: f64, v: f64, op: Op) {
        step(&mut self.s.borrow_mut(), u, v, op);
    }
    fn gm_active(&self) -> bool {
        self.running() && self.get(slot::GM_DONE) == 0.0
    }
    /// GMRES: t = V_{≤j}·v_{j+1} (zeros when not `active`), then step `op`.
    fn gm_totals(&self, vs: &GmVectors<Vec<T>>, j: usize, active: bool, op: Op) {
        let w = &vs.basis[j + 1];
        let totals: Vec<f64> =
            (0..=j).map(|k| if active { dot(&vs.basis[k], w) } else { 0.0 }).collect();
        let mut s = self.s.borrow_mut();
        if s[slot::STATUS] == stop::RUNNING as f64 {
            let at = GmAt::of(&s);
            totals.iter().enumerate().for_each(|(k, &t)| s[at.t(k)] = t);
        }
        gm_step(&mut s, 0.0, op, j);
    }
    /// `out = M⁻¹·v`, rounded to T (with a preconditioner only).
    fn precondition(&self, v: &[T], out: &mut [T]) {
        let d = self.m_inv.expect("with a preconditioner");
        out.par_iter_mut()
            .with_min_len(MIN_SHARE)
            .zip(v)
            .zip(d)
            .for_each(|((o, &v), &d)| *o = T::from_f64(v.to_f64() * d.to_f64()));
    }
}

impl<T: Scalar, A: LinearOperator<T, Vector = [T]> + ?Sized> Engine<T> for HostEngine<'_, T, A> {
    type Vector = Vec<T>;

    fn vector(&self, init: Option<&[T]>) -> Result<Vec<T>> {
        Ok(init.map_or_else(|| vec![T::ZERO; self.n], <[T]>::to_vec))
    }
    fn optional(&self, init: Option<&[T]>) -> Result<Vec<T>> {
        if self.m_inv.is_some() {
            self.vector(init)
        } else {
            Ok(Vec::new())
        }
    }
    fn download(&self, v: &Vec<T>) -> Result<Vec<T>> {
        Ok(v.clone())
    }
    fn set_scalars(&mut self, values: &[(usize, f64)]) -> Result<()> {
        let mut s = self.s.borrow_mut();
        values.iter().for_each(|&(i, v)| s[i] = v);
        Ok(())
    }
    fn product(&self, x: &Vec<T>, y: &mut Vec<T>) -> Result<()> {
        self.a.apply(T::ONE, x, T::ZERO, y)
    }
    fn preconditioned(&self) -> bool {
        self.m_inv.is_some()
    }
    fn dots(&self, a: &Vec<T>, b: &Vec<T>, c: &Vec<T>, op: Op) -> Result<()> {
        let (u, v) = if self.running() { (dot(a, b), dot(a, c)) } else { (0.0, 0.0) };
        self.finish(u, v, op);
        Ok(())
    }
    fn cg_update(&self, vs: &mut CgVectors<Vec<T>>) -> Result<()> {
        let CgVectors { ref mut x, ref mut r, ref mut z, ref p, ref q } = *vs;
        if !self.running() {
            return Ok(());
        }
        let alpha = self.get(slot::CG_ALPHA);
        x.par_iter_mut()
            .with_min_len(MIN_SHARE)
            .zip(p)
            .for_each(|(x, &p)| *x = T::from_f64(x.to_f64() + alpha * p.to_f64()));
        r.par_iter_mut()
            .with_min_len(MIN_SHARE)
            .zip(q)
            .for_each(|(r, &q)| *r = T::from_f64(r.to_f64() - alpha * q.to_f64()));
        let rz = if self.m_inv.is_some() {
            self.precondition(r, z);
            dot(r, z)
        } else {
            dot(r, r)
        };
        let rr = if self.m_inv.is_some() { dot(r, r) } else { rz };
        self.finish(rz, rr, Op::CgRz);
        Ok(())
    }
    fn cg_direction(&self, vs: &mut CgVectors<Vec<T>>) -> Result<()> {
        let (z, p) = vs.direction(self.m_inv.is_some());
        if self.running() {
            let beta = self.get(slot::CG_BETA);
            p.par_iter_mut()
                .with_min_len(MIN_SHARE)
                .zip(z)
                .for_each(|(p, &z)| *p = T::from_f64(z.to_f64() + beta * p.to_f64()));
        }
        Ok(())
    }
    fn bi_direction(&self, vs: &mut BiVectors<Vec<T>>) -> Result<()> {
        let BiVectors { ref r, ref v, ref mut p, ref mut p_hat, .. } = *vs;
        if !self.running() {
            return Ok(());
        }
        let (beta, omega) = (self.get(slot::BI_BETA), self.get(slot::BI_OMEGA));
        p.par_iter_mut().with_min_len(MIN_SHARE).zip(r).zip(v).for_each(|((p, &r), &v)| {
            *p = T::from_f64(r.to_f64() + beta * (p.to_f64() - omega * v.to_f64()));
        });
        if self.m_inv.is_some() {
            self.precondition(p, p_hat);
        }
        Ok(())
    }
    fn bi_s(&self, vs: &mut BiVectors<Vec<T>>) -> Result<()> {
        let BiVectors { ref v, ref mut r, ref mut s_hat, .. } = *vs;
        let mut ss = 0.0;
        if self.running() {
            let alpha = self.get(slot::BI_ALPHA);
            r.par_iter_mut()
                .with_min_len(MIN_SHARE)
                .zip(v)
                .for_each(|(r, &v)| *r = T::from_f64(r.to_f64() - alpha * v.to_f64()));
            if self.m_inv.is_some() {
                self.precondition(r, s_hat);
            }
            ss = dot(r, r);
        }
        self.finish(ss, 0.0, Op::BiS);
        Ok(())
    }
    fn bi_update(&self, vs: &mut BiVectors<Vec<T>>) -> Result<()> {
        let ((p_used, s_hat, t, r_hat), (x, r)) = vs.update(self.m_inv.is_some());
        let (mut rho, mut rr) = (0.0, 0.0);
        if self.running() {
            let (alpha, omega) = (self.get(slot::BI_ALPHA), self.get(slot::BI_OMEGA));
            let s_used = if self.m_inv.is_some() { s_hat } else { &*r };
            x.par_iter_mut().with_min_len(MIN_SHARE).zip(p_used).zip(s_used).for_each(
                |((x, &p), &s)| {
                    *x = T::from_f64(x.to_f64() + alpha * p.to_f64() + omega * s.to_f64());
                },
            );
            r.par_iter_mut()
                .with_min_len(MIN_SHARE)
                .zip(t)
                .for_each(|(r, &t)| *r = T::from_f64(r.to_f64() - omega * t.to_f64()));
            (rho, rr) = (dot(r_hat, r), dot(r, r));
        }
        self.finish(rho, rr, Op::BiRho);
        Ok(())
    }
    fn mr_alpha(&self, vs: &mut MrVectors<Vec<T>>) -> Result<()> {
        let MrVectors { ref v, ref r1, ref mut q, .. } = *vs;
        let mut vq = 0.0;
        if self.running() {
            let oldb = self.get(slot::MR_OLDB);
            let c = if oldb == 0.0 { 0.0 } else { self.get(slot::MR_BETA) / oldb };
            q.par_iter_mut()
                .with_min_len(MIN_SHARE)
                .zip(r1)
                .for_each(|(q, &r1)| *q = T::from_f64(q.to_f64() - c * r1.to_f64()));
            vq = dot(v, q);
        }
        self.finish(vq, 0.0, Op::MrAlpha);
        Ok(())
    }
    fn mr_beta(&self, vs: &mut MrVectors<Vec<T>>) -> Result<()> {
        let MrVectors { ref q, ref mut r1, ref mut r2, ref mut y, .. } = *vs;
        let mut ry = 0.0;
        if self.running() {
            let c = self.get(slot::MR_ALPHA) / self.get(slot::MR_BETA);
            r1.par_iter_mut().with_min_len(MIN_SHARE).zip(r2.par_iter_mut()).zip(q).for_each(
                |((r1, r2), &q)| {
                    *r1 = *r2;
                    *r2 = T::from_f64(q.to_f64() - c * r2.to_f64());
                },
            );
            ry = if self.m_inv.is_some() {
                self.precondition(r2, y);
                dot(r2, y)
            } else {
                dot(r2, r2)
            };
        }
        self.finish(ry, 0.0, Op::MrBeta);
        Ok(())
    }
    fn mr_update(&self, vs: &mut MrVectors<Vec<T>>) -> Result<()> {
        if self.running() {
            let [oldeps, delta, gamma, phi, beta] =
                [slot::MR_OLDEPS, slot::MR_DELTA, slot::MR_GAMMA, slot::MR_PHI, slot::MR_BETA]
                    .map(|i| self.get(i));
            let y = if self.m_inv.is_some() { &vs.y } else { &vs.r2 };
            let MrVectors { ref mut v, ref mut w1, ref mut w2, ref mut x, .. } = *vs;
            (v, w1, w2, x, y).into_par_iter().with_min_len(MIN_SHARE).for_each(
                |(v, w1, w2, x, &y)| {
                    let w = T::from_f64(
                        ((v.to_f64() - oldeps * w2.to_f64()) - delta * w1.to_f64()) / gamma,
                    );
                    *w2 = *w1;
                    *w1 = w;
                    *x = T::from_f64(x.to_f64() + phi * w.to_f64());
                    if beta != 0.0 {
                        *v = T::from_f64(y.to_f64() / beta);
                    }
                },
            );
        }
        self.finish(0.0, 0.0, Op::MrCheck);
        Ok(())
    }
    fn gm_basis(&mut self, _: &GmVectors<Vec<T>>) -> Result<()> {
        Ok(())
    }
    fn gm_dots(&self, vs: &mut GmVectors<Vec<T>>, j: usize) -> Result<()> {
        let active = self.gm_active();
        if active {
            let h = self.get(slot::GM_HNEXT);
            let (lower, upper) = vs.basis.split_at_mut(j + 1);
            for v in [&mut lower[j], &mut upper[0]] {
                v.par_iter_mut()
                    .with_min_len(MIN_SHARE)
                    .for_each(|v| *v = T::from_f64(v.to_f64() / h));
            }
        }
        self.gm_totals(vs, j, active, Op::GmH1);
        Ok(())
    }
    fn gm_subtract(&self, vs: &mut GmVectors<Vec<T>>, j: usize, norm: bool) -> Result<()> {
        let active = self.gm_active();
        let mut ww = 0.0;
        if active {
            let t: Vec<f64> = {
                let s = self.s.borrow();
                let at = GmAt::of(&s);
                (0..=j).map(|k| s[at.t(k)]).collect()
            };
            let (lower, upper) = vs.basis.split_at_mut(j + 1);
            let w = &mut upper[0];
            w.par_iter_mut().with_min_len(MIN_SHARE).enumerate().for_each(|(i, w)| {
                let mut wi = w.to_f64();
                for (k, &t) in t.iter().enumerate() {
                    wi -= t * lower[k][i].to_f64();
                }
                *w = T::from_f64(wi);
            });
            if norm {
                ww = dot(w, w);
                if self.m_inv.is_some() {
                    self.precondition(w, &mut vs.z);
                }
            }
        }
        if norm {
            gm_step(&mut self.s.borrow_mut(), ww, Op::GmArnoldi, j);
        } else {
            self.gm_totals(vs, j, active, Op::GmH2);
        }
        Ok(())
    }
    fn gm_update(&self, vs: &mut GmVectors<Vec<T>>) -> Result<()> {
        if !self.running() {
            return Ok(());
        }
        let y = gm_solve(&self.s.borrow());
        let (basis, m_inv) = (&vs.basis, self.m_inv);
        vs.x.par_iter_mut().with_min_len(MIN_SHARE).enumerate().for_each(|(i, x)| {
            let mut t = 0.0;
            for (k, &y) in y.iter().enumerate() {
                t += y * basis[k][i].to_f64();
            }
            if let Some(d) = m_inv {
                t *= d[i].to_f64();
            }
            *x = T::from_f64(x.to_f64() + t);
        });
        Ok(())
    }
    fn gm_restart(&self, vs: &mut GmVectors<Vec<T>>) -> Result<()> {
        let mut rr = 0.0;
        if self.running() {
            let r = &mut vs.basis[0];
            r.par_iter_mut()
                .with_min_len(MIN_SHARE)
                .zip(&vs.b)
                .for_each(|(r, &b)| *r = T::from_f64(b.to_f64() - r.to_f64()));
            rr = dot(r, r);
            if self.m_inv.is_some() {
                self.precondition(r, &mut vs.z);
            }
        }
        gm_step(&mut self.s.borrow_mut(), rr, Op::GmRestart, 0);
        Ok(())
    }
    fn cycle_done(&self) -> bool {
        !self.gm_active()
    }
    fn scalars(&self) -> Result<Vec<f64>> {
        Ok(self.s.borrow().to_vec())
    }
    fn products(&self, xs: &[&Vec<T>], ys: &mut [&mut Vec<T>]) -> Result<()> {
        let mut block = self.block.borrow_mut();
        let (n, k) = (self.n, xs.len());
        if block.len() != 2 * n * k {
            drop(block);
            return xs.iter().zip(ys).try_for_each(|(x, y)| self.product(x, y));
        }
        // X and Y row by row (row i: the k vectors' entries i): the CPU block product reads
        // a row's k entries of X from one cache line and writes Y in place.
        let (bx, by) = block.split_at_mut(n * k);
        const ROWS: usize = 4096;
        bx.par_chunks_mut(ROWS * k).enumerate().for_each(|(chunk, rows)| {
            for (i, row) in (chunk * ROWS..).zip(rows.chunks_mut(k)) {
                row.iter_mut().zip(xs).for_each(|(to, x)| *to = x[i]);
            }
        });
        self.a.apply_block(T::ONE, bx, T::ZERO, by, Block::rows(k))?;
        let by = &*by;
        ys.par_iter_mut().enumerate().for_each(|(j, y)| {
            y.iter_mut().zip(by.iter().skip(j).step_by(k)).for_each(|(to, &v)| *to = v);
        });
        Ok(())
    }
    fn reserve_products(&mut self, k: usize) -> Result<()> {
        let what = || format!("the block product's X and Y ({} x {k} each)", self.n);
        let len = 2 * self.n * k;
        crate::error::check_host_memory(what, (len * std::mem::size_of::<T>()) as u64)?;
        *self.block.get_mut() = vec![T::ZERO; len];
        Ok(())
    }
    fn run_until(
        &self, iteration: &mut dyn FnMut() -> Result<()>, pace: Pace,
        scalars: &dyn Fn() -> Result<Vec<f64>>,
    ) -> Result<Stopped> {
        // Every iteration is checked on the host (nothing to batch), the progress at the
        // settings' pace.
        let checked = Pace { check_every: 1, ..pace };
        let mut since = 0;
        let progress: Option<&Progress> = self.settings.progress.as_ref();
        let mut replay = || -> Result<()> {
            iteration()?;
            since += 1;
            if let Some(report) = progress {
                let s = scalars()?;
                if since % pace.check_every == 0 || s[slot::STATUS] != 0.0 {
                    report(s[slot::ITER] as usize, s[slot::RR].sqrt() / self.bnorm);
                }
            }
            Ok(())
        };
        drive(checked, None, self.bnorm, &mut replay, scalars, false)
    }
}

#[cfg(test)]
mod tests {
    use super::{slot, stop};

    #[test]
    fn krylov_cu_sees_the_rust_constants_as_defines() {
        // One line per constant, in order, with the module's prefix.
        assert!(slot::CUDA.starts_with("#define KR_STATUS 0\n#define KR_STATUS_ITER 1\n"));
        assert!(slot::CUDA.contains("\n#define KR_CG_RZ 6\n"));
        assert!(slot::CUDA.ends_with("#define KR_SCALARS 32\n#define KR_GM_MAX_M 256\n"));
        assert_eq!(slot::CUDA.lines().count(), 37);
        assert!(stop::CUDA.contains("\n#define KR_ST_PRECONDITIONER 10\n"));
        assert_eq!((slot::MR_SCALE, stop::LIMIT), (18, 12));
    }
}
