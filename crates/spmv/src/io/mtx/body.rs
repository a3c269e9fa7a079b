//! The entries of a Matrix Market file, parsed in parallel, and the CSR built from them.
//!
//! The body (everything after the size line) comes in windows of whole lines (a file's, or
//! all of a text held in memory), each cut into chunks at line boundaries. Each chunk is
//! parsed on its own (rayon) into triplets, counting its newlines; a second, sequential pass
//! over the chunk results turns chunk-relative line numbers into file line numbers (prefix
//! sums of the newline counts, carried from window to window) and checks the number of
//! entries.

use rayon::prelude::*;

use super::header::{
    is_blank, is_comment_or_blank, show, MatrixMarketHeader, MmField, MmFormat, MmSymmetry,
};
use crate::error::{Error, Result};
use crate::matrix::{Csr, Precision, Scalar};

/// Chunk sizes: small files are one chunk (no thread overhead), large ones get several
/// chunks per thread for balance.
const MIN_CHUNK: usize = 1 << 18;
const MAX_CHUNK: usize = 1 << 23;

/// What one chunk of the body parses into.
struct Chunk<T> {
    /// Coordinate files: the entries of the rows read, symmetric mirrors included.
    kept: Triplets<T>,
    /// Array files: every value, zeros included, in file order.
    values: Vec<T>,
    /// Entry lines parsed without error.
    entries: usize,
    /// Newlines consumed (all of the chunk's unless it stopped at an error).
    newlines: usize,
    /// The first error: chunk-relative 0-based line and message.
    error: Option<(usize, String)>,
}

/// The parsing context shared by all chunks.
#[derive(Clone, Copy)]
struct Ctx {
    allow_non_finite: bool,
    format: MmFormat,
    field: MmField,
    symmetry: MmSymmetry,
    nrows: u64,
    ncols: u64,
    /// The rows kept: `first_row..first_row + row_count` (all by default).
    first_row: u64,
    row_count: u64,
}

/// Parses the body of a file whose header is `h`; `first_line` is the body's first line
/// number.
pub(super) fn read_body<T: Scalar>(
    h: &MatrixMarketHeader, body: &[u8], first_line: usize, options: &super::ReadOptions,
) -> Result<Csr<T>> {
    let mut reader = BodyReader::new(h, first_line, options, 0..h.nrows);
    reader.feed(body)?;
    reader.finish()
}

/// A body fed in windows, in file order, each ending at a line end (the last one may not):
/// each window is parsed in parallel, checked, and only the entries of the rows read kept,
/// so reading a file by windows holds one window of text at a time.
pub(super) struct BodyReader<T> {
    h: MatrixMarketHeader,
    ctx: Ctx,
    /// File line number of the next window's first line.
    line: usize,
    /// Entry lines read so far.
    count: usize,
    /// Whether the last window ended inside a line (no final newline).
    partial_line: bool,
    /// The entries kept, in file order: each chunk's (coordinate files) or the array's.
    parts: Vec<Triplets<T>>,
    /// Array files: the position of the next value.
    array: ArrayCursor,
}

/// Triplets (0-based rows of the rows read, columns, values).
type Triplets<T> = (Vec<u32>, Vec<u32>, Vec<T>);

impl<T: Scalar> BodyReader<T> {
    /// A reader of the body of a file whose header is `h`, starting at line `first_line`,
    /// keeping the entries of `rows` (clipped to the matrix): a matrix of those rows (the
    /// first of them row 0) and the file's columns. Every line is parsed and checked.
    pub(super) fn new(
        h: &MatrixMarketHeader, first_line: usize, options: &super::ReadOptions,
        rows: std::ops::Range<usize>,
    ) -> Self {
        let start = rows.start.min(h.nrows);
        let rows = start..rows.end.clamp(start, h.nrows);
        let ctx = Ctx {
            first_row: rows.start as u64,
            row_count: rows.len() as u64,
            allow_non_finite: options.allow_non_finite,
            format: h.format,
            field: h.field,
            symmetry: h.symmetry,
            nrows: h.nrows as u64,
            ncols: h.ncols as u64,
        };
        let array = ArrayCursor::new(h.symmetry);
        BodyReader {
            h: *h,
            ctx,
            line: first_line,
            count: 0,
            partial_line: false,
            parts: Vec::new(),
            array,
        }
    }

    /// File line number of the next window's first line.
    pub(super) fn line(&self) -> usize {
        self.line
    }

    /// Parses `window`, the text that follows the windows fed before; every window but the
    /// last must end with a newline. Stops at the first error in file order, with its line.
    pub(super) fn feed(&mut self, window: &[u8]) -> Result<()> {
        if window.is_empty() {
            return Ok(());
        }
        let pieces = split_chunks(window);
        let chunks: Vec<Chunk<T>> = if pieces.len() == 1 {
            vec![parse_chunk(&self.ctx, pieces[0])]
        } else {
            pieces.par_iter().map(|piece| parse_chunk(&self.ctx, piece)).collect()
        };
        // In file order: line numbers, the entry count and the first error.
        let expected = self.h.entries;
        let filtering = self.ctx.row_count < self.ctx.nrows;
        for (piece, chunk) in pieces.iter().zip(chunks) {
            if self.count + chunk.entries > expected {
                let rel = nth_entry_line(piece, expected - self.count);
                return Err(too_many(self.line + rel, expected));
            }
            if let Some((rel, message)) = &chunk.error {
                if self.count + chunk.entries == expected {
                    // The line is one too many, whatever is wrong with it.
                    return Err(too_many(self.line + rel, expected));
                }
                return Err(Error::parse(self.line + rel, message.clone()));
            }
            self.count += chunk.entries;
            self.line += chunk.newlines;
            match self.h.format {
                MmFormat::Coordinate => {
                    let (mut rows, mut cols, mut vals) = chunk.kept;
                    if filtering {
                        // Sized for every entry of the chunk; only a few were kept.
                        rows.shrink_to_fit();
                        cols.shrink_to_fit();
                        vals.shrink_to_fit();
                    }
                    self.parts.push((rows, cols, vals));
                }
                MmFormat::Array => {
                    if self.parts.is_empty() {
                        self.parts.push(Default::default());
                    }
                    self.array.place(&self.ctx, self.h.nrows, &chunk.values, &mut self.parts[0]);
                }
            }
        }
        self.partial_line = window.last() != Some(&b'\n');
        Ok(())
    }

    /// The CSR of the rows read, once every window has been fed; an error if the file held
    /// fewer entries than its size line announces.
    pub(super) fn finish(self) -> Result<Csr<T>> {
        let (count, expected) = (self.count, self.h.entries);
        if count < expected {
            // self.line is now the number of the line after the last newline.
            let last_line = if self.partial_line { self.line } else { self.line - 1 };
            return Err(Error::parse(
                last_line,
                format!(
                    "too few entries: the file ended at line {last_line} after {count} of the {expected} entries \
                     the size line announces (expected {expected}, found {count})"
                ),
            ));
        }
        let (nrows, ncols) = (self.ctx.row_count as usize, self.h.ncols);
        let kept: usize = self.parts.iter().map(|p| p.0.len()).sum();
        // The size line alone may ask for far more than the entries: row pointers (and the
        // per-row counts that build them) take 16 bytes per row. Refuse with the size rather
        // than abort in the allocator.
        let needed = 16 * (nrows as u64 + 1) + kept as u64 * (4 + std::mem::size_of::<T>() as u64);
        crate::error::check_host_memory(
            || format!("a {nrows} x {ncols} matrix with {kept} entries (its row pointers)"),
            needed,
        )?;
        let parts: Vec<(&[u32], &[u32], &[T])> =
            self.parts.iter().map(|(r, c, v)| (&r[..], &c[..], &v[..])).collect();
        build_csr(nrows, ncols, &parts)
    }
}

/// Refuses, before the body of a compressed file is inflated, a size line that announces
/// more than the host can hold: the least text its entry lines take, their triplets (in the
/// smallest element type) and the row pointers. `size_line` is its line number.
pub(super) fn check_memory_for_entries(h: &MatrixMarketHeader, size_line: usize) -> Result<()> {
    let entries = h.entries as u64;
    // The shortest entry line ("1 1\n", "1 1 1\n", "1\n") and what one entry takes parsed
    // (two u32 indices and a 2-byte value; array files keep only the value).
    let (line, parsed) = match (h.format, h.field) {
        (MmFormat::Array, _) => (2, 2),
        (MmFormat::Coordinate, MmField::Pattern) => (4, 10),
        (MmFormat::Coordinate, _) => (6, 10),
    };
    let needed = entries
        .saturating_mul(line + parsed)
        .saturating_sub(1)
        .saturating_add(8 * (h.nrows as u64 + 1));
    crate::error::check_host_memory(
        || {
            format!(
                "reading the {entries} entries of a {} x {} matrix that the size line (line \
                 {size_line}) announces (their text, triplets and row pointers)",
                h.nrows, h.ncols
            )
        },
        needed,
    )
}

fn too_many(line: usize, expected: usize) -> Error {
    Error::parse(
        line,
        format!(
            "too many entries: the size line announces {expected}, and line {line} holds entry {}",
            expected + 1
        ),
    )
}

/// Cuts `body` into pieces that end at newlines.
fn split_chunks(body: &[u8]) -> Vec<&[u8]> {
    let threads = rayon::current_num_threads().max(1);
    let target = (body.len() / (threads * 8)).clamp(MIN_CHUNK, MAX_CHUNK);
    let mut pieces = Vec::with_capacity(body.len() / target + 1);
    let mut start = 0;
    while body.len() - start > target {
        match body[start + target..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                let end = start + target + i + 1;
                pieces.push(&body[start..end]);
                start = end;
            }
            None => break,
        }
    }
    if start < body.len() || pieces.is_empty() {
        pieces.push(&body[start..]);
    }
    pieces
}

/// The chunk-relative line (0-based) of the entry line with 0-based index `k` in `piece`.
fn nth_entry_line(piece: &[u8], k: usize) -> usize {
    let mut seen = 0;
    for (i, line) in piece.split(|&b| b == b'\n').enumerate() {
        if !is_comment_or_blank(line) {
            if seen == k {
                return i;
            }
            seen += 1;
        }
    }
    unreachable!("the chunk holds more than {k} entries")
}

fn parse_chunk<T: Scalar>(ctx: &Ctx, s: &[u8]) -> Chunk<T> {
    let estimate = s.len() / 24 + 16;
    let mirrored = ctx.symmetry != MmSymmetry::General && ctx.format == MmFormat::Coordinate;
    let cap = if mirrored { 2 * estimate } else { estimate };
    let coordinate = ctx.format == MmFormat::Coordinate;
    // Reading some rows keeps about their share of the entries.
    let kept = (cap as u64 * ctx.row_count / ctx.nrows.max(1)) as usize + 16;
    let mut out = Chunk {
        kept: if coordinate {
            (Vec::with_capacity(kept), Vec::with_capacity(kept), Vec::with_capacity(kept))
        } else {
            Default::default()
        },
        values: Vec::with_capacity(if coordinate { 0 } else { cap }),
        entries: 0,
        newlines: 0,
        error: None,
    };
    let n = s.len();
    let mut p = 0;
    let mut toks: [&[u8]; 4] = [&[]; 4];
    while p < n {
        // Start of a line: skip leading blanks.
        while p < n && is_blank(s[p]) {
            p += 1;
        }
        if p == n {
            break;
        }
        if s[p] == b'\n' {
            p += 1;
            out.newlines += 1;
            continue;
        }
        if s[p] == b'%' {
            match s[p..].iter().position(|&b| b == b'\n') {
                Some(i) => {
                    p += i + 1;
                    out.newlines += 1;
                    continue;
                }
                None => break,
            }
        }
        // An entry line: up to 4 tokens kept, all counted.
        let mut nt = 0;
        loop {
            let start = p;
            while p < n && !is_blank(s[p]) && s[p] != b'\n' {
                p += 1;
            }
            if nt < toks.len() {
                toks[nt] = &s[start..p];
            }
            nt += 1;
            while p < n && is_blank(s[p]) {
                p += 1;
            }
            if p == n || s[p] == b'\n' {
                break;
            }
        }
        if let Err(message) = entry(ctx, &toks[..nt.min(toks.len())], nt, &mut out) {
            out.error = Some((out.newlines, message));
            return out;
        }
        out.entries += 1;
        if p < n {
            p += 1; // the newline
            out.newlines += 1;
        }
    }
    out
}

/// Parses one entry line (tokens `toks`, `nt` of them in all) into `out`.
#[inline]
fn entry<T: Scalar>(
    ctx: &Ctx, toks: &[&[u8]], nt: usize, out: &mut Chunk<T>,
) -> Result<(), String> {
    if ctx.format == MmFormat::Array {
        if nt != 1 {
            return Err(format!("expected 1 value per line in an array matrix, found {nt} fields"));
        }
        out.values.push(value::<T>(ctx, toks[0])?);
        return Ok(());
    }
    let expected = if ctx.field == MmField::Pattern { 2 } else { 3 };
    if nt != expected {
        let what = if expected == 2 { "row column" } else { "row column value" };
        return Err(format!(
            "expected {expected} fields ({what}) on an entry line of a {} matrix, found {nt}",
            ctx.field
        ));
    }
    let r = index(toks[0], "row", "rows", ctx.nrows)?;
    let c = index(toks[1], "column", "columns", ctx.ncols)?;
    let v = if ctx.field == MmField::Pattern { T::ONE } else { value::<T>(ctx, toks[2])? };
    match ctx.symmetry {
        MmSymmetry::General => push(ctx, &mut out.kept, r, c, v),
        MmSymmetry::Symmetric => {
            push(ctx, &mut out.kept, r, c, v);
            if r != c {
                push(ctx, &mut out.kept, c, r, v);
            }
        }
        MmSymmetry::SkewSymmetric => {
            if r == c {
                if v != T::ZERO {
                    return Err(format!(
                        "skew-symmetric matrix has a nonzero diagonal entry ({}, {}) = {} (its diagonal must be zero)",
                        r + 1,
                        c + 1,
                        show(toks[2])
                    ));
                }
                push(ctx, &mut out.kept, r, c, v);
            } else {
                push(ctx, &mut out.kept, r, c, v);
                push(ctx, &mut out.kept, c, r, -v);
            }
        }
    }
    Ok(())
}

/// Keeps the entry when its row is in the rows read (renumbered from the first of them).
#[inline]
fn push<T>(ctx: &Ctx, (rows, cols, vals): &mut Triplets<T>, r: u32, c: u32, v: T) {
    let Some(r) = (r as u64).checked_sub(ctx.first_row).filter(|&r| r < ctx.row_count) else {
        return;
    };
    rows.push(r as u32);
    cols.push(c);
    vals.push(v);
}

/// A 1-based index in `1..=bound`, returned 0-based.
#[inline(always)]
fn index(tok: &[u8], what: &str, plural: &str, bound: u64) -> Result<u32, String> {
    if tok.is_empty() || tok.len() > 19 {
        return index_slow(tok, what, plural, bound);
    }
    let mut v: u64 = 0;
    for &b in tok {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return index_slow(tok, what, plural, bound);
        }
        v = v * 10 + u64::from(d);
    }
    if v == 0 || v > bound {
        return index_slow(tok, what, plural, bound);
    }
    Ok((v - 1) as u32)
}

/// [`index`] for the unusual cases: long tokens (leading zeros) and every error.
#[cold]
#[inline(never)]
fn index_slow(tok: &[u8], what: &str, plural: &str, bound: u64) -> Result<u32, String> {
    if let Some(unsigned) =
        tok.strip_prefix(b"+").filter(|t| t.first().is_some_and(u8::is_ascii_digit))
    {
        return index_slow(unsigned, what, plural, bound); // "+7" is the integer 7, as scanf reads it
    }
    let digits = !tok.is_empty() && tok.iter().all(u8::is_ascii_digit);
    if !digits {
        let negative = tok.len() > 1 && tok[0] == b'-' && tok[1..].iter().all(u8::is_ascii_digit);
        return Err(if negative {
            format!(
                "{what} index {} is out of range 1..={bound} (Matrix Market indices start at 1)",
                show(tok)
            )
        } else {
            format!("{what} index '{}' is not a positive integer", show(tok))
        });
    }
    let v = tok.iter().fold(0u64, |v, &b| v.saturating_mul(10).saturating_add(u64::from(b - b'0')));
    if v == 0 {
        return Err(format!(
            "{what} index 0 is out of range 1..={bound} (Matrix Market indices start at 1)"
        ));
    }
    if v > bound {
        return Err(format!("{what} index {} exceeds the number of {plural} ({bound})", show(tok)));
    }
    Ok((v - 1) as u32)
}

/// A value of a `real` or `integer` field, rounded once to `T`.
#[inline]
fn value<T: Scalar>(ctx: &Ctx, tok: &[u8]) -> Result<T, String> {
    let v = match ctx.field {
        MmField::Real => {
            real::<T>(tok).ok_or_else(|| format!("value '{}' is not a number", show(tok)))?
        }
        MmField::Integer => integer::<T>(tok)?,
        MmField::Pattern => T::ONE,
    };
    if !ctx.allow_non_finite && !v.to_f64().is_finite() {
        return Err(format!(
            "value '{}' is not finite in {} (infinite, NaN, or beyond ±{:e}); such values are refused \
             (ReadOptions::allow_non_finite, `--allow-non-finite` in the CLI, lets them through)",
            show(tok),
            T::SUFFIX,
            T::MAX
        ));
    }
    Ok(v)
}

/// Correctly rounded decimal-to-binary conversion straight to `T` (std's parser; parsing
/// to f64 and then rounding to f32 could round twice).
#[inline]
fn real<T: Scalar>(tok: &[u8]) -> Option<T> {
    let s = std::str::from_utf8(tok).ok()?;
    match T::PRECISION {
        Precision::F32 => s.parse::<f32>().ok().map(|v| T::from_f64(f64::from(v))),
        Precision::F64 => s.parse::<f64>().ok().map(T::from_f64),
        // No f16 parser in std: through f64, which rounds twice only when the f64 value sits
        // exactly on an f16 tie (then one f16 ulp off at most).
        Precision::F16 => s.parse::<f64>().ok().map(T::from_f64),
    }
}

#[inline]
fn integer<T: Scalar>(tok: &[u8]) -> Result<T, String> {
    let (negative, digits) = match tok.first() {
        Some(b'-') => (true, &tok[1..]),
        Some(b'+') => (false, &tok[1..]),
        _ => (false, tok),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(format!("value '{}' is not an integer (the banner says integer)", show(tok)));
    }
    let mut v: i64 = 0;
    for &d in digits {
        let d = i64::from(d - b'0');
        v = v
            .checked_mul(10)
            .and_then(|v| if negative { v.checked_sub(d) } else { v.checked_add(d) })
            .ok_or_else(|| format!("integer value '{}' is out of the 64-bit range", show(tok)))?;
    }
    // One rounding, straight to T.
    Ok(match T::PRECISION {
        Precision::F32 => T::from_f64(f64::from(v as f32)),
        Precision::F64 => T::from_f64(v as f64),
        Precision::F16 => T::from_f64(v as f64),
    })
}

/// Where the next value of a dense array file goes (column-major; symmetric: the lower
/// triangle column by column; skew-symmetric: the strict lower triangle).
struct ArrayCursor {
    symmetry: MmSymmetry,
    row: usize,
    col: usize,
}

impl ArrayCursor {
    fn new(symmetry: MmSymmetry) -> Self {
        let mut cursor = ArrayCursor { symmetry, row: 0, col: 0 };
        cursor.row = cursor.first_row(0);
        cursor
    }

    /// The first row stored of column `j`.
    fn first_row(&self, j: usize) -> usize {
        match self.symmetry {
            MmSymmetry::General => 0,
            MmSymmetry::Symmetric => j,
            MmSymmetry::SkewSymmetric => j + 1,
        }
    }

    /// Places the next `values` of an `m`-row array, keeping the nonzeros of the rows read
    /// (`ctx`) and mirroring the stored triangle.
    fn place<T: Scalar>(&mut self, ctx: &Ctx, m: usize, values: &[T], kept: &mut Triplets<T>) {
        for &v in values {
            // Every index is below the size (the reader checked the count of values).
            if v != T::ZERO {
                let (r, c) = (self.row as u32, self.col as u32);
                push(ctx, kept, r, c, v);
                if r != c {
                    match self.symmetry {
                        MmSymmetry::General => {}
                        MmSymmetry::Symmetric => push(ctx, kept, c, r, v),
                        MmSymmetry::SkewSymmetric => push(ctx, kept, c, r, -v),
                    }
                }
            }
            self.row += 1;
            if self.row >= m {
                self.col += 1;
                self.row = self.first_row(self.col);
            }
        }
    }
}

/// CSR from triplet parts (indices checked by the parser): a counting sort by row that
/// keeps file order, then each row sorted by column (stable) with repeated positions summed
/// in file order.
///
/// Parallel and deterministic: each task owns a range of rows, scans all the triplets and
/// takes those in its range (first to count, then, over ranges of about equal entry
/// counts, to scatter and sort), so no two tasks write the same memory.
fn build_csr<T: Scalar>(
    nrows: usize, ncols: usize, parts: &[(&[u32], &[u32], &[T])],
) -> Result<Csr<T>> {
    let total: usize = parts.iter().map(|p| p.0.len()).sum();
    let tasks =
        if total < 1 << 17 { 1 } else { rayon::current_num_threads().clamp(1, nrows.max(1)) };

    // 1. Entries per row, each task counting a uniform range of rows.
    let uniform: Vec<(usize, usize)> =
        (0..tasks).map(|t| (nrows * t / tasks, nrows * (t + 1) / tasks)).collect();
    let counts: Vec<Vec<usize>> = uniform
        .par_iter()
        .map(|&(r0, r1)| {
            let mut count = vec![0usize; r1 - r0];
            for (rows, _, _) in parts {
                for &r in *rows {
                    let i = (r as usize).wrapping_sub(r0);
                    if i < count.len() {
                        count[i] += 1;
                    }
                }
            }
            count
        })
        .collect();
    let mut row_ptr = Vec::new();
    row_ptr.try_reserve_exact(nrows + 1).map_err(|_| {
        Error::out_of_memory(
            format!("the row pointers of {nrows} rows"),
            8 * (nrows as u64 + 1),
            crate::error::available_memory().unwrap_or(0),
        )
    })?;
    row_ptr.push(0usize);
    let mut acc = 0;
    for &k in counts.iter().flatten() {
        acc += k;
        row_ptr.push(acc);
    }
    drop(counts);
    debug_assert_eq!(acc, total);

    // 2. Scatter (file order) and sort/merge, over row ranges of about equal entry counts.
    let mut col_idx = vec![0u32; total];
    let mut values = vec![T::ZERO; total];
    let mut ranges = Vec::with_capacity(tasks);
    {
        let (mut ci, mut vs) = (&mut col_idx[..], &mut values[..]);
        let mut r0 = 0;
        for t in 1..=tasks {
            let r1 = if t == tasks {
                nrows
            } else {
                row_ptr.partition_point(|&p| p < total * t / tasks).clamp(r0, nrows)
            };
            let len = row_ptr[r1] - row_ptr[r0];
            let (c_head, c_tail) = std::mem::take(&mut ci).split_at_mut(len);
            let (v_head, v_tail) = std::mem::take(&mut vs).split_at_mut(len);
            ranges.push((r0, r1, c_head, v_head));
            (ci, vs) = (c_tail, v_tail);
            r0 = r1;
        }
    }
    let shrunk: Vec<Vec<(usize, usize)>> = ranges
        .into_par_iter()
        .map(|(r0, r1, ci, vs)| {
            let base = row_ptr[r0];
            let mut next: Vec<usize> = row_ptr[r0..r1].iter().map(|&p| p - base).collect();
            for (rows, cols, vals) in parts {
                for ((&r, &c), &v) in rows.iter().zip(*cols).zip(*vals) {
                    let i = (r as usize).wrapping_sub(r0);
                    if i < next.len() {
                        let slot = next[i];
                        ci[slot] = c;
                        vs[slot] = v;
                        next[i] = slot + 1;
                    }
                }
            }
            drop(next);
            let mut shrunk = Vec::new();
            let mut scratch: Vec<(u32, T)> = Vec::new();
            for r in r0..r1 {
                let range = row_ptr[r] - base..row_ptr[r + 1] - base;
                let (cols, vals) = (&mut ci[range.clone()], &mut vs[range]);
                if cols.windows(2).all(|w| w[0] < w[1]) {
                    continue;
                }
                scratch.clear();
                scratch.extend(cols.iter().copied().zip(vals.iter().copied()));
                scratch.sort_by_key(|e| e.0); // stable: repeats stay in file order
                let mut len = 0;
                for &(c, v) in &scratch {
                    if len > 0 && cols[len - 1] == c {
                        vals[len - 1] += v;
                    } else {
                        cols[len] = c;
                        vals[len] = v;
                        len += 1;
                    }
                }
                if len < cols.len() {
                    shrunk.push((r, len));
                }
            }
            shrunk
        })
        .collect();

    let shrunk: Vec<(usize, usize)> = shrunk.into_iter().flatten().collect();
    if !shrunk.is_empty() {
        // Repeated positions were merged: close the gaps (rows in order).
        let mut new_ptr = Vec::with_capacity(nrows + 1);
        new_ptr.push(0);
        let mut w = 0;
        let mut s = shrunk.iter().peekable();
        for r in 0..nrows {
            let start = row_ptr[r];
            let len = match s.peek() {
                Some(&&(row, len)) if row == r => {
                    s.next();
                    len
                }
                _ => row_ptr[r + 1] - start,
            };
            col_idx.copy_within(start..start + len, w);
            values.copy_within(start..start + len, w);
            w += len;
            new_ptr.push(w);
        }
        col_idx.truncate(w);
        values.truncate(w);
        row_ptr = new_ptr;
    }
    // SAFETY: the parser checked every index against the size line, and each row is now
    // strictly increasing in column; row_ptr runs from 0 to nnz.
    Ok(unsafe { Csr::new_unchecked(nrows, ncols, row_ptr, col_idx, values) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_end_at_newlines_and_cover_the_body() {
        let body: Vec<u8> = (0..200_000)
            .flat_map(|i| format!("{} {} {}.5\n", i % 97 + 1, i % 13 + 1, i).into_bytes())
            .collect();
        let pieces = split_chunks(&body);
        assert!(pieces.len() > 1);
        assert_eq!(pieces.iter().map(|p| p.len()).sum::<usize>(), body.len());
        for p in &pieces {
            assert_eq!(p.last(), Some(&b'\n'));
        }
    }

    #[test]
    fn integers_round_once() {
        // 2^53 + 1 rounds to 2^53 in f64; 2^24 + 1 rounds to 2^24 in f32.
        assert_eq!(integer::<f64>(b"9007199254740993").unwrap(), 9007199254740992.0);
        assert_eq!(integer::<f32>(b"16777217").unwrap(), 16777216.0);
        assert_eq!(integer::<f64>(b"-42").unwrap(), -42.0);
        assert!(integer::<f64>(b"99999999999999999999").is_err());
        assert!(integer::<f64>(b"1.0").is_err());
    }

    #[test]
    fn reals_parse_straight_to_f32() {
        // Double rounding through f64 gives a different f32 for this input.
        let s = b"1.00000005960464477539062500000000000000000001";
        let direct: f32 = std::str::from_utf8(s).unwrap().parse().unwrap();
        let via_f64 = std::str::from_utf8(s).unwrap().parse::<f64>().unwrap() as f32;
        assert_ne!(direct, via_f64);
        assert_eq!(real::<f32>(s), Some(direct));
    }
}
