//! Kernel modules and their run-time compilation with NVRTC.
//!
//! Each format keeps its CUDA C in its own `kernel.cu`; a [`KernelModule`] names it, and the
//! [`Gpu`](super::Gpu) compiles each module once per process for the device's own
//! architecture and caches the loaded module. NVRTC needs no GPU, so [`compile`] also runs
//! on a machine without one (CI compiles every registered module for `sm_90`).

use cudarc::nvrtc::{self, CompileOptions, Ptx};

use crate::error::{Error, Result};

/// Source of `common.cuh`, prepended to every module.
pub const COMMON_HEADER: &str = include_str!("common.cuh");

/// One CUDA C translation unit: a name (the cache key), its source, and the headers of
/// device code it shares with other modules of its family (prepended, in order, after
/// `common.cuh`).
#[derive(Clone, Copy, Debug)]
pub struct KernelModule {
    pub name: &'static str,
    pub source: &'static str,
    pub headers: &'static [&'static str],
}

/// The runtime's own kernels (bandwidth copy, fill).
pub const UTIL_MODULE: KernelModule = KernelModule { name: "util", source: include_str!("util.cu"), headers: &[] };

/// Whether the NVRTC library can be loaded (checked before any call, since cudarc panics
/// when a library is missing).
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { nvrtc::sys::is_culib_present() }
}

/// Compiles a module to PTX for `arch` (e.g. "sm_90"). Errors carry NVRTC's log.
pub fn compile(module: &KernelModule, arch: &'static str) -> Result<Ptx> {
    if !nvrtc_available() {
        return Err(Error::NoGpu(
            "the NVRTC library (libnvrtc.so.13) was not found; put its folder on LD_LIBRARY_PATH".into(),
        ));
    }
    let headers: String = module.headers.concat();
    let source = format!("{COMMON_HEADER}\n{headers}\n#line 1 \"{}.cu\"\n{}", module.name, module.source);
    let opts = CompileOptions {
        arch: Some(arch),
        options: vec!["-std=c++17".into(), "-default-device".into()],
        name: Some(format!("{}.cu", module.name)),
        ..Default::default()
    };
    nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| match e {
        nvrtc::CompileError::CompileError { log, .. } => Error::cuda(format!(
            "kernel module '{}' failed to compile for {arch}:\n{}",
            module.name,
            log.to_string_lossy()
        )),
        other => Error::cuda(format!("kernel module '{}': NVRTC: {other:?}", module.name)),
    })
}

/// The `sm_XY` architecture name for a compute capability (leaked once per distinct value,
/// since NVRTC options in cudarc take `&'static str`).
pub fn arch_name(major: i32, minor: i32) -> &'static str {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashMap<(i32, i32), &'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    names.entry((major, minor)).or_insert_with(|| Box::leak(format!("sm_{major}{minor}").into_boxed_str()))
}
