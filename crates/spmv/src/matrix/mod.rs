//! Host matrix types: [`Csr`] (the hub), [`Coo`] (triplets), and the [`Scalar`] trait.

pub(crate) mod coo;
mod csr;
mod scalar;
pub(crate) mod threads;

pub use coo::Coo;
pub use csr::Csr;
pub use scalar::{mul_acc, Precision, Scalar};
