//! Krylov solvers for A·x = b on the host: conjugate gradients ([`cg_host`], symmetric positive
//! definite A) and BiCGSTAB ([`bicgstab_host`], general A), over any [`HostOperator`] (any
//! format's CPU path, a plain CSR), f64 or f32, optionally preconditioned by the inverse
//! diagonal ([`jacobi`]). They are the reference of the GPU solvers to come (issue 15).
//!
//! Every run starts from x = 0 and stops when the recurrence's residual ‖r‖/‖b‖ reaches the
//! tolerance (tested every `check_every` iterations, as the GPU will read a scalar back only
//! that often) or after `max_iter` iterations. The result says what happened
//! ([`Outcome`]): converged, not converged, a breakdown (naming the quantity that vanished),
//! non-finite values, or a recurrence that reached the tolerance while the true residual
//! ‖b − A·x‖/‖b‖, recomputed at the end, did not. A breakdown or NaN is never returned as a
//! solution that looks fine.
//!
//! Vectors are stored in T; scalars and dot products are f64. Dot products are summed per
//! chunk of [`CHUNK`] entries and the chunks in order, so a run gives the same bits on any
//! number of threads.

use std::time::Instant;

use rayon::prelude::*;

use super::HostOperator;
use crate::error::{Error, Result};
use crate::matrix::{Csr, Precision, Scalar};

/// Entries per partial sum of a dot product (fixed: the sums do not depend on the threads).
pub const CHUNK: usize = 4096;

/// When to stop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KrylovSettings {
    /// Relative residual ‖r‖/‖b‖ to reach (> 0).
    pub tol: f64,
    /// Iterations at most (≥ 1).
    pub max_iter: usize,
    /// The residual is tested every this many iterations (≥ 1), and at the last one.
    pub check_every: usize,
}

impl Default for KrylovSettings {
    fn default() -> Self {
        KrylovSettings { tol: 1e-8, max_iter: 10_000, check_every: 1 }
    }
}

impl KrylovSettings {
    pub fn validate(&self) -> Result<()> {
        if !(self.tol > 0.0 && self.tol.is_finite()) {
            return Err(Error::Unsupported(format!("tolerance {} must be a positive finite number", self.tol)));
        }
        if self.max_iter == 0 || self.check_every == 0 {
            return Err(Error::Unsupported("max_iter and check_every must be ≥ 1".into()));
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
    /// A NaN or infinity appeared (in A, b, or the iteration).
    NonFinite,
    /// The recurrence reached the tolerance but the true residual ‖b − A·x‖/‖b‖ is above
    /// 10·tol (accuracy lost to rounding: ask less of this precision).
    InaccurateResidual,
}

/// What a solve returns.
#[derive(Clone, Debug)]
pub struct Solution<T> {
    pub x: Vec<T>,
    pub outcome: Outcome,
    pub iterations: usize,
    /// ‖r‖/‖b‖ of the recurrence at the last test.
    pub residual: f64,
    /// ‖b − A·x‖/‖b‖, recomputed at the end.
    pub true_residual: f64,
    /// Wall time of the solve in milliseconds.
    pub ms: f64,
}

impl<T> Solution<T> {
    pub fn converged(&self) -> bool {
        self.outcome == Outcome::Converged
    }
}

/// The inverse of A's diagonal (Jacobi preconditioner); an error names the first row whose
/// diagonal entry is missing, zero or not finite.
pub fn jacobi<T: Scalar>(a: &Csr<T>) -> Result<Vec<T>> {
    if a.nrows() != a.ncols() {
        return Err(Error::Shape(format!("Jacobi needs a square matrix, this one is {} x {}", a.nrows(), a.ncols())));
    }
    let inverse: Vec<Option<T>> = (0..a.nrows())
        .into_par_iter()
        .map(|r| {
            let (cols, vals) = a.row(r);
            let d = cols.iter().zip(vals).filter(|(&c, _)| c as usize == r).map(|(_, v)| v.to_f64()).sum::<f64>();
            (d != 0.0 && d.is_finite()).then(|| T::from_f64(1.0 / d))
        })
        .collect();
    match inverse.iter().position(Option::is_none) {
        Some(r) => Err(Error::Unsupported(format!("Jacobi: row {} has a zero, missing or non-finite diagonal entry", r + 1))),
        None => Ok(inverse.into_iter().flatten().collect()),
    }
}

fn dot<T: Scalar>(a: &[T], b: &[T]) -> f64 {
    let partial: Vec<f64> =
        a.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)).map(|(x, y)| x.iter().zip(y).map(|(p, q)| p.to_f64() * q.to_f64()).sum()).collect();
    partial.iter().sum()
}

fn norm<T: Scalar>(a: &[T]) -> f64 {
    dot(a, a).sqrt()
}

/// y = x + α·y (in place on y).
fn xpay<T: Scalar>(x: &[T], alpha: f64, y: &mut [T]) {
    y.par_iter_mut().zip(x).for_each(|(y, &x)| *y = T::from_f64(x.to_f64() + alpha * y.to_f64()));
}

/// y += α·x.
fn axpy<T: Scalar>(alpha: f64, x: &[T], y: &mut [T]) {
    y.par_iter_mut().zip(x).for_each(|(y, &x)| *y = T::from_f64(y.to_f64() + alpha * x.to_f64()));
}

/// z = M⁻¹·r (a copy without a preconditioner).
fn precondition<T: Scalar>(m_inv: Option<&[T]>, r: &[T], z: &mut [T]) {
    match m_inv {
        None => z.copy_from_slice(r),
        Some(d) => z.par_iter_mut().zip(r).zip(d).for_each(|((z, &r), &d)| *z = T::from_f64(r.to_f64() * d.to_f64())),
    }
}

/// Checks the inputs shared by both methods; returns ‖b‖.
fn check_inputs<T: Scalar>(b: &[T], m_inv: Option<&[T]>, settings: &KrylovSettings) -> Result<f64> {
    settings.validate()?;
    if T::PRECISION == Precision::F16 {
        return Err(Error::Unsupported("the solvers run in f64 and f32".into()));
    }
    if let Some(d) = m_inv {
        if d.len() != b.len() {
            return Err(Error::Shape(format!("preconditioner of length {} for a right-hand side of length {}", d.len(), b.len())));
        }
    }
    Ok(norm(b))
}

/// What every exit of a solve needs to build its result.
struct Run<'a, T, Op: ?Sized> {
    a: &'a Op,
    b: &'a [T],
    bnorm: f64,
    tol: f64,
    start: Instant,
}

impl<T: Scalar, Op: HostOperator<T> + ?Sized> Run<'_, T, Op> {
    /// The result: the true residual recomputed, and a converged recurrence that the true
    /// residual contradicts reported as such.
    fn finish(&self, x: Vec<T>, mut outcome: Outcome, iterations: usize, residual: f64) -> Result<Solution<T>> {
        let mut r = vec![T::ZERO; self.b.len()];
        self.a.apply(&x, &mut r)?;
        r.par_iter_mut().zip(self.b).for_each(|(r, &b)| *r = T::from_f64(b.to_f64() - r.to_f64()));
        let true_residual = if self.bnorm == 0.0 { norm(&r) } else { norm(&r) / self.bnorm };
        if outcome == Outcome::Converged && !true_residual.is_finite() {
            outcome = Outcome::NonFinite;
        } else if outcome == Outcome::Converged && true_residual > 10.0 * self.tol {
            outcome = Outcome::InaccurateResidual;
        }
        Ok(Solution { x, outcome, iterations, residual, true_residual, ms: self.start.elapsed().as_secs_f64() * 1e3 })
    }
}

/// Preconditioned conjugate gradients for a symmetric positive definite A (square, `b.len()`
/// rows); `m_inv` is the preconditioner's diagonal ([`jacobi`]) or `None`.
pub fn cg_host<T: Scalar, Op: HostOperator<T> + ?Sized>(
    a: &Op,
    b: &[T],
    m_inv: Option<&[T]>,
    settings: &KrylovSettings,
) -> Result<Solution<T>> {
    let start = Instant::now();
    let bnorm = check_inputs(b, m_inv, settings)?;
    let run = Run { a, b, bnorm, tol: settings.tol, start };
    let n = b.len();
    let mut x = vec![T::ZERO; n];
    if bnorm == 0.0 {
        return run.finish(x, Outcome::Converged, 0, 0.0);
    }
    if !bnorm.is_finite() {
        return run.finish(x, Outcome::NonFinite, 0, f64::NAN);
    }
    let mut r = b.to_vec();
    let mut z = vec![T::ZERO; n];
    precondition(m_inv, &r, &mut z);
    let mut p = z.clone();
    let mut q = vec![T::ZERO; n];
    let mut rz = dot(&r, &z);
    let mut residual = 1.0;
    for k in 1..=settings.max_iter {
        a.apply(&p, &mut q)?;
        let pq = dot(&p, &q);
        if !pq.is_finite() || !rz.is_finite() {
            return run.finish(x, Outcome::NonFinite, k, f64::NAN);
        }
        if pq <= 0.0 {
            let why = format!("p·A·p = {pq:e} ≤ 0 at iteration {k}: the matrix is not positive definite");
            return run.finish(x, Outcome::Breakdown(why), k, residual);
        }
        let alpha = rz / pq;
        axpy(alpha, &p, &mut x);
        axpy(-alpha, &q, &mut r);
        if k % settings.check_every == 0 || k == settings.max_iter {
            residual = norm(&r) / bnorm;
            if !residual.is_finite() {
                return run.finish(x, Outcome::NonFinite, k, residual);
            }
            if residual <= settings.tol {
                return run.finish(x, Outcome::Converged, k, residual);
            }
        }
        precondition(m_inv, &r, &mut z);
        let rz_next = dot(&r, &z);
        if rz_next == 0.0 {
            // r = 0 exactly (converged between tests), or M⁻¹ annihilated it.
            residual = norm(&r) / bnorm;
            let outcome = if residual <= settings.tol { Outcome::Converged } else { Outcome::Breakdown(format!("r·M⁻¹r = 0 at iteration {k}")) };
            return run.finish(x, outcome, k, residual);
        }
        xpay(&z, rz_next / rz, &mut p);
        rz = rz_next;
    }
    run.finish(x, Outcome::NotConverged, settings.max_iter, residual)
}

/// Right-preconditioned BiCGSTAB (van der Vorst) for a general square A; `m_inv` as in
/// [`cg_host`].
pub fn bicgstab_host<T: Scalar, Op: HostOperator<T> + ?Sized>(
    a: &Op,
    b: &[T],
    m_inv: Option<&[T]>,
    settings: &KrylovSettings,
) -> Result<Solution<T>> {
    let start = Instant::now();
    let bnorm = check_inputs(b, m_inv, settings)?;
    let run = Run { a, b, bnorm, tol: settings.tol, start };
    let n = b.len();
    let mut x = vec![T::ZERO; n];
    if bnorm == 0.0 {
        return run.finish(x, Outcome::Converged, 0, 0.0);
    }
    if !bnorm.is_finite() {
        return run.finish(x, Outcome::NonFinite, 0, f64::NAN);
    }
    let mut r = b.to_vec();
    let r_hat = b.to_vec();
    let (mut p, mut v) = (vec![T::ZERO; n], vec![T::ZERO; n]);
    let (mut p_hat, mut s_hat, mut t) = (vec![T::ZERO; n], vec![T::ZERO; n], vec![T::ZERO; n]);
    let (mut rho, mut alpha, mut omega) = (1.0f64, 1.0f64, 1.0f64);
    let mut residual = 1.0;
    let breakdown = |what: &str, k: usize| Outcome::Breakdown(format!("{what} = 0 at iteration {k}"));
    for k in 1..=settings.max_iter {
        let rho_next = dot(&r_hat, &r);
        if !rho_next.is_finite() {
            return run.finish(x, Outcome::NonFinite, k, f64::NAN);
        }
        if rho_next == 0.0 {
            return run.finish(x, breakdown("ρ = r̂·r", k), k, residual);
        }
        if k == 1 {
            p.copy_from_slice(&r);
        } else {
            // p = r + β·(p − ω·v)
            let beta = (rho_next / rho) * (alpha / omega);
            p.par_iter_mut().zip(&r).zip(&v).for_each(|((p, &r), &v)| {
                *p = T::from_f64(r.to_f64() + beta * (p.to_f64() - omega * v.to_f64()));
            });
        }
        precondition(m_inv, &p, &mut p_hat);
        a.apply(&p_hat, &mut v)?;
        let rv = dot(&r_hat, &v);
        if !rv.is_finite() {
            return run.finish(x, Outcome::NonFinite, k, f64::NAN);
        }
        if rv == 0.0 {
            return run.finish(x, breakdown("r̂·v", k), k, residual);
        }
        alpha = rho_next / rv;
        // s = r − α·v, in r's storage.
        axpy(-alpha, &v, &mut r);
        let s_norm = norm(&r) / bnorm;
        if s_norm <= settings.tol {
            axpy(alpha, &p_hat, &mut x);
            return run.finish(x, Outcome::Converged, k, s_norm);
        }
        precondition(m_inv, &r, &mut s_hat);
        a.apply(&s_hat, &mut t)?;
        let tt = dot(&t, &t);
        if !tt.is_finite() {
            return run.finish(x, Outcome::NonFinite, k, f64::NAN);
        }
        if tt == 0.0 {
            return run.finish(x, breakdown("t·t", k), k, s_norm);
        }
        omega = dot(&t, &r) / tt;
        axpy(alpha, &p_hat, &mut x);
        axpy(omega, &s_hat, &mut x);
        axpy(-omega, &t, &mut r);
        if k % settings.check_every == 0 || k == settings.max_iter {
            residual = norm(&r) / bnorm;
            if !residual.is_finite() {
                return run.finish(x, Outcome::NonFinite, k, residual);
            }
            if residual <= settings.tol {
                return run.finish(x, Outcome::Converged, k, residual);
            }
        }
        if omega == 0.0 {
            return run.finish(x, breakdown("ω", k), k, residual);
        }
        rho = rho_next;
    }
    run.finish(x, Outcome::NotConverged, settings.max_iter, residual)
}

