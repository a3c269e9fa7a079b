//! The Krylov solvers on the GPU: [`cg_gpu`] and [`bicgstab_gpu`] over a matrix uploaded in
//! any format. The whole iteration stays on the device (the format's product, then the
//! vector kernels of krylov.cu with their scalars in device memory, the convergence test
//! included); the host reads the scalars back every `check_every` iterations only. One
//! iteration is captured once as a CUDA graph and replayed, so that small matrices are not
//! bound by launch latency. The steps and their order are those of the host solvers
//! ([`super::krylov`]), which are their reference; dot products are summed in f64 in a fixed
//! order, so a deterministic format gives the same bits in every run.

use std::time::Instant;

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::krylov::{
    blocks, check_inputs, dot, judge, preconditioned, relative_residual, stop, stop_outcome,
    threshold, trivial_outcome, BLOCK,
};
use super::krylov::{KrylovSettings, Method, Solution};
use crate::error::{Error, Result};
use crate::formats::{DeviceMatrix, FormatHandle};
use crate::gpu::{Gpu, Kernel, KernelModule};
use crate::matrix::Scalar;

/// The GPU solvers' vector kernels.
pub const KERNELS: KernelModule =
    KernelModule { name: "krylov", source: include_str!("krylov.cu"), headers: &[] };

/// The device scalars (krylov.cu's `s[]`).
mod scalar {
    pub const STATUS: usize = 0;
    pub const STATUS_ITER: usize = 1;
    pub const ITER: usize = 2;
    pub const TOL2: usize = 3;
    pub const RR: usize = 4;
    pub const VALUE: usize = 5;
    pub const CG_RZ: usize = 6;
    pub const BI_RHO: usize = 6;
    pub const COUNT: usize = 16;
}

/// krylov.cu's finishing steps after a dot product (`kr_dots`'s `op`; the other kernels
/// that sum have their own).
mod op {
    pub const CG_PQ: u32 = 0;
    pub const BI_RV: u32 = 2;
    pub const BI_OMEGA: u32 = 4;
}

/// Progress while a GPU solve runs: called at every read-back with the iterations done and
/// the recurrence's ‖r‖/‖b‖.
pub type Progress<'a> = &'a mut dyn FnMut(usize, f64);

/// Conjugate gradients on the GPU (`a` square, symmetric positive definite, `b.len()` rows;
/// `m_inv` the Jacobi diagonal or `None`). The result is judged as [`super::cg_host`]'s.
pub fn cg_gpu<T: Scalar>(
    a: &DeviceMatrix<T>,
    b: &[T],
    m_inv: Option<&[T]>,
    settings: &KrylovSettings,
) -> Result<Solution<T>> {
    cg_gpu_with_progress(a, b, m_inv, settings, &mut |_, _| {})
}

/// [`cg_gpu`], calling `progress` at every read-back.
pub fn cg_gpu_with_progress<T: Scalar>(
    a: &DeviceMatrix<T>,
    b: &[T],
    m_inv: Option<&[T]>,
    settings: &KrylovSettings,
    progress: Progress,
) -> Result<Solution<T>> {
    let mut dev = match Solve::begin(a, b, m_inv, settings, Method::Cg)? {
        Ok(dev) => dev,
        Err(trivial) => return Ok(trivial),
    };
    let gpu = dev.gpu;
    // z0 = M⁻¹·b and r·z0 on the host, once; p0 = z0.
    let z0 = preconditioned(m_inv, b);
    dev.set_scalars(&[(scalar::CG_RZ, dot(b, &z0))])?;
    let x: CudaSlice<T> = gpu.alloc(dev.n)?;
    let r = gpu.upload(b)?;
    // z is stored only with a preconditioner; without one the direction is built from r.
    let z = if dev.use_d != 0 { gpu.upload(&z0)? } else { gpu.alloc(1)? };
    let p = gpu.upload(&z0)?;
    let mut q: CudaSlice<T> = gpu.alloc(dev.n)?;
    let update = dev.kernel("kr_cg_update")?;
    let direction = dev.kernel("kr_cg_direction")?;
    let z_or_r = if dev.use_d != 0 { &z } else { &r };
    let (n, s, d, use_d, partial, counter) =
        (&dev.n32, &dev.s, &dev.d, &dev.use_d, &dev.partial, &dev.counter);
    let mut iteration = || -> Result<()> {
        a.spmv(&p, &mut q)?;
        dev.dots(&p, &q, &q, op::CG_PQ)?;
        // SAFETY (both launches): the arguments match kr_cg_update / kr_cg_direction; every
        // vector holds n elements (z only with use_d, one unread element otherwise; d
        // likewise), s scalar::COUNT, partial 2·blocks, counter one; the grid is `blocks`
        // blocks of BLOCK threads (grid-stride loops below n; block b writes partial[2b],
        // partial[2b + 1]).
        unsafe {
            update.launch(gpu, |l| {
                l.arg(n)
                    .arg(s)
                    .arg(&p)
                    .arg(&q)
                    .arg(d)
                    .arg(use_d)
                    .arg(&x)
                    .arg(&r)
                    .arg(&z)
                    .arg(partial)
                    .arg(counter);
            })?;
            direction.launch(gpu, |l| {
                l.arg(n).arg(s).arg(z_or_r).arg(&p);
            })
        }
    };
    let stopped = dev.drive(&mut iteration, progress)?;
    dev.solution(&x, stopped)
}

/// BiCGSTAB on the GPU (`a` square; `m_inv` as for [`cg_gpu`]), right-preconditioned as
/// [`super::bicgstab_host`], two products per iteration.
pub fn bicgstab_gpu<T: Scalar>(
    a: &DeviceMatrix<T>,
    b: &[T],
    m_inv: Option<&[T]>,
    settings: &KrylovSettings,
) -> Result<Solution<T>> {
    bicgstab_gpu_with_progress(a, b, m_inv, settings, &mut |_, _| {})
}

/// [`bicgstab_gpu`], calling `progress` at every read-back.
pub fn bicgstab_gpu_with_progress<T: Scalar>(
    a: &DeviceMatrix<T>,
    b: &[T],
    m_inv: Option<&[T]>,
    settings: &KrylovSettings,
    progress: Progress,
) -> Result<Solution<T>> {
    let mut dev = match Solve::begin(a, b, m_inv, settings, Method::Bicgstab)? {
        Ok(dev) => dev,
        Err(trivial) => return Ok(trivial),
    };
    let gpu = dev.gpu;
    // ρ = r̂·r = b·b; β = ω = 0 with p = v = 0 make the first direction p = r.
    dev.set_scalars(&[(scalar::BI_RHO, dot(b, b))])?;
    let vector = |len: usize| gpu.alloc::<T>(len);
    let (x, r, r_hat) = (vector(dev.n)?, gpu.upload(b)?, gpu.upload(b)?);
    let (p, mut v, mut t) = (vector(dev.n)?, vector(dev.n)?, vector(dev.n)?);
    // p̂ = M⁻¹·p and ŝ = M⁻¹·s are stored only with a preconditioner (else p and s = r).
    let hat_len = if dev.use_d != 0 { dev.n } else { 1 };
    let (p_hat, s_hat) = (vector(hat_len)?, vector(hat_len)?);
    let p_used = if dev.use_d != 0 { &p_hat } else { &p };
    let s_used = if dev.use_d != 0 { &s_hat } else { &r };
    let direction = dev.kernel("kr_bi_direction")?;
    let form_s = dev.kernel("kr_bi_s")?;
    let update = dev.kernel("kr_bi_update")?;
    let (n, s, d, use_d, partial, counter) =
        (&dev.n32, &dev.s, &dev.d, &dev.use_d, &dev.partial, &dev.counter);
    let mut iteration = || -> Result<()> {
        // SAFETY (the three launches): the arguments match kr_bi_direction, kr_bi_s and
        // kr_bi_update; every vector holds n elements (p̂, ŝ and d only with use_d, one
        // unread element otherwise), s scalar::COUNT, partial 2·blocks, counter one; the
        // grid is `blocks` blocks of BLOCK threads (grid-stride loops below n; block b writes
        // partial[2b], partial[2b + 1]).
        unsafe {
            direction.launch(gpu, |l| {
                l.arg(n).arg(s).arg(&r).arg(&v).arg(d).arg(use_d).arg(&p).arg(&p_hat);
            })?;
        }
        a.spmv(p_used, &mut v)?;
        dev.dots(&r_hat, &v, &v, op::BI_RV)?;
        unsafe {
            form_s.launch(gpu, |l| {
                l.arg(n)
                    .arg(s)
                    .arg(&v)
                    .arg(d)
                    .arg(use_d)
                    .arg(&r)
                    .arg(&s_hat)
                    .arg(partial)
                    .arg(counter);
            })?;
        }
        a.spmv(s_used, &mut t)?;
        dev.dots(&t, &t, &r, op::BI_OMEGA)?;
        unsafe {
            update.launch(gpu, |l| {
                l.arg(n)
                    .arg(s)
                    .arg(p_used)
                    .arg(&s_hat)
                    .arg(&t)
                    .arg(&r_hat)
                    .arg(use_d)
                    .arg(&x)
                    .arg(&r)
                    .arg(partial)
                    .arg(counter);
            })
        }
    };
    let stopped = dev.drive(&mut iteration, progress)?;
    dev.solution(&x, stopped)
}

/// What the device said at the stop.
struct Stopped {
    code: u32,
    /// Mean wall time per iteration queued, in milliseconds.
    iteration_ms: f64,
    /// The iteration that stopped (or the iterations done, when none did).
    iterations: usize,
    rr: f64,
    value: f64,
    graph: bool,
}

/// One GPU solve's shared state: the inputs, the device scalars, partial sums and block
/// counter, the preconditioner, and the dot kernel.
struct Solve<'a, T: Scalar> {
    a: &'a DeviceMatrix<T>,
    gpu: &'a Gpu,
    b: &'a [T],
    settings: &'a KrylovSettings,
    n: usize,
    n32: u32,
    bnorm: f64,
    start: Instant,
    /// The scalars at the start (uploaded by `set_scalars`).
    initial: [f64; scalar::COUNT],
    s: CudaSlice<f64>,
    partial: CudaSlice<f64>,
    /// Blocks done, for the last one to finish a sum (krylov.cu's kr_reduce; it resets it).
    counter: CudaSlice<u32>,
    /// The inverse diagonal (one unread element without a preconditioner) and whether to use it.
    d: CudaSlice<T>,
    use_d: u32,
    dots: Kernel,
}

impl<'a, T: Scalar> Solve<'a, T> {
    /// Checks the inputs and allocates the shared state; b = 0 (x = 0), a non-finite b and
    /// an empty system are answered at once, as `Err(the solution)`.
    fn begin(
        a: &'a DeviceMatrix<T>,
        b: &'a [T],
        m_inv: Option<&[T]>,
        settings: &'a KrylovSettings,
        method: Method,
    ) -> Result<std::result::Result<Self, Solution<T>>> {
        let start = Instant::now();
        let bnorm = check_inputs(b, m_inv, settings)?;
        let n = b.len();
        if a.nrows() != n || a.ncols() != n {
            return Err(Error::Shape(format!(
                "{method:?} needs a square matrix with b's {n} rows; this one is {} x {}",
                a.nrows(),
                a.ncols()
            )));
        }
        let n32 = u32::try_from(n).map_err(|_| {
            Error::Unsupported(format!("{method:?} on the GPU: {n} rows exceed 32-bit indices"))
        })?;
        if let Some(outcome) =
            trivial_outcome(bnorm).or((n == 0).then_some(super::Outcome::Converged))
        {
            let true_residual = if bnorm.is_finite() { 0.0 } else { f64::NAN };
            let ms = start.elapsed().as_secs_f64() * 1e3;
            let x = vec![T::ZERO; n];
            return Ok(Err(Solution {
                x,
                outcome,
                iterations: 0,
                residual: true_residual,
                true_residual,
                ms,
                iteration_ms: 0.0,
                graph: false,
            }));
        }
        let gpu = &**a.gpu();
        let grid = blocks(n);
        let vector = LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (BLOCK as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut initial = [0.0; scalar::COUNT];
        initial[scalar::TOL2] = threshold(settings.tol, bnorm);
        initial[scalar::RR] = bnorm * bnorm;
        Ok(Ok(Solve {
            a,
            gpu,
            b,
            settings,
            n,
            n32,
            bnorm,
            start,
            initial,
            s: gpu.upload(&initial)?,
            partial: gpu.alloc(2 * grid)?,
            counter: gpu.alloc(1)?,
            d: match m_inv {
                Some(d) => gpu.upload(d)?,
                None => gpu.alloc(1)?,
            },
            use_d: m_inv.is_some() as u32,
            dots: Kernel::new(gpu, &KERNELS, &format!("kr_dots_{}", T::SUFFIX), vector)?,
        }))
    }

    /// The method's kernel `name` for T, on the vector grid.
    fn kernel(&self, name: &str) -> Result<Kernel> {
        Kernel::new(self.gpu, &KERNELS, &format!("{name}_{}", T::SUFFIX), self.dots.config())
    }

    /// Sets the method's starting scalars.
    fn set_scalars(&mut self, values: &[(usize, f64)]) -> Result<()> {
        for &(i, v) in values {
            self.initial[i] = v;
        }
        self.gpu.stream().memcpy_htod(&self.initial, &mut self.s)?;
        Ok(())
    }

    /// a·b and a·c, then the step `op` on them.
    fn dots(&self, a: &CudaSlice<T>, b: &CudaSlice<T>, c: &CudaSlice<T>, op: u32) -> Result<()> {
        // SAFETY: kr_dots_<T>(u32 n, double* s, const T* a, b, c, double* partial, u32*
        // counter, u32 op): the three vectors hold n elements, s scalar::COUNT, partial
        // 2·blocks (block b writes 2b, 2b + 1), counter one; op is one of krylov.cu's steps.
        unsafe {
            self.dots.launch(self.gpu, |l| {
                l.arg(&self.n32)
                    .arg(&self.s)
                    .arg(a)
                    .arg(b)
                    .arg(c)
                    .arg(&self.partial)
                    .arg(&self.counter)
                    .arg(&op);
            })
        }
    }

    /// Runs `iteration` (which queues one iteration's launches) until the device reports a
    /// stop or `max_iter` iterations ran, reading the scalars back every `check_every`.
    fn drive(
        &self,
        iteration: &mut dyn FnMut() -> Result<()>,
        progress: Progress,
    ) -> Result<Stopped> {
        let graph = if self.settings.graph { self.gpu.capture(iteration) } else { None };
        let started = Instant::now();
        let mut launched = 0;
        loop {
            let batch = self.settings.check_every.min(self.settings.max_iter - launched);
            for _ in 0..batch {
                match &graph {
                    Some(g) => g.launch()?,
                    None => iteration()?,
                }
            }
            launched += batch;
            let s = self.gpu.download(&self.s)?;
            let code = s[scalar::STATUS] as u32;
            progress(s[scalar::ITER] as usize, s[scalar::RR].sqrt() / self.bnorm);
            if code != stop::RUNNING || launched == self.settings.max_iter {
                let iterations =
                    if code == stop::RUNNING { s[scalar::ITER] } else { s[scalar::STATUS_ITER] }
                        as usize;
                let iteration_ms = started.elapsed().as_secs_f64() * 1e3 / launched as f64;
                return Ok(Stopped {
                    code,
                    iteration_ms,
                    iterations,
                    rr: s[scalar::RR],
                    value: s[scalar::VALUE],
                    graph: graph.is_some(),
                });
            }
        }
    }

    /// The result: x downloaded, the true residual recomputed with one more product.
    fn solution(&self, x_dev: &CudaSlice<T>, stopped: Stopped) -> Result<Solution<T>> {
        let mut ax: CudaSlice<T> = self.gpu.alloc(self.n)?;
        self.a.spmv(x_dev, &mut ax)?;
        let mut ax = self.gpu.download(&ax)?;
        let true_residual = relative_residual(self.b, &mut ax, self.bnorm);
        let x = self.gpu.download(x_dev)?;
        let outcome = judge(
            stop_outcome(stopped.code, stopped.iterations, stopped.value),
            true_residual,
            self.settings.tol,
        );
        Ok(Solution {
            x,
            outcome,
            iterations: stopped.iterations,
            residual: stopped.rr.sqrt() / self.bnorm,
            true_residual,
            ms: self.start.elapsed().as_secs_f64() * 1e3,
            iteration_ms: stopped.iteration_ms,
            graph: stopped.graph,
        })
    }
}
