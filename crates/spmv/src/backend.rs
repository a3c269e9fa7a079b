//! Where products run: a GPU or the CPU ([`Backend`]), or row parts over several GPUs
//! ([`Target`]); below the front door, the choice of formats (tune measures on a backend),
//! the benchmark and the solvers.

use std::sync::Arc;

use crate::choice::Choice;
use crate::distributed::{DistributedMatrix, Exchange, Ranks};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::matrix::{Csr, Scalar};

/// Where products run.
#[derive(Clone, Debug)]
pub enum Backend {
    /// On this CUDA device: formats are uploaded and products run in its kernels.
    Gpu(Arc<Gpu>),
    /// On the host: each format's own CPU algorithm, in parallel threads.
    Cpu,
}

impl Backend {
    /// The first CUDA device, or the CPU when none can be used (the reason goes to stderr).
    pub fn detect() -> Backend {
        match Self::gpu() {
            Ok(gpu) => gpu,
            Err(e) => {
                eprintln!("spmv: {e}; running on the CPU instead");
                Backend::Cpu
            }
        }
    }

    /// The first CUDA device, or [`Error::NoGpu`](crate::Error::NoGpu) saying why there is none.
    pub fn gpu() -> Result<Backend> {
        Ok(Backend::Gpu(Gpu::detect()?))
    }

    /// "GPU: NVIDIA H200 (sm_90)" or "CPU (n threads)".
    pub fn describe(&self) -> String {
        match self {
            Backend::Gpu(gpu) => format!("GPU: {} ({})", gpu.name(), gpu.arch()),
            Backend::Cpu => format!("CPU ({} threads)", rayon::current_num_threads()),
        }
    }
}

/// Where a run's products go: one backend, or row parts over several GPUs.
#[derive(Clone)]
pub enum Target {
    /// The CPU or one GPU.
    One(Backend),
    /// One row part per listed device (an ordinal may repeat).
    Parts(Parts),
    /// One row part per process, this process's on its GPU (a multi-process run): the
    /// matrices given are this process's rows ([`crate::distributed::own_rows`]).
    Ranks(RankPlace),
}

/// This process's place in a multi-process run: its GPU and the other ranks.
#[derive(Clone)]
pub struct RankPlace {
    /// The GPU this process drives.
    pub gpu: Arc<Gpu>,
    /// The ranks, met.
    pub ranks: Ranks,
}

/// The GPUs of a run over several devices.
#[derive(Clone)]
pub struct Parts {
    /// One handle per part (the same handle where an ordinal repeats).
    pub gpus: Vec<Arc<Gpu>>,
    /// The parts' device ordinals.
    pub devices: Vec<usize>,
    /// How the halo of x travels between parts.
    pub exchange: Exchange,
}

impl Target {
    /// The backend of the machine figures (for parts, the first part's GPU).
    pub fn backend(&self) -> Backend {
        match self {
            Target::One(b) => b.clone(),
            Target::Parts(p) => Backend::Gpu(p.gpus[0].clone()),
            Target::Ranks(r) => Backend::Gpu(r.gpu.clone()),
        }
    }

    /// "GPU: NVIDIA H200 (sm_90)", "2 GPU parts on devices [0, 1], halo by peer".
    pub fn describe(&self) -> String {
        match self {
            Target::One(b) => b.describe(),
            Target::Parts(p) => {
                let n = p.devices.len();
                let (parts, devices) =
                    if n == 1 { ("part", "device") } else { ("parts", "devices") };
                format!("{n} GPU {parts} on {devices} {:?}, halo by {}", p.devices, p.exchange)
            }
            Target::Ranks(r) => {
                let w = r.ranks.world();
                let gpu = format!("{} ({})", r.gpu.name(), r.gpu.arch());
                format!(
                    "{} processes ({}), one GPU each: {gpu} on rank {}",
                    w.size, w.launcher, w.rank
                )
            }
        }
    }
}

impl Parts {
    /// `a` over these GPUs in `spec`, its halo moved by this exchange.
    pub fn distribute<T: Scalar>(&self, a: &Csr<T>, spec: &Choice) -> Result<DistributedMatrix<T>> {
        let mut d = DistributedMatrix::new(a, &self.gpus, spec)?;
        d.set_exchange(self.exchange)?;
        Ok(d)
    }
}
