//! Reading and writing matrices, and generating them.
//!
//! - [`mtx`]: Matrix Market (`.mtx`, `.mtx.gz`) reader and writer.
//! - [`gen`]: seeded generators (stencils, Kronecker graphs, random, banded, power-law ...).
//! - [`output`]: output files written whole or not at all (temporary file, then rename).

pub mod gen;
pub mod inputs;
pub mod mtx;
pub mod output;

pub use mtx::{
    read_header, read_matrix_market, read_matrix_market_bytes, read_matrix_market_bytes_with,
    read_matrix_market_rows, read_matrix_market_with, write_matrix_market, write_matrix_market_to,
    MatrixMarketHeader, ReadOptions,
};
