//! The integration tests of `spmv`, one module per subject, built as one test binary (one
//! link of the library instead of one per file). Select a subject with a name filter:
//! `cargo test --release -p spmv --test suite -- gpu::` (GPU tests need `--include-ignored`).

mod common;

mod block_solve;
mod diagonal_cpu;
mod distributed;
mod formats_cpu;
mod gen;
mod gpu;
mod gpu_brcp;
mod gpu_deterministic;
mod gpu_diagonal;
mod minres_gmres;
mod mtx;
mod offsets;
mod operator;
mod pagerank;
mod ranks;
mod reorder;
mod sanitize;
mod solve;
mod values;
