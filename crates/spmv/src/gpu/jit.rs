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
    /// Module name: the cache key and the name in compile errors.
    pub name: &'static str,
    /// The CUDA C source (`kernel.cu`).
    pub source: &'static str,
    /// Sources of the family's shared headers, prepended in order after `common.cuh`.
    pub headers: &'static [&'static str],
}

/// Constants that Rust and a kernel module share, written once: a module of `pub const`s,
/// and the same values as `#define PREFIX_NAME value` lines in its `CUDA` (a header of the
/// kernel module), so the two sides cannot drift apart.
macro_rules! cuda_constants {
    ($(#[$meta:meta])* $vis:vis mod $module:ident: $ty:ty = $prefix:literal {
        $($(#[$doc:meta])* $name:ident = $value:literal,)*
    }) => {
        $(#[$meta])*
        $vis mod $module {
            $($(#[$doc])* pub const $name: $ty = $value;)*
            /// These constants as CUDA `#define`s.
            pub const CUDA: &str =
                concat!($("#define ", $prefix, stringify!($name), " ", stringify!($value), "\n",)*);
        }
    };
}
pub(crate) use cuda_constants;

/// The runtime's own kernels (bandwidth copy, fill).
pub const UTIL_MODULE: KernelModule =
    KernelModule { name: "util", source: include_str!("util.cu"), headers: &[] };

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
            "the NVRTC library (libnvrtc.so.13) was not found; put its folder on LD_LIBRARY_PATH"
                .into(),
        ));
    }
    let source = full_source(module);
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

/// A module's source as NVRTC compiles it: `common.cuh`, the module's headers, its own text.
fn full_source(module: &KernelModule) -> String {
    let headers: String = module.headers.concat();
    format!("{COMMON_HEADER}\n{headers}\n#line 1 \"{}.cu\"\n{}", module.name, module.source)
}

/// Compiles a module to machine code (a cubin) for the real architecture `arch` (e.g.
/// "sm_90"), with the same options as [`compile`]; returns it with NVRTC's log (ptxas's
/// register and spill report). No GPU needed: tests disassemble it to check instructions.
pub fn compile_cubin(module: &KernelModule, arch: &str) -> Result<(Vec<u8>, String)> {
    use cudarc::nvrtc::{result, sys};
    if !nvrtc_available() {
        return Err(Error::NoGpu(
            "the NVRTC library (libnvrtc.so.13) was not found; put its folder on LD_LIBRARY_PATH"
                .into(),
        ));
    }
    let fail = |what: &str, e: &dyn std::fmt::Debug| {
        Error::cuda(format!("kernel module '{}': NVRTC {what}: {e:?}", module.name))
    };
    let source = std::ffi::CString::new(full_source(module)).map_err(|e| fail("source", &e))?;
    let name =
        std::ffi::CString::new(format!("{}.cu", module.name)).map_err(|e| fail("name", &e))?;
    let program = result::create_program(&source, Some(&name)).map_err(|e| fail("create", &e))?;
    let options = [
        format!("--gpu-architecture={arch}"),
        "-std=c++17".into(),
        "-default-device".into(),
        "--ptxas-options=-v".into(),
    ];
    // SAFETY: `program` is a live NVRTC program until destroy_program below; the buffers
    // for the log and the cubin are sized by NVRTC's own size queries.
    unsafe {
        let compiled = result::compile_program(program, &options);
        let log = result::get_program_log(program).map(|l| {
            let bytes: Vec<u8> = l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect();
            String::from_utf8_lossy(&bytes).into_owned()
        });
        let cubin = compiled.map_err(|e| fail("compile", &e)).and_then(|()| {
            let mut size = 0usize;
            sys::nvrtcGetCUBINSize(program, &mut size)
                .result()
                .map_err(|e| fail("cubin size", &e))?;
            let mut cubin = vec![0u8; size];
            sys::nvrtcGetCUBIN(program, cubin.as_mut_ptr().cast())
                .result()
                .map_err(|e| fail("cubin", &e))?;
            Ok(cubin)
        });
        let _ = result::destroy_program(program);
        let log = log.unwrap_or_default();
        match cubin {
            Ok(cubin) => Ok((cubin, log)),
            Err(e) => Err(Error::cuda(format!("{e}\n{log}"))),
        }
    }
}

/// The `sm_XY` architecture name for a compute capability (leaked once per distinct value,
/// since NVRTC options in cudarc take `&'static str`).
pub fn arch_name(major: i32, minor: i32) -> &'static str {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashMap<(i32, i32), &'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    names
        .entry((major, minor))
        .or_insert_with(|| Box::leak(format!("sm_{major}{minor}").into_boxed_str()))
}
