//! The Krylov engine of a [`DistributedMatrix`]: the methods of [`crate::solve`] (CG,
//! BiCGSTAB, MINRES and GMRES, written once) with the product through the halo exchange and each step of
//! krylov.cu run on every part's own entries on its own GPU. A step's sums are totalled per
//! part on the device (the one-GPU kernels' order), read back, added over the parts in part
//! order, and the scalar step runs on the host (`solve::engine::step`); the new scalars go
//! back to every part. Each sum is one read-back per part, so an iteration waits for its GPUs
//! twice (CG) or three times (BiCGSTAB); the iterates are the same bits run after run and for
//! any placement of the parts (module doc of [`super`] on how they relate to one GPU's).

use std::cell::RefCell;
use std::time::Instant;

use cudarc::driver::{CudaSlice, CudaView, LaunchArgs, PushKernelArg};

use super::{DistVector, DistributedMatrix};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::matrix::Scalar;
use crate::solve::engine::{
    gm_step, slot, step, BiVectors, CgVectors, Engine, GmAt, GmVectors, MrVectors, Op, Pace,
    Stopped,
};
use crate::solve::krylov::{stop, KrylovSettings};
use crate::solve::krylov_gpu::{
    address_table, partial_len, StepKernels, BI_DIRECTION, BI_S, BI_UPDATE, CG_DIRECTION,
    CG_UPDATE, GM_DOTS, GM_RESTART, GM_SUBTRACT, GM_UPDATE, MR_ALPHA, MR_BETA, MR_UPDATE,
};
use crate::solve::methods::{initial_scalars, run, Backing, Job, OwnEngines, Solvable};
use crate::solve::pagerank::{PowerEngine, Transition};
use crate::solve::Solution;

/// Several GPUs' matrix solves on them.
impl<T: Scalar> Solvable<T> for DistributedMatrix<T> {
    fn backing(&self) -> Backing<'_, T> {
        Backing::Own(self)
    }
}

/// The methods of `solve` with this module's engines.
impl<T: Scalar> OwnEngines<T> for DistributedMatrix<T> {
    /// The host vectors' rows: this process's (all unless one process runs per GPU).
    fn shape(&self) -> (usize, usize) {
        let n = self.host_rows().len();
        (n, n)
    }
    fn host_dot(&self, a: &[T], b: &[T]) -> Result<f64> {
        self.dot(a, b)
    }
    fn krylov(&self, job: Job<'_, T>) -> Result<Solution<T>> {
        let mut engine = DistEngine::new(self, &job)?;
        run(&mut engine, job)
    }
    fn power<'a>(
        &'a self, t: &'a Transition, n: usize, factors: [T; 3],
    ) -> Result<Box<dyn PowerEngine<T> + 'a>> {
        Ok(Box::new(super::pagerank::engine(self, t, n, factors)?))
    }
}

/// One part's scalars, sums and kernels.
struct PartState<T> {
    n32: u32,
    /// The part's copy of the scalars (rewritten after every host step).
    s: RefCell<CudaSlice<f64>>,
    partial: CudaSlice<f64>,
    counter: CudaSlice<u32>,
    /// The part's rows of the inverse diagonal (one unread element without one).
    d: CudaSlice<T>,
    kernels: StepKernels,
    /// GMRES: the addresses of the part's own entries of the basis' vectors.
    table: Option<CudaSlice<u64>>,
}

impl<T: Scalar> PartState<T> {
    /// GMRES's basis table ([`Engine::gm_basis`] made it).
    fn table(&self) -> &CudaSlice<u64> {
        self.table.as_ref().expect("gm_basis ran")
    }

    /// Launches step kernel `step` on this part with (n, s) first, then what `args` pushes,
    /// then for a summing step (`sums`) the part's partial sums, block counter and
    /// `Op::Totals` (the host finishes the step from every part's totals).
    ///
    /// # Safety
    /// `args` pushes the rest of the step's parameters, under the SAFETY comment of the
    /// `Engine` impl below; `s` is this part's scalars.
    unsafe fn step<'a>(
        &'a self, gpu: &'a Gpu, s: &'a CudaSlice<f64>, (step, sums): (usize, bool),
        args: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<()> {
        // SAFETY: the caller's.
        unsafe {
            self.kernels.steps[step].launch(gpu, |l| {
                l.arg(&self.n32).arg(s);
                args(l);
                if sums {
                    l.arg(&self.partial).arg(&self.counter).arg(&(Op::Totals as u32));
                }
            })
        }
    }
}

struct DistEngine<'a, T: Scalar> {
    a: &'a DistributedMatrix<T>,
    settings: &'a KrylovSettings,
    bnorm: f64,
    use_d: u32,
    /// The scalars, on the host (each part has a copy for its kernels).
    s: RefCell<Vec<f64>>,
    parts: Vec<Option<PartState<T>>>,
}

impl<'a, T: Scalar> DistEngine<'a, T> {
    fn new(a: &'a DistributedMatrix<T>, job: &Job<'a, T>) -> Result<Self> {
        let Job { method, m_inv, settings, bnorm, .. } = *job;
        let initial = initial_scalars(settings, bnorm, method);
        let parts = a
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let n = p.rows.len();
                if n == 0 {
                    return Ok(None);
                }
                let gpu: &Gpu = &p.gpu;
                let n32 = u32::try_from(n).map_err(|_| {
                    Error::Unsupported(format!("a part of {n} rows exceeds 32-bit indices"))
                })?;
                Ok(Some(PartState {
                    n32,
                    s: RefCell::new(gpu.upload(&initial)?),
                    partial: gpu.alloc(partial_len(method, settings, n))?,
                    counter: gpu.alloc(1)?,
                    d: match m_inv {
                        Some(d) => gpu.upload(&d[a.host_range(i)])?,
                        None => gpu.alloc(1)?,
                    },
                    kernels: StepKernels::new::<T>(gpu, n)?,
                    table: None,
                }))
            })
            .collect::<Result<_>>()?;
        Ok(DistEngine {
            a,
            settings,
            bnorm,
            use_d: m_inv.is_some() as u32,
            s: RefCell::new(initial),
            parts,
        })
    }

    /// The own entries of part `i` of `v`.
    fn own<'v>(&self, v: &'v DistVector<T>, i: usize) -> CudaView<'v, T> {
        let p = &self.a.parts[i];
        let at = if v.halo { p.own_offset } else { 0 };
        v.parts[i].slice(at..at + p.rows.len())
    }

    /// `launch(part, state)` on every part with rows.
    fn each(&self, mut launch: impl FnMut(usize, &Gpu, &PartState<T>) -> Result<()>) -> Result<()> {
        for (i, state) in self.parts.iter().enumerate() {
            if let Some(state) = state {
                let gpu = &self.a.parts[i].gpu;
                gpu.context().bind_to_thread()?;
                launch(i, gpu, state)?;
            }
        }
        Ok(())
    }

    /// The parts' scalars read back, `update` of the host's scalars with them, the result
    /// back to every part.
    fn settle(&self, update: impl FnOnce(&mut [f64], &[Vec<f64>])) -> Result<()> {
        let mut parts = Vec::new();
        self.each(|_, gpu, state| {
            let s = state.s.borrow();
            match self.a.ranks {
                // One process per GPU: every rank's scalars at once, straight from the device.
                Some(_) => parts = self.a.gathered(&s)?,
                None => parts.push(gpu.download(&s)?),
            }
            Ok(())
        })?;
        let s = {
            let mut s = self.s.borrow_mut();
            update(&mut s, &parts);
            s.clone()
        };
        self.each(|_, gpu, state| Ok(gpu.stream().memcpy_htod(&s, &mut *state.s.borrow_mut())?))
    }

    /// The parts' totals in `slot` added in part order.
    fn total(parts: &[Vec<f64>], slot: usize) -> f64 {
        parts.iter().fold(0.0, |sum, s| sum + s[slot])
    }

    /// The parts' totals (added in part order), the step `op` on the host, the scalars back
    /// to every part.
    /// `launch` on every part, only while `active` (the launches of a stopped solve or a
    /// finished GMRES cycle would change nothing).
    fn each_while(
        &self, active: bool, launch: impl FnMut(usize, &Gpu, &PartState<T>) -> Result<()>,
    ) -> Result<()> {
        if active {
            self.each(launch)?;
        }
        Ok(())
    }

    /// A summing step: `launch` on every part while running, then the host finishes `op`
    /// from the parts' totals.
    fn summing(
        &self, op: Op, launch: impl FnMut(usize, &Gpu, &PartState<T>) -> Result<()>,
    ) -> Result<()> {
        self.each_while(self.running(), launch)?;
        self.finish(op)
    }

    fn finish(&self, op: Op) -> Result<()> {
        self.settle(|s, parts| {
            step(s, Self::total(parts, slot::U), Self::total(parts, slot::V), op)
        })
    }

    /// GMRES's step `op` of Arnoldi step j on the parts' total of U.
    fn gm_finish(&self, op: Op, j: usize) -> Result<()> {
        self.settle(|s, parts| gm_step(s, Self::total(parts, slot::U), op, j))
    }

    /// GMRES's step `op` (H1 or H2) of Arnoldi step j on the parts' totals of t_0, …, t_j.
    fn gm_totals(&self, j: usize, op: Op) -> Result<()> {
        self.settle(|s, parts| {
            if s[slot::STATUS] == stop::RUNNING as f64 && s[slot::GM_DONE] == 0.0 {
                let at = GmAt::of(s);
                (0..=j).for_each(|k| s[at.t(k)] = Self::total(parts, at.t(k)));
            }
            gm_step(s, 0.0, op, j)
        })
    }

    /// Whether the host's scalars say running (a stopped solve's launches would change nothing).
    fn running(&self) -> bool {
        self.s.borrow()[slot::STATUS] == stop::RUNNING as f64
    }

    /// Whether GMRES's Arnoldi steps run (running, the cycle not done).
    fn gm_active(&self) -> bool {
        self.running() && self.s.borrow()[slot::GM_DONE] == 0.0
    }
}

// SAFETY (every launch below): the arguments match krylov.cu's kernels of the same name; the
// views are a part's own entries (n of its rows; d only with use_d, one unread element
// otherwise), s slot::SCALARS, partial 2·blocks(n), counter one; the part's grid is blocks(n)
// blocks of BLOCK threads.
impl<T: Scalar> Engine<T> for DistEngine<'_, T> {
    type Vector = DistVector<T>;

    fn vector(&self, init: Option<&[T]>) -> Result<DistVector<T>> {
        // Every vector has halo room: any of them may be a product's x.
        match init {
            Some(v) => self.a.upload(v, true),
            None => self.a.zeros(true, 1),
        }
    }
    fn optional(&self, init: Option<&[T]>) -> Result<DistVector<T>> {
        self.vector(init)
    }
    fn host_dot(&self, a: &[T], b: &[T]) -> Result<f64> {
        self.a.dot(a, b)
    }
    fn download(&self, v: &DistVector<T>) -> Result<Vec<T>> {
        self.a.download(v)
    }
    fn set_scalars(&mut self, values: &[(usize, f64)]) -> Result<()> {
        let s = {
            let mut s = self.s.borrow_mut();
            values.iter().for_each(|&(i, v)| s[i] = v);
            s.clone()
        };
        self.each(|_, gpu, state| Ok(gpu.stream().memcpy_htod(&s, &mut *state.s.borrow_mut())?))
    }
    fn product(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.a.spmv(x, y)
    }
    fn preconditioned(&self) -> bool {
        self.use_d != 0
    }
    fn dots(&self, a: &DistVector<T>, b: &DistVector<T>, c: &DistVector<T>, op: Op) -> Result<()> {
        self.summing(op, |i, gpu, st| {
            let (a, b, c, s) = (self.own(a, i), self.own(b, i), self.own(c, i), st.s.borrow());
            unsafe {
                st.kernels.dots.launch(gpu, |l| {
                    l.arg(&st.n32).arg(&*s).arg(&a).arg(&b).arg(&c);
                    l.arg(&st.partial).arg(&st.counter).arg(&(Op::Totals as u32));
                })
            }
        })
    }
    fn cg_update(&self, vs: &mut CgVectors<DistVector<T>>) -> Result<()> {
        let CgVectors { x, r, z, p, q } = &*vs;
        self.summing(Op::CgRz, |i, gpu, st| {
            let (p, q, s) = (self.own(p, i), self.own(q, i), st.s.borrow());
            let (x, r, z) = (self.own(x, i), self.own(r, i), self.own(z, i));
            unsafe {
                st.step(gpu, &s, (CG_UPDATE, true), |l| {
                    l.arg(&p).arg(&q).arg(&st.d).arg(&self.use_d).arg(&x).arg(&r).arg(&z);
                })
            }
        })
    }
    fn cg_direction(&self, vs: &mut CgVectors<DistVector<T>>) -> Result<()> {
        let (z, p) = vs.direction(self.use_d != 0);
        self.each_while(self.running(), |i, gpu, st| {
            let (z, p, s) = (self.own(z, i), self.own(p, i), st.s.borrow());
            unsafe {
                st.step(gpu, &s, (CG_DIRECTION, false), |l| {
                    l.arg(&z).arg(&p);
                })
            }
        })
    }
    fn bi_direction(&self, vs: &mut BiVectors<DistVector<T>>) -> Result<()> {
        let BiVectors { r, v, p, p_hat, .. } = &*vs;
        self.each_while(self.running(), |i, gpu, st| {
            let (r, v, s) = (self.own(r, i), self.own(v, i), st.s.borrow());
            let (p, p_hat) = (self.own(p, i), self.own(p_hat, i));
            unsafe {
                st.step(gpu, &s, (BI_DIRECTION, false), |l| {
                    l.arg(&r).arg(&v).arg(&st.d).arg(&self.use_d).arg(&p).arg(&p_hat);
                })
            }
        })
    }
    fn bi_s(&self, vs: &mut BiVectors<DistVector<T>>) -> Result<()> {
        let BiVectors { v, r, s_hat, .. } = &*vs;
        self.summing(Op::BiS, |i, gpu, st| {
            let (v, r, s_hat, s) =
                (self.own(v, i), self.own(r, i), self.own(s_hat, i), st.s.borrow());
            unsafe {
                st.step(gpu, &s, (BI_S, true), |l| {
                    l.arg(&v).arg(&st.d).arg(&self.use_d).arg(&r).arg(&s_hat);
                })
            }
        })
    }
    fn bi_update(&self, vs: &mut BiVectors<DistVector<T>>) -> Result<()> {
        let ((p_used, s_hat, t, r_hat), (x, r)) = vs.update(self.use_d != 0);
        self.summing(Op::BiRho, |i, gpu, st| {
            let (p_used, s_hat) = (self.own(p_used, i), self.own(s_hat, i));
            let (t, r_hat, s) = (self.own(t, i), self.own(r_hat, i), st.s.borrow());
            let (x, r) = (self.own(x, i), self.own(r, i));
            unsafe {
                st.step(gpu, &s, (BI_UPDATE, true), |l| {
                    l.arg(&p_used).arg(&s_hat).arg(&t).arg(&r_hat).arg(&self.use_d);
                    l.arg(&x).arg(&r);
                })
            }
        })
    }
    fn mr_alpha(&self, vs: &mut MrVectors<DistVector<T>>) -> Result<()> {
        let MrVectors { v, r1, q, .. } = &*vs;
        self.summing(Op::MrAlpha, |i, gpu, st| {
            let (v, r1, q, s) = (self.own(v, i), self.own(r1, i), self.own(q, i), st.s.borrow());
            unsafe {
                st.step(gpu, &s, (MR_ALPHA, true), |l| {
                    l.arg(&v).arg(&r1).arg(&q);
                })
            }
        })
    }
    fn mr_beta(&self, vs: &mut MrVectors<DistVector<T>>) -> Result<()> {
        let MrVectors { q, r1, r2, y, .. } = &*vs;
        self.summing(Op::MrBeta, |i, gpu, st| {
            let (q, r1, r2, y) = (self.own(q, i), self.own(r1, i), self.own(r2, i), self.own(y, i));
            let s = st.s.borrow();
            unsafe {
                st.step(gpu, &s, (MR_BETA, true), |l| {
                    l.arg(&q).arg(&st.d).arg(&self.use_d).arg(&r1).arg(&r2).arg(&y);
                })
            }
        })
    }
    fn mr_update(&self, vs: &mut MrVectors<DistVector<T>>) -> Result<()> {
        let y = vs.y_used(self.use_d != 0);
        let MrVectors { v, w1, w2, x, .. } = &*vs;
        self.summing(Op::MrCheck, |i, gpu, st| {
            let (y, v, w1, w2) = (self.own(y, i), self.own(v, i), self.own(w1, i), self.own(w2, i));
            let (x, s) = (self.own(x, i), st.s.borrow());
            unsafe {
                st.step(gpu, &s, (MR_UPDATE, true), |l| {
                    l.arg(&y).arg(&v).arg(&w1).arg(&w2).arg(&x);
                })
            }
        })
    }
    fn gm_basis(&mut self, vs: &GmVectors<DistVector<T>>) -> Result<()> {
        for (i, state) in self.parts.iter_mut().enumerate() {
            if let Some(state) = state {
                let p = &self.a.parts[i];
                p.gpu.context().bind_to_thread()?;
                let own = vs.basis.iter().map(|v| {
                    let at = if v.halo { p.own_offset } else { 0 };
                    v.parts[i].slice(at..at + p.rows.len())
                });
                state.table = Some(address_table(&p.gpu, own)?);
            }
        }
        Ok(())
    }
    fn gm_dots(&self, _: &mut GmVectors<DistVector<T>>, j: usize) -> Result<()> {
        let j32 = j as u32;
        self.each_while(self.gm_active(), |_, gpu, st| {
            let (s, table) = (st.s.borrow(), st.table());
            unsafe {
                st.step(gpu, &s, (GM_DOTS, true), |l| {
                    l.arg(table).arg(&j32);
                })
            }
        })?;
        self.gm_totals(j, Op::GmH1)
    }
    fn gm_subtract(&self, vs: &mut GmVectors<DistVector<T>>, j: usize, norm: bool) -> Result<()> {
        let (j32, norm32) = (j as u32, norm as u32);
        self.each_while(self.gm_active(), |i, gpu, st| {
            let (s, table, z) = (st.s.borrow(), st.table(), self.own(&vs.z, i));
            unsafe {
                st.step(gpu, &s, (GM_SUBTRACT, true), |l| {
                    l.arg(table).arg(&j32).arg(&norm32).arg(&st.d).arg(&self.use_d).arg(&z);
                })
            }
        })?;
        if norm {
            self.gm_finish(Op::GmArnoldi, j)
        } else {
            self.gm_totals(j, Op::GmH2)
        }
    }
    fn gm_update(&self, vs: &mut GmVectors<DistVector<T>>) -> Result<()> {
        self.each_while(self.running(), |i, gpu, st| {
            let (s, table, x) = (st.s.borrow(), st.table(), self.own(&vs.x, i));
            unsafe {
                st.step(gpu, &s, (GM_UPDATE, false), |l| {
                    l.arg(table).arg(&st.d).arg(&self.use_d).arg(&x);
                })
            }
        })
    }
    fn gm_restart(&self, vs: &mut GmVectors<DistVector<T>>) -> Result<()> {
        self.each_while(self.running(), |i, gpu, st| {
            let (b, r, s) = (self.own(&vs.b, i), self.own(&vs.basis[0], i), st.s.borrow());
            let z = self.own(&vs.z, i);
            unsafe {
                st.step(gpu, &s, (GM_RESTART, true), |l| {
                    l.arg(&b).arg(&r).arg(&st.d).arg(&self.use_d).arg(&z);
                })
            }
        })?;
        self.gm_finish(Op::GmRestart, 0)
    }
    fn cycle_done(&self) -> bool {
        !self.gm_active()
    }
    fn scalars(&self) -> Result<Vec<f64>> {
        Ok(self.s.borrow().to_vec())
    }
    fn run_until(
        &self, iteration: &mut dyn FnMut() -> Result<()>, pace: Pace,
        scalars: &dyn Fn() -> Result<Vec<f64>>,
    ) -> Result<Stopped> {
        // The host knows the scalars at every step: no read-back to batch.
        let started = Instant::now();
        let mut launched = 0;
        let mut s = scalars()?;
        while launched < pace.launches && s[slot::STATUS] == stop::RUNNING as f64 {
            iteration()?;
            launched += 1;
            s = scalars()?;
            if let Some(progress) = &self.settings.progress {
                if launched % pace.check_every == 0 || s[slot::STATUS] != stop::RUNNING as f64 {
                    progress(s[slot::ITER] as usize, s[slot::RR].sqrt() / self.bnorm);
                }
            }
        }
        Ok(Stopped::from_scalars(&s, launched, started, false))
    }
}
