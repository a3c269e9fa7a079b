//! Conjugate gradients on a [`DistributedMatrix`]: the product through the halo exchange,
//! the vector updates on each part's own entries on its own GPU (x, r and r·r in one pass,
//! as the one-GPU CG does), and the two dot products of an iteration summed per part
//! (vectors.cu: a fixed order) and over the parts in part order on the host. Each dot is one
//! read-back per part, so an iteration waits for its GPUs twice;
//! the iterates are the same bits run after run (module doc of [`super`] on how they relate
//! to the one-GPU CG).

use std::time::Instant;

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, PushKernelArg};

use super::{DistVector, DistributedMatrix, KERNELS};
use crate::error::{Error, Result};
use crate::gpu::{grid_stride, Gpu, Kernel};
use crate::matrix::{Precision, Scalar};
use crate::solve::krylov::{KrylovSettings, Outcome, Solution};

/// Blocks of the dot kernel (DIST_THREADS = 256 threads each): a fixed grid, so the order of
/// every sum depends on the length only.
const DOT_BLOCKS: u32 = 1024;

/// One part's kernels and the buffer of its dot's block sums.
struct PartKernels {
    dot: Kernel,
    cg_update: Kernel,
    xpby: Kernel,
    partial: CudaSlice<f64>,
}

impl PartKernels {
    fn new<T: Scalar>(gpu: &Gpu) -> Result<Self> {
        let dot_grid = cudarc::driver::LaunchConfig {
            grid_dim: (DOT_BLOCKS, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        Ok(PartKernels {
            dot: Kernel::new(gpu, &KERNELS, &format!("dist_dot_{}", T::SUFFIX), dot_grid)?,
            cg_update: Kernel::new(
                gpu,
                &KERNELS,
                &format!("dist_cg_update_{}", T::SUFFIX),
                dot_grid,
            )?,
            xpby: Kernel::new(gpu, &KERNELS, &format!("dist_xpby_{}", T::SUFFIX), grid_stride(1))?,
            partial: gpu.alloc::<f64>(DOT_BLOCKS as usize)?,
        })
    }
}

/// The own entries of part `i` of `v`.
fn own<'a, T: Scalar>(a: &DistributedMatrix<T>, v: &'a DistVector<T>, i: usize) -> CudaView<'a, T> {
    let p = &a.parts[i];
    let at = if v.halo { p.own_offset } else { 0 };
    v.parts[i].slice(at..at + p.rows.len())
}

fn own_mut<'a, T: Scalar>(
    a: &DistributedMatrix<T>,
    v: &'a mut DistVector<T>,
    i: usize,
) -> CudaViewMut<'a, T> {
    let p = &a.parts[i];
    let at = if v.halo { p.own_offset } else { 0 };
    v.parts[i].slice_mut(at..at + p.rows.len())
}

/// Σ over parts (in part order) of Σ over blocks (in block order) of u·v.
fn dot<T: Scalar>(
    a: &DistributedMatrix<T>,
    k: &mut [PartKernels],
    u: &DistVector<T>,
    v: &DistVector<T>,
) -> Result<f64> {
    for (i, p) in a.parts.iter().enumerate().filter(|(_, p)| !p.rows.is_empty()) {
        let (uo, vo, n) = (own(a, u, i), own(a, v, i), p.rows.len() as u64);
        let kk = &mut k[i];
        // SAFETY: dist_dot_T(u64 n, const T* a, const T* b, double* partial): both views hold
        // n entries, partial DOT_BLOCKS (the kernel's grid); the loop stays below n.
        unsafe {
            kk.dot.launch(&p.gpu, |l| {
                l.arg(&n).arg(&uo).arg(&vo).arg(&mut kk.partial);
            })?
        };
    }
    block_sums(a, k)
}

/// Σ over parts (in part order) of Σ over blocks (in block order) of the partial sums the
/// last dot or CG update left (waits for each part).
fn block_sums<T: Scalar>(a: &DistributedMatrix<T>, k: &[PartKernels]) -> Result<f64> {
    let mut total = 0.0;
    for (i, p) in a.parts.iter().enumerate().filter(|(_, p)| !p.rows.is_empty()) {
        total += p.gpu.download(&k[i].partial)?.iter().sum::<f64>();
    }
    Ok(total)
}

/// CG's `x += α·p`, `r −= α·q` and `r·r`, in one pass per part (vectors.cu).
fn cg_update<T: Scalar>(
    a: &DistributedMatrix<T>,
    k: &mut [PartKernels],
    alpha: f64,
    (p, q): (&DistVector<T>, &DistVector<T>),
    x: &mut DistVector<T>,
    r: &mut DistVector<T>,
) -> Result<f64> {
    for (i, part) in a.parts.iter().enumerate().filter(|(_, p)| !p.rows.is_empty()) {
        let n = part.rows.len() as u64;
        let (po, qo) = (own(a, p, i), own(a, q, i));
        let mut xo = own_mut(a, x, i);
        let mut ro = own_mut(a, r, i);
        let kk = &mut k[i];
        // SAFETY: dist_cg_update_T(u64 n, double alpha, const T* p, const T* q, T* x, T* r,
        // double* partial): the four views hold n entries, partial DOT_BLOCKS (the grid).
        unsafe {
            kk.cg_update.launch(&part.gpu, |l| {
                l.arg(&n)
                    .arg(&alpha)
                    .arg(&po)
                    .arg(&qo)
                    .arg(&mut xo)
                    .arg(&mut ro)
                    .arg(&mut kk.partial);
            })?
        };
    }
    block_sums(a, k)
}

/// `y = x + s·y` on every part's own entries (CG's new direction).
fn xpby<T: Scalar>(
    a: &DistributedMatrix<T>,
    k: &[PartKernels],
    s: f64,
    x: &DistVector<T>,
    y: &mut DistVector<T>,
) -> Result<()> {
    for (i, p) in a.parts.iter().enumerate().filter(|(_, p)| !p.rows.is_empty()) {
        let n = p.rows.len() as u64;
        let xo = own(a, x, i);
        let mut yo = own_mut(a, y, i);
        // SAFETY: dist_xpby_T(u64 n, double s, const T* x, T* y): both views hold n entries;
        // the grid-stride loop stays below n.
        unsafe {
            k[i].xpby.launch_with(&p.gpu, grid_stride(n), |l| {
                l.arg(&n).arg(&s).arg(&xo).arg(&mut yo);
            })?
        };
    }
    Ok(())
}

/// Solves A·x = b (A symmetric positive definite) by conjugate gradients without a
/// preconditioner, from x = 0, in f64 or f32; stops at ‖r‖ ≤ tol·‖b‖ (the recurrence's r)
/// or after `max_iter` iterations; the true residual ‖b − A·x‖/‖b‖ is computed at the end.
pub fn cg<T: Scalar>(
    a: &DistributedMatrix<T>,
    b: &[T],
    settings: &KrylovSettings,
) -> Result<Solution<T>> {
    settings.validate()?;
    if T::PRECISION == Precision::F16 {
        return Err(Error::Unsupported("the distributed CG runs in f64 and f32".into()));
    }
    let start = Instant::now();
    let mut k: Vec<PartKernels> =
        a.parts.iter().map(|p| PartKernels::new::<T>(&p.gpu)).collect::<Result<_>>()?;
    let b_dev = a.upload(b, false)?;
    let mut x = a.new_x()?;
    let mut r = a.upload(b, false)?;
    let mut p = a.upload(b, true)?;
    let mut q = a.new_y()?;
    let bb = dot(a, &mut k, &b_dev, &b_dev)?;
    let mut rr = bb;
    let (mut iterations, mut outcome) = (0, Outcome::NotConverged);
    let threshold = settings.tol * settings.tol * bb;
    let loop_start = Instant::now();
    if !bb.is_finite() {
        outcome = Outcome::NonFinite;
    } else if bb == 0.0 {
        outcome = Outcome::Converged;
    }
    while outcome == Outcome::NotConverged && iterations < settings.max_iter {
        a.spmv(&mut p, &mut q)?;
        let pq = dot(a, &mut k, &p, &q)?;
        if !pq.is_finite() {
            outcome = Outcome::NonFinite;
            break;
        }
        if pq <= 0.0 {
            outcome = Outcome::Breakdown(format!("p·A·p = {pq:e} ≤ 0: A is not positive definite"));
            break;
        }
        let alpha = rr / pq;
        let rr_next = cg_update(a, &mut k, alpha, (&p, &q), &mut x, &mut r)?;
        iterations += 1;
        if !rr_next.is_finite() {
            outcome = Outcome::NonFinite;
        } else if rr_next <= threshold {
            outcome = Outcome::Converged;
        } else {
            xpby(a, &k, rr_next / rr, &r, &mut p)?;
        }
        rr = rr_next;
    }
    let iteration_ms = loop_start.elapsed().as_secs_f64() * 1e3 / iterations.max(1) as f64;
    // The true residual, b − A·x, from a product of the final x.
    a.spmv(&mut x, &mut q)?;
    let (ax, x_host) = (a.download(&q)?, a.download(&x)?);
    let norm_b = bb.sqrt();
    let diff: f64 = b.iter().zip(&ax).map(|(&bi, &qi)| (bi.to_f64() - qi.to_f64()).powi(2)).sum();
    let true_residual = if norm_b > 0.0 { diff.sqrt() / norm_b } else { 0.0 };
    let residual = if norm_b > 0.0 { rr.max(0.0).sqrt() / norm_b } else { 0.0 };
    if outcome == Outcome::Converged && true_residual > 10.0 * settings.tol {
        outcome = Outcome::InaccurateResidual;
    }
    Ok(Solution {
        x: x_host,
        outcome,
        iterations,
        residual,
        true_residual,
        ms: start.elapsed().as_secs_f64() * 1e3,
        iteration_ms,
        graph: false,
    })
}
