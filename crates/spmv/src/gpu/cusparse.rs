//! A cuSPARSE handle bound to the [`Gpu`](super::Gpu)'s stream, and status checking.

use cudarc::cusparse::sys;

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

/// An owned cuSPARSE handle whose work goes to `stream`.
pub struct Handle(sys::cusparseHandle_t);

impl Handle {
    pub fn new(stream: &cudarc::driver::CudaStream) -> Result<Self> {
        if !available() {
            return Err(Error::NoGpu("the cuSPARSE library (libcusparse.so.12) was not found".into()));
        }
        stream.context().bind_to_thread()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: plain FFI; the handle is destroyed once in Drop.
        unsafe {
            check(sys::cusparseCreate(&mut raw), "cusparseCreate")?;
            let handle = Handle(raw);
            check(sys::cusparseSetStream(raw, stream.cu_stream() as sys::cudaStream_t), "cusparseSetStream")?;
            Ok(handle)
        }
    }
    pub fn raw(&self) -> sys::cusparseHandle_t {
        self.0
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: created by cusparseCreate, destroyed once.
        unsafe {
            sys::cusparseDestroy(self.0);
        }
    }
}
