//! The banner and the size line of a Matrix Market file.

use std::fmt;

use crate::error::{Error, Result};

/// How the entries are stored: `coordinate` (sparse triplets) or `array` (dense, column-major).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmFormat {
    /// One `row col [value]` line per stored entry (1-based indices).
    Coordinate,
    /// Every value of the matrix (or of its lower triangle), column by column.
    Array,
}

/// The type of the stored values. `complex` is not supported (reading it is an
/// [`Error::Unsupported`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmField {
    /// Floating-point values, rounded once to the element type.
    Real,
    /// Integer values (64-bit), rounded once to the element type.
    Integer,
    /// No values: every stored entry is 1.
    Pattern,
}

/// Which part of the matrix the file stores. `hermitian` is not supported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmSymmetry {
    /// Every entry is stored.
    General,
    /// One triangle is stored; `a_ji = a_ij`.
    Symmetric,
    /// The strict lower triangle is stored; `a_ji = -a_ij`, the diagonal is zero.
    SkewSymmetric,
}

impl MmFormat {
    /// The banner's word: `coordinate` or `array`.
    pub fn name(self) -> &'static str {
        match self {
            MmFormat::Coordinate => "coordinate",
            MmFormat::Array => "array",
        }
    }
}
impl MmField {
    /// The banner's word: `real`, `integer` or `pattern`.
    pub fn name(self) -> &'static str {
        match self {
            MmField::Real => "real",
            MmField::Integer => "integer",
            MmField::Pattern => "pattern",
        }
    }
}
impl MmSymmetry {
    /// The banner's word: `general`, `symmetric` or `skew-symmetric`.
    pub fn name(self) -> &'static str {
        match self {
            MmSymmetry::General => "general",
            MmSymmetry::Symmetric => "symmetric",
            MmSymmetry::SkewSymmetric => "skew-symmetric",
        }
    }
}
impl fmt::Display for MmFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
impl fmt::Display for MmField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
impl fmt::Display for MmSymmetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the banner and the size line of a Matrix Market file say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixMarketHeader {
    /// Coordinate or array storage.
    pub format: MmFormat,
    /// Type of the values.
    pub field: MmField,
    /// Which part of the matrix is stored.
    pub symmetry: MmSymmetry,
    /// Number of rows (from the size line).
    pub nrows: usize,
    /// Number of columns (from the size line).
    pub ncols: usize,
    /// Entry lines the file holds: the third number of a coordinate size line (one
    /// triangle for a symmetric file, repeats counted), or for an array the number of
    /// values (`nrows·ncols`, `n(n+1)/2` symmetric, `n(n-1)/2` skew-symmetric).
    pub entries: usize,
}

/// Rows and columns must fit 32-bit column indices (0 ..= 2^32 - 1).
pub(super) const MAX_DIM: u64 = 1 << 32;

/// The banner every file starts with, as the error messages spell it.
const BANNER: &str =
    "%%MatrixMarket matrix <coordinate|array> <real|integer|pattern> <general|symmetric|skew-symmetric>";

/// Bytes that separate tokens (ASCII whitespace except the newline).
#[inline]
pub(super) fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// A blank line or a comment line (first non-blank byte is `%`).
pub(super) fn is_comment_or_blank(line: &[u8]) -> bool {
    match line.iter().find(|&&b| !is_blank(b) && b != b'\n') {
        None => true,
        Some(&b) => b == b'%',
    }
}

/// A token for an error message: lossy UTF-8, shortened to 40 characters, control bytes
/// escaped ([`crate::error::printable`]).
pub(super) fn show(token: &[u8]) -> String {
    let s = String::from_utf8_lossy(token);
    let s = s.trim();
    let s = if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    };
    crate::error::printable(&s)
}

/// A carriage return with more text after it on the same line: CR-only line endings.
fn has_inner_carriage_return(line: &[u8]) -> bool {
    line.iter().position(|&b| b == b'\r').is_some_and(|i| line[i..].iter().any(|&b| !is_blank(b)))
}

fn tokens(line: &[u8]) -> Vec<&[u8]> {
    line.split(|&b| is_blank(b) || b == b'\n').filter(|t| !t.is_empty()).collect()
}

/// Splits `text` at its first newline: (line without the newline, rest after it).
fn split_line(text: &[u8]) -> (&[u8], &[u8]) {
    match text.iter().position(|&b| b == b'\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, &text[text.len()..]),
    }
}

/// Bytes of text the header (banner, comment lines and size line) must end within: a text
/// is inflated only after its header, and this bounds what that takes.
pub(super) const HEADER_WINDOW: usize = 16 << 20;

/// Parses the banner, the comment lines and the size line at the start of `text`.
/// Returns the header, the byte offset of the body (the line after the size line) and
/// the 1-based line number of the body's first line. The header must end within
/// [`HEADER_WINDOW`] bytes.
pub(super) fn parse_header(text: &[u8]) -> Result<(MatrixMarketHeader, usize, usize)> {
    let text_start = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text); // UTF-8 BOM
    let bom = text.len() - text_start.len();
    let (banner, mut rest) = split_line(text_start);
    let (format, field, symmetry) = parse_banner(banner, rest.is_empty())?;
    // Where the line just split off ends (its newline excluded).
    let line_end = |rest: &[u8]| text.len() - rest.len() - usize::from(!rest.is_empty());
    let window = |line_no: usize| {
        Error::parse(
            line_no,
            format!(
                "no size line within the first {} MiB of the text: the banner, comment lines \
                 and size line of a Matrix Market file must end within {HEADER_WINDOW} bytes",
                HEADER_WINDOW >> 20
            ),
        )
    };
    if line_end(rest) > HEADER_WINDOW {
        return Err(window(1));
    }

    // Comment and blank lines, then the size line.
    let mut line_no = 1;
    let size_line = loop {
        if rest.is_empty() {
            return Err(Error::parse(
                line_no,
                format!(
                    "file ended at line {line_no} before the size line ('rows columns entries')"
                ),
            ));
        }
        let (line, tail) = split_line(rest);
        rest = tail;
        line_no += 1;
        if line_end(rest) > HEADER_WINDOW {
            return Err(window(line_no));
        }
        if !is_comment_or_blank(line) {
            break line;
        }
    };
    let (nrows, ncols, entries) = parse_size_line(size_line, line_no, format, symmetry)?;
    let body_offset = text.len() - rest.len();
    debug_assert!(body_offset >= bom);
    let header = MatrixMarketHeader { format, field, symmetry, nrows, ncols, entries };
    Ok((header, body_offset, line_no + 1))
}

/// The banner: `line` is the first line; `last` when the text has no newline after it.
fn parse_banner(line: &[u8], last: bool) -> Result<(MmFormat, MmField, MmSymmetry)> {
    let toks = tokens(line);
    let lower: Vec<String> =
        toks.iter().map(|t| String::from_utf8_lossy(t).to_ascii_lowercase()).collect();
    if lower.first().map(String::as_str) != Some("%%matrixmarket") {
        return Err(Error::parse(1, missing_banner(line)));
    }
    // A banner followed by a carriage return and more text on the same line: the lines end
    // in bare carriage returns.
    let before_cr = line.split(|&b| b == b'\r').next().unwrap_or(line);
    if has_inner_carriage_return(line) && tokens(before_cr).len() == 5 {
        let message = if last {
            "the file has no newlines, only carriage returns (classic Mac line endings); \
             convert it first, e.g. with `tr '\\r' '\\n' < in.mtx > out.mtx`"
        } else {
            "the banner line goes on after a carriage return: lines must end in a newline \
             ('\\n' or '\\r\\n'), not in a bare carriage return; convert them first, e.g. \
             with `tr '\\r' '\\n' < in.mtx > out.mtx`"
        };
        return Err(Error::parse(1, message));
    }
    if lower.len() != 5 {
        return Err(Error::parse(
            1,
            format!(
                "bad Matrix Market banner: expected '{BANNER}' (5 words), found '{}'",
                show(line)
            ),
        ));
    }
    banner_word(&lower[1], "object", &[("matrix", ())], VECTOR, "matrix")?;
    let format = banner_word(&lower[2], "format", FORMATS, &[], "coordinate or array")?;
    let field =
        banner_word(&lower[3], "field", FIELDS, COMPLEX, "real, integer, pattern or complex")?;
    let symmetry = banner_word(
        &lower[4],
        "symmetry",
        SYMMETRIES,
        HERMITIAN,
        "general, symmetric, skew-symmetric or hermitian",
    )?;
    if field == MmField::Pattern && format == MmFormat::Array {
        return Err(Error::parse(
            1,
            "bad Matrix Market banner: an array matrix cannot be 'pattern'",
        ));
    }
    if field == MmField::Pattern && symmetry == MmSymmetry::SkewSymmetric {
        return Err(Error::parse(
            1,
            "bad Matrix Market banner: a pattern matrix cannot be skew-symmetric",
        ));
    }
    Ok((format, field, symmetry))
}

/// The message for a first line that is not a banner: binary data is named as such (with
/// its first bytes in hex), text is quoted.
fn missing_banner(line: &[u8]) -> String {
    let start = &line[..line.len().min(64)];
    let binary = start.contains(&0)
        || std::str::from_utf8(start).is_err_and(|e| e.error_len().is_some())
        || start.iter().filter(|&&b| b < 0x20 && !is_blank(b)).count() > 1;
    if binary {
        let hex: Vec<String> = start.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!(
            "not a Matrix Market file: it starts with binary data (bytes {} ...), not with the \
             banner '{BANNER}'",
            hex.join(" ")
        )
    } else {
        format!(
            "missing Matrix Market banner: the first line must be '{BANNER}', found '{}'",
            show(line)
        )
    }
}

/// A non-negative decimal integer of the size line.
fn size_number(tok: &[u8], what: &str, line_no: usize) -> Result<u64> {
    let digits = tok.strip_prefix(b"+").unwrap_or(tok);
    if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
        let mut v: u64 = 0;
        for &d in digits {
            v = v.checked_mul(10).and_then(|v| v.checked_add(u64::from(d - b'0'))).ok_or_else(
                || {
                    Error::parse(
                        line_no,
                        format!("bad size line: {what} '{}' is too large", show(tok)),
                    )
                },
            )?;
        }
        return Ok(v);
    }
    let negative = tok.len() > 1 && tok[0] == b'-' && tok[1..].iter().all(u8::is_ascii_digit);
    let message = if negative {
        format!("bad size line: {what} is negative ({})", show(tok))
    } else {
        format!("bad size line: {what} '{}' is not a non-negative integer", show(tok))
    };
    Err(Error::parse(line_no, message))
}

fn parse_size_line(
    line: &[u8], line_no: usize, format: MmFormat, symmetry: MmSymmetry,
) -> Result<(usize, usize, usize)> {
    let toks = tokens(line);
    let expected = match format {
        MmFormat::Coordinate => 3,
        MmFormat::Array => 2,
    };
    if toks.len() != expected {
        let what = match format {
            MmFormat::Coordinate => "3 integers 'rows columns entries' for a coordinate matrix",
            MmFormat::Array => "2 integers 'rows columns' for an array matrix",
        };
        return Err(Error::parse(
            line_no,
            format!(
                "bad size line: expected {what}, found {} fields ('{}')",
                toks.len(),
                show(line)
            ),
        ));
    }
    let nrows = size_number(toks[0], "the number of rows", line_no)?;
    let ncols = size_number(toks[1], "the number of columns", line_no)?;
    for (n, what) in [(nrows, "rows"), (ncols, "columns")] {
        if n > MAX_DIM {
            return Err(Error::parse(
                line_no,
                format!("bad size line: {n} {what} do not fit 32-bit indices (at most {MAX_DIM})"),
            ));
        }
    }
    if symmetry != MmSymmetry::General && nrows != ncols {
        return Err(Error::parse(
            line_no,
            format!("bad size line: a {symmetry} matrix must be square, but the size line says {nrows} x {ncols}"),
        ));
    }
    let entries = match format {
        MmFormat::Coordinate => size_number(toks[2], "the number of entries", line_no)?,
        MmFormat::Array => {
            let n = nrows;
            let count = match symmetry {
                MmSymmetry::General => nrows.checked_mul(ncols),
                MmSymmetry::Symmetric => n.checked_mul(n + 1).map(|v| v / 2),
                MmSymmetry::SkewSymmetric => n.checked_mul(n.saturating_sub(1)).map(|v| v / 2),
            };
            count.ok_or_else(|| {
                Error::parse(
                    line_no,
                    format!("bad size line: a {nrows} x {ncols} array is too large"),
                )
            })?
        }
    };
    let entries = usize::try_from(entries).map_err(|_| {
        Error::parse(line_no, format!("bad size line: {entries} entries do not fit in memory"))
    })?;
    Ok((nrows as usize, ncols as usize, entries))
}

// The banner words read, and the ones recognised but not supported (with their message).
const FORMATS: &[(&str, MmFormat)] =
    &[("coordinate", MmFormat::Coordinate), ("array", MmFormat::Array)];
const FIELDS: &[(&str, MmField)] =
    &[("real", MmField::Real), ("integer", MmField::Integer), ("pattern", MmField::Pattern)];
const SYMMETRIES: &[(&str, MmSymmetry)] = &[
    ("general", MmSymmetry::General),
    ("symmetric", MmSymmetry::Symmetric),
    ("skew-symmetric", MmSymmetry::SkewSymmetric),
];
const VECTOR: &[(&str, &str)] =
    &[("vector", "Matrix Market 'vector' objects are not supported, only 'matrix'")];
const COMPLEX: &[(&str, &str)] =
    &[("complex", "Matrix Market field 'complex': complex matrices are not supported (real, integer and pattern are)")];
const HERMITIAN: &[(&str, &str)] =
    &[("hermitian", "Matrix Market symmetry 'hermitian' is not supported (general, symmetric and skew-symmetric are)")];

/// The value of banner word `word` (the `what`: object, format, field, symmetry) among
/// `known`; a word in `unsupported` is [`Error::Unsupported`] with its message, any other a
/// parse error of line 1 that lists the `expected` words.
fn banner_word<V: Copy>(
    word: &str, what: &str, known: &[(&str, V)], unsupported: &[(&str, &str)], expected: &str,
) -> Result<V> {
    if let Some((_, v)) = known.iter().find(|(w, _)| *w == word) {
        return Ok(*v);
    }
    if let Some((_, message)) = unsupported.iter().find(|(w, _)| *w == word) {
        return Err(Error::Unsupported(message.to_string()));
    }
    Err(Error::parse(
        1,
        format!("bad Matrix Market banner: unknown {what} '{word}' (expected {expected})"),
    ))
}
