//! Several right-hand sides solved together: k solves of one method in lock step, each with
//! its own engine (its scalars, vectors and stop), their products one block product A·X per
//! step ([`Engine::products`]: a format's block kernel reads the matrix once per block of
//! columns; on a GPU each engine's vectors are its column of slabs the k engines share, so the
//! columns of a product are already one n × k block, `krylov_gpu::lockstep_engines`).
//! [`Lockstep`] is itself an [`Engine`] whose vectors are the columns' vectors, so the
//! iterations of [`super::methods`] run on it unchanged; each column's steps are its own
//! engine's, so where the block product gives each column the single product's bits (every
//! native block kernel, and CSR on the host) column j has the bits of the single solve of
//! b_j. A column that has stopped keeps its x (its steps do nothing) while the others go on;
//! its products still run, as a captured graph cannot leave them out.
//!
//! This is not O'Leary's block CG, which searches the k columns' joint Krylov space (fewer
//! iterations, but k×k systems that turn singular as columns converge or coincide, and no
//! column's result is the single solve's): here a column takes the single solve's iterations,
//! and the block saves the matrix's reads (docs/solve.md, "Several right-hand sides").

use super::engine::{slot, BiVectors, CgVectors, Engine, GmVectors, MrVectors, Op, Pace, Stopped};
use super::krylov::{stop, Method, Solution};
use super::methods::{
    bi_iterate, bi_start, cg_iterate, cg_start, gm_iterate, gm_start, judged, mr_iterate, mr_start,
    Job,
};
use crate::error::Result;
use crate::matrix::Scalar;

/// A method's vectors of k solves (field by field, one per column) taken apart into each
/// column's vectors and put back.
pub(crate) trait Columns: Default {
    type One;
    fn split(self) -> Vec<Self::One>;
    fn join(columns: Vec<Self::One>) -> Self;
}

/// [`Columns`] for a vectors struct whose fields are all vectors.
macro_rules! columns_of {
    ($name:ident { $first:ident $(, $field:ident)* }) => {
        impl<V> Columns for $name<Vec<V>> {
            type One = $name<V>;
            fn split(self) -> Vec<$name<V>> {
                let $name { $first, $($field),* } = self;
                $(let mut $field = $field.into_iter();)*
                $first
                    .into_iter()
                    .map(|$first| $name {
                        $first,
                        $($field: $field.next().expect("a vector per column")),*
                    })
                    .collect()
            }
            fn join(columns: Vec<$name<V>>) -> Self {
                let mut all = $name { $first: Vec::new(), $($field: Vec::new()),* };
                for $name { $first, $($field),* } in columns {
                    all.$first.push($first);
                    $(all.$field.push($field);)*
                }
                all
            }
        }
    };
}

columns_of!(CgVectors { x, r, z, p, q });
columns_of!(BiVectors { x, r, r_hat, p, v, t, p_hat, s_hat });
columns_of!(MrVectors { x, v, q, r1, r2, y, w1, w2 });

impl<V> Columns for GmVectors<Vec<V>> {
    type One = GmVectors<V>;
    fn split(self) -> Vec<GmVectors<V>> {
        let GmVectors { x, b, basis, z } = self;
        let (mut b, mut z) = (b.into_iter(), z.into_iter());
        let mut basis: Vec<_> = basis.into_iter().map(Vec::into_iter).collect();
        x.into_iter()
            .map(|x| GmVectors {
                x,
                b: b.next().expect("a vector per column"),
                basis: basis.iter_mut().map(|v| v.next().expect("a vector per column")).collect(),
                z: z.next().expect("a vector per column"),
            })
            .collect()
    }
    fn join(columns: Vec<GmVectors<V>>) -> Self {
        let m1 = columns.first().map_or(0, |c| c.basis.len());
        let mut all = GmVectors {
            x: Vec::new(),
            b: Vec::new(),
            basis: (0..m1).map(|_| Vec::new()).collect(),
            z: Vec::new(),
        };
        for GmVectors { x, b, basis, z } in columns {
            all.x.push(x);
            all.b.push(b);
            all.z.push(z);
            all.basis.iter_mut().zip(basis).for_each(|(all, v)| all.push(v));
        }
        all
    }
}

/// k solves of one method in lock step (module doc): column j's engine and ‖b_j‖.
pub(crate) struct Lockstep<E> {
    columns: Vec<E>,
    bnorms: Vec<f64>,
}

impl<E> Lockstep<E> {
    /// Runs `step` on each column's engine and vectors.
    fn each<S: Columns>(
        &self, vs: &mut S, mut step: impl FnMut(&E, &mut S::One) -> Result<()>,
    ) -> Result<()> {
        let mut columns = std::mem::take(vs).split();
        let done = self.columns.iter().zip(&mut columns).try_for_each(|(e, v)| step(e, v));
        *vs = S::join(columns);
        done
    }
}

/// The engine of the columns together: a step is each column's step, a product the block
/// product; the stop is the last column's, the progress the worst column's residual. Setting
/// up a solve (vectors with values, scalars) is each column's own ([`run_lockstep`]).
impl<T: Scalar, E: Engine<T>> Engine<T> for Lockstep<E> {
    type Vector = Vec<E::Vector>;

    fn vector(&self, init: Option<&[T]>) -> Result<Self::Vector> {
        self.columns.iter().map(|e| e.vector(init)).collect()
    }
    fn optional(&self, init: Option<&[T]>) -> Result<Self::Vector> {
        self.columns.iter().map(|e| e.optional(init)).collect()
    }
    /// The columns one after the other.
    fn download(&self, v: &Self::Vector) -> Result<Vec<T>> {
        let mut all = Vec::new();
        for (e, v) in self.columns.iter().zip(v) {
            all.extend(e.download(v)?);
        }
        Ok(all)
    }
    fn set_scalars(&mut self, values: &[(usize, f64)]) -> Result<()> {
        self.columns.iter_mut().try_for_each(|e| e.set_scalars(values))
    }
    fn product(&self, x: &Self::Vector, y: &mut Self::Vector) -> Result<()> {
        let xs: Vec<&E::Vector> = x.iter().collect();
        let mut ys: Vec<&mut E::Vector> = y.iter_mut().collect();
        self.columns[0].products(&xs, &mut ys)
    }
    fn preconditioned(&self) -> bool {
        self.columns[0].preconditioned()
    }
    fn dots(&self, a: &Self::Vector, b: &Self::Vector, c: &Self::Vector, op: Op) -> Result<()> {
        self.columns
            .iter()
            .zip(a)
            .zip(b)
            .zip(c)
            .try_for_each(|(((e, a), b), c)| e.dots(a, b, c, op))
    }
    fn cg_update(&self, vs: &mut CgVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.cg_update(v))
    }
    fn cg_direction(&self, vs: &mut CgVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.cg_direction(v))
    }
    fn bi_direction(&self, vs: &mut BiVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.bi_direction(v))
    }
    fn bi_s(&self, vs: &mut BiVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.bi_s(v))
    }
    fn bi_update(&self, vs: &mut BiVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.bi_update(v))
    }
    fn mr_alpha(&self, vs: &mut MrVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.mr_alpha(v))
    }
    fn mr_beta(&self, vs: &mut MrVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.mr_beta(v))
    }
    fn mr_update(&self, vs: &mut MrVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.mr_update(v))
    }
    fn gm_basis(&mut self, vs: &GmVectors<Self::Vector>) -> Result<()> {
        // Each column's engine made its table at the start (`gm_start`); nothing moved since.
        debug_assert_eq!(vs.x.len(), self.columns.len());
        Ok(())
    }
    fn gm_dots(&self, vs: &mut GmVectors<Self::Vector>, j: usize) -> Result<()> {
        self.each(vs, |e, v| e.gm_dots(v, j))
    }
    fn gm_subtract(&self, vs: &mut GmVectors<Self::Vector>, j: usize, norm: bool) -> Result<()> {
        self.each(vs, |e, v| e.gm_subtract(v, j, norm))
    }
    fn gm_fused(&self, vs: &mut GmVectors<Self::Vector>, j: usize) -> Result<bool> {
        // The columns' engines are alike: all fuse or none does.
        let mut fused = true;
        self.each(vs, |e, v| {
            fused &= e.gm_fused(v, j)?;
            Ok(())
        })?;
        Ok(fused)
    }
    fn gm_update(&self, vs: &mut GmVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.gm_update(v))
    }
    fn gm_restart(&self, vs: &mut GmVectors<Self::Vector>) -> Result<()> {
        self.each(vs, |e, v| e.gm_restart(v))
    }
    fn cycle_done(&self) -> bool {
        self.columns.iter().all(|e| e.cycle_done())
    }
    /// The columns' scalars merged for [`super::engine::drive`]: running while one is, the
    /// most iterations, and the worst relative residual (in the first column's units of ‖b‖,
    /// which the progress divides by).
    fn scalars(&self) -> Result<Vec<f64>> {
        let mut merged = vec![0.0_f64; slot::SCALARS];
        let mut running = false;
        let mut worst: f64 = 0.0;
        for (e, bnorm) in self.columns.iter().zip(&self.bnorms) {
            let s = e.scalars()?;
            running |= s[slot::STATUS] == stop::RUNNING as f64;
            let iterations = s[slot::ITER].max(s[slot::STATUS_ITER]);
            merged[slot::ITER] = merged[slot::ITER].max(iterations);
            worst = worst.max(s[slot::RR] / (bnorm * bnorm));
        }
        merged[slot::STATUS] = if running { stop::RUNNING } else { stop::CONVERGED } as f64;
        merged[slot::STATUS_ITER] = merged[slot::ITER];
        merged[slot::RR] = worst * self.bnorms[0] * self.bnorms[0];
        Ok(merged)
    }
    fn run_until(
        &self, iteration: &mut dyn FnMut() -> Result<()>, pace: Pace,
        scalars: &dyn Fn() -> Result<Vec<f64>>,
    ) -> Result<Stopped> {
        self.columns[0].run_until(iteration, pace, scalars)
    }
}

/// Runs `jobs` (one method; at least two, each after `begin`'s checks) in lock step, on the
/// engines `columns` made for them (one each), and judges each column.
pub(crate) fn run_lockstep<T: Scalar, E: Engine<T>>(
    mut columns: Vec<E>, jobs: &[Job<'_, T>],
) -> Result<Vec<Solution<T>>> {
    let Job { method, m_inv, settings, .. } = jobs[0];
    let k = jobs.len();
    /// Each column's start on its own engine, then the iterations on them all.
    macro_rules! lockstep {
        ($start:expr, $iterate:ident) => {{
            let starts = columns.iter_mut().zip(jobs).map(|(e, job)| ($start)(e, job));
            let mut vs = Columns::join(starts.collect::<Result<_>>()?);
            columns[0].reserve_products(k)?;
            let bnorms = jobs.iter().map(|job| job.bnorm).collect();
            let lock = Lockstep { columns, bnorms };
            let stopped = $iterate(&lock, &mut vs, settings)?;
            (lock, vs.x, stopped)
        }};
    }
    let (lock, x, stopped) = match method {
        Method::Cg => lockstep!(|e, job: &Job<'_, T>| cg_start(e, job.b, m_inv), cg_iterate),
        Method::Bicgstab => lockstep!(|e, job: &Job<'_, T>| bi_start(e, job.b), bi_iterate),
        Method::Minres => {
            lockstep!(|e, job: &Job<'_, T>| mr_start(e, job.b, m_inv, job.bnorm), mr_iterate)
        }
        Method::Gmres => {
            lockstep!(|e, job: &Job<'_, T>| gm_start(e, job.b, m_inv, settings), gm_iterate)
        }
    };
    // The true residuals from one more block product of the final x.
    let mut ax = lock.vector(None)?;
    lock.product(&x, &mut ax)?;
    let each = lock.columns.iter().zip(jobs).zip(x.iter().zip(&ax));
    each.map(|((e, job), (x, ax))| {
        // Each column's stop, with the lock step's launches and time per iteration.
        let mut own = Stopped::from_scalars(
            &e.scalars()?,
            stopped.launched,
            std::time::Instant::now(),
            stopped.graph,
        );
        own.iteration_ms = stopped.iteration_ms;
        judged(job, own, e.download(x)?, e.download(ax)?, |r| e.host_dot(r, r))
    })
    .collect()
}
