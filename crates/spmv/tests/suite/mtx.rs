//! Matrix Market reader and writer: hand-written examples, every error case, round trips,
//! gzip, and the run's real matrices (`common::MatrixSet`) against the independent reader
//! `sprs`. Run with `cargo test -p spmv --release --test suite -- mtx::`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use spmv::io::mtx::{
    read_header, read_header_bytes, read_matrix_market, read_matrix_market_bytes,
    write_matrix_market, write_matrix_market_to, MatrixMarketHeader, MmField, MmFormat, MmSymmetry,
};
use spmv::reference::{test_vector, Oracle};
use spmv::{Coo, Csr, Error, Scalar};

use crate::common;

// ---------------------------------------------------------------------------------------
// Helpers

fn read(text: &str) -> spmv::Result<Csr<f64>> {
    read_matrix_market_bytes::<f64>(text.as_bytes())
}

/// The (line, message) of the parse error `text` must give.
fn parse_error(text: &str) -> (usize, String) {
    match read(text) {
        Err(Error::Parse { line, message }) => (line, message),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

/// Asserts a parse error at `line` whose message contains every one of `words`.
#[track_caller]
fn assert_parse_error(text: &str, line: usize, words: &[&str]) {
    let (got_line, message) = parse_error(text);
    assert_eq!(got_line, line, "wrong line in error '{message}'");
    for w in words {
        assert!(message.contains(w), "error message '{message}' does not mention '{w}'");
    }
    // The f32 reader gives the same error.
    match read_matrix_market_bytes::<f32>(text.as_bytes()) {
        Err(Error::Parse { line: l, message: m }) => assert_eq!((l, &m), (line, &message)),
        other => panic!("f32 reader: expected a parse error, got {other:?}"),
    }
}

/// [`assert_parse_error`] on `body` after the header of a real general matrix.
#[track_caller]
fn assert_real_error(body: &str, line: usize, words: &[&str]) {
    assert_parse_error(&format!("{REAL}{body}"), line, words);
}

fn csr(nrows: usize, ncols: usize, rows: &[&[(u32, f64)]]) -> Csr<f64> {
    assert_eq!(rows.len(), nrows);
    let mut row_ptr = vec![0];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for row in rows {
        for &(c, v) in *row {
            cols.push(c);
            vals.push(v);
        }
        row_ptr.push(cols.len());
    }
    Csr::new_checked(nrows, ncols, row_ptr, cols, vals).unwrap()
}

/// Bitwise equality (so -0.0 and the last bit of every value count); any NaN equals any
/// NaN (the text form `NaN` keeps neither sign nor payload).
fn same_bits<T: Scalar>(a: &Csr<T>, b: &Csr<T>) -> bool {
    a.nrows() == b.nrows()
        && a.ncols() == b.ncols()
        && a.row_ptr() == b.row_ptr()
        && a.col_idx() == b.col_idx()
        && a.values().iter().zip(b.values()).all(|(x, y)| {
            let (x, y) = (x.to_f64(), y.to_f64());
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        })
}

fn tmp_path(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    // The process id and its start: a folder of an earlier run whose process had the same id
    // (a killed run leaves its files) is never reused.
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let nanos = since.map_or(0, |d| d.as_nanos());
        let name = format!("spmv-mtx-tests-{}-{nanos}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    });
    dir.join(format!("{}-{name}", N.fetch_add(1, Ordering::Relaxed)))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out).unwrap();
    out
}

const REAL: &str = "%%MatrixMarket matrix coordinate real general\n";
const ARRAY: &str = "%%MatrixMarket matrix array real general\n";

// ---------------------------------------------------------------------------------------
// Hand-written examples

#[test]
fn general_real_with_comments_blank_lines_and_any_order() {
    let text = "%%MatrixMarket matrix coordinate real general\n\
                % a comment\n\
                \n\
                %another\n\
                3 4 5\n\
                3 4 5e0\n\
                1 1 1.0\n\
                \n\
                % a comment in the body\n\
                1 3 -2.5\n\
                \t 3   1\t 3 \n\
                3 2 4.25\n";
    let expect = csr(3, 4, &[&[(0, 1.0), (2, -2.5)], &[], &[(0, 3.0), (1, 4.25), (3, 5.0)]]);
    assert_eq!(read(text).unwrap(), expect);
}

#[test]
fn banner_is_case_insensitive_crlf_and_missing_final_newline_are_fine() {
    let text = "%%matrixmarket MATRIX Coordinate REAL General\r\n2 2 2\r\n1 1 1.5\r\n2 2 -1";
    assert_eq!(read(text).unwrap(), csr(2, 2, &[&[(0, 1.5)], &[(1, -1.0)]]));
}

#[test]
fn symmetric_is_expanded() {
    let text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 2.0\n2 1 -1.0\n3 2 -1.5\n3 3 4\n";
    let expect =
        csr(3, 3, &[&[(0, 2.0), (1, -1.0)], &[(0, -1.0), (2, -1.5)], &[(1, -1.5), (2, 4.0)]]);
    assert_eq!(read(text).unwrap(), expect);
}

#[test]
fn skew_symmetric_is_expanded_with_negated_mirror() {
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 3.0\n3 1 -2.5\n";
    let expect = csr(3, 3, &[&[(1, -3.0), (2, 2.5)], &[(0, 3.0)], &[(0, -2.5)]]);
    assert_eq!(read(text).unwrap(), expect);
}

#[test]
fn skew_symmetric_zero_diagonal_is_kept_as_explicit_zero() {
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n1 1 0\n2 1 1\n";
    assert_eq!(read(text).unwrap(), csr(2, 2, &[&[(0, 0.0), (1, -1.0)], &[(0, 1.0)]]));
}

#[test]
fn pattern_entries_are_one() {
    let text = "%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 3\n2 1\n1 1\n";
    assert_eq!(read(text).unwrap(), csr(2, 3, &[&[(0, 1.0), (2, 1.0)], &[(0, 1.0)]]));
    let text = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n3 2\n";
    let expect = csr(3, 3, &[&[(0, 1.0), (2, 1.0)], &[(2, 1.0)], &[(0, 1.0), (1, 1.0)]]);
    assert_eq!(read(text).unwrap(), expect);
}

#[test]
fn integer_values() {
    let text = "%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 -7\n2 1 +12\n2 2 0\n";
    assert_eq!(read(text).unwrap(), csr(2, 2, &[&[(0, -7.0)], &[(0, 12.0), (1, 0.0)]]));
    let text = "%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n2 1 5\n2 2 -1\n";
    assert_eq!(read(text).unwrap(), csr(2, 2, &[&[(1, 5.0)], &[(0, 5.0), (1, -1.0)]]));
    // f32: one rounding, 2^24 + 1 -> 2^24.
    let text = "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 16777217\n";
    assert_eq!(
        read_matrix_market_bytes::<f32>(text.as_bytes()).unwrap().values(),
        &[16777216.0f32]
    );
}

#[test]
fn array_general_stores_nonzeros_column_major() {
    // | 1 2 0 |
    // | 0 3 4 |
    let text = "%%MatrixMarket matrix array real general\n% comment\n2 3\n1\n0\n2\n3\n\n0\n4.0\n";
    assert_eq!(read(text).unwrap(), csr(2, 3, &[&[(0, 1.0), (1, 2.0)], &[(1, 3.0), (2, 4.0)]]));
    let text = "%%MatrixMarket matrix array integer general\n2 1\n-3\n0\n";
    assert_eq!(read(text).unwrap(), csr(2, 1, &[&[(0, -3.0)], &[]]));
}

#[test]
fn array_symmetric_and_skew_are_expanded() {
    // Lower triangle column by column: a11 a21 a31 a22 a32 a33.
    let text = "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n0\n3\n4\n5\n";
    let expect =
        csr(3, 3, &[&[(0, 1.0), (1, 2.0)], &[(0, 2.0), (1, 3.0), (2, 4.0)], &[(1, 4.0), (2, 5.0)]]);
    assert_eq!(read(text).unwrap(), expect);
    // Strict lower triangle: a21 a31 a32.
    let text = "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n";
    let expect =
        csr(3, 3, &[&[(1, -1.0), (2, -2.0)], &[(0, 1.0), (2, -3.0)], &[(0, 2.0), (1, 3.0)]]);
    assert_eq!(read(text).unwrap(), expect);
}

#[test]
fn duplicates_are_summed_and_explicit_zeros_kept() {
    let text = format!("{REAL}2 2 5\n1 1 1.5\n2 2 0\n1 1 2.5\n1 2 1\n1 1 -1\n");
    assert_eq!(read(&text).unwrap(), csr(2, 2, &[&[(0, 3.0), (1, 1.0)], &[(1, 0.0)]]));
    // Both triangles of a symmetric file: the mirrors add up.
    let text = "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 2\n";
    assert_eq!(read(text).unwrap(), csr(2, 2, &[&[(1, 3.0)], &[(0, 3.0)]]));
}

#[test]
fn empty_matrices() {
    assert_eq!(read(&format!("{REAL}0 0 0\n")).unwrap(), Csr::zeros(0, 0));
    assert_eq!(read(&format!("{REAL}3 5 0")).unwrap(), Csr::zeros(3, 5));
    assert_eq!(read(&format!("{REAL}3 5 0\n\n% nothing\n")).unwrap(), Csr::zeros(3, 5));
}

#[test]
fn largest_dimensions_fit_u32_indices() {
    let text = format!("{REAL}1 4294967296 1\n1 4294967296 2.0\n");
    let a = read(&text).unwrap();
    assert_eq!((a.nrows(), a.ncols(), a.col_idx()), (1, 1 << 32, &[u32::MAX][..]));
}

#[test]
fn headers() {
    let h =
        read_header_bytes(b"%%MatrixMarket matrix coordinate pattern symmetric\n% c\n5 5 7\n1 1\n")
            .unwrap();
    let expect = MatrixMarketHeader {
        format: MmFormat::Coordinate,
        field: MmField::Pattern,
        symmetry: MmSymmetry::Symmetric,
        nrows: 5,
        ncols: 5,
        entries: 7,
    };
    assert_eq!(h, expect);
    let h =
        read_header_bytes(b"%%MatrixMarket matrix array integer skew-symmetric\n4 4\n").unwrap();
    assert_eq!(
        (h.format, h.field, h.symmetry, h.entries),
        (MmFormat::Array, MmField::Integer, MmSymmetry::SkewSymmetric, 6)
    );
    let h = read_header_bytes(b"%%MatrixMarket matrix array real symmetric\n4 4\n").unwrap();
    assert_eq!(h.entries, 10);
    let h = read_header_bytes(b"%%MatrixMarket matrix array real general\n4 3\n").unwrap();
    assert_eq!(h.entries, 12);

    // From files, plain and gzipped; only the start of the file is read.
    let text = format!("{REAL}%c\n\n2 3 4\n1 1 1\nthis line is never read\n");
    let plain = tmp_path("h.mtx");
    std::fs::write(&plain, &text).unwrap();
    let gz = tmp_path("h.mtx.gz");
    std::fs::write(&gz, gzip(text.as_bytes())).unwrap();
    for p in [&plain, &gz] {
        let h = read_header(p).unwrap();
        assert_eq!(
            (h.format, h.field, h.symmetry, h.nrows, h.ncols, h.entries),
            (MmFormat::Coordinate, MmField::Real, MmSymmetry::General, 2, 3, 4)
        );
    }
    match read_header(&tmp_path("missing.mtx")) {
        Err(Error::Io { .. }) => {}
        other => panic!("expected an I/O error, got {other:?}"),
    }
    // The header reader gives the same errors as the full reader.
    let bad = tmp_path("bad.mtx");
    std::fs::write(&bad, format!("{REAL}% c\n3 x 1\n")).unwrap();
    match read_header(&bad) {
        Err(Error::Parse { line: 3, message }) => assert!(message.contains("'x'"), "{message}"),
        other => panic!("expected a parse error on line 3, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Errors

#[test]
fn error_missing_or_bad_banner() {
    assert_parse_error("3 3 1\n1 1 1\n", 1, &["banner", "%%MatrixMarket"]);
    assert_parse_error("", 1, &["banner"]);
    assert_parse_error("%MatrixMarket matrix coordinate real general\n1 1 0\n", 1, &["banner"]);
    assert_parse_error("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, &["banner", "5 words"]);
    assert_parse_error(
        "%%MatrixMarket tensor coordinate real general\n1 1 0\n",
        1,
        &["object", "tensor"],
    );
    assert_parse_error(
        "%%MatrixMarket matrix sparse real general\n1 1 0\n",
        1,
        &["format", "sparse"],
    );
    assert_parse_error(
        "%%MatrixMarket matrix coordinate float general\n1 1 0\n",
        1,
        &["field", "float"],
    );
    assert_parse_error(
        "%%MatrixMarket matrix coordinate real lower\n1 1 0\n",
        1,
        &["symmetry", "lower"],
    );
    assert_parse_error(
        "%%MatrixMarket matrix array pattern general\n1 1\n",
        1,
        &["array", "pattern"],
    );
    assert_parse_error(
        "%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n",
        1,
        &["pattern", "skew"],
    );
}

#[test]
fn error_unsupported_complex_and_hermitian() {
    for (text, word) in [
        ("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "complex"),
        ("%%MatrixMarket matrix coordinate complex hermitian\n1 1 1\n1 1 1 0\n", "complex"),
        ("%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", "hermitian"),
        ("%%MatrixMarket matrix array complex general\n1 1\n1 0\n", "complex"),
    ] {
        match read(text) {
            Err(Error::Unsupported(m)) => assert!(m.contains(word), "'{m}' does not name {word}"),
            other => panic!("expected Unsupported, got {other:?}"),
        }
        match read_header_bytes(text.as_bytes()) {
            Err(Error::Unsupported(_)) => {}
            other => panic!("header: expected Unsupported, got {other:?}"),
        }
    }
}

#[test]
fn error_bad_size_line() {
    assert_real_error("% c\n3 3\n1 1 1\n", 3, &["size line", "expected 3", "found 2"]);
    assert_real_error("3 3 1 1\n1 1 1\n", 2, &["size line", "found 4"]);
    assert_real_error("3 x 1\n1 1 1\n", 2, &["size line", "'x'", "not a non-negative integer"]);
    assert_real_error("3 3 1.5\n1 1 1\n", 2, &["size line", "'1.5'"]);
    assert_real_error("-3 3 1\n1 1 1\n", 2, &["size line", "negative", "-3"]);
    assert_real_error("3 3 -1\n", 2, &["size line", "negative"]);
    assert_real_error("4294967297 1 0\n", 2, &["size line", "32-bit", "4294967297"]);
    assert_real_error("1 99999999999999999999999 0\n", 2, &["size line", "too large"]);
    assert_parse_error(&format!("{ARRAY}2 2 4\n1\n2\n3\n4\n"), 2, &["size line", "expected 2"]);
    assert_parse_error(
        "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n",
        2,
        &["square", "2 x 3"],
    );
    // No size line at all.
    assert_real_error("% only comments\n\n", 3, &["before the size line"]);
    assert_parse_error(REAL, 1, &["before the size line"]);
}

#[test]
fn error_too_few_entries() {
    assert_real_error(
        "2 2 3\n1 1 1.0\n2 2 2.0\n",
        4,
        &["too few", "line 4", "expected 3, found 2"],
    );
    // Trailing blank lines: the file ends at its last line.
    assert_real_error(
        "2 2 3\n1 1 1.0\n2 2 2.0\n\n% c\n",
        6,
        &["too few", "line 6", "expected 3, found 2"],
    );
    // No final newline.
    assert_real_error("2 2 3\n1 1 1.0\n2 2 2.0", 4, &["too few", "expected 3, found 2"]);
    // No entries at all: the file ends at the size line.
    assert_real_error("2 2 1\n", 2, &["too few", "expected 1, found 0"]);
    assert_parse_error(&format!("{ARRAY}2 2\n1\n2\n3\n"), 5, &["too few", "expected 4, found 3"]);
}

#[test]
fn error_too_many_entries() {
    assert_real_error(
        "2 2 1\n1 1 1.0\n\n% c\n2 2 2.0\n",
        6,
        &["too many", "announces 1", "line 6"],
    );
    // An extra line is "too many" even when it is malformed.
    assert_real_error("2 2 1\n1 1 1.0\ngarbage\n", 4, &["too many"]);
    assert_real_error("2 2 0\n1 1 1.0\n", 3, &["too many", "announces 0"]);
    assert_parse_error(&format!("{ARRAY}1 2\n1\n2\n3\n"), 5, &["too many", "announces 2"]);
}

#[test]
fn error_index_out_of_range() {
    assert_real_error("2 3 2\n1 1 1\n0 1 1\n", 4, &["row index 0", "out of range", "1..=2"]);
    assert_real_error("2 3 1\n1 0 1\n", 3, &["column index 0", "out of range", "1..=3"]);
    assert_real_error("2 3 1\n3 1 1\n", 3, &["row index 3", "exceeds", "rows (2)"]);
    assert_real_error("2 3 1\n1 4 1\n", 3, &["column index 4", "exceeds", "columns (3)"]);
    assert_real_error("2 3 1\n-1 1 1\n", 3, &["row index -1", "out of range"]);
    assert_real_error("2 3 1\n1 99999999999999999999999 1\n", 3, &["column index", "exceeds"]);
    assert_parse_error(
        "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n3 1\n",
        3,
        &["row index 3", "exceeds"],
    );
}

#[test]
fn error_not_a_number() {
    assert_real_error("2 2 1\n1 1 abc\n", 3, &["value 'abc'", "not a number"]);
    assert_real_error("2 2 1\n1 1 1.0.0\n", 3, &["'1.0.0'", "not a number"]);
    assert_real_error("2 2 1\nx 1 1.0\n", 3, &["row index 'x'", "not a positive integer"]);
    assert_real_error("2 2 1\n1 1.0 1.0\n", 3, &["column index '1.0'", "not a positive integer"]);
    let int = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n";
    assert_parse_error(&format!("{int}1 1 1.5\n"), 3, &["'1.5'", "not an integer"]);
    assert_parse_error(
        &format!("{int}1 1 99999999999999999999\n"),
        3,
        &["out of the 64-bit range"],
    );
    assert_parse_error(&format!("{ARRAY}1 1\nfoo\n"), 3, &["'foo'", "not a number"]);
}

#[test]
fn error_wrong_number_of_fields() {
    assert_real_error("2 2 2\n1 1 1\n1 2\n", 4, &["expected 3 fields", "found 2"]);
    assert_real_error("2 2 1\n1 2 3 4\n", 3, &["expected 3 fields", "found 4"]);
    assert_real_error("2 2 1\n1\n", 3, &["expected 3 fields", "found 1"]);
    let pat = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n";
    assert_parse_error(&format!("{pat}1 2 1.0\n"), 3, &["expected 2 fields", "pattern", "found 3"]);
    assert_parse_error(&format!("{ARRAY}1 2\n1\n2 3\n"), 4, &["1 value per line", "found 2"]);
}

#[test]
fn error_skew_symmetric_nonzero_diagonal() {
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 0.5\n";
    assert_parse_error(text, 4, &["skew-symmetric", "diagonal", "(2, 2)", "0.5"]);
}

#[test]
fn errors_name_the_right_line_in_large_parallel_files() {
    // About 8 MB: many chunks. Comment and blank lines are sprinkled in.
    let n = 400_000usize;
    let mut lines: Vec<String> =
        vec![REAL.trim_end().into(), "% comment".into(), format!("1000 1000 {n}")];
    for i in 0..n {
        if i % 1000 == 7 {
            lines.push(String::new());
        }
        if i % 777 == 3 {
            lines.push("% in the body".into());
        }
        lines.push(format!("{} {} {}.25", i % 1000 + 1, (i * 7) % 1000 + 1, i));
    }
    let text = lines.join("\n") + "\n";
    let a = read(&text).unwrap();
    // The same matrix built independently (Coo::to_csr sums repeats too).
    let coo = Coo::new_checked(
        1000,
        1000,
        (0..n).map(|i| (i % 1000) as u32).collect(),
        (0..n).map(|i| ((i * 7) % 1000) as u32).collect(),
        (0..n).map(|i| i as f64 + 0.25).collect(),
    )
    .unwrap();
    let b = coo.to_csr();
    assert_eq!((a.row_ptr(), a.col_idx()), (b.row_ptr(), b.col_idx()));
    for (x, y) in a.values().iter().zip(b.values()) {
        assert!((x - y).abs() <= 1e-9 * y.abs(), "{x} vs {y}");
    }

    for &bad in &[5usize, 123_456, 299_999, lines.len() - 1] {
        let mut l = lines.clone();
        l[bad] = "1 1 oops".into();
        let text = l.join("\n") + "\n";
        if lines[bad].is_empty() || lines[bad].starts_with('%') {
            continue;
        }
        assert_parse_error(&text, bad + 1, &["'oops'"]);
    }
    // Too many: one more entry line at the end, and one extra in the middle.
    let text = lines.join("\n") + "\n1 1 1\n";
    assert_parse_error(&text, lines.len() + 1, &["too many"]);
    let mut l = lines.clone();
    l[2] = format!("1000 1000 {}", n - 1);
    let last_entry = l.len() - 1;
    assert_parse_error(&(l.join("\n") + "\n"), last_entry + 1, &["too many"]);
    let mut l = lines.clone();
    l[2] = format!("1000 1000 {}", n / 2);
    let (line, message) = parse_error(&(l.join("\n") + "\n"));
    let data_lines: Vec<usize> = l
        .iter()
        .enumerate()
        .skip(3)
        .filter(|(_, s)| !s.is_empty() && !s.starts_with('%'))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(line, data_lines[n / 2] + 1, "{message}");
    // Too few.
    let mut l = lines.clone();
    l[2] = format!("1000 1000 {}", n + 5);
    assert_parse_error(
        &(l.join("\n") + "\n"),
        l.len(),
        &["too few", &format!("expected {}, found {n}", n + 5)],
    );
}

// ---------------------------------------------------------------------------------------
// Gzip

#[test]
fn gzip_equals_plain_and_is_detected_by_magic() {
    let text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n3 1 2\n2 2 0.1\n";
    let plain = read(text).unwrap();
    let gz = gzip(text.as_bytes());
    assert!(same_bits(&read_matrix_market_bytes::<f64>(&gz).unwrap(), &plain));
    let p1 = tmp_path("a.mtx");
    let p2 = tmp_path("a.mtx.gz");
    let p3 = tmp_path("gzipped-without-extension.mtx");
    std::fs::write(&p1, text).unwrap();
    std::fs::write(&p2, &gz).unwrap();
    std::fs::write(&p3, &gz).unwrap();
    for p in [&p1, &p2, &p3] {
        assert!(same_bits(&read_matrix_market::<f64>(p).unwrap(), &plain), "{}", p.display());
    }
    // Concatenated gzip members are one stream.
    let half = text.len() / 2;
    let mut two = gzip(&text.as_bytes()[..half]);
    two.extend(gzip(&text.as_bytes()[half..]));
    assert!(same_bits(&read_matrix_market_bytes::<f64>(&two).unwrap(), &plain));
}

#[test]
fn truncated_or_corrupt_gzip_is_an_error_not_a_panic() {
    let mut text = format!("{REAL}100 100 2000\n");
    for i in 0..2000 {
        text += &format!("{} {} {}\n", i % 100 + 1, (i * 37) % 100 + 1, i as f64 * 0.37);
    }
    let gz = gzip(text.as_bytes());
    let path = tmp_path("truncated.mtx.gz");
    for cut in [gz.len() - 1, gz.len() - 8, gz.len() / 2, 11, 3] {
        let bytes = &gz[..cut];
        match read_matrix_market_bytes::<f64>(bytes) {
            Err(Error::Parse { message, .. }) => {
                assert!(message.contains("gzip stream is truncated or corrupt"), "{message}")
            }
            other => panic!("cut at {cut}: expected an error, got {other:?}"),
        }
        std::fs::write(&path, bytes).unwrap();
        match read_matrix_market::<f64>(&path) {
            Err(e @ Error::Io { .. }) => {
                let m = e.to_string();
                assert!(
                    m.contains("gzip stream is truncated or corrupt")
                        && m.contains("truncated.mtx.gz"),
                    "{m}"
                )
            }
            other => panic!("cut at {cut}: expected an I/O error, got {other:?}"),
        }
        assert!(read_header(&path).is_err() || cut > 100, "cut at {cut}");
    }
    // Flipped bytes in the middle of the deflate stream.
    let mut bad = gz.clone();
    for i in (gz.len() / 3..gz.len() / 3 + 16).step_by(3) {
        bad[i] ^= 0x5a;
    }
    assert!(read_matrix_market_bytes::<f64>(&bad).is_err());
    // The line of a truncation error is the last line decompressed.
    match read_matrix_market_bytes::<f64>(&gz[..gz.len() - 8]) {
        Err(Error::Parse { line, .. }) => assert_eq!(line, 2002),
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Round trips

fn special_values() -> Vec<f64> {
    vec![
        0.1,
        -1.0 / 3.0,
        1e-300,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        -0.0,
        0.0,
        1.0,
        123456789.0,
        1e16,
        -2.5e-7,
        f64::INFINITY,
        f64::NEG_INFINITY,
        std::f64::consts::PI,
        9007199254740993.0,
    ]
}

fn sample_matrix(nrows: usize, ncols: usize, seed: u64) -> Csr<f64> {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        s >> 11
    };
    let specials = special_values();
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    if nrows > 0 && ncols > 0 {
        for k in 0..(nrows * ncols / 3 + 1) {
            let r = next() as usize % nrows;
            if r % 4 == 1 {
                continue; // empty rows
            }
            rows.push(r as u32);
            cols.push((next() as usize % ncols) as u32);
            vals.push(if k % 3 == 0 {
                specials[k / 3 % specials.len()]
            } else {
                (next() as f64 / (1u64 << 53) as f64 - 0.5) * 1e3
            });
        }
    }
    // Duplicate positions are fine: Coo sums them.
    Coo::new_checked(nrows, ncols, rows, cols, vals).unwrap().to_csr()
}

/// Writes and reads back `a` (non-finite values allowed: the writer keeps them).
fn round_trip<T: Scalar>(a: &Csr<T>) {
    let allow = spmv::io::ReadOptions { allow_non_finite: true };
    for name in ["rt.mtx", "rt.mtx.gz"] {
        let path = tmp_path(name);
        write_matrix_market(&path, a).unwrap();
        let b = spmv::io::read_matrix_market_with::<T>(&path, &allow).unwrap();
        assert!(same_bits(a, &b), "{name}: {}x{} nnz {}", a.nrows(), a.ncols(), a.nnz());
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(raw.starts_with(&[0x1f, 0x8b]), name.ends_with(".gz"));
    }
    let mut buf = Vec::new();
    write_matrix_market_to(&mut buf, a).unwrap();
    assert!(buf.starts_with(b"%%MatrixMarket matrix coordinate real general\n"));
    assert!(same_bits(a, &spmv::io::read_matrix_market_bytes_with::<T>(&buf, &allow).unwrap()));
}

#[test]
fn round_trip_f64_and_f32() {
    let shapes = [(0, 0), (0, 5), (5, 0), (1, 1), (7, 3), (3, 11), (40, 40), (300, 20), (1000, 1)];
    shapes.par_iter().enumerate().for_each(|(i, &(m, n))| {
        let a = sample_matrix(m, n, i as u64 + 1);
        round_trip(&a);
        round_trip(&a.cast::<f32>());
    });
    round_trip(&Csr::<f64>::zeros(4, 9));
    let specials = special_values();
    let n = specials.len();
    let a = Csr::new_checked(1, n, vec![0, n], (0..n as u32).collect(), specials).unwrap();
    round_trip(&a);
    round_trip(&a.cast::<f32>());
    // A NaN survives too (same_bits compares bits).
    let a = Csr::new_checked(1, 1, vec![0, 1], vec![0], vec![f64::NAN]).unwrap();
    round_trip(&a);
}

#[test]
fn write_to_a_bad_path_is_an_io_error() {
    let a = Csr::<f64>::zeros(1, 1);
    match write_matrix_market(Path::new("/nonexistent-dir/x.mtx"), &a) {
        Err(Error::Io { path, .. }) => assert_eq!(path, Path::new("/nonexistent-dir/x.mtx")),
        other => panic!("{other:?}"),
    }
    match read_matrix_market::<f64>(Path::new("/nonexistent-dir/x.mtx")) {
        Err(Error::Io { .. }) => {}
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// The shared real matrices against sprs, and SpMV against the oracle

/// sprs's CSR (duplicates summed) as (row_ptr, col_idx, values as f64).
fn sprs_csr(field: MmField, text: &[u8]) -> (Vec<usize>, Vec<u32>, Vec<f64>) {
    fn parts<N: Clone + std::ops::Add<Output = N>>(
        t: sprs::TriMatI<N, usize>, f: impl Fn(&N) -> f64,
    ) -> (Vec<usize>, Vec<u32>, Vec<f64>) {
        let m = t.to_csr::<usize>();
        let ptr = m.indptr().to_proper().to_vec();
        (ptr, m.indices().iter().map(|&c| c as u32).collect(), m.data().iter().map(f).collect())
    }
    let mut r = text;
    match field {
        MmField::Real => parts(
            sprs::io::read_matrix_market_from_bufread::<f64, usize, _>(&mut r).unwrap(),
            |v| *v,
        ),
        MmField::Integer => parts(
            sprs::io::read_matrix_market_from_bufread::<i64, usize, _>(&mut r).unwrap(),
            |v| *v as f64,
        ),
        MmField::Pattern => parts(
            sprs::io::read_matrix_market_from_bufread::<sprs::num_kinds::Pattern, usize, _>(&mut r)
                .unwrap(),
            |_| 1.0,
        ),
    }
}

fn check_spmv<T: Scalar>(a: &Csr<T>, name: &str) {
    let x = test_vector::<T>(a.ncols());
    let oracle = Oracle::new(a, &x);
    let mut y = vec![T::nan(); a.nrows()];
    a.spmv_serial(&x, &mut y);
    let c = oracle.check(&y);
    assert!(c.passed(), "{name} {}: serial SpMV fails the oracle: {c:?}", T::SUFFIX);
    let mut y = vec![T::nan(); a.nrows()];
    a.spmv_parallel(&x, &mut y);
    let c = oracle.check(&y);
    assert!(c.passed(), "{name} {}: parallel SpMV fails the oracle: {c:?}", T::SUFFIX);
}

#[test]
fn shared_matrices_match_sprs_and_the_oracle() {
    let files: Vec<PathBuf> = common::matrix_set_files()
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".mtx.gz"))
        .collect();
    assert!(!files.is_empty(), "no *.mtx.gz in {}", common::matrix_set().name);

    let failures: Vec<String> = files
        .par_iter()
        .filter_map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let result = std::panic::catch_unwind(|| check_shared(path, &name));
            result.err().map(|e| {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                format!("{name}: {msg}")
            })
        })
        .collect();
    eprintln!("checked {} real matrices", files.len());
    assert!(
        failures.is_empty(),
        "{} of {} matrices failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

fn check_shared(path: &Path, name: &str) {
    let gz = std::fs::read(path).unwrap();
    let text = gunzip(&gz);
    let header = read_header(path).unwrap();
    assert_eq!(header, read_header_bytes(&text).unwrap());
    let a = read_matrix_market::<f64>(path).unwrap();
    assert!(same_bits(&a, &read_matrix_market_bytes::<f64>(&text).unwrap()));
    assert_eq!((a.nrows(), a.ncols()), (header.nrows, header.ncols));
    // Our CSR keeps its invariants.
    let (m, n, p, c, v) = a.clone().into_parts();
    Csr::new_checked(m, n, p, c, v).unwrap();

    let (ptr, cols, vals) = sprs_csr(header.field, &text);
    assert_eq!(a.row_ptr(), &ptr[..], "row pointers differ from sprs");
    assert_eq!(a.col_idx(), &cols[..], "column indices differ from sprs");
    if header.field == MmField::Pattern {
        // Every stored entry is 1 (a repeated position would count its repeats).
        let expect_ones = a.values().iter().all(|&v| v == 1.0);
        assert!(expect_ones || a.values().iter().all(|&v| v >= 1.0 && v.fract() == 0.0));
    } else {
        for (i, (&x, &y)) in a.values().iter().zip(&vals).enumerate() {
            assert!(
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                "value {i}: {x:e} vs sprs {y:e}"
            );
        }
    }
    check_spmv(&a, name);

    let a32 = read_matrix_market::<f32>(path).unwrap();
    assert_eq!((a32.row_ptr(), a32.col_idx()), (a.row_ptr(), a.col_idx()));
    for (&x, &y) in a32.values().iter().zip(a.values()) {
        // One rounding from the decimal text; through f64 it may differ by an ulp.
        let (x, y) = (f64::from(x), y);
        assert!(
            x == y as f32 as f64 || (x - y).abs() <= f64::from(f32::EPSILON) * y.abs(),
            "{x:e} vs {y:e}"
        );
    }
    check_spmv(&a32, name);
}

// ---------------------------------------------------------------------------------------
// Properties

mod properties {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    /// Writes `entries` (1-based row, column, integer value) as a coordinate file with
    /// assorted layout: blank and comment lines, tabs, CRLF, value spellings.
    fn layout(
        field: &str, symmetry: &str, m: usize, n: usize, entries: &[(u32, u32, i32, u8)],
    ) -> String {
        let mut s = format!(
            "%%MatrixMarket matrix coordinate {field} {symmetry}\n% comment\n{m} {n} {}\n",
            entries.len()
        );
        for &(r, c, v, style) in entries {
            match style % 4 {
                1 => s += "\n",
                2 => s += "% between entries\n",
                _ => {}
            }
            let value = match (field, style / 4 % 4) {
                ("pattern", _) => String::new(),
                ("real", 1) => format!(" {v}.0"),
                ("real", 2) => format!(" {v}e0"),
                (_, 3) if v >= 0 => format!(" +{v}"),
                _ => format!(" {v}"),
            };
            let sep = if style & 16 != 0 { "\t " } else { " " };
            let end = if style & 32 != 0 { "\r\n" } else { "\n" };
            s += &format!("{}{r}{sep}{c}{value}{end}", if style & 64 != 0 { "  " } else { "" });
        }
        s
    }

    /// The expected CSR, by summing into an ordered map.
    fn expected(
        m: usize, n: usize, symmetry: &str, pattern: bool, entries: &[(u32, u32, i32, u8)],
    ) -> Csr<f64> {
        let mut map: BTreeMap<(u32, u32), f64> = BTreeMap::new();
        for &(r, c, v, _) in entries {
            let v = if pattern { 1.0 } else { f64::from(v) };
            *map.entry((r - 1, c - 1)).or_default() += v;
            if r != c {
                match symmetry {
                    "symmetric" => *map.entry((c - 1, r - 1)).or_default() += v,
                    "skew-symmetric" => *map.entry((c - 1, r - 1)).or_default() -= v,
                    _ => {}
                }
            }
        }
        let mut row_ptr = vec![0usize; m + 1];
        for &(r, _) in map.keys() {
            row_ptr[r as usize + 1] += 1;
        }
        for r in 0..m {
            row_ptr[r + 1] += row_ptr[r];
        }
        Csr::new_checked(
            m,
            n,
            row_ptr,
            map.keys().map(|k| k.1).collect(),
            map.values().copied().collect(),
        )
        .unwrap()
    }

    fn entries(m: u32, n: u32, max: usize) -> impl Strategy<Value = Vec<(u32, u32, i32, u8)>> {
        prop::collection::vec((1..=m, 1..=n, -20i32..20, any::<u8>()), 0..max)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn general_files_parse_to_the_summed_triplets(
            (m, n, e) in (1u32..9, 1u32..9).prop_flat_map(|(m, n)| (Just(m), Just(n), entries(m, n, 60))),
            field in prop::sample::select(vec!["real", "integer", "pattern"]),
        ) {
            let text = layout(field, "general", m as usize, n as usize, &e);
            let a = read(&text).unwrap();
            prop_assert_eq!(a, expected(m as usize, n as usize, "general", field == "pattern", &e));
            let a32 = read_matrix_market_bytes::<f32>(text.as_bytes()).unwrap();
            prop_assert_eq!(a32, expected(m as usize, n as usize, "general", field == "pattern", &e).cast::<f32>());
        }

        #[test]
        fn symmetric_files_are_mirrored(
            (n, e) in (1u32..9).prop_flat_map(|n| (Just(n), entries(n, n, 40))),
            symmetry in prop::sample::select(vec!["symmetric", "skew-symmetric"]),
            field in prop::sample::select(vec!["real", "integer", "pattern"]),
        ) {
            prop_assume!(!(field == "pattern" && symmetry == "skew-symmetric"));
            // Stored lower triangle (skew: strictly lower).
            let e: Vec<_> = e
                .into_iter()
                .filter(|&(r, c, _, _)| if symmetry == "skew-symmetric" { r > c } else { r >= c })
                .collect();
            let text = layout(field, symmetry, n as usize, n as usize, &e);
            prop_assert_eq!(read(&text).unwrap(), expected(n as usize, n as usize, symmetry, field == "pattern", &e));
        }

        /// Arbitrary bodies never panic, and whatever parses keeps the CSR invariants.
        #[test]
        fn arbitrary_input_never_panics(
            banner in prop::sample::select(vec![
                "%%MatrixMarket matrix coordinate real general",
                "%%MatrixMarket matrix coordinate pattern symmetric",
                "%%MatrixMarket matrix coordinate integer skew-symmetric",
                "%%MatrixMarket matrix array real symmetric",
                "%%MatrixMarket matrix array integer general",
            ]),
            size in "[0-9 ]{0,9}",
            body in prop::collection::vec(prop::sample::select(b"0123456789 \t\n\n\n%-+.eE\r".to_vec()), 0..120),
            raw in prop::collection::vec(any::<u8>(), 0..40),
        ) {
            for bytes in [
                [banner.as_bytes(), b"\n", size.as_bytes(), b"\n", &body].concat(),
                [banner.as_bytes(), b"\n3 3 4\n", &body].concat(),
                [banner.as_bytes(), b"\n3 3\n", &body].concat(),
                [banner.as_bytes(), b"\n", &raw].concat(),
                raw.clone(),
                gzip(&[banner.as_bytes(), b"\n2 2 1\n", &body].concat())[..(body.len() % 50).max(2)].to_vec(),
            ] {
                if let Ok(a) = read_matrix_market_bytes::<f64>(&bytes) {
                    let (m, n, p, c, v) = a.into_parts();
                    prop_assert!(Csr::new_checked(m, n, p, c, v).is_ok());
                }
                let _ = read_header_bytes(&bytes);
            }
        }
    }
}

/// gzip of `head` followed by `fill` repeated `times` times.
fn gzip_of(head: &[u8], fill: &[u8], times: usize) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(head).unwrap();
    for _ in 0..times {
        enc.write_all(fill).unwrap();
    }
    enc.finish().unwrap()
}

#[test]
fn gzip_inflation_is_bounded_by_the_banner_and_the_size_line() {
    // 256 MiB of zeros: refused from the first bytes (no banner), not inflated whole.
    let zeros = gzip_of(b"", &[0u8; 1 << 20], 256);
    let err = read_matrix_market_bytes::<f64>(&zeros).unwrap_err().to_string();
    assert!(err.contains("line 1") && !err.contains("out of memory"), "{err}");
    // A valid header announcing one entry, then 64 MiB of blank lines: refused once the text
    // passes what one entry line can take.
    let padded = gzip_of(
        b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2.0\n",
        &[b'\n'; 1 << 20],
        64,
    );
    let err = read_matrix_market_bytes::<f64>(&padded).unwrap_err().to_string();
    assert!(err.contains("inflates past") && err.contains("size line"), "{err}");
    // The same file with a little padding is read.
    let fine =
        gzip_of(b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2.0\n", b"\n", 100);
    assert_eq!(read_matrix_market_bytes::<f64>(&fine).unwrap().values(), &[2.0]);
}

// ---------------------------------------------------------------------------------------
// Reading is bounded by what the data justifies; refusals name their true cause
// ---------------------------------------------------------------------------------------

const BANNER: &[u8] = b"%%MatrixMarket matrix coordinate real general\n";

#[test]
fn a_size_line_beyond_memory_is_refused_before_the_body_is_inflated() {
    // Size lines no host can read (10^12, 2^62 and u64::MAX entries) before 64 MiB of body:
    // refused from the header with the memory they need, whatever the body holds (2^62
    // entries once wrapped the inflation cap to 1 MB and blamed the stream's size).
    for entries in ["1000000000000", "4611686018427387904", "18446744073709551615"] {
        let head = [BANNER, format!("1000 1000 {entries}\n").as_bytes()].concat();
        let gz = gzip_of(&head, &b"1 1 1.0\n".repeat(1 << 17), 64);
        match read_matrix_market_bytes::<f64>(&gz) {
            Err(Error::OutOfMemory { what, needed, available }) => {
                assert!(what.contains(entries) && what.contains("size line (line 2)"), "{what}");
                assert!(needed > available);
            }
            other => panic!("{entries} entries: expected out of memory, got {other:?}"),
        }
        let path = tmp_path("huge-size-line.mtx.gz");
        std::fs::write(&path, &gz).unwrap();
        let e = read_matrix_market::<f64>(&path).unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    }
}

#[test]
fn an_intact_stream_refused_for_its_size_is_not_called_corrupt() {
    let padded = gzip_of(&[BANNER, b"1 1 1\n1 1 2.0\n"].concat(), &[b'\n'; 1 << 20], 64);
    let path = tmp_path("padded.mtx.gz");
    std::fs::write(&path, &padded).unwrap();
    for e in [
        read_matrix_market_bytes::<f64>(&padded).unwrap_err(),
        read_matrix_market::<f64>(&path).unwrap_err(),
    ] {
        let text = e.to_string();
        assert!(matches!(e, Error::Parse { .. }), "{e:?}");
        assert!(text.contains("inflates past") && text.contains("1 entries of its size line"));
        assert!(!text.contains("corrupt") && !text.contains("truncated"), "{text}");
    }
}

#[test]
fn devices_pipes_and_folders_are_refused_by_the_reader() {
    let refused = |path: &Path, kind: &str| {
        for e in [
            read_matrix_market::<f64>(path).unwrap_err(),
            read_header(path).unwrap_err(),
            spmv::io::gen::generate(&format!("blockdiag:k=2,of=file={}", path.display()))
                .unwrap_err(),
        ] {
            let text = e.to_string();
            assert!(matches!(e, Error::Io { .. }), "{path:?}: {e:?}");
            assert!(text.contains(&format!("not a regular file but {kind}")), "{text}");
        }
    };
    // /dev/zero never ends: it was read until the memory ran out.
    refused(Path::new("/dev/zero"), "a character device");
    refused(&std::env::temp_dir(), "a folder");
    // A named pipe without a writer: opening it would block forever.
    let fifo = tmp_path("pipe.mtx");
    if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        refused(&fifo, "a named pipe (FIFO)");
    }
    // A symbolic link to a regular file is read.
    let file = tmp_path("target.mtx");
    std::fs::write(&file, [BANNER, b"1 1 1\n1 1 2.0\n"].concat()).unwrap();
    let link = tmp_path("link.mtx");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    assert_eq!(read_matrix_market::<f64>(&link).unwrap().values(), &[2.0]);
}

#[test]
fn a_header_past_its_window_is_reported_as_such() {
    // 17 MiB of comment lines before the size line: the header window (16 MiB) ran out,
    // which is what the message says (not that the file ended), gzipped, plain or header only.
    let comments =
        b"% a comment line of sixty-six bytes, repeated to fill the header...\n".repeat(1 << 14);
    let size = b"2 2 1\n1 1 2.0\n";
    let gz = gzip_of(BANNER, &comments, 17);
    let mut plain = BANNER.to_vec();
    for _ in 0..17 {
        plain.extend_from_slice(&comments);
    }
    plain.extend_from_slice(size);
    let gz_path = tmp_path("long-header.mtx.gz");
    std::fs::write(&gz_path, &gz).unwrap();
    let plain_path = tmp_path("long-header.mtx");
    std::fs::write(&plain_path, &plain).unwrap();
    for e in [
        read_matrix_market_bytes::<f64>(&gz).unwrap_err(),
        read_matrix_market_bytes::<f64>(&plain).unwrap_err(),
        read_header_bytes(&gz).unwrap_err(),
        read_header(&gz_path).unwrap_err(),
        read_header(&plain_path).unwrap_err(),
        read_matrix_market::<f64>(&plain_path).unwrap_err(),
    ] {
        let text = e.to_string();
        assert!(text.contains("no size line within the first 16 MiB"), "{text}");
        assert!(!text.contains("file ended"), "{text}");
    }
    // One comment line that never ends, gzipped: stopped at the window too.
    let endless = gzip_of(BANNER, &[b'%'; 1 << 20], 64);
    let text = read_matrix_market_bytes::<f64>(&endless).unwrap_err().to_string();
    assert!(text.contains("no size line within the first 16 MiB"), "{text}");
    // A header just within the window is read.
    let mut fits = BANNER.to_vec();
    for _ in 0..15 {
        fits.extend_from_slice(&comments);
    }
    fits.extend_from_slice(size);
    assert_eq!(read_matrix_market_bytes::<f64>(&gzip(&fits)).unwrap().values(), &[2.0]);
}

#[test]
fn other_compressions_and_binary_data_are_named() {
    for (magic, name) in [
        (&b"\xFD7zXZ\x00\x00\x04"[..], "xz file"),
        (b"\x28\xB5\x2F\xFD\x24\x00", "zstd file"),
        (b"BZh91AY&SY", "bzip2 file"),
        (b"PK\x03\x04\x14\x00", "zip archive"),
    ] {
        let path = tmp_path("compressed.mtx");
        std::fs::write(&path, magic).unwrap();
        for e in [read_matrix_market::<f64>(&path).unwrap_err(), read_header(&path).unwrap_err()] {
            let text = e.to_string();
            assert!(matches!(e, Error::Unsupported(_)), "{name}: {e:?}");
            assert!(text.contains(name) && text.contains("decompress it first"), "{text}");
        }
    }
    // Gzipped twice.
    let twice = gzip(&gzip(&[BANNER, b"1 1 1\n1 1 2.0\n"].concat()));
    let text = read_matrix_market_bytes::<f64>(&twice).unwrap_err().to_string();
    assert!(text.contains("gzip stream inside a gzip stream"), "{text}");
    // Random binary with carriage returns and newlines: binary data, not line endings.
    let mut noise = b"\x9f\x00\x13\rA B C D E\n\xff".to_vec();
    noise.extend(b" a b c d e f\r g h\n".repeat(4));
    for e in [
        read_matrix_market_bytes::<f64>(&noise).unwrap_err(),
        read_header_bytes(&noise).unwrap_err(),
    ] {
        let text = e.to_string();
        assert!(text.contains("binary data (bytes 9f 00 13 0d"), "{text}");
        assert!(!text.contains("carriage return"), "{text}");
    }
    // Text without a banner is still quoted.
    let text =
        read_matrix_market_bytes::<f64>(b"3 3 1\r\nx y z a b c\r1\n").unwrap_err().to_string();
    assert!(
        text.contains("missing Matrix Market banner") && text.contains("found '3 3 1"),
        "{text}"
    );
    // A banner followed by bare carriage returns: without any newline, the classic Mac
    // hint; with newlines later, that the banner line goes on after a carriage return.
    let mac = b"%%MatrixMarket matrix coordinate real general\r2 2 1\r1 1 1.0\r";
    let text = read_matrix_market_bytes::<f64>(mac).unwrap_err().to_string();
    assert!(text.contains("no newlines, only carriage returns"), "{text}");
    let mixed = b"%%MatrixMarket matrix coordinate real general\r2 2 1\n1 1 1.0\n";
    let text = read_matrix_market_bytes::<f64>(mixed).unwrap_err().to_string();
    assert!(text.contains("goes on after a carriage return") && !text.contains("no newlines"));
}

#[test]
fn out_of_memory_messages_never_show_more_available_than_needed() {
    let e =
        Error::OutOfMemory { what: "x".into(), needed: 2_000_000_000, available: 4_100_000_000 };
    let text = e.to_string();
    assert!(!text.contains("but 4.1 GB are available"), "{text}");
    assert!(text.contains("needs 2.0 GB") && text.contains("allocation failed"), "{text}");
    let e =
        Error::OutOfMemory { what: "x".into(), needed: 4_100_000_000, available: 2_000_000_000 };
    assert_eq!(e.to_string(), "out of memory: x needs 4.1 GB but 2.0 GB are available");
}
