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
mod stream;
mod write;

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::ops::Range;
use std::path::Path;

use flate2::read::MultiGzDecoder;

pub use header::{MatrixMarketHeader, MmField, MmFormat, MmSymmetry};
pub use write::{write_matrix_market, write_matrix_market_to};

use crate::error::{available_memory, human_bytes, Error, Result};
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

/// [`read_matrix_market`] with options. The file is read a window of text at a time
/// ([`stream`]): its whole text is never held.
pub fn read_matrix_market_with<T: Scalar>(path: &Path, options: &ReadOptions) -> Result<Csr<T>> {
    stream::read(path, options, None, stream::WINDOW)
}

/// Rows `rows` of a Matrix Market file (all its columns; rows past the end are clipped) —
/// the row block of one process of a multi-process run, which holds only those rows' entries
/// (and a window of the text). Every line is read and checked, as by [`read_matrix_market`].
pub fn read_matrix_market_rows<T: Scalar>(
    path: &Path, options: &ReadOptions, rows: Range<usize>,
) -> Result<Csr<T>> {
    stream::read(path, options, Some(rows), stream::WINDOW)
}

/// Reads a Matrix Market text held in memory, plain or gzipped.
pub fn read_matrix_market_bytes<T: Scalar>(bytes: &[u8]) -> Result<Csr<T>> {
    read_matrix_market_bytes_with(bytes, &ReadOptions::default())
}

/// [`read_matrix_market_bytes`] with options.
pub fn read_matrix_market_bytes_with<T: Scalar>(
    bytes: &[u8], options: &ReadOptions,
) -> Result<Csr<T>> {
    let text = decompress(bytes).map_err(|e| e.into_error(None))?;
    parse_text(&text, options)
}

/// Reads only the banner and the size line of a Matrix Market file (gzipped or not): at
/// most the header window of its (decompressed) text.
pub fn read_header(path: &Path) -> Result<MatrixMarketHeader> {
    let mut reader = BufReader::new(open_regular_file(path)?.0);
    let magic = reader.fill_buf().map_err(|e| Error::io(path, e))?;
    let head = if magic.starts_with(&GZIP_MAGIC) {
        read_head(&mut MultiGzDecoder::new(reader))
    } else {
        read_head(&mut reader)
    };
    let head = head.map_err(|e| e.into_error(Some(path)))?;
    parse_header(&head).map(|(h, _, _)| h)
}

/// Reads the banner and the size line of a Matrix Market text held in memory.
pub fn read_header_bytes(bytes: &[u8]) -> Result<MatrixMarketHeader> {
    let head = if bytes.starts_with(&GZIP_MAGIC) {
        let head = read_head(&mut MultiGzDecoder::new(bytes)).map_err(|e| e.into_error(None))?;
        Cow::Owned(head)
    } else {
        Cow::Borrowed(bytes)
    };
    parse_header(&head).map(|(h, _, _)| h)
}

fn parse_text<T: Scalar>(text: &[u8], options: &ReadOptions) -> Result<Csr<T>> {
    let (h, body_offset, first_line) = parse_header(text)?;
    body::read_body(&h, &text[body_offset..], first_line, options)
}

/// [`header::parse_header`], after refusing texts that are another compressed format.
fn parse_header(text: &[u8]) -> Result<(MatrixMarketHeader, usize, usize)> {
    refuse_other_compression(text)?;
    header::parse_header(text)
}

/// Compressed formats other than gzip, by their magic bytes (no Matrix Market text can
/// start with them: it starts with `%%`).
const OTHER_COMPRESSION: &[(&[u8], &str, &str)] = &[
    (&GZIP_MAGIC, "a gzip stream inside a gzip stream", "gunzip it once"),
    (b"\xFD7zXZ\x00", "an xz file", "xz -d"),
    (b"\x28\xB5\x2F\xFD", "a zstd file", "zstd -d"),
    (b"BZh", "a bzip2 file", "bunzip2"),
    (b"\x04\x22\x4D\x18", "an lz4 file", "lz4 -d"),
    (b"PK\x03\x04", "a zip archive", "unzip"),
    (b"7z\xBC\xAF\x27\x1C", "a 7-Zip archive", "7z x"),
];

fn refuse_other_compression(text: &[u8]) -> Result<()> {
    match OTHER_COMPRESSION.iter().find(|(magic, _, _)| text.starts_with(magic)) {
        Some((_, what, tool)) => Err(Error::Unsupported(format!(
            "this is {what}, not Matrix Market text: decompress it first ({tool}); \
             plain and gzipped (.gz) text are read"
        ))),
        None => Ok(()),
    }
}

/// Opens `path` if it is a regular file (after symbolic links), with its length. Devices,
/// pipes, sockets and folders are refused before they are opened (opening a pipe blocks;
/// reading `/dev/zero` never ends).
fn open_regular_file(path: &Path) -> Result<(File, u64)> {
    check_regular(path, std::fs::metadata(path).map_err(|e| Error::io(path, e))?.file_type())?;
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    check_regular(path, meta.file_type())?; // replaced between the check and the opening
    Ok((file, meta.len()))
}

/// The error for a `path` of type `kind` that is not a regular file (a device, a pipe, a
/// socket, a folder), naming what it is; `Ok` for a regular file. Shared with the input
/// resolver (`io::inputs`), so that both give the same reason.
pub(crate) fn check_regular(path: &Path, kind: std::fs::FileType) -> Result<()> {
    if kind.is_file() {
        return Ok(());
    }
    let error = std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "not a regular file but {}; Matrix Market files are read from regular files only",
            describe_file_type(kind)
        ),
    );
    Err(Error::io(path, error))
}

fn describe_file_type(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a folder"
    } else {
        "not a file"
    }
}

/// Why inflating a gzip stream stopped before its end.
enum InflateError {
    /// The stream ended early or is corrupt: the text decompressed so far and the reason.
    Corrupt { decompressed: Vec<u8>, source: std::io::Error },
    /// The stream is intact as far as read, but its text is refused (a header error, too
    /// large for its size line or for the memory).
    Refused(Error),
}

impl InflateError {
    /// The error of a file (`Some(path)`: a corrupt stream is an I/O error of the file) or
    /// of bytes in memory (a parse error at the last line decompressed).
    fn into_error(self, path: Option<&Path>) -> Error {
        match self {
            InflateError::Refused(e) => e,
            InflateError::Corrupt { decompressed, source } => {
                corrupt_stream(path, decompressed.len() as u64, last_line(0, &decompressed), source)
            }
        }
    }
}

/// The error of a gzip stream that ended early or is corrupt after `bytes` decompressed bytes,
/// in line `line`: from a file (`Some(path)`) an I/O error of the file, from bytes in memory a
/// parse error at that line.
fn corrupt_stream(path: Option<&Path>, bytes: u64, line: usize, source: std::io::Error) -> Error {
    let message = format!(
        "gzip stream is truncated or corrupt after {bytes} decompressed bytes (line {line}): {source}"
    );
    match path {
        None => Error::parse(line, message),
        Some(path) => {
            let kind = match source.kind() {
                std::io::ErrorKind::UnexpectedEof => std::io::ErrorKind::UnexpectedEof,
                _ => std::io::ErrorKind::InvalidData,
            };
            Error::io(path, std::io::Error::new(kind, message))
        }
    }
}

/// The last line (1-based) of a text that follows `lines` lines: the line a truncated stream
/// stopped in.
fn last_line(lines: usize, text: &[u8]) -> usize {
    let newlines = text.iter().filter(|&&b| b == b'\n').count();
    let partial = text.last().is_some_and(|&b| b != b'\n');
    (lines + newlines + usize::from(partial)).max(1)
}

/// The most bytes an entry line may take on average in a gzipped file (two indices and a
/// value take about 50): with the size line's entry count this caps what is inflated.
const MAX_LINE_BYTES: u64 = 256;
/// The smallest read while inflating the body.
const MIN_STEP: u64 = 1 << 20;

/// Reads `reader` up to the end of its size line, in growing steps (from 64 KiB): at most
/// the header window ([`header::HEADER_WINDOW`]) and 64 KiB more. Stops early at a first
/// line that cannot start a banner. Whether the result is a complete header is for
/// [`parse_header`] to say.
fn read_head(reader: &mut impl Read) -> std::result::Result<Vec<u8>, InflateError> {
    const STEP: usize = 1 << 16;
    let mut out = Vec::new();
    loop {
        let before = out.len();
        let step = out.len().max(STEP).min((header::HEADER_WINDOW + STEP).saturating_sub(before));
        if let Err(source) = reader.take(step as u64).read_to_end(&mut out) {
            return Err(InflateError::Corrupt { decompressed: out, source });
        }
        let ended = out.len() == before;
        let complete = match header::parse_header(&out) {
            Ok((_, offset, _)) => out[offset..].contains(&b'\n'),
            Err(_) => !plausible_prefix(&out),
        };
        if complete || ended || out.len() > header::HEADER_WINDOW {
            return Ok(out);
        }
    }
}

/// The text of `bytes`: decompressed when they start with the gzip magic, else borrowed.
/// Inflation is bounded: the header is read first (at most the header window); a header
/// that does not parse stops there, with its error. Then the memory the size line implies
/// is checked before any of the body is inflated, and the text may not grow past what the
/// size line allows (`MAX_LINE_BYTES` per entry line) nor past the memory available.
fn decompress(bytes: &[u8]) -> std::result::Result<Cow<'_, [u8]>, InflateError> {
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(Cow::Borrowed(bytes));
    }
    let mut decoder = MultiGzDecoder::new(bytes);
    // 1. The header.
    let mut out = read_head(&mut decoder)?;
    let (h, offset, first_line) = parse_header(&out).map_err(InflateError::Refused)?;
    let size_line = first_line - 1;
    body::check_memory_for_entries(&h, size_line).map_err(InflateError::Refused)?;
    let limit = inflation_limit(&h, offset);
    // 2. The rest, in growing reads, never past the limit or the host's memory.
    loop {
        let room = limit.saturating_sub(out.len() as u64);
        // One byte past the limit at most: a text of exactly `limit` bytes is read.
        let step = (out.len() as u64).clamp(MIN_STEP, 1 << 30).min(room.saturating_add(1));
        // The text may not take the memory the matrix needs next: half of what is left.
        let available = available_memory();
        let step = available.map_or(step, |a| step.min(a / 2));
        let refuse_memory = |out: &[u8], needed: u64, available: u64| {
            InflateError::Refused(Error::out_of_memory(
                format!(
                    "inflating the gzip stream past {} (line {})",
                    human_bytes(out.len() as u64),
                    last_line(0, out)
                ),
                needed,
                available,
            ))
        };
        if let Some(a) = available.filter(|&a| a < 2 * MIN_STEP) {
            return Err(refuse_memory(&out, 2 * MIN_STEP, a));
        }
        if out.try_reserve(step as usize).is_err() {
            return Err(refuse_memory(&out, step, available_memory().unwrap_or(0)));
        }
        let before = out.len();
        if let Err(source) = (&mut decoder).take(step).read_to_end(&mut out) {
            return Err(InflateError::Corrupt { decompressed: out, source });
        }
        if out.len() == before {
            return Ok(Cow::Owned(out));
        }
        if out.len() as u64 > limit {
            return Err(InflateError::Refused(inflates_past(
                &h,
                limit,
                size_line,
                last_line(0, &out),
            )));
        }
    }
}

/// The most text a gzipped file with header `h` (ending at `offset`) may inflate to.
fn inflation_limit(h: &MatrixMarketHeader, offset: usize) -> u64 {
    (offset as u64)
        .saturating_add((h.entries as u64).saturating_add(1).saturating_mul(MAX_LINE_BYTES))
        .saturating_add(1 << 20)
}

/// The error of a gzip stream that inflated past `limit` ([`inflation_limit`]) in `line`.
fn inflates_past(h: &MatrixMarketHeader, limit: u64, size_line: usize, line: usize) -> Error {
    Error::parse(
        line,
        format!(
            "the gzip stream inflates past {}, more than the {} entries of its size line (line \
             {size_line}) allow at {MAX_LINE_BYTES} bytes per entry line; refused (the stream \
             itself was intact as far as it was read)",
            human_bytes(limit),
            h.entries
        ),
    )
}

/// Whether `text` could still become a Matrix Market header: it starts like a banner (or is
/// shorter than one), after an optional UTF-8 byte order mark.
fn plausible_prefix(text: &[u8]) -> bool {
    const BANNER: &[u8] = b"%%MatrixMarket";
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let bom = text.len().min(BOM.len());
    let text = if text[..bom] == BOM[..bom] { &text[bom..] } else { text };
    let n = text.len().min(BANNER.len());
    text[..n].eq_ignore_ascii_case(&BANNER[..n])
}
