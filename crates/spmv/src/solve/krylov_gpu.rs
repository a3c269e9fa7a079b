//! The Krylov engine of one GPU: a matrix uploaded in any format, the whole iteration on the
//! device (the format's product, then the vector kernels of krylov.cu with their scalars in
//! device memory, the convergence test included); the host reads the scalars back every
//! `check_every` iterations only. One iteration is captured once as a CUDA graph and
//! replayed, so that small matrices are not bound by launch latency. The methods themselves
//! are in [`super::methods`]; dot products are summed in f64 in a fixed order, so a
//! deterministic format gives the same bits in every run, and the host engine's bits.

use std::cell::{Cell, RefCell};
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg};

use super::engine::{
    drive, slot, BiVectors, CgVectors, Engine, GmVectors, MrVectors, Op, Pace, Stopped,
};
use super::krylov::Method;
use super::krylov::{blocks, stop, KrylovSettings, BLOCK};
use super::methods::{initial_scalars, Backing, Job, Solvable};
use crate::error::{Error, Result};
use crate::formats::{BlockPath, DeviceMatrix};
use crate::gpu::{alias, Gpu, Kernel, KernelModule};
use crate::matrix::Scalar;
use crate::operator::Block;

/// The GPU solvers' vector kernels.
pub const KERNELS: KernelModule = KernelModule {
    name: "krylov",
    source: include_str!("krylov.cu"),
    headers: &[super::TREE, slot::CUDA, stop::CUDA],
};

/// One GPU's matrix solves on that GPU.
impl<T: Scalar> Solvable<T> for DeviceMatrix<T> {
    fn backing(&self) -> Backing<'_, T> {
        Backing::Gpu(self)
    }
}

/// One GPU solve's state: the device scalars, partial sums and block counter, the
/// preconditioner, and the kernels.
struct GpuEngine<'a, T: Scalar> {
    a: &'a DeviceMatrix<T>,
    gpu: &'a Gpu,
    settings: &'a KrylovSettings,
    n: usize,
    n32: u32,
    bnorm: f64,
    /// The scalars at the start (uploaded by `set_scalars`).
    initial: Vec<f64>,
    s: CudaSlice<f64>,
    partial: CudaSlice<f64>,
    /// Blocks done, for the last one to finish a sum (krylov.cu's kr_reduce; it resets it).
    counter: CudaSlice<u32>,
    /// The inverse diagonal (one unread element without a preconditioner) and whether to use it.
    d: CudaSlice<T>,
    use_d: u32,
    kernels: StepKernels,
    /// GMRES: the device addresses of the basis' vectors (krylov.cu's `V`).
    table: Option<CudaSlice<u64>>,
    /// In lock step: where this engine's vectors come from.
    lockstep: Option<SlabColumn<T>>,
}

/// A solve's vector of n entries on the GPU: column `column` of a slab (n·k entries,
/// column-major) — of its own (k = 1), or shared by k solves in lock step ([`Slabs`]), so
/// that their vectors of one name form the n × k block X or Y of a block product in place.
pub(crate) struct DeviceVector<T: DeviceRepr> {
    /// The column as a buffer of its own that never frees the memory (the slab's).
    view: ManuallyDrop<CudaSlice<T>>,
    slab: Arc<CudaSlice<T>>,
    column: usize,
}

impl<T: DeviceRepr> DeviceVector<T> {
    /// Column `column` of `slab`, columns of n entries.
    fn column_of(slab: Arc<CudaSlice<T>>, column: usize, n: usize) -> Self {
        // SAFETY: the vector keeps the slab alive as long as the view; columns of one slab
        // do not overlap, and each is one vector's, written by its own solve's kernels.
        let view = unsafe { alias(&slab, column * n..(column + 1) * n) };
        DeviceVector { view, slab, column }
    }
    /// The whole slab of `vectors` as one n × k column-major block, if they are its columns
    /// 0, 1, …, k − 1 in order.
    fn block_of<'v>(vectors: impl ExactSizeIterator<Item = &'v Self>, n: usize) -> Option<Self>
    where
        T: 'v,
    {
        let k = vectors.len();
        let mut slab = None;
        for (j, v) in vectors.enumerate() {
            let first = slab.get_or_insert(&v.slab);
            if !Arc::ptr_eq(first, &v.slab) || v.column != j || v.slab.len() != n * k {
                return None;
            }
        }
        slab.map(|s| Self::column_of(s.clone(), 0, n * k))
    }
}

impl<T: DeviceRepr> Deref for DeviceVector<T> {
    type Target = CudaSlice<T>;
    fn deref(&self) -> &CudaSlice<T> {
        &self.view
    }
}

impl<T: DeviceRepr> DerefMut for DeviceVector<T> {
    fn deref_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.view
    }
}

// SAFETY: pushes the column's view as cudarc pushes any buffer.
unsafe impl<'a, 'b: 'a, T: DeviceRepr> PushKernelArg<&'b DeviceVector<T>> for LaunchArgs<'a> {
    fn arg(&mut self, v: &'b DeviceVector<T>) -> &mut Self {
        self.arg(&*v.view)
    }
}

impl<T: DeviceRepr> Drop for DeviceVector<T> {
    fn drop(&mut self) {
        // SAFETY: the view is not used again; `leak` releases what it holds but the memory.
        unsafe { ManuallyDrop::take(&mut self.view) }.leak();
    }
}

/// The slabs of k solves in lock step: the i-th vector each column's engine asks for is its
/// column of slab i (every column runs the same method, so they ask in the same order), and
/// [`Engine::products`] hands the slab of the p's and the q's to the block product whole,
/// with no copies.
pub(crate) struct Slabs<T> {
    k: usize,
    made: RefCell<Vec<Arc<CudaSlice<T>>>>,
}

/// One lock-step engine's share of the [`Slabs`]: its column, and how many vectors it has
/// asked for (the next one's slab).
struct SlabColumn<T> {
    slabs: Rc<Slabs<T>>,
    column: usize,
    asked: Cell<usize>,
}

/// The step kernels, each an index into [`StepKernels::steps`]: step `NAME` is krylov.cu's
/// `kr_name`, so one list gives both the indices and the kernels loaded in their order.
macro_rules! steps {
    ($($step:ident),+ $(,)?) => {
        steps!(@index 0, $($step),+);
        /// The steps' names, in index order.
        const STEPS: [&str; [$(stringify!($step)),+].len()] = [$(stringify!($step)),+];
    };
    (@index $n:expr, $step:ident $(, $rest:ident)*) => {
        pub(crate) const $step: usize = $n;
        steps!(@index $n + 1 $(, $rest)*);
    };
    (@index $n:expr) => {};
}
// One line per method, in krylov.cu's order.
steps! {
    CG_UPDATE, CG_DIRECTION,
    BI_DIRECTION, BI_S, BI_UPDATE,
    MR_ALPHA, MR_BETA, MR_UPDATE,
    GM_DOTS, GM_SUBTRACT, GM_FUSED, GM_UPDATE, GM_RESTART,
}

/// krylov.cu's kernels for n unknowns on one GPU: the dots and the steps (indices above).
pub(crate) struct StepKernels {
    pub dots: Kernel,
    pub steps: [Kernel; STEPS.len()],
}

/// The partial sums a solve's kernels need: two per block, GMRES's dots m + 1.
pub(crate) fn partial_len(method: Method, settings: &KrylovSettings, n: usize) -> usize {
    let per_block = if method == Method::Gmres { (settings.restart + 1).max(2) } else { 2 };
    per_block * blocks(n)
}

/// The device addresses of `vectors` (views of `len` elements from `offset`), for the
/// kernels that take a table of them; waits for the stream, so that work queued on them is
/// done before kernels reach them through the table (which the driver does not track).
pub(crate) fn address_table<'v, T: 'v>(
    gpu: &Gpu, vectors: impl Iterator<Item = cudarc::driver::CudaView<'v, T>>,
) -> Result<CudaSlice<u64>> {
    let stream = gpu.stream();
    let addresses: Vec<u64> = vectors.map(|v| v.device_ptr(stream).0).collect();
    stream.synchronize()?;
    gpu.upload(&addresses)
}

impl StepKernels {
    /// The kernels in T on `gpu`, on the grid of n unknowns (`blocks(n)` blocks of BLOCK).
    pub(crate) fn new<T: Scalar>(gpu: &Gpu, n: usize) -> Result<Self> {
        let grid = LaunchConfig {
            grid_dim: (blocks(n) as u32, 1, 1),
            block_dim: (BLOCK as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        let kernel =
            |name: &str| Kernel::new(gpu, &KERNELS, &format!("{name}_{}", T::SUFFIX), grid);
        let steps: Vec<Kernel> = STEPS
            .iter()
            .map(|step| kernel(&format!("kr_{}", step.to_lowercase())))
            .collect::<Result<_>>()?;
        Ok(StepKernels {
            dots: kernel("kr_dots")?,
            steps: steps.try_into().unwrap_or_else(|_| unreachable!("one kernel per step")),
        })
    }
}

impl<T: Scalar> GpuEngine<'_, T> {
    /// Launches step kernel `step` with (n, s) first, then what `args` pushes, then for a step
    /// that sums (`sum`, its op code) the partial sums, the block counter and the op: every
    /// step's parameter list in krylov.cu.
    ///
    /// # Safety
    /// `args` pushes the rest of the step's parameters, under the SAFETY comment of the
    /// `Engine` impl below.
    unsafe fn step<'a>(
        &'a self, step: usize, sum: Option<&'a u32>, args: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<()> {
        // SAFETY: the caller's.
        unsafe {
            self.kernels.steps[step].launch(self.gpu, |l| {
                l.arg(&self.n32).arg(&self.s);
                args(l);
                if let Some(op) = sum {
                    l.arg(&self.partial).arg(&self.counter).arg(op);
                }
            })
        }
    }

    /// GMRES's basis table ([`Engine::gm_basis`] made it).
    fn table(&self) -> &CudaSlice<u64> {
        self.table.as_ref().expect("gm_basis runs before GMRES's steps")
    }
}

/// Whether k right-hand sides on `a` run in lock step on its GPU (else one after the
/// other): where the block product is the format's own kernel, so that each column keeps the
/// bits of its single solve (a copy's would give it another format's).
pub(crate) fn lockstep_keeps_bits<T: Scalar>(a: &DeviceMatrix<T>, k: usize) -> bool {
    a.block_path(Block::columns(k)) == BlockPath::Own
}

/// One GPU's engine for `a` and the job.
pub(crate) fn engine<'a, T: Scalar>(
    a: &'a DeviceMatrix<T>, job: &Job<'a, T>,
) -> Result<impl Engine<T> + 'a> {
    new_engine(a, job, None)
}

/// The engines of `jobs` in lock step on `a`, their vectors columns of shared slabs.
pub(crate) fn lockstep_engines<'a, T: Scalar>(
    a: &'a DeviceMatrix<T>, jobs: &[Job<'a, T>],
) -> Result<Vec<impl Engine<T> + 'a>> {
    let slabs = Rc::new(Slabs { k: jobs.len(), made: RefCell::new(Vec::new()) });
    let column = |column| SlabColumn { slabs: slabs.clone(), column, asked: Cell::new(0) };
    jobs.iter().enumerate().map(|(j, job)| new_engine(a, job, Some(column(j)))).collect()
}

/// One GPU's engine for `a` and the job, its vectors its own or (`lockstep`) a column of
/// shared slabs.
fn new_engine<'a, T: Scalar>(
    a: &'a DeviceMatrix<T>, job: &Job<'a, T>, lockstep: Option<SlabColumn<T>>,
) -> Result<GpuEngine<'a, T>> {
    let Job { method, b, m_inv, settings, bnorm, .. } = *job;
    let n = b.len();
    let n32 = u32::try_from(n).map_err(|_| {
        Error::Unsupported(format!("{method:?} on the GPU: {n} rows exceed 32-bit indices"))
    })?;
    let gpu = &**a.gpu();
    let initial = initial_scalars(settings, bnorm, method);
    Ok(GpuEngine {
        a,
        gpu,
        settings,
        n,
        n32,
        bnorm,
        s: gpu.upload(&initial)?,
        initial,
        partial: gpu.alloc(partial_len(method, settings, n))?,
        counter: gpu.alloc(1)?,
        d: match m_inv {
            Some(d) => gpu.upload(d)?,
            None => gpu.alloc(1)?,
        },
        use_d: m_inv.is_some() as u32,
        kernels: StepKernels::new::<T>(gpu, n)?,
        table: None,
        lockstep,
    })
}

// SAFETY (every launch below): the arguments match krylov.cu's kernels of the same name;
// every vector holds n elements (z, p̂, ŝ, y and d only with use_d, one unread element
// otherwise), s slot::SCALARS (GMRES: GmAt's length), partial `partial_len`, counter one; the
// grid is `blocks(n)` blocks of BLOCK threads (grid-stride loops below n; block b writes
// partial[2b], partial[2b + 1], GMRES's dots partial[k·blocks + b] for k ≤ j + 1 ≤ m); the
// table holds the m + 1 basis vectors' addresses, alive as long as `vs`, and j < m; `op` is
// one of krylov.cu's KR_OP_*.
impl<T: Scalar> Engine<T> for GpuEngine<'_, T> {
    type Vector = DeviceVector<T>;

    fn vector(&self, init: Option<&[T]>) -> Result<DeviceVector<T>> {
        let n = self.n;
        let mut v = match &self.lockstep {
            Some(SlabColumn { slabs, column, asked }) => {
                let i = asked.replace(asked.get() + 1);
                let mut made = slabs.made.borrow_mut();
                if made.len() == i {
                    made.push(Arc::new(self.gpu.alloc(n * slabs.k)?));
                }
                DeviceVector::column_of(made[i].clone(), *column, n)
            }
            None => DeviceVector::column_of(Arc::new(self.gpu.alloc(n)?), 0, n),
        };
        if let Some(init) = init {
            self.gpu.stream().memcpy_htod(init, &mut *v)?;
        }
        Ok(v)
    }
    fn optional(&self, init: Option<&[T]>) -> Result<DeviceVector<T>> {
        if self.use_d != 0 {
            self.vector(init)
        } else {
            Ok(DeviceVector::column_of(Arc::new(self.gpu.alloc(1)?), 0, 1))
        }
    }
    fn download(&self, v: &DeviceVector<T>) -> Result<Vec<T>> {
        self.gpu.download(v)
    }
    fn set_scalars(&mut self, values: &[(usize, f64)]) -> Result<()> {
        for &(i, v) in values {
            self.initial[i] = v;
        }
        self.gpu.stream().memcpy_htod(&self.initial, &mut self.s)?;
        Ok(())
    }
    fn product(&self, x: &DeviceVector<T>, y: &mut DeviceVector<T>) -> Result<()> {
        self.a.spmv(x, y)
    }
    fn preconditioned(&self) -> bool {
        self.use_d != 0
    }
    fn dots(
        &self, a: &DeviceVector<T>, b: &DeviceVector<T>, c: &DeviceVector<T>, op: Op,
    ) -> Result<()> {
        let op = op as u32;
        unsafe {
            self.kernels.dots.launch(self.gpu, |l| {
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
    fn cg_update(&self, vs: &mut CgVectors<DeviceVector<T>>) -> Result<()> {
        let CgVectors { x, r, z, p, q } = &*vs;
        unsafe {
            self.step(CG_UPDATE, Some(&(Op::CgRz as u32)), |l| {
                l.arg(p).arg(q).arg(&self.d).arg(&self.use_d).arg(x).arg(r).arg(z);
            })
        }
    }
    fn cg_direction(&self, vs: &mut CgVectors<DeviceVector<T>>) -> Result<()> {
        let (z, p) = vs.direction(self.use_d != 0);
        unsafe {
            self.step(CG_DIRECTION, None, |l| {
                l.arg(z).arg(&*p);
            })
        }
    }
    fn bi_direction(&self, vs: &mut BiVectors<DeviceVector<T>>) -> Result<()> {
        let BiVectors { r, v, p, p_hat, .. } = &*vs;
        unsafe {
            self.step(BI_DIRECTION, None, |l| {
                l.arg(r).arg(v).arg(&self.d).arg(&self.use_d).arg(p).arg(p_hat);
            })
        }
    }
    fn bi_s(&self, vs: &mut BiVectors<DeviceVector<T>>) -> Result<()> {
        let BiVectors { v, r, s_hat, .. } = &*vs;
        unsafe {
            self.step(BI_S, Some(&(Op::BiS as u32)), |l| {
                l.arg(v).arg(&self.d).arg(&self.use_d).arg(r).arg(s_hat);
            })
        }
    }
    fn bi_update(&self, vs: &mut BiVectors<DeviceVector<T>>) -> Result<()> {
        let ((p_used, s_hat, t, r_hat), (x, r)) = vs.update(self.use_d != 0);
        unsafe {
            self.step(BI_UPDATE, Some(&(Op::BiRho as u32)), |l| {
                l.arg(p_used).arg(s_hat).arg(t).arg(r_hat).arg(&self.use_d).arg(&*x).arg(&*r);
            })
        }
    }
    fn mr_alpha(&self, vs: &mut MrVectors<DeviceVector<T>>) -> Result<()> {
        let MrVectors { v, r1, q, .. } = &*vs;
        unsafe {
            self.step(MR_ALPHA, Some(&(Op::MrAlpha as u32)), |l| {
                l.arg(v).arg(r1).arg(q);
            })
        }
    }
    fn mr_beta(&self, vs: &mut MrVectors<DeviceVector<T>>) -> Result<()> {
        let MrVectors { q, r1, r2, y, .. } = &*vs;
        unsafe {
            self.step(MR_BETA, Some(&(Op::MrBeta as u32)), |l| {
                l.arg(q).arg(&self.d).arg(&self.use_d).arg(r1).arg(r2).arg(y);
            })
        }
    }
    fn mr_update(&self, vs: &mut MrVectors<DeviceVector<T>>) -> Result<()> {
        let y = vs.y_used(self.use_d != 0);
        let MrVectors { v, w1, w2, x, .. } = &*vs;
        unsafe {
            self.step(MR_UPDATE, Some(&(Op::MrCheck as u32)), |l| {
                l.arg(y).arg(v).arg(w1).arg(w2).arg(x);
            })
        }
    }
    fn gm_basis(&mut self, vs: &GmVectors<DeviceVector<T>>) -> Result<()> {
        self.table = Some(address_table(self.gpu, vs.basis.iter().map(|v| v.as_view()))?);
        Ok(())
    }
    fn gm_dots(&self, _: &mut GmVectors<DeviceVector<T>>, j: usize) -> Result<()> {
        let (table, j) = (self.table(), j as u32);
        unsafe {
            self.step(GM_DOTS, Some(&(Op::GmH1 as u32)), |l| {
                l.arg(table).arg(&j);
            })
        }
    }
    fn gm_subtract(&self, vs: &mut GmVectors<DeviceVector<T>>, j: usize, norm: bool) -> Result<()> {
        let (table, j) = (self.table(), j as u32);
        let (norm, op) = if norm { (1u32, Op::GmArnoldi) } else { (0, Op::GmH2) };
        unsafe {
            self.step(GM_SUBTRACT, Some(&(op as u32)), |l| {
                l.arg(table).arg(&j).arg(&norm).arg(&self.d).arg(&self.use_d).arg(&vs.z);
            })
        }
    }
    fn gm_fused(&self, vs: &mut GmVectors<DeviceVector<T>>, j: usize) -> Result<bool> {
        if blocks(self.n) != 1 {
            return Ok(false);
        }
        let (table, j) = (self.table(), j as u32);
        unsafe {
            self.step(GM_FUSED, None, |l| {
                l.arg(table).arg(&j).arg(&self.d).arg(&self.use_d).arg(&vs.z);
            })?;
        }
        Ok(true)
    }
    fn gm_update(&self, vs: &mut GmVectors<DeviceVector<T>>) -> Result<()> {
        let table = self.table();
        unsafe {
            self.step(GM_UPDATE, None, |l| {
                l.arg(table).arg(&self.d).arg(&self.use_d).arg(&vs.x);
            })
        }
    }
    fn gm_restart(&self, vs: &mut GmVectors<DeviceVector<T>>) -> Result<()> {
        unsafe {
            self.step(GM_RESTART, Some(&(Op::GmRestart as u32)), |l| {
                l.arg(&vs.b).arg(&vs.basis[0]).arg(&self.d).arg(&self.use_d).arg(&vs.z);
            })
        }
    }
    fn scalars(&self) -> Result<Vec<f64>> {
        self.gpu.download(&self.s)
    }
    fn products(&self, xs: &[&DeviceVector<T>], ys: &mut [&mut DeviceVector<T>]) -> Result<()> {
        let (n, k) = (self.n, xs.len());
        let x = DeviceVector::block_of(xs.iter().copied(), n);
        match (x, DeviceVector::block_of(ys.iter().map(|y| &**y), n)) {
            // The lock step's p's and q's: their slabs are X and Y.
            (Some(x), Some(mut y)) => {
                self.a.apply_block(T::ONE, &x, T::ZERO, &mut y, Block::columns(k))
            }
            _ => xs.iter().zip(ys).try_for_each(|(x, y)| self.product(x, y)),
        }
    }
    fn reserve_products(&mut self, k: usize) -> Result<()> {
        let (x, mut y) = (self.gpu.alloc(self.n * k)?, self.gpu.alloc(self.n * k)?);
        // One block product now: its first call may build a copy or load a module, which a
        // graph capture cannot hold.
        self.a.apply_block(T::ONE, &x, T::ZERO, &mut y, Block::columns(k))
    }
    fn run_until(
        &self, iteration: &mut dyn FnMut() -> Result<()>, pace: Pace,
        scalars: &dyn Fn() -> Result<Vec<f64>>,
    ) -> Result<Stopped> {
        let graph = if self.settings.graph { self.gpu.capture(iteration) } else { None };
        let captured = graph.is_some();
        let mut replay = || match &graph {
            Some(g) => g.launch(),
            None => iteration(),
        };
        let progress = self.settings.progress.as_ref();
        drive(pace, progress, self.bnorm, &mut replay, scalars, captured)
    }
}
