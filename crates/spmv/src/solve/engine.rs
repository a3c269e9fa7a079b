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

use super::krylov::{dot, stop, KrylovSettings, Progress};
use crate::error::Result;
use crate::matrix::Scalar;
use crate::operator::LinearOperator;

/// The solve's scalars (krylov.cu's `s[]`).
pub(crate) mod slot {
    pub const STATUS: usize = 0;
    pub const STATUS_ITER: usize = 1;
    pub const ITER: usize = 2;
    pub const TOL2: usize = 3;
    pub const RR: usize = 4;
    pub const VALUE: usize = 5;
    pub const CG_RZ: usize = 6;
    pub const CG_ALPHA: usize = 7;
    pub const CG_BETA: usize = 8;
    pub const BI_RHO: usize = 6;
    pub const BI_ALPHA: usize = 7;
    pub const BI_OMEGA: usize = 8;
    pub const BI_BETA: usize = 9;
    pub const BI_S_CONVERGED: usize = 10;
    /// A sum's two totals, for engines that finish the step on the host (KR_OP_TOTALS).
    pub const U: usize = 11;
    pub const V: usize = 12;
    pub const COUNT: usize = 16;
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
}

/// The scalar step `op` on the totals `u`, `v` (krylov.cu's `kr_step`, line for line).
pub(crate) fn step(s: &mut [f64; slot::COUNT], u: f64, v: f64, op: Op) {
    use slot::*;
    if s[STATUS] != stop::RUNNING as f64 {
        return;
    }
    let k = s[ITER] + 1.0;
    let halt = |s: &mut [f64; COUNT], code: u32| {
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
    }
}

/// What the scalars said at the stop.
pub(crate) struct Stopped {
    pub code: u32,
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
            iteration_ms: started.elapsed().as_secs_f64() * 1e3 / launched.max(1) as f64,
            iterations,
            rr: s[slot::RR],
            value: s[slot::VALUE],
            graph,
        }
    }
}

/// Runs `iteration` in batches of `check_every` until `scalars` report a stop or `max_iter`
/// iterations ran, calling the progress callback at every read-back; `replay` runs one
/// iteration (a CUDA graph's launch, or `iteration` itself).
pub(crate) fn drive(
    settings: &KrylovSettings,
    bnorm: f64,
    replay: &mut dyn FnMut() -> Result<()>,
    scalars: &dyn Fn() -> Result<Vec<f64>>,
    graph: bool,
) -> Result<Stopped> {
    let started = Instant::now();
    let mut launched = 0;
    loop {
        let batch = settings.check_every.min(settings.max_iter - launched);
        for _ in 0..batch {
            replay()?;
        }
        launched += batch;
        let s = scalars()?;
        let code = s[slot::STATUS] as u32;
        if let Some(progress) = &settings.progress {
            progress(s[slot::ITER] as usize, s[slot::RR].sqrt() / bnorm);
        }
        if code != stop::RUNNING || launched == settings.max_iter {
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
    /// Runs `iteration` (one iteration's steps) until the scalars report a stop or
    /// `max_iter` iterations ran ([`drive`]).
    fn run(&self, iteration: &mut dyn FnMut() -> Result<()>) -> Result<Stopped>;
}

/// CG's vectors (z stored only with a preconditioner), one argument for every step.
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
    pub s: RefCell<[f64; slot::COUNT]>,
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
    /// `out = M⁻¹·v`, rounded to T (with a preconditioner only).
    fn precondition(&self, v: &[T], out: &mut [T]) {
        let d = self.m_inv.expect("with a preconditioner");
        out.par_iter_mut()
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
            .zip(p)
            .for_each(|(x, &p)| *x = T::from_f64(x.to_f64() + alpha * p.to_f64()));
        r.par_iter_mut()
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
        p.par_iter_mut().zip(r).zip(v).for_each(|((p, &r), &v)| {
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
            x.par_iter_mut().zip(p_used).zip(s_used).for_each(|((x, &p), &s)| {
                *x = T::from_f64(x.to_f64() + alpha * p.to_f64() + omega * s.to_f64());
            });
            r.par_iter_mut()
                .zip(t)
                .for_each(|(r, &t)| *r = T::from_f64(r.to_f64() - omega * t.to_f64()));
            (rho, rr) = (dot(r_hat, r), dot(r, r));
        }
        self.finish(rho, rr, Op::BiRho);
        Ok(())
    }
    fn run(&self, iteration: &mut dyn FnMut() -> Result<()>) -> Result<Stopped> {
        // Every iteration is checked on the host (nothing to batch), the progress at the
        // settings' pace.
        let checked = KrylovSettings { check_every: 1, progress: None, ..self.settings.clone() };
        let mut since = 0;
        let progress: Option<&Progress> = self.settings.progress.as_ref();
        let scalars = || -> Result<Vec<f64>> { Ok(self.s.borrow().to_vec()) };
        let mut replay = || -> Result<()> {
            iteration()?;
            since += 1;
            if let Some(report) = progress {
                let s = self.s.borrow();
                if since % self.settings.check_every == 0 || s[slot::STATUS] != 0.0 {
                    report(s[slot::ITER] as usize, s[slot::RR].sqrt() / self.bnorm);
                }
            }
            Ok(())
        };
        drive(&checked, self.bnorm, &mut replay, &scalars, false)
    }
}
