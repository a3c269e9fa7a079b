//! The Krylov methods, each written once over an [`Engine`] (a backend's vectors and fused
//! steps), and the entry points: [`cg`], [`bicgstab`], [`minres`] and [`gmres`] on any
//! [`Solvable`] matrix — a host
//! handle, a plain CSR, the front door's operator (on its backend), one GPU's matrix or a
//! distributed one. Every run starts from x = 0; the steps and their order are those of
//! krylov.cu (module docs of [`super::krylov`] and [`super::engine`]).

use std::cell::RefCell;
use std::time::Instant;

use super::engine::{
    slot, BiVectors, CgVectors, Engine, GmAt, GmVectors, HostEngine, MrVectors, Op, Pace, Stopped,
};
use super::krylov::{
    check_inputs, dot, judge, preconditioned, relative_residual, stop_outcome, threshold,
    trivial_outcome, KrylovSettings, Method, Outcome, Solution,
};
use super::lockstep::run_lockstep;
use super::pagerank::{PowerEngine, Transition};
use crate::error::{Error, Result};
use crate::matrix::Scalar;
use crate::measure::ms_since;
use crate::operator::{to_columns, Block, LinearOperator};

/// Where a solver runs: the backend of the matrix, which makes the engine.
pub enum Backing<'a, T: Scalar> {
    /// Host vectors and any host operator's product.
    Host(&'a (dyn LinearOperator<T, Vector = [T]> + 'a)),
    /// One GPU: the whole iteration on the device.
    Gpu(&'a crate::DeviceMatrix<T>),
    /// A backend that brings its own engines (several GPUs): `solve` names no backend
    /// above it.
    Own(&'a dyn OwnEngines<T>),
}

/// The engines of a backend outside `solve` (`distributed`): it runs the methods written here
/// through [`run`] and [`super::pagerank::power_iteration`] with engines of its own.
pub trait OwnEngines<T: Scalar> {
    /// (rows, columns) of the host vectors the solvers take and give: the matrix's, or the
    /// rows this process holds of a matrix spread over processes.
    fn shape(&self) -> (usize, usize);
    /// `a·b` of two host vectors (of [`OwnEngines::shape`]'s rows), as the engine sums.
    fn host_dot(&self, a: &[T], b: &[T]) -> Result<f64> {
        Ok(dot(a, b))
    }
    /// Runs a solve after [`begin`]'s checks: `run(&mut its engine, job)`.
    #[doc(hidden)]
    fn krylov(&self, job: Job<'_, T>) -> Result<Solution<T>>;
    /// The power iteration's engine for `t` (n nodes, factors α, 1 − α, 1/n).
    #[doc(hidden)]
    fn power<'a>(
        &'a self, t: &'a Transition, n: usize, factors: [T; 3],
    ) -> Result<Box<dyn PowerEngine<T> + 'a>>;
}

/// A matrix the solvers run on, on its own backend (CG, BiCGSTAB, PageRank).
pub trait Solvable<T: Scalar> {
    /// The backend the solvers use for this matrix.
    fn backing(&self) -> Backing<'_, T>;
    /// A's stored entries, where known: on the host, right-hand sides solved together run in
    /// lock step only where A's rows are long enough for the block product to pay
    /// ([`solve_block`]).
    fn stored_entries(&self) -> Option<usize> {
        None
    }
}

/// Entries a row (mean) from which right-hand sides solved together on the host run in lock
/// step. Measured on the 2-core VM (CG, f64, docs/solve.md): 1.2–1.7× faster than one column
/// after another with 26 entries a row (`poisson3d:n=40|60,points=27`, k = 4, 8, 16), 0.8–1.0×
/// with 7 (`poisson3d:n=40`, `n=100`, k = 8): there the block product saves little over
/// single products of a cache-resident x, and k columns' vectors outgrow the caches that one
/// column's fit.
const HOST_LOCKSTEP_ROW: usize = 16;

/// Runs `method` on A·x = b on A's backend (see [`cg`] and [`bicgstab`]).
pub fn solve<T: Scalar, A: Solvable<T> + ?Sized>(
    a: &A, method: Method, b: &[T], m_inv: Option<&[T]>, settings: &KrylovSettings,
) -> Result<Solution<T>> {
    let job = match begin(shape(a), b, norm(a, b)?, m_inv, settings, method)? {
        Ok(job) => job,
        Err(trivial) => return Ok(trivial),
    };
    match a.backing() {
        // The whole solve on one of rayon's threads: each vector step then shares its work
        // without the caller blocking until a sleeping thread wakes (60–180 µs on a VM),
        // which cost small systems most of their time per iteration.
        Backing::Host(a) => rayon::scope(|_| run(&mut host_engine(a, &job), job)),
        Backing::Gpu(d) => {
            let mut engine = super::krylov_gpu::engine(d, &job)?;
            run(&mut engine, job)
        }
        Backing::Own(d) => d.krylov(job),
    }
}

/// Runs `method` on A·X = B for the k right-hand sides of `b` (k vectors of A's n rows, laid
/// out as `block` says) together, on A's backend: one solution per column, in order. On the
/// host and one GPU the k solves run in lock step, their products one block product A·X per
/// step ([`super::lockstep`]: the matrix read once per block of columns, not once per column),
/// each column with its own scalars, stop and iterations, so column j has the bits of
/// `solve(a, method, b_j, ..)` wherever the block product gives each column the single
/// product's bits (the formats' block kernels; CSR on the host). On the host only where A
/// has at least `HOST_LOCKSTEP_ROW` (16) entries a row (below, the columns run one after the
/// other, which measured faster); on a GPU only where the block product is the format's own
/// kernel (`DeviceMatrix::block_path`; else one after the other, each with its own bits);
/// over several GPUs the columns are solved one after the other. Each column is checked and answered as [`solve`] does (a zero column at once);
/// `m_inv` and `settings` are every column's.
pub fn solve_block<T: Scalar, A: Solvable<T> + ?Sized>(
    a: &A, method: Method, b: &[T], block: Block, m_inv: Option<&[T]>, settings: &KrylovSettings,
) -> Result<Vec<Solution<T>>> {
    check_right_hand_sides(shape(a).0, b.len(), block.k, block.k, method)?;
    solve_block_tols(a, method, b, block, &vec![settings.tol; block.k], m_inv, settings)
}

/// [`solve_block`] with each column's own tolerance: column j stops at ‖r_j‖/‖b_j‖ ≤
/// `tols[j]` (`settings.tol` is not used), as SciPy's `max(rtol·‖b‖, atol)` or a start from
/// an x0 of each column's ask.
pub fn solve_block_tols<T: Scalar, A: Solvable<T> + ?Sized>(
    a: &A, method: Method, b: &[T], block: Block, tols: &[f64], m_inv: Option<&[T]>,
    settings: &KrylovSettings,
) -> Result<Vec<Solution<T>>> {
    let (n, ncols) = shape(a);
    let k = block.k;
    check_right_hand_sides(n, b.len(), k, tols.len(), method)?;
    let columns = to_columns(b, n, k, block.layout);
    let each: Vec<KrylovSettings> =
        tols.iter().map(|&tol| KrylovSettings { tol, ..settings.clone() }).collect();
    let mut solutions: Vec<Option<Solution<T>>> = (0..k).map(|_| None).collect();
    let mut jobs = Vec::new();
    for (j, settings) in each.iter().enumerate() {
        let b = &columns[j * n..(j + 1) * n];
        match begin((n, ncols), b, norm(a, b)?, m_inv, settings, method)? {
            Ok(job) => jobs.push((j, job)),
            Err(trivial) => solutions[j] = Some(trivial),
        }
    }
    let (which, jobs): (Vec<usize>, Vec<Job<'_, T>>) = jobs.into_iter().unzip();
    let solved = match a.backing() {
        Backing::Host(host)
            if jobs.len() > 1
                && a.stored_entries().is_some_and(|e| e >= HOST_LOCKSTEP_ROW.saturating_mul(n)) =>
        {
            rayon::scope(|_| {
                run_lockstep(jobs.iter().map(|job| host_engine(host, job)).collect(), &jobs)
            })?
        }
        Backing::Gpu(d)
            if jobs.len() > 1 && super::krylov_gpu::lockstep_keeps_bits(d, jobs.len()) =>
        {
            run_lockstep(super::krylov_gpu::lockstep_engines(d, &jobs)?, &jobs)?
        }
        _ => jobs
            .into_iter()
            .map(|job| solve(a, method, job.b, m_inv, job.settings))
            .collect::<Result<_>>()?,
    };
    which.into_iter().zip(solved).for_each(|(j, solution)| solutions[j] = Some(solution));
    Ok(solutions.into_iter().map(|s| s.expect("every column answered")).collect())
}

/// The error for a block of `k` right-hand sides of a matrix of n rows that B's `entries`
/// or the `tols` given do not fit (at least one right-hand side).
fn check_right_hand_sides(
    n: usize, entries: usize, k: usize, tols: usize, method: Method,
) -> Result<()> {
    if k == 0 || n.checked_mul(k) != Some(entries) || tols != k {
        return Err(Error::Shape(format!(
            "{method:?} for {k} right-hand sides of a matrix of {n} rows needs B of {n}·{k} \
             entries and {k} tolerances (and at least one right-hand side); given {entries} \
             and {tols}"
        )));
    }
    Ok(())
}

/// (rows, columns) of A as its backend sees it.
fn shape<T: Scalar, A: Solvable<T> + ?Sized>(a: &A) -> (usize, usize) {
    match a.backing() {
        Backing::Host(h) => h.shape(),
        Backing::Gpu(d) => d.shape(),
        Backing::Own(d) => d.shape(),
    }
}

/// ‖b‖ as A's backend sums it.
fn norm<T: Scalar, A: Solvable<T> + ?Sized>(a: &A, b: &[T]) -> Result<f64> {
    Ok(match a.backing() {
        Backing::Own(d) => d.host_dot(b, b)?,
        Backing::Host(_) | Backing::Gpu(_) => dot(b, b),
    }
    .sqrt())
}

/// The host engine of `job` on `a`.
fn host_engine<'a, T: Scalar, A: LinearOperator<T, Vector = [T]> + ?Sized>(
    a: &'a A, job: &Job<'a, T>,
) -> HostEngine<'a, T, A> {
    let s = RefCell::new(initial_scalars(job.settings, job.bnorm, job.method));
    let (n, m_inv, settings, bnorm) = (job.b.len(), job.m_inv, job.settings, job.bnorm);
    HostEngine { a, n, m_inv, settings, bnorm, s, block: RefCell::default() }
}

/// Each method's entry point: [`solve`] with the method fixed, one signature for all.
macro_rules! method_entry_points {
    ($($(#[$doc:meta])* $name:ident = $method:ident;)+) => {$(
        $(#[$doc])*
        pub fn $name<T: Scalar, A: Solvable<T> + ?Sized>(
            a: &A,
            b: &[T],
            m_inv: Option<&[T]>,
            settings: &KrylovSettings,
        ) -> Result<Solution<T>> {
            solve(a, Method::$method, b, m_inv, settings)
        }
    )+};
}

method_entry_points! {
    /// Preconditioned conjugate gradients for a symmetric positive definite A (square, `b.len()`
    /// rows) on A's backend; `m_inv` is the preconditioner's diagonal ([`super::jacobi`]) or `None`.
    cg = Cg;
    /// Right-preconditioned BiCGSTAB (van der Vorst) for a general square A on A's backend,
    /// two products per iteration; `m_inv` as in [`cg`].
    bicgstab = Bicgstab;
    /// Preconditioned MINRES (Paige–Saunders) for a symmetric A, definite or indefinite, on A's
    /// backend, one product per iteration; `m_inv` as in [`cg`] but positive (a positive definite
    /// preconditioner). Its residual estimate is that of the recurrence, as CG's.
    minres = Minres;
    /// Restarted GMRES(m) (m = `settings.restart`) for a general square A on A's backend, right
    /// preconditioned by `m_inv` (as in [`cg`]), the Arnoldi basis orthogonalised by classical
    /// Gram–Schmidt twice; each cycle ends with the true residual b − A·x, the restart's test.
    gmres = Gmres;
}

/// A solve after its checks: what it runs, ‖b‖ and the clock.
#[doc(hidden)]
pub struct Job<'a, T> {
    pub method: Method,
    pub b: &'a [T],
    pub m_inv: Option<&'a [T]>,
    pub settings: &'a KrylovSettings,
    pub bnorm: f64,
    pub start: Instant,
}

/// The checks every backend shares (settings, precision, preconditioner length, a square A
/// of b's size); b = 0 (‖b‖ = `bnorm`), a non-finite b and an empty system are answered at
/// once, as `Err(the solution)`.
pub(crate) fn begin<'a, T: Scalar>(
    (nrows, ncols): (usize, usize), b: &'a [T], bnorm: f64, m_inv: Option<&'a [T]>,
    settings: &'a KrylovSettings, method: Method,
) -> Result<std::result::Result<Job<'a, T>, Solution<T>>> {
    let start = Instant::now();
    check_inputs(b, m_inv, settings)?;
    if let (Method::Minres, Some(d)) = (method, m_inv) {
        if let Some(r) = d.iter().position(|d| d.to_f64().is_nan() || d.to_f64() <= 0.0) {
            return Err(Error::Argument(format!(
                "MINRES needs a positive definite preconditioner; its inverse diagonal is {} at \
                 row {} (solve without one, or with GMRES)",
                d[r].to_f64(),
                r + 1
            )));
        }
    }
    let n = b.len();
    if nrows != n || ncols != n {
        return Err(Error::Shape(format!(
            "{method:?} needs a square matrix with b's {n} rows; this one is {nrows} x {ncols}"
        )));
    }
    if let Some(outcome) = trivial_outcome(bnorm).or((n == 0).then_some(Outcome::Converged)) {
        let true_residual = if bnorm.is_finite() { 0.0 } else { f64::NAN };
        return Ok(Err(Solution {
            x: vec![T::ZERO; n],
            outcome,
            iterations: 0,
            residual: true_residual,
            true_residual,
            ms: ms_since(start),
            iteration_ms: 0.0,
            graph: false,
        }));
    }
    Ok(Ok(Job { method, b, m_inv, settings, bnorm, start }))
}

/// The starting scalars of `method` (GMRES's with its arrays).
pub(crate) fn initial_scalars(settings: &KrylovSettings, bnorm: f64, method: Method) -> Vec<f64> {
    let mut s = vec![0.0; slot::SCALARS];
    s[slot::TOL2] = threshold(settings.tol, bnorm);
    s[slot::RR] = bnorm * bnorm;
    if method == Method::Gmres {
        let at = GmAt { m: settings.restart };
        s.resize(at.len(), 0.0);
        s[slot::GM_M] = at.m as f64;
        s[slot::GM_MAX_ITER] = settings.max_iter as f64;
        s[slot::GM_HNEXT] = bnorm;
        s[at.g(0)] = bnorm;
    }
    s
}

/// Runs the job's method on engine `e` (made after [`begin`]) and judges the result.
pub(crate) fn run<T: Scalar, E: Engine<T>>(e: &mut E, job: Job<'_, T>) -> Result<Solution<T>> {
    let Job { method, b, m_inv, settings, bnorm, .. } = job;
    let (x, stopped) = match method {
        Method::Cg => {
            let mut vs = cg_start(e, b, m_inv)?;
            let stopped = cg_iterate(&*e, &mut vs, settings)?;
            (vs.x, stopped)
        }
        Method::Bicgstab => {
            let mut vs = bi_start(e, b)?;
            let stopped = bi_iterate(&*e, &mut vs, settings)?;
            (vs.x, stopped)
        }
        Method::Minres => {
            let mut vs = mr_start(e, b, m_inv, bnorm)?;
            let stopped = mr_iterate(&*e, &mut vs, settings)?;
            (vs.x, stopped)
        }
        Method::Gmres => {
            let mut vs = gm_start(e, b, m_inv, settings)?;
            let stopped = gm_iterate(&*e, &mut vs, settings)?;
            (vs.x, stopped)
        }
    };
    // The true residual from one more product of the final x.
    let mut ax = e.vector(None)?;
    e.product(&x, &mut ax)?;
    let ax = e.download(&ax)?;
    let x = e.download(&x)?;
    judged(&job, stopped, x, ax, |r| e.host_dot(r, r))
}

/// The solution of `job` from its stop, its x and A·x (the true residual's product).
pub(crate) fn judged<T: Scalar>(
    job: &Job<'_, T>, stopped: Stopped, x: Vec<T>, mut ax: Vec<T>,
    host_dot: impl Fn(&[T]) -> Result<f64>,
) -> Result<Solution<T>> {
    let true_residual = relative_residual(job.b, &mut ax, job.bnorm, host_dot)?;
    let outcome = judge(
        stop_outcome(stopped.code, stopped.iterations, stopped.value),
        true_residual,
        job.settings.tol,
    );
    Ok(Solution {
        x,
        outcome,
        iterations: stopped.iterations,
        residual: stopped.rr.sqrt() / job.bnorm,
        true_residual,
        ms: ms_since(job.start),
        iteration_ms: stopped.iteration_ms,
        graph: stopped.graph,
    })
}

/// Conjugate gradients' start: z0 = M⁻¹·b and r·z0 on the host, once; x = 0, r = b, p0 = z0.
pub(crate) fn cg_start<T: Scalar, E: Engine<T>>(
    e: &mut E, b: &[T], m_inv: Option<&[T]>,
) -> Result<CgVectors<E::Vector>> {
    let z0 = preconditioned(m_inv, b);
    e.set_scalars(&[(slot::CG_RZ, e.host_dot(b, &z0)?)])?;
    Ok(CgVectors {
        x: e.vector(None)?,
        r: e.vector(Some(b))?,
        z: e.optional(Some(&z0))?,
        p: e.vector(Some(&z0))?,
        q: e.vector(None)?,
    })
}

/// Conjugate gradients: q = A·p, p·q (α), the update (x, r, z, r·z, r·r: β), the direction.
pub(crate) fn cg_iterate<T: Scalar, E: Engine<T>>(
    e: &E, vs: &mut CgVectors<E::Vector>, settings: &KrylovSettings,
) -> Result<Stopped> {
    e.run(
        &mut || {
            e.product(&vs.p, &mut vs.q)?;
            e.dots(&vs.p, &vs.q, &vs.q, Op::CgPq)?;
            e.cg_update(vs)?;
            e.cg_direction(vs)
        },
        Pace::of(settings),
    )
}

/// BiCGSTAB's start: ρ = r̂·r = b·b; β = ω = 0 with p = v = 0 make the first direction p = r.
pub(crate) fn bi_start<T: Scalar, E: Engine<T>>(
    e: &mut E, b: &[T],
) -> Result<BiVectors<E::Vector>> {
    e.set_scalars(&[(slot::BI_RHO, e.host_dot(b, b)?)])?;
    Ok(BiVectors {
        x: e.vector(None)?,
        r: e.vector(Some(b))?,
        r_hat: e.vector(Some(b))?,
        p: e.vector(None)?,
        v: e.vector(None)?,
        t: e.vector(None)?,
        p_hat: e.optional(None)?,
        s_hat: e.optional(None)?,
    })
}

/// BiCGSTAB: the direction (p, p̂), v = A·p̂, r̂·v (α), s (in r) and ŝ, t = A·ŝ, t·t and t·s
/// (ω), the update (x, r, r̂·r, r·r: β).
pub(crate) fn bi_iterate<T: Scalar, E: Engine<T>>(
    e: &E, vs: &mut BiVectors<E::Vector>, settings: &KrylovSettings,
) -> Result<Stopped> {
    let preconditioned = e.preconditioned();
    e.run(
        &mut || {
            e.bi_direction(vs)?;
            e.product(if preconditioned { &vs.p_hat } else { &vs.p }, &mut vs.v)?;
            e.dots(&vs.r_hat, &vs.v, &vs.v, Op::BiRv)?;
            e.bi_s(vs)?;
            e.product(if preconditioned { &vs.s_hat } else { &vs.r }, &mut vs.t)?;
            e.dots(&vs.t, &vs.t, &vs.r, Op::BiOmega)?;
            e.bi_update(vs)
        },
        Pace::of(settings),
    )
}

/// MINRES's start: β₁ = √(b·M⁻¹b), v = M⁻¹b/β₁, r1 = r2 = b on the host, once.
pub(crate) fn mr_start<T: Scalar, E: Engine<T>>(
    e: &mut E, b: &[T], m_inv: Option<&[T]>, bnorm: f64,
) -> Result<MrVectors<E::Vector>> {
    let y0 = preconditioned(m_inv, b);
    let beta1 = e.host_dot(b, &y0)?.sqrt();
    let v0: Vec<T> = y0.iter().map(|&y| T::from_f64(y.to_f64() / beta1)).collect();
    e.set_scalars(&[
        (slot::MR_BETA, beta1),
        (slot::MR_PHIBAR, beta1),
        (slot::MR_CS, -1.0),
        (slot::MR_SCALE, bnorm / beta1),
    ])?;
    Ok(MrVectors {
        x: e.vector(None)?,
        v: e.vector(Some(&v0))?,
        q: e.vector(None)?,
        r1: e.vector(Some(b))?,
        r2: e.vector(Some(b))?,
        y: e.optional(Some(&y0))?,
        w1: e.vector(None)?,
        w2: e.vector(None)?,
    })
}

/// MINRES: q = A·v, the Lanczos step's α (v·q) and β' (‖r2‖ in M⁻¹'s norm) with the QR
/// factor's rotation, then the update (directions, x, the next v) and the residual's test.
pub(crate) fn mr_iterate<T: Scalar, E: Engine<T>>(
    e: &E, vs: &mut MrVectors<E::Vector>, settings: &KrylovSettings,
) -> Result<Stopped> {
    e.run(
        &mut || {
            e.product(&vs.v, &mut vs.q)?;
            e.mr_alpha(vs)?;
            e.mr_beta(vs)?;
            e.mr_update(vs)
        },
        Pace::of(settings),
    )
}

/// GMRES's start: v_0 = b and z = M⁻¹·b, as a restart from x = 0 leaves them (v_0 is
/// normalised by the first step, h = ‖b‖ in the starting scalars), and the basis made
/// addressable.
pub(crate) fn gm_start<T: Scalar, E: Engine<T>>(
    e: &mut E, b: &[T], m_inv: Option<&[T]>, settings: &KrylovSettings,
) -> Result<GmVectors<E::Vector>> {
    let mut basis = vec![e.vector(Some(b))?];
    for _ in 0..settings.restart {
        basis.push(e.vector(None)?);
    }
    let z = e.optional(Some(&preconditioned(m_inv, b)))?;
    let vs = GmVectors { x: e.vector(None)?, b: e.vector(Some(b))?, basis, z };
    e.gm_basis(&vs)?;
    Ok(vs)
}

/// GMRES(m): a launch is a cycle of m Arnoldi steps (v_{j+1} = A·M⁻¹·v_j, CGS2 against the
/// basis, the rotations; steps after the cycle is done do nothing), then x += M⁻¹·V·y, the
/// true residual b − A·x and the restart.
pub(crate) fn gm_iterate<T: Scalar, E: Engine<T>>(
    e: &E, vs: &mut GmVectors<E::Vector>, settings: &KrylovSettings,
) -> Result<Stopped> {
    let m = settings.restart;
    let preconditioned = e.preconditioned();
    // Each cycle has at least one Arnoldi step, and max_iter steps stop the solve (LIMIT).
    let pace = Pace { launches: settings.max_iter, check_every: settings.check_every.div_ceil(m) };
    let mut stopped = e.run(
        &mut || {
            for j in 0..m {
                if e.cycle_done() {
                    break;
                }
                let (lower, upper) = vs.basis.split_at_mut(j + 1);
                e.product(if preconditioned { &vs.z } else { &lower[j] }, &mut upper[0])?;
                if !e.gm_fused(vs, j)? {
                    e.gm_dots(vs, j)?;
                    e.gm_subtract(vs, j, false)?;
                    e.gm_subtract(vs, j, true)?;
                }
            }
            e.gm_update(vs)?;
            e.product(&vs.x, &mut vs.basis[0])?;
            e.gm_restart(vs)
        },
        pace,
    )?;
    // Time per Arnoldi step, not per cycle.
    stopped.iteration_ms *= stopped.launched as f64 / stopped.iterations.max(1) as f64;
    Ok(stopped)
}

/// The host handles solve on the host.
impl<T: Scalar> Solvable<T> for crate::HostMatrix<T> {
    fn stored_entries(&self) -> Option<usize> {
        Some(crate::FormatHandle::nnz(self))
    }
    fn backing(&self) -> Backing<'_, T> {
        Backing::Host(self)
    }
}

/// A plain CSR solves on the host.
impl<T: Scalar> Solvable<T> for crate::Csr<T> {
    fn stored_entries(&self) -> Option<usize> {
        Some(self.nnz())
    }
    fn backing(&self) -> Backing<'_, T> {
        Backing::Host(self)
    }
}

/// The front door solves on its backend.
impl<T: Scalar> Solvable<T> for crate::Operator<T> {
    fn stored_entries(&self) -> Option<usize> {
        Some(crate::FormatHandle::nnz(self))
    }
    fn backing(&self) -> Backing<'_, T> {
        match (self.device_matrix(), self.host_matrix()) {
            (Some(device), _) => Backing::Gpu(device),
            (None, Some(host)) => Backing::Host(host),
            (None, None) => unreachable!("an operator is on the host or on a GPU"),
        }
    }
}
