//! A cuSPARSE handle bound to the [`Gpu`](super::Gpu)'s stream, and status checking.

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::cusparse::sys;
use cudarc::driver::CudaStream;

use crate::error::{Error, Result};

/// Whether libcusparse can be loaded.
pub fn available() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { sys::is_culib_present() }
}

/// Turns a cuSPARSE status into a `Result`, naming the call that failed.
pub fn check(status: sys::cusparseStatus_t, call: &str) -> Result<()> {
    if status == sys::cusparseStatus_t::CUSPARSE_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::cuda(format!("{call} failed: {status:?}")))
    }
}

/// A cuSPARSE handle whose work goes to one stream; [`Gpu::cusparse`](super::Gpu::cusparse)
/// makes one per device, shared by every cuSPARSE matrix on it.
pub struct Handle {
    raw: sys::cusparseHandle_t,
    /// Held around every call through the handle, so that matrices used from different
    /// threads never call cuSPARSE through the same handle at once.
    lock: Mutex<()>,
    /// Keeps the context alive until the handle is destroyed.
    _stream: Arc<CudaStream>,
}

// SAFETY: the handle is only used through `raw` while `lock` is held (every caller takes it),
// so one thread at a time; each use binds it to the caller's stream first.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Handle {
    /// A handle whose work goes to `stream`; [`Error::NoGpu`] when libcusparse is missing.
    pub fn new(stream: &Arc<CudaStream>) -> Result<Self> {
        if !available() {
            return Err(Error::NoGpu(
                "the cuSPARSE library (libcusparse.so.12) was not found".into(),
            ));
        }
        stream.context().bind_to_thread()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: plain FFI; the handle is destroyed once in Drop.
        unsafe {
            check(sys::cusparseCreate(&mut raw), "cusparseCreate")?;
            let handle = Handle { raw, lock: Mutex::new(()), _stream: stream.clone() };
            check(
                sys::cusparseSetStream(raw, stream.cu_stream() as sys::cudaStream_t),
                "cusparseSetStream",
            )?;
            Ok(handle)
        }
    }

    /// The raw handle bound to `stream` (the calling thread's [`crate::gpu::Gpu::stream`]: the
    /// shared stream, or its capture stream while the thread records a graph), with the guard
    /// that must be held while it is used.
    pub fn lock(&self, stream: &CudaStream) -> Result<(MutexGuard<'_, ()>, sys::cusparseHandle_t)> {
        let guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the handle is valid and used by this thread alone while the guard is held.
        check(
            unsafe { sys::cusparseSetStream(self.raw, stream.cu_stream() as sys::cudaStream_t) },
            "cusparseSetStream",
        )?;
        Ok((guard, self.raw))
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: created by cusparseCreate, destroyed once; the context is still alive.
        unsafe {
            sys::cusparseDestroy(self.raw);
        }
    }
}
