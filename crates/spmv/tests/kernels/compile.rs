//! Every registered CUDA kernel module compiles for sm_90 with NVRTC — no GPU needed.
//! CI sets SPMV_REQUIRE_NVRTC=1 (and installs NVRTC from PyPI) so a missing library fails.

use spmv::all_kernel_modules;
use spmv::formats::registry;
use spmv::gpu::jit;

pub fn every_kernel_module_compiles_for_sm_90() -> Result<(), &'static str> {
    if !jit::nvrtc_available() {
        assert!(
            std::env::var_os("SPMV_REQUIRE_NVRTC").is_none(),
            "SPMV_REQUIRE_NVRTC is set but libnvrtc.so.13 is not on LD_LIBRARY_PATH (see scripts/cuda-tools.sh)"
        );
        return Err("NVRTC not found, kernel compilation not checked (scripts/cuda-tools.sh; SPMV_REQUIRE_NVRTC=1 fails instead)");
    }
    let modules = all_kernel_modules();
    assert!(modules.len() >= 2, "the registry lists no kernel modules");
    for module in &modules {
        let ptx = jit::compile(module, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        let text = ptx.to_src();
        assert!(
            text.contains(".target sm_90"),
            "module {} was not compiled for sm_90",
            module.name
        );
        assert!(text.contains(".entry"), "module {} has no kernels", module.name);
    }
    // Kernel names the launch code asks for exist in the compiled modules.
    let csr = jit::compile(&spmv::formats::csr::KERNELS, "sm_90").unwrap().to_src();
    for name in ["csr_scalar_f64", "csr_scalar_f32", "csr_vector_2_f64", "csr_vector_32_f32"] {
        assert!(csr.contains(&format!(".entry {name}(")), "kernel {name} missing");
    }
    // The block kernels' names as gpu.rs builds them (dasp: per codec and offsets; merge-csr:
    // per items and offsets, and its fixup).
    let dasp = jit::compile(&spmv::formats::dasp::BLOCK_KERNELS, "sm_90").unwrap().to_src();
    let merge = jit::compile(&spmv::formats::merge_csr::BLOCK_KERNELS, "sm_90").unwrap().to_src();
    for (ptx, name) in [
        (&dasp, "dasp_block_row_f64"),
        (&dasp, "dasp_block_col_o64_f16"),
        (&merge, "merge_csr_block_7_row_f64"),
        (&merge, "merge_csr_block_15_o64_col_f32"),
        (&merge, "merge_csr_fixup_block_row_f16"),
    ] {
        assert!(ptx.contains(&format!(".entry {name}(")), "kernel {name} missing");
    }
    assert!(registry::<f64>().len() >= 4);
    Ok(())
}
