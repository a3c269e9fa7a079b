//! The machine code of DASP's kernels, read without a GPU: NVRTC compiles the module to a
//! cubin for sm_90 and nvdisasm (from PyPI, scripts/cuda-tools.sh; its path in
//! SPMV_NVDISASM) disassembles it. The FP64 kernel must run its tiles on the tensor cores
//! (DMMA), the FP16 one too (HMMA, f16 inputs with f32 accumulators), and no DASP kernel
//! may spill registers (ptxas's report); nor may merge-path CSR's block kernels.
//! CI sets SPMV_REQUIRE_NVRTC=1, which makes a missing NVRTC or nvdisasm a failure.

use std::path::PathBuf;

use spmv::gpu::jit;

fn required() -> bool {
    std::env::var_os("SPMV_REQUIRE_NVRTC").is_some()
}

fn nvdisasm() -> Option<PathBuf> {
    let path = std::env::var_os("SPMV_NVDISASM").map(PathBuf::from)?;
    path.is_file().then_some(path)
}

/// The SASS of every kernel of `module`, by kernel name.
fn sass(module: &spmv::gpu::KernelModule, tool: &PathBuf) -> (Vec<(String, String)>, String) {
    let (cubin, log) = jit::compile_cubin(module, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    let file = std::env::temp_dir().join(format!(
        "spmv-sass-{}-{}.cubin",
        module.name,
        std::process::id()
    ));
    std::fs::write(&file, cubin).unwrap();
    let out =
        std::process::Command::new(tool).arg("-c").arg(&file).output().expect("nvdisasm runs");
    let _ = std::fs::remove_file(&file);
    assert!(out.status.success(), "nvdisasm failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    // Sections start with a line `.section .text.<kernel>,...`.
    let mut kernels: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let name = line
            .trim()
            .strip_prefix(".section")
            .map(str::trim)
            .and_then(|s| s.strip_prefix(".text."))
            .and_then(|s| s.split(',').next());
        match (name, kernels.last_mut()) {
            (Some(name), _) => kernels.push((name.to_string(), String::new())),
            (None, Some((_, body))) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    (kernels, log)
}

/// Whether the SASS has an instruction of `opcode` (e.g. "DMMA" matches `DMMA.8x8x4`, while
/// "MMA" alone would match the unrelated `HFMA2.MMA` move).
fn has(body: &str, opcode: &str) -> bool {
    body.split_whitespace()
        .any(|t| t == opcode || t.strip_prefix(opcode).is_some_and(|r| r.starts_with('.')))
}

/// ptxas's "N bytes spill stores, M bytes spill loads" for each function of the log.
fn spills(log: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut function = String::new();
    for line in log.lines() {
        if let Some(rest) = line.split("Function properties for ").nth(1) {
            function = rest.trim().to_string();
        } else if line.contains("spill stores") {
            out.push((function.clone(), line.trim().to_string()));
        }
    }
    out
}

/// nvdisasm, once NVRTC and it are found; else why `what` was not checked (a failure instead
/// where SPMV_REQUIRE_NVRTC is set).
fn tools(what: &'static str) -> Result<PathBuf, &'static str> {
    if !jit::nvrtc_available() {
        assert!(
            !required(),
            "SPMV_REQUIRE_NVRTC is set but libnvrtc.so.13 is not on LD_LIBRARY_PATH"
        );
        return Err(what);
    }
    let Some(tool) = nvdisasm() else {
        assert!(
            !required(),
            "SPMV_REQUIRE_NVRTC is set but SPMV_NVDISASM names no nvdisasm (scripts/cuda-tools.sh)"
        );
        return Err(what);
    };
    Ok(tool)
}

/// Fails on any function of the ptxas log `log` that spills registers.
fn assert_no_spills(log: &str, at_least: usize) {
    let reports = spills(log);
    assert!(reports.len() >= at_least, "ptxas reported {} functions", reports.len());
    for (function, report) in &reports {
        assert!(
            report.contains(" 0 bytes spill stores, 0 bytes spill loads"),
            "{function} spills registers: {report}"
        );
    }
}

pub fn dasp_runs_on_the_tensor_cores_without_spills() -> Result<(), &'static str> {
    let tool =
        tools("NVRTC or nvdisasm not found (scripts/cuda-tools.sh), DASP's SASS not checked")?;
    let (kernels, log) = sass(&spmv::formats::dasp::KERNELS, &tool);
    let body = |name: &str| {
        &kernels
            .iter()
            .find(|(k, _)| k == name)
            .unwrap_or_else(|| {
                panic!(
                    "no kernel {name} in the cubin: {:?}",
                    kernels.iter().map(|k| &k.0).collect::<Vec<_>>()
                )
            })
            .1
    };
    assert!(body("dasp_f64").contains("DMMA.8x8x4"), "dasp_f64 has no DMMA.8x8x4 instruction");
    assert!(
        body("dasp_f16").contains("HMMA.16816.F32"),
        "dasp_f16 has no HMMA.16816.F32 (m16n8k16, f32 accumulators)"
    );
    // FP32 runs on the CUDA cores (TF32 would round the inputs).
    for opcode in ["DMMA", "HMMA", "IMMA"] {
        assert!(
            !has(body("dasp_f32"), opcode),
            "dasp_f32 uses the tensor-core instruction {opcode}"
        );
    }
    // The matrix's arrays are read with the streaming hint (evict-first loads).
    assert!(
        has(body("dasp_f64"), "LDG") && body("dasp_f64").contains("LDG.E.EF"),
        "dasp_f64 has no evict-first (streaming) load"
    );
    // The block kernels (8 columns per launch, full and coded values): the same MMAs, and no
    // spills either.
    let (blocks, block_log) = sass(&spmv::formats::dasp::BLOCK_KERNELS, &tool);
    for name in ["dasp_block_row_f64", "dasp_block_col_f64"] {
        let body = &blocks.iter().find(|(k, _)| k == name).expect("a DASP block kernel").1;
        assert!(body.contains("DMMA.8x8x4"), "{name} has no DMMA.8x8x4 instruction");
    }
    let (_, coded_log) = sass(&spmv::formats::dasp::CODED_BLOCK_KERNELS, &tool);
    assert_no_spills(&(log + &block_log + &coded_log), 3);
    Ok(())
}

/// Merge-path CSR's block kernels (each column's walk in turn, 8 per launch) keep their sums
/// in registers: no spills for any items, offsets, layout or precision.
pub fn merge_csr_block_kernels_do_not_spill() -> Result<(), &'static str> {
    let tool = tools("NVRTC or nvdisasm not found (scripts/cuda-tools.sh), merge-csr's block kernels not checked")?;
    let (kernels, log) = sass(&spmv::formats::merge_csr::BLOCK_KERNELS, &tool);
    assert!(kernels.len() >= 72, "{} merge-csr block kernels", kernels.len());
    assert_no_spills(&log, 72);
    Ok(())
}
