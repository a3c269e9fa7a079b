//! Krylov solvers for A·x = b on the host: conjugate gradients ([`cg_host`], symmetric positive
//! definite A) and BiCGSTAB ([`bicgstab_host`], general A), over any [`HostOperator`] (any
//! format's CPU path, a plain CSR), f64 or f32, optionally preconditioned by the inverse
//! diagonal ([`jacobi`]). They are the reference of the GPU solver [`cg_gpu`], which runs CG
//! with the whole iteration on the device (krylov.cu; BiCGSTAB on the GPU and CUDA graphs
//! are still to come).
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

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::HostOperator;
use crate::error::{Error, Result};
use crate::formats::{DeviceMatrix, FormatHandle};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Precision, Scalar};

/// The GPU solvers' vector kernels.
pub const KERNELS: KernelModule = KernelModule { name: "krylov", source: include_str!("krylov.cu"), headers: &[] };
/// Threads per block of the vector kernels and of the final reductions (krylov.cu).
const BLOCK: u32 = 256;
const FINISH_BLOCK: u32 = 1024;
/// Blocks of the vector kernels at most (a fixed grid per n: fixed-order sums).
const MAX_BLOCKS: usize = 1024;
/// Indices of the device scalars (krylov.cu).
const RZ: usize = 0;
const RR: usize = 4;
const STATUS: usize = 5;
const STATUS_ITER: usize = 6;
const SCALARS: usize = 8;

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

impl<'a, T: Scalar, Op: HostOperator<T> + ?Sized> Run<'a, T, Op> {
    /// Checks the inputs and starts the clock; b = 0 (x = 0) and a non-finite b are answered
    /// at once, as `Err(the solution)`.
    fn begin(a: &'a Op, b: &'a [T], m_inv: Option<&[T]>, settings: &KrylovSettings) -> Result<std::result::Result<Self, Solution<T>>> {
        let start = Instant::now();
        let bnorm = check_inputs(b, m_inv, settings)?;
        let run = Run { a, b, bnorm, tol: settings.tol, start };
        let x = vec![T::ZERO; b.len()];
        Ok(if bnorm == 0.0 {
            Err(run.finish(x, Outcome::Converged, 0, 0.0)?)
        } else if !bnorm.is_finite() {
            Err(run.finish(x, Outcome::NonFinite, 0, f64::NAN)?)
        } else {
            Ok(run)
        })
    }

    /// The result: the true residual recomputed, and a converged recurrence that the true
    /// residual contradicts reported as such.
    fn finish(&self, x: Vec<T>, outcome: Outcome, iterations: usize, residual: f64) -> Result<Solution<T>> {
        let mut r = vec![T::ZERO; self.b.len()];
        self.a.apply(&x, &mut r)?;
        r.par_iter_mut().zip(self.b).for_each(|(r, &b)| *r = T::from_f64(b.to_f64() - r.to_f64()));
        let true_residual = if self.bnorm == 0.0 { norm(&r) } else { norm(&r) / self.bnorm };
        let outcome = judge(outcome, true_residual, self.tol);
        Ok(Solution { x, outcome, iterations, residual, true_residual, ms: self.start.elapsed().as_secs_f64() * 1e3 })
    }
}

/// A converged recurrence that the true residual contradicts is reported as such.
fn judge(outcome: Outcome, true_residual: f64, tol: f64) -> Outcome {
    match outcome {
        Outcome::Converged if !true_residual.is_finite() => Outcome::NonFinite,
        Outcome::Converged if true_residual > 10.0 * tol => Outcome::InaccurateResidual,
        other => other,
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
    let run = match Run::begin(a, b, m_inv, settings)? {
        Ok(run) => run,
        Err(trivial) => return Ok(trivial),
    };
    let (n, bnorm) = (b.len(), run.bnorm);
    let mut x = vec![T::ZERO; n];
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
    let run = match Run::begin(a, b, m_inv, settings)? {
        Ok(run) => run,
        Err(trivial) => return Ok(trivial),
    };
    let (n, bnorm) = (b.len(), run.bnorm);
    let mut x = vec![T::ZERO; n];
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


/// CG on the GPU with `a` uploaded in any format (square; `b.len()` rows): the iteration stays
/// on the device, scalars included, and the host reads three scalars every
/// `settings.check_every` iterations. The result is judged as [`cg_host`]'s (the true residual
/// recomputed with one more product). Dot products are summed in f64 in a fixed order, so a
/// deterministic format gives the same bits in every run.
pub fn cg_gpu<T: Scalar>(a: &DeviceMatrix<T>, b: &[T], m_inv: Option<&[T]>, settings: &KrylovSettings) -> Result<Solution<T>> {
    let start = Instant::now();
    let bnorm = check_inputs(b, m_inv, settings)?;
    let n = b.len();
    if a.nrows() != n || a.ncols() != n {
        return Err(Error::Shape(format!("CG needs a square matrix with b's {n} rows; this one is {} x {}", a.nrows(), a.ncols())));
    }
    let n32 = u32::try_from(n).map_err(|_| Error::Unsupported(format!("CG on the GPU: {n} rows exceed 32-bit indices")))?;
    let gpu = &**a.gpu();
    let x_dev: CudaSlice<T> = gpu.alloc(n.max(1))?;
    let true_residual = |x_dev: &CudaSlice<T>| -> Result<f64> {
        let mut ax = gpu.alloc::<T>(n)?;
        a.spmv(x_dev, &mut ax)?;
        let ax = gpu.download(&ax)?;
        let r: f64 = ax.iter().zip(b).map(|(ax, b)| (b.to_f64() - ax.to_f64()).powi(2)).sum::<f64>().sqrt();
        Ok(if bnorm == 0.0 { r } else { r / bnorm })
    };
    let solution = |x_dev: &CudaSlice<T>, outcome: Outcome, iterations: usize, residual: f64| -> Result<Solution<T>> {
        let true_residual = if n == 0 { 0.0 } else { true_residual(x_dev)? };
        let mut x = gpu.download(x_dev)?;
        x.truncate(n);
        let outcome = judge(outcome, true_residual, settings.tol);
        Ok(Solution { x, outcome, iterations, residual, true_residual, ms: start.elapsed().as_secs_f64() * 1e3 })
    };
    if bnorm == 0.0 || n == 0 {
        return solution(&x_dev, Outcome::Converged, 0, 0.0);
    }
    if !bnorm.is_finite() {
        return solution(&x_dev, Outcome::NonFinite, 0, f64::NAN);
    }
    let (mut x_dev, mut r) = (x_dev, gpu.upload(b)?);
    // z0 = M⁻¹·b and rz0 on the host (once); p0 = z0.
    let mut z_host = vec![T::ZERO; n];
    precondition(m_inv, b, &mut z_host);
    let mut scalars = [0.0f64; SCALARS];
    scalars[RZ] = dot(b, &z_host);
    let mut s_dev = gpu.upload(&scalars)?;
    let mut z = gpu.upload(&z_host)?;
    let mut p = gpu.upload(&z_host)?;
    let mut q: CudaSlice<T> = gpu.alloc(n)?;
    let d = match m_inv {
        Some(d) => gpu.upload(d)?,
        None => gpu.alloc(1)?,
    };
    let use_d = m_inv.is_some() as u32;
    let blocks = n.div_ceil(BLOCK as usize).clamp(1, MAX_BLOCKS);
    let blocks32 = blocks as u32;
    let mut partial: CudaSlice<f64> = gpu.alloc(2 * blocks)?;
    let dot2 = gpu.function(&KERNELS, &format!("kr_dot2_{}", T::SUFFIX))?;
    let update = gpu.function(&KERNELS, &format!("kr_cg_update_{}", T::SUFFIX))?;
    let direction = gpu.function(&KERNELS, &format!("kr_cg_direction_{}", T::SUFFIX))?;
    let finish = gpu.function(&KERNELS, "kr_finish_kernel")?;
    let vector = LaunchConfig { grid_dim: (blocks32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
    let single = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (FINISH_BLOCK, 1, 1), shared_mem_bytes: 0 };
    let mut residual = 1.0;
    for k in 1..=settings.max_iter {
        a.spmv(&p, &mut q)?;
        let k32 = k as u32;
        // SAFETY (the five launches): the arguments match the kernels of krylov.cu; every
        // vector holds n = n32 elements (d one element when unused, never read then), partial
        // 2·blocks, s SCALARS; the grid is `blocks` blocks of BLOCK threads (grid-stride loops
        // below n; block b writes partial[2b], partial[2b + 1]) and the finish kernel one block
        // of FINISH_BLOCK threads, as the kernels' shared arrays assume.
        unsafe {
            gpu.stream().launch_builder(&dot2).arg(&n32).arg(&p).arg(&q).arg(&mut partial).launch(vector)?;
            gpu.stream().launch_builder(&finish).arg(&blocks32).arg(&partial).arg(&0u32).arg(&k32).arg(&mut s_dev).launch(single)?;
            gpu.stream()
                .launch_builder(&update)
                .arg(&n32)
                .arg(&s_dev)
                .arg(&p)
                .arg(&q)
                .arg(&d)
                .arg(&use_d)
                .arg(&mut x_dev)
                .arg(&mut r)
                .arg(&mut z)
                .arg(&mut partial)
                .launch(vector)?;
            gpu.stream().launch_builder(&finish).arg(&blocks32).arg(&partial).arg(&1u32).arg(&k32).arg(&mut s_dev).launch(single)?;
            gpu.stream().launch_builder(&direction).arg(&n32).arg(&s_dev).arg(&z).arg(&mut p).launch(vector)?;
        }
        if k % settings.check_every == 0 || k == settings.max_iter {
            let s = gpu.download(&s_dev)?;
            residual = s[RR].sqrt() / bnorm;
            let at = s[STATUS_ITER] as usize;
            let outcome = match s[STATUS] as u32 {
                0 if !residual.is_finite() => Some((Outcome::NonFinite, k)),
                0 if residual <= settings.tol => Some((Outcome::Converged, k)),
                0 => None,
                1 => Some((Outcome::Breakdown(format!("p·A·p = {:e} ≤ 0 at iteration {at}: the matrix is not positive definite", s[1])), at)),
                2 => Some((Outcome::NonFinite, at)),
                3 => Some((Outcome::Breakdown(format!("r·M⁻¹r = 0 at iteration {at}")), at)),
                _ => Some((Outcome::Converged, at)), // r = 0 exactly
            };
            if let Some((outcome, iterations)) = outcome {
                return solution(&x_dev, outcome, iterations, residual);
            }
        }
    }
    solution(&x_dev, Outcome::NotConverged, settings.max_iter, residual)
}
