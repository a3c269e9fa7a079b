//! The library's error type. Every failure a user can cause (a bad file, a matrix a format
//! cannot hold, a missing GPU) is a variant here with a message that says what to fix.

use std::path::PathBuf;

/// Errors of the `spmv` library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Matrix Market (or generator spec) text is malformed; `line` is 1-based.
    #[error("line {line}: {message}")]
    Parse {
        /// 1-based line of the text where the error was found.
        line: usize,
        /// What is wrong on that line.
        message: String,
    },

    /// Reading or writing a file failed. (The I/O error is part of the message, not a
    /// `source`, so that error chains do not print it twice.)
    #[error("{}: {}", printable_name(&path.display().to_string()), io_message(error))]
    Io {
        /// The file that was read or written.
        path: PathBuf,
        /// The operating system's error.
        error: std::io::Error,
    },

    /// Input that is valid but not supported (e.g. complex Matrix Market files).
    #[error("unsupported: {0}")]
    Unsupported(String),

    /// A matrix that breaks the invariants of its type (e.g. unsorted CSR columns).
    #[error("invalid matrix: {0}")]
    InvalidMatrix(String),

    /// A storage format cannot represent this matrix (too much padding, index overflow ...).
    #[error("format {format}: {reason}")]
    Format {
        /// Registry name of the format (e.g. `"ell"`).
        format: &'static str,
        /// Why the format cannot hold the matrix, or what parameter is wrong.
        reason: String,
    },

    /// An argument of a call out of its range (a count, a tolerance); the text names it.
    #[error("{0}")]
    Argument(String),

    /// A bad generator specification or argument.
    #[error("generator: {0}")]
    Generator(String),

    /// A multi-process run that cannot start: a launcher's variable malformed, the ranks'
    /// rendezvous failed or timed out (distributed::world).
    #[error("multi-process run: {0}")]
    Launch(String),

    /// No usable CUDA device or library; the CPU path can be used instead.
    #[error("no GPU: {0}")]
    NoGpu(String),

    /// A picture or report page could not be drawn (the drawing library's error).
    #[error("drawing: {0}")]
    Picture(String),

    /// Vectors whose lengths do not fit the matrix (`x` needs `ncols` entries, `y` `nrows`).
    #[error("{0}")]
    Shape(String),

    /// The host cannot hold what an input asks for: `needed` bytes for `what`, with the
    /// memory available when checked.
    #[error("out of memory: {what} needs {}{}", human_bytes(*needed), shortfall(*needed, *available))]
    OutOfMemory {
        /// What needs the memory (a matrix being read, a format's slots, …).
        what: String,
        /// Bytes it needs.
        needed: u64,
        /// Bytes the host had available when checked.
        available: u64,
    },

    /// A CUDA driver, NVRTC or cuSPARSE call failed. `code` is the driver's result when a
    /// driver call failed (match it, e.g. with [`Error::is_out_of_memory`]).
    #[error("CUDA: {message}")]
    Cuda {
        /// The driver's result code; `None` for NVRTC, cuSPARSE and other non-driver failures.
        code: Option<cudarc::driver::sys::CUresult>,
        /// What failed, with the library's own error text.
        message: String,
    },
}

/// `Result` with the library's [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), error: source }
    }
    /// `needed` bytes for `what` when the host has `available`.
    pub(crate) fn out_of_memory(what: impl Into<String>, needed: u64, available: u64) -> Self {
        Error::OutOfMemory { what: what.into(), needed, available }
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
        matches!(
            self,
            Error::Cuda { code: Some(cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY), .. }
        )
    }
}

/// `s` with control characters other than the newline (ESC, CR, NUL, …) written as escapes
/// (`\u{1b}`, `\r`), so that bytes from a file or an argument cannot move the cursor or
/// recolour the terminal when an error message quotes them.
pub fn printable(s: &str) -> String {
    escape_controls(s, |c| c.is_control() && c != '\n')
}

/// `s` on one line: every control character, the newline and tab included, written as an
/// escape (`\n`, `\u{1b}`), so that a name (a file, a spec) printed in a table or a message
/// cannot start a forged line or drive the terminal.
pub fn printable_name(s: &str) -> String {
    escape_controls(s, char::is_control)
}

fn escape_controls(s: &str, escaped: impl Fn(char) -> bool) -> String {
    if !s.chars().any(&escaped) {
        return s.to_string();
    }
    s.chars()
        .map(|c| if escaped(c) { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

/// "16.0 GB", "512 MB", "3 bytes".
pub fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / 1e9),
        b if b >= 1 << 20 => format!("{:.0} MB", b as f64 / 1e6),
        b if b >= 1 << 10 => format!("{:.0} kB", b as f64 / 1e3),
        b => format!("{b} bytes"),
    }
}

/// Memory the host can give this process now: `MemAvailable` of /proc/meminfo, capped by
/// what the address-space limit (`ulimit -v`, /proc/self/limits) leaves when one is set (the
/// limit less the process's `VmSize`); `None` where neither can be read (then nothing is
/// refused up front).
pub fn available_memory() -> Option<u64> {
    let kib = |text: &str, key: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
    };
    let meminfo =
        std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| kib(&m, "MemAvailable:"));
    let limit = std::fs::read_to_string("/proc/self/limits").ok().and_then(|l| {
        let line = l.lines().find(|l| l.starts_with("Max address space"))?;
        line.split_whitespace().nth(3)?.parse::<u64>().ok() // "unlimited" does not parse
    });
    // What the limit leaves, not the limit: the address space in use counts against it.
    let limit = limit.map(|limit| {
        let used = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| kib(&s, "VmSize:"))
            .unwrap_or(0);
        limit.saturating_sub(used)
    });
    match (meminfo, limit) {
        (Some(m), Some(l)) => Some(m.min(l)),
        (m, l) => m.or(l),
    }
}

/// Refuses, with the sizes, to allocate `needed` bytes for `what` when the host cannot hold
/// them (sizes read from input are checked with this before anything is allocated).
pub fn check_host_memory(what: impl FnOnce() -> String, needed: u64) -> Result<()> {
    match available_memory() {
        Some(available) if needed > available => {
            Err(Error::out_of_memory(what(), needed, available))
        }
        _ => Ok(()),
    }
}

/// The end of an out-of-memory message: what was available, or, where an allocation failed
/// although the check passed, that it failed.
fn shortfall(needed: u64, available: u64) -> String {
    if needed > available {
        format!(" but {} are available", human_bytes(available))
    } else {
        format!(", and its allocation failed ({} were available)", human_bytes(available))
    }
}

/// An I/O error as a sentence: "No such file or directory", without the "(os error 2)".
fn io_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    }
}
