//! Iterative methods on top of any storage format.
//!
//! A solver needs a [`Solvable`] matrix: on the host any [`LinearOperator`] over host vectors
//! (any registered format's CPU path, a plain [`Csr`], the oracle, or a closure through
//! [`FnOperator`]); on the GPU a [`DeviceMatrix`](crate::formats::DeviceMatrix), i.e. any
//! format after `upload`; over several GPUs a
//! [`DistributedMatrix`](crate::distributed::DistributedMatrix); or the front door's
//! [`Operator`](crate::Operator) on its backend. One entry point per method ([`cg`],
//! [`bicgstab`], [`pagerank()`]); each method is written once over the backends' engines (`engine`). The solvers' own vector work on the GPU is in small CUDA kernels
//! of their own ([`KERNEL_MODULES`], compiled with the formats' by `tests/kernels/compile.rs`).
//!
//! - [`krylov`]: the settings and outcomes of conjugate gradients and BiCGSTAB (optional
//!   Jacobi preconditioner); [`krylov_gpu`]: one GPU's engine, the whole iteration on the
//!   device and replayed as a CUDA graph.
//! - [`pagerank`]: PageRank by power iteration, dangling nodes redistributed, on the CPU or
//!   entirely on the GPU; the exact reference ranking and the top-k agreement of the BRCP
//!   paper's experiment.

pub(crate) mod engine;
pub mod krylov;
pub mod krylov_gpu;
pub(crate) mod lockstep;
pub(crate) mod methods;
pub mod pagerank;

pub use krylov::{jacobi, jacobi_rows, KrylovSettings, Method, Outcome, Progress, Solution};
pub use methods::{
    bicgstab, cg, gmres, minres, solve, solve_block, solve_block_tols, Backing, OwnEngines,
    Solvable,
};

pub use pagerank::{
    pagerank, pagerank_exact, top_k, top_k_agreement, Agreement, EdgeWeights, PageRank, Settings,
    Transition,
};

use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};
use crate::operator::{host_block, Block, LinearOperator};
use crate::reference::Oracle;

/// The block tree reduction of krylov.cu and pagerank.cu (a header of both modules).
const TREE: &str = include_str!("tree.cuh");

/// The CUDA modules of the solvers.
pub const KERNEL_MODULES: &[KernelModule] = &[pagerank::KERNELS, krylov_gpu::KERNELS];

/// The oracle's product (exact products, compensated sums; f64 only): the reference.
pub struct OracleOperator<'a>(pub &'a Csr<f64>);

impl LinearOperator<f64> for OracleOperator<'_> {
    type Vector = [f64];
    fn shape(&self) -> (usize, usize) {
        (self.0.nrows(), self.0.ncols())
    }
    fn apply(&self, alpha: f64, x: &[f64], beta: f64, y: &mut [f64]) -> Result<()> {
        check_lengths(self.shape(), x.len(), y.len())?;
        crate::formats::host::combine(alpha, beta, y, |out| {
            out.copy_from_slice(&Oracle::new(self.0, x).y)
        });
        Ok(())
    }
    fn apply_transpose(&self, alpha: f64, x: &[f64], beta: f64, y: &mut [f64]) -> Result<()> {
        OracleOperator(&self.0.transpose()?).apply(alpha, x, beta, y)
    }
    fn apply_block(&self, alpha: f64, x: &[f64], beta: f64, y: &mut [f64], b: Block) -> Result<()> {
        let apply = |a, x: &[f64], b, y: &mut [f64]| self.apply(a, x, b, y);
        host_block(self.shape(), apply, (alpha, x, beta, y), b)
    }
}

impl Solvable<f64> for OracleOperator<'_> {
    fn backing(&self) -> Backing<'_, f64> {
        Backing::Host(self)
    }
}

/// A closure `|x, y| ...` that writes `y = A·x` for an `nrows × ncols` A (no transposed product).
pub struct FnOperator<F> {
    /// (rows, columns) of A.
    pub shape: (usize, usize),
    /// Writes `y = A·x`.
    pub apply: F,
}

impl<T: Scalar, F: Fn(&[T], &mut [T]) + Send + Sync> LinearOperator<T> for FnOperator<F> {
    type Vector = [T];
    fn shape(&self) -> (usize, usize) {
        self.shape
    }
    fn apply(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) -> Result<()> {
        check_lengths(self.shape, x.len(), y.len())?;
        crate::formats::host::combine(alpha, beta, y, |out| (self.apply)(x, out));
        Ok(())
    }
    fn apply_transpose(&self, _: T, _: &[T], _: T, _: &mut [T]) -> Result<()> {
        Err(Error::Unsupported("a closure operator has no transposed product".into()))
    }
    fn apply_block(&self, alpha: T, x: &[T], beta: T, y: &mut [T], b: Block) -> Result<()> {
        let apply = |a, x: &[T], b, y: &mut [T]| self.apply(a, x, b, y);
        host_block(self.shape, apply, (alpha, x, beta, y), b)
    }
}

impl<T: Scalar, F: Fn(&[T], &mut [T]) + Send + Sync> Solvable<T> for FnOperator<F> {
    fn backing(&self) -> Backing<'_, T> {
        Backing::Host(self)
    }
}

fn check_lengths((nrows, ncols): (usize, usize), x: usize, y: usize) -> Result<()> {
    if x != ncols || y != nrows {
        return Err(Error::Shape(format!(
            "vectors of length x = {x}, y = {y} given for a {nrows} x {ncols} matrix"
        )));
    }
    Ok(())
}
