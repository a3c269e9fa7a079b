//! Iterative methods on top of any storage format.
//!
//! A solver needs only "something that does y = A·x": on the host a [`HostOperator`] (any
//! registered format's CPU path, a plain [`Csr`], the oracle, or a closure through
//! [`FnOperator`]); on the GPU a [`DeviceMatrix`](crate::formats::DeviceMatrix), i.e. any
//! format after `upload`. The solvers' own vector work on the GPU is in small CUDA kernels
//! of their own ([`KERNEL_MODULES`], compiled with the formats' by `tests/kernels/compile.rs`).
//!
//! - [`krylov`]: conjugate gradients and BiCGSTAB with an optional Jacobi preconditioner on
//!   the host (the reference), and [`krylov_gpu`]: the same on the GPU, the whole iteration
//!   on the device and replayed as a CUDA graph.
//! - [`pagerank`]: PageRank by power iteration, dangling nodes redistributed, on the CPU or
//!   entirely on the GPU; the exact reference ranking and the top-k agreement of the BRCP
//!   paper's experiment.

pub mod krylov;
pub mod krylov_gpu;
pub mod pagerank;

pub use krylov::{bicgstab_host, cg_host, jacobi, KrylovSettings, Method, Outcome, Solution};
pub use krylov_gpu::{bicgstab_gpu, bicgstab_gpu_with_progress, cg_gpu, cg_gpu_with_progress};

pub use pagerank::{
    pagerank_exact, pagerank_gpu, pagerank_host, top_k, top_k_agreement, Agreement, EdgeWeights,
    PageRank, Settings, Transition,
};

use crate::error::{Error, Result};
use crate::formats::HostMatrix;
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::reference::Oracle;

/// The CUDA modules of the solvers.
pub const KERNEL_MODULES: &[KernelModule] = &[pagerank::KERNELS, krylov_gpu::KERNELS];

/// `y = A·x` on the host.
pub trait HostOperator<T> {
    /// `x` has `ncols` entries, `y` has `nrows`; every entry of `y` is written. Wrong
    /// lengths are an [`Error::Shape`] where the operator knows its shape.
    fn apply(&self, x: &[T], y: &mut [T]) -> Result<()>;
}

/// Any registered format, with its own CPU algorithm.
impl<T: Scalar> HostOperator<T> for HostMatrix<T> {
    fn apply(&self, x: &[T], y: &mut [T]) -> Result<()> {
        self.spmv(x, y)
    }
}

/// Plain CSR, rows over rayon's threads.
impl<T: Scalar> HostOperator<T> for Csr<T> {
    fn apply(&self, x: &[T], y: &mut [T]) -> Result<()> {
        check_lengths(self, x.len(), y.len())?;
        self.spmv_parallel(x, y);
        Ok(())
    }
}

fn check_lengths<T: Scalar>(a: &Csr<T>, x: usize, y: usize) -> Result<()> {
    if x != a.ncols() || y != a.nrows() {
        return Err(Error::Shape(format!(
            "vectors of length x = {x}, y = {y} given for a {} x {} matrix",
            a.nrows(),
            a.ncols()
        )));
    }
    Ok(())
}

/// The oracle's product (exact products, compensated sums; f64 only): the reference.
pub struct OracleOperator<'a>(pub &'a Csr<f64>);

impl HostOperator<f64> for OracleOperator<'_> {
    fn apply(&self, x: &[f64], y: &mut [f64]) -> Result<()> {
        check_lengths(self.0, x.len(), y.len())?;
        y.copy_from_slice(&Oracle::new(self.0, x).y);
        Ok(())
    }
}

/// A closure `|x, y| ...` that writes `y = A·x`.
pub struct FnOperator<F>(pub F);

impl<T, F: Fn(&[T], &mut [T])> HostOperator<T> for FnOperator<F> {
    fn apply(&self, x: &[T], y: &mut [T]) -> Result<()> {
        (self.0)(x, y);
        Ok(())
    }
}
