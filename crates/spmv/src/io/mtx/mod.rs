//! Matrix Market (`.mtx`, `.mtx.gz`) reader and writer.
//!
//! Reading supports the banner `%%MatrixMarket matrix <format> <field> <symmetry>`
//! (case-insensitive) with
//! - format `coordinate` (1-based triplets) or `array` (dense, column-major);
//! - field `real`, `integer` (parsed as a 64-bit integer, then rounded once to the
//!   element type) or `pattern` (every entry is 1); `complex` is [`Error::Unsupported`];
//! - symmetry `general`, `symmetric` (the stored entries are mirrored) or
//!   `skew-symmetric` (mirrored with the sign flipped; a nonzero diagonal entry is an
//!   error); `hermitian` is [`Error::Unsupported`].
//!
//! Coordinate files: repeated positions are summed (in file order), explicit zeros are kept
//! as stored entries, and the entries of a symmetric file may come from either triangle
//! (each off-diagonal entry is mirrored). Array files: only the nonzero values are stored
//! in the CSR; a symmetric array holds the lower triangle column by column, a
//! skew-symmetric one the strict lower triangle.
//!
//! Comment lines (`%`) and blank lines may follow the banner and may appear anywhere in the
//! body. Gzip input is recognised by its magic bytes (1f 8b), whatever the file name.
//! Every malformed input is an [`Error::Parse`] naming the 1-based line of the
//! (decompressed) text; a truncated or corrupt gzip stream is an [`Error::Io`] (from a
//! file) or an [`Error::Parse`] naming the last line decompressed (from bytes).
//!
//! The body is parsed in parallel (rayon): the text is cut into chunks at line boundaries,
//! each chunk is parsed into triplets on its own, and the CSR is built by a counting sort
//! by row followed by a parallel per-row sort. Values are converted by Rust's correctly
//! rounded `str::parse`, straight to the element type.
//!
//! Writing produces `coordinate real general` with values printed in their shortest
//! round-trip form, so a written matrix reads back bit-identical.

mod body;
mod header;
mod write;

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

pub use header::{MatrixMarketHeader, MmField, MmFormat, MmSymmetry};
pub use write::{write_matrix_market, write_matrix_market_to};

use crate::error::{Error, Result};
use crate::matrix::{Csr, Scalar};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How a Matrix Market file is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Accept values that are not finite in the element type (`inf`, `nan`, `1e400`, or
    /// `1e300` read as f32). Off by default: such a value is an error naming its line.
    pub allow_non_finite: bool,
}

/// Reads a Matrix Market file (`.mtx`, or gzipped `.mtx.gz`) into CSR; a value that is not
/// finite in `T` is an error with its line ([`read_matrix_market_with`] to allow them).
pub fn read_matrix_market<T: Scalar>(path: &Path) -> Result<Csr<T>> {
    read_matrix_market_with(path, &ReadOptions::default())
}

/// [`read_matrix_market`] with options.
pub fn read_matrix_market_with<T: Scalar>(path: &Path, options: &ReadOptions) -> Result<Csr<T>> {
    let raw = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if raw.starts_with(&GZIP_MAGIC) {
        let text = decompress(&raw).map_err(|e| e.into_io_error(path))?.into_owned();
        drop(raw); // the compressed bytes are no longer needed
        parse_text(&text, options)
    } else {
        parse_text(&raw, options)
    }
}

/// Reads a Matrix Market text held in memory, plain or gzipped.
pub fn read_matrix_market_bytes<T: Scalar>(bytes: &[u8]) -> Result<Csr<T>> {
    read_matrix_market_bytes_with(bytes, &ReadOptions::default())
}

/// [`read_matrix_market_bytes`] with options.
pub fn read_matrix_market_bytes_with<T: Scalar>(
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Csr<T>> {
    let text = decompress(bytes).map_err(GzipError::into_parse_error)?;
    parse_text(&text, options)
}

/// Reads only the banner and the size line of a Matrix Market file (gzipped or not).
pub fn read_header(path: &Path) -> Result<MatrixMarketHeader> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::new(file);
    let magic = reader.fill_buf().map_err(|e| Error::io(path, e))?;
    let mut reader: Box<dyn BufRead> = if magic.starts_with(&GZIP_MAGIC) {
        Box::new(BufReader::new(MultiGzDecoder::new(reader)))
    } else {
        Box::new(reader)
    };
    let mut buf = Vec::new();
    let mut lines = 0;
    loop {
        let start = buf.len();
        let n = reader.read_until(b'\n', &mut buf).map_err(|source| {
            GzipError { decompressed: std::mem::take(&mut buf), source }.into_io_error(path)
        })?;
        if n == 0 {
            break;
        }
        lines += 1;
        if lines > 1 && !header::is_comment_or_blank(&buf[start..]) {
            break; // the size line
        }
    }
    header::parse_header(&buf).map(|(h, _, _)| h)
}

/// Reads the banner and the size line of a Matrix Market text held in memory.
pub fn read_header_bytes(bytes: &[u8]) -> Result<MatrixMarketHeader> {
    let text = decompress(bytes).map_err(GzipError::into_parse_error)?;
    header::parse_header(&text).map(|(h, _, _)| h)
}

fn parse_text<T: Scalar>(text: &[u8], options: &ReadOptions) -> Result<Csr<T>> {
    let (h, body_offset, first_line) = header::parse_header(text)?;
    body::read_body(&h, &text[body_offset..], first_line, options)
}

/// A gzip stream that ended early or is corrupt.
struct GzipError {
    /// The text decompressed before the error.
    decompressed: Vec<u8>,
    source: std::io::Error,
}

impl GzipError {
    /// The last line (1-based) decompressed before the error.
    fn last_line(&self) -> usize {
        let newlines = self.decompressed.iter().filter(|&&b| b == b'\n').count();
        let partial = self.decompressed.last().is_some_and(|&b| b != b'\n');
        (newlines + usize::from(partial)).max(1)
    }
    fn message(&self) -> String {
        format!(
            "gzip stream is truncated or corrupt after {} decompressed bytes (line {}): {}",
            self.decompressed.len(),
            self.last_line(),
            self.source
        )
    }
    fn into_io_error(self, path: &Path) -> Error {
        let kind = match self.source.kind() {
            std::io::ErrorKind::UnexpectedEof => std::io::ErrorKind::UnexpectedEof,
            _ => std::io::ErrorKind::InvalidData,
        };
        Error::io(path, std::io::Error::new(kind, self.message()))
    }
    fn into_parse_error(self) -> Error {
        Error::parse(self.last_line(), self.message())
    }
}

/// Bytes of decompressed text read before the header must be complete (comments included).
const HEADER_WINDOW: usize = 16 << 20;
/// The most bytes an entry line may take in a gzipped file (two indices and a value take
/// about 50): with the size line's entry count this caps what is inflated.
const MAX_LINE_BYTES: u64 = 256;

/// The text of `bytes`: decompressed when they start with the gzip magic, else borrowed.
/// Inflation is bounded: the banner and size line are parsed from the first bytes (a stream
/// that is not Matrix Market stops there), and the text may not grow past what the size line
/// implies (`MAX_LINE_BYTES` per entry line) nor past the memory available.
fn decompress(bytes: &[u8]) -> std::result::Result<Cow<'_, [u8]>, GzipError> {
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(Cow::Borrowed(bytes));
    }
    let mut decoder = MultiGzDecoder::new(bytes);
    let mut out = Vec::new();
    // 1. Up to the size line: small reads, parsed as they come.
    let mut limit: Option<u64> = None;
    while limit.is_none() {
        let before = out.len();
        if let Err(source) = (&mut decoder).take(1 << 16).read_to_end(&mut out) {
            return Err(GzipError { decompressed: out, source });
        }
        let ended = out.len() == before;
        match header::parse_header(&out) {
            Ok((h, offset, _)) if out[offset..].contains(&b'\n') || ended => {
                limit = Some(
                    offset as u64
                        + (h.entries as u64 + 1).saturating_mul(MAX_LINE_BYTES)
                        + (1 << 20),
                );
            }
            // An error that more text cannot fix (a bad banner) is the caller's to report.
            Err(_) if ended || out.len() >= HEADER_WINDOW || !plausible_prefix(&out) => {
                return Ok(Cow::Owned(out))
            }
            _ => {}
        }
    }
    let limit = limit.unwrap_or(u64::MAX);
    // 2. The rest, in growing reads, never past the limit or the host's memory.
    loop {
        let room = limit.saturating_sub(out.len() as u64);
        let step = (out.len() as u64).clamp(1 << 20, 1 << 30).min(room.max(1));
        if let Err(e) = out.try_reserve(step as usize) {
            let available = crate::error::available_memory().unwrap_or(0);
            let source = std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!(
                    "out of memory growing the text past {} ({e}; {} available)",
                    crate::error::human_bytes(out.len() as u64),
                    crate::error::human_bytes(available)
                ),
            );
            return Err(GzipError { decompressed: out, source });
        }
        let before = out.len();
        if let Err(source) = (&mut decoder).take(step).read_to_end(&mut out) {
            return Err(GzipError { decompressed: out, source });
        }
        if out.len() == before {
            return Ok(Cow::Owned(out));
        }
        if out.len() as u64 >= limit {
            let source = std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "the gzip stream inflates past {}, more than its size line allows ({MAX_LINE_BYTES} bytes per entry line); refused",
                    crate::error::human_bytes(limit)
                ),
            );
            return Err(GzipError { decompressed: out, source });
        }
    }
}

/// Whether `text` could still become a Matrix Market header: it starts like a banner (or is
/// shorter than one).
fn plausible_prefix(text: &[u8]) -> bool {
    const BANNER: &[u8] = b"%%MatrixMarket";
    let n = text.len().min(BANNER.len());
    text[..n].eq_ignore_ascii_case(&BANNER[..n])
}
