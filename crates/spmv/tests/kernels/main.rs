//! The checks that need NVRTC (and nvdisasm) but no GPU: every kernel compiles for sm_90, and
//! DASP's and merge-path CSR's machine code. They run without the test harness (Cargo.toml: `harness = false`) so
//! that a machine without the tools reports each check as skipped, with the reason, instead
//! of passing it silently. CI sets SPMV_REQUIRE_NVRTC=1, which turns a missing tool into a
//! failure. A failed check panics (exit code 101).

mod compile;
mod sass;

type Check = fn() -> Result<(), &'static str>;

fn main() {
    let checks: [(&str, Check); 3] = [
        ("every_kernel_module_compiles_for_sm_90", compile::every_kernel_module_compiles_for_sm_90),
        (
            "dasp_runs_on_the_tensor_cores_without_spills",
            sass::dasp_runs_on_the_tensor_cores_without_spills,
        ),
        ("merge_csr_block_kernels_do_not_spill", sass::merge_csr_block_kernels_do_not_spill),
    ];
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let (mut passed, mut skipped) = (0, 0);
    for (name, check) in checks {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        match check() {
            Ok(()) => {
                passed += 1;
                println!("test {name} ... ok");
            }
            Err(why) => {
                skipped += 1;
                println!("test {name} ... SKIPPED: {why}");
            }
        }
    }
    println!("\ntest result: ok. {passed} passed; 0 failed; {skipped} skipped");
}
