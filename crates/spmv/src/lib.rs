//! # spmv
//!
//! Sparse matrix–vector multiplication (y = A·x) in the storage formats of the research
//! literature, each with its conversion from CSR, a CPU implementation and CUDA kernels,
//! plus the tools to benchmark them against cuSPARSE and the memory-bandwidth limit.
//!
//! - [`Matrix`], [`Backend`], [`Operator`]: the front door — read or generate a matrix, put
//!   it in any format on the GPU (or the CPU), multiply: `y = α·A·x + β·y`.
//! - [`matrix`]: [`Csr`], [`Coo`], the [`Scalar`] element types.
//! - [`io`]: Matrix Market reading and writing, matrix generators.
//! - [`reference`](mod@reference): the oracle every result is checked against.
//! - [`choice`]: how a matrix gets its format: named (`sell-c-sigma:c=32`), or chosen per
//!   matrix by `auto` (a model) or `tune` (measured).
//! - [`formats`]: the registry of storage formats with their parameters, and the two handles
//!   every format is used through: [`HostMatrix`] (CPU) and [`DeviceMatrix`] (GPU).
//! - [`gpu`]: CUDA runtime (device detection, NVRTC kernel cache, timing, cuSPARSE).
//! - [`bench`](mod@bench): the measurements behind `spmv bench`.
//! - [`reorder`]: locality-improving symmetric permutations (RCM, degree) around any format.
//! - [`solve`]: solvers on top of any format (CG, BiCGSTAB, PageRank).
//! - [`distributed`]: one matrix over several GPUs (row parts, halo exchange), with CG.
//! - [`picture`]: the report page of bench runs, a matrix's sparsity pattern, a solve's
//!   residual history (SVG).

#![warn(missing_docs)]

mod api;
pub mod app;
pub mod auto;
pub mod backend;
pub mod bench;
pub mod choice;
pub mod distributed;
pub mod error;
pub mod formats;
pub mod gpu;
pub mod io;
pub mod matrix;
mod measure;
pub mod operator;
pub mod picture;
pub mod reference;
pub mod reorder;
pub mod solve;
mod spec_syntax;

pub use api::{Matrix, Operator};
pub use backend::Backend;
pub use error::{Error, Result};
pub use formats::{DeviceMatrix, FormatHandle, FormatSpec, HostMatrix, MatrixInfo};
pub use operator::{overlap, Block, Layout, LinearOperator, TransposePath};

/// Every CUDA C module of the library: the runtime's, the formats' and the solvers'. CI
/// compiles each for `sm_90` (`tests/kernels/compile.rs`).
pub fn all_kernel_modules() -> Vec<gpu::KernelModule> {
    let mut modules = vec![gpu::jit::UTIL_MODULE];
    modules.extend_from_slice(solve::KERNEL_MODULES);
    modules.extend(formats::kernel_modules());
    modules.push(reorder::KERNELS);
    modules.push(bench::bound::KERNELS);
    modules
}
/// The commit this library was built from (`git rev-parse HEAD` at build time, `+dirty` when
/// the work tree had changes then), where the build had git; reports name it.
pub const COMMIT: Option<&str> = option_env!("SPMV_COMMIT");

/// Half precision (`half::f16`), the third element type: f16 values and x, f32 sums, f16 y.
pub use half::f16;
pub use matrix::{Coo, Csr, Precision, Scalar};
