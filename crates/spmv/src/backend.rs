//! Where products run: a GPU or the CPU ([`Backend`]), below the front door, the choice of
//! formats (tune measures on a backend) and the solvers.

use std::sync::Arc;

use crate::error::Result;
use crate::gpu::Gpu;

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
