//! The library's error type. Every failure a user can cause (a bad file, a matrix a format
//! cannot hold, a missing GPU) is a variant here with a message that says what to fix.

use std::path::PathBuf;

/// Errors of the `spmv` library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Matrix Market (or generator spec) text is malformed; `line` is 1-based.
    #[error("line {line}: {message}")]
    Parse { line: usize, message: String },

    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },

    /// Input that is valid but not supported (e.g. complex Matrix Market files).
    #[error("unsupported: {0}")]
    Unsupported(String),

    /// A matrix that breaks the invariants of its type (e.g. unsorted CSR columns).
    #[error("invalid matrix: {0}")]
    InvalidMatrix(String),

    /// A storage format cannot represent this matrix (too much padding, index overflow ...).
    #[error("format {format}: {reason}")]
    Format { format: &'static str, reason: String },

    /// A bad generator specification or argument.
    #[error("generator: {0}")]
    Generator(String),

    /// No usable CUDA device or library; the CPU path can be used instead.
    #[error("no GPU: {0}")]
    NoGpu(String),

    /// Vectors whose lengths do not fit the matrix (`x` needs `ncols` entries, `y` `nrows`).
    #[error("{0}")]
    Shape(String),

    /// A CUDA driver, NVRTC or cuSPARSE call failed. `code` is the driver's result when a
    /// driver call failed (match it, e.g. with [`Error::is_out_of_memory`]).
    #[error("CUDA: {message}")]
    Cuda { code: Option<cudarc::driver::sys::CUresult>, message: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
    pub(crate) fn parse(line: usize, message: impl Into<String>) -> Self {
        Error::Parse { line, message: message.into() }
    }
    pub(crate) fn cuda(message: impl Into<String>) -> Self {
        Error::Cuda { code: None, message: message.into() }
    }
    pub(crate) fn format(format: &'static str, reason: impl Into<String>) -> Self {
        Error::Format { format, reason: reason.into() }
    }

    /// A device allocation failed for lack of memory.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::Cuda { code: Some(cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY), .. })
    }
}
