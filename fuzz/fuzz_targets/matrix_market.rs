//! The Matrix Market reader on arbitrary bytes: see `spmv_fuzz::matrix_market`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| spmv_fuzz::matrix_market(data));
