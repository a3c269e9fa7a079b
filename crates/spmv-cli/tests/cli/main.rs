//! The `spmv` binary end to end, one module per subject, built as one test binary.

mod common;

mod end_to_end;
mod hostile;
mod launch;
mod pagerank;
mod pictures;
mod reliability;
