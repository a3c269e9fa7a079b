//! Every format's CPU path on a matrix and spec decoded from arbitrary bytes: see
//! `spmv_fuzz::formats_cpu`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| spmv_fuzz::formats_cpu(data));
