//! Reading a Matrix Market file a window of text at a time: the text is never held whole
//! (a whole read holds the window and the entries), and a process of a multi-process run
//! that reads some rows holds those rows' entries only.
//!
//! Entries are stored in any order, so every line is read: each window (cut at its last
//! newline) is parsed in parallel and checked, in file order, and only the entries of the
//! rows asked for are kept.

use std::io::{BufRead, BufReader, Read};
use std::ops::Range;
use std::path::Path;

use flate2::read::MultiGzDecoder;

use super::body::{check_memory_for_entries, BodyReader};
use super::{
    corrupt_stream, inflates_past, inflation_limit, last_line, open_regular_file, parse_header,
    read_head, ReadOptions, GZIP_MAGIC,
};
use crate::error::{available_memory, check_host_memory, Error, Result};
use crate::matrix::{Csr, Scalar};

/// Text parsed at a time (two windows are held: one parsed, the next read): large enough
/// for every thread to get several chunks.
pub(super) const WINDOW: usize = 32 << 20;

/// Rows `rows` (all for `None`) of the file at `path`, reading `window` bytes of its text
/// at a time.
pub(super) fn read<T: Scalar>(
    path: &Path, options: &ReadOptions, rows: Option<Range<usize>>, window: usize,
) -> Result<Csr<T>> {
    let (file, len) = open_regular_file(path)?;
    let mut file = BufReader::new(file);
    let gzip = file.fill_buf().map_err(|e| Error::io(path, e))?.starts_with(&GZIP_MAGIC);
    if gzip {
        let stream = Stream { path, bound: Bound::Inflation, window };
        stream.read(&mut MultiGzDecoder::new(file), options, rows)
    } else {
        // One byte more than the length: a file that grows while it is read is not cut short.
        let stream = Stream { path, bound: Bound::Length(len), window };
        stream.read(&mut file.take(len.saturating_add(1)), options, rows)
    }
}

/// What bounds the text read.
enum Bound {
    /// A plain file's length when it was opened.
    Length(u64),
    /// What a gzip stream's size line allows ([`inflation_limit`]).
    Inflation,
}

struct Stream<'p> {
    path: &'p Path,
    bound: Bound,
    window: usize,
}

/// What the reading thread hands over, in file order.
enum Piece {
    /// Whole lines: the text ends with a newline.
    Lines(Vec<u8>),
    /// The rest of the text, at its end.
    Last(Vec<u8>),
    /// Reading stopped after `text` (which follows the pieces before), `read` bytes in.
    Stopped { text: Vec<u8>, read: u64, why: Stop },
}

/// Why reading stopped.
enum Stop {
    /// The file could not be read.
    Io(std::io::Error),
    /// The gzip stream ended early or is corrupt.
    Corrupt(std::io::Error),
    /// Past the bound: a plain file's length, or a gzip stream's inflation limit.
    Bound(u64),
    /// No memory for the next window.
    Memory(Error),
}

impl Stream<'_> {
    /// Reads the text on a thread of its own, a window ahead of the parsing (gunzip, one
    /// thread, takes longer than parsing on all of them), and parses it here.
    fn read<T: Scalar>(
        &self, reader: &mut (impl Read + Send), options: &ReadOptions, rows: Option<Range<usize>>,
    ) -> Result<Csr<T>> {
        let head = read_head(reader).map_err(|e| e.into_error(Some(self.path)))?;
        let (h, offset, first_line) = parse_header(&head)?;
        let limit = match self.bound {
            Bound::Length(len) => len,
            Bound::Inflation => inflation_limit(&h, offset),
        };
        if matches!(self.bound, Bound::Inflation) && rows.is_none() {
            // A few compressed bytes can announce more entries than the host holds: refuse
            // before inflating (a plain file's entries are bounded by its length).
            check_memory_for_entries(&h, first_line - 1)?;
        }
        let mut body = BodyReader::<T>::new(&h, first_line, options, rows.unwrap_or(0..h.nrows));
        let text = head[offset..].to_vec();
        let read = head.len() as u64;
        drop(head);
        std::thread::scope(|scope| {
            // Rendezvous: the next window waits while this one is parsed (two in memory).
            let (send, pieces) = std::sync::mpsc::sync_channel(0);
            scope.spawn(move || self.produce(reader, text, read, limit, send));
            for piece in pieces {
                match piece {
                    Piece::Lines(text) => {
                        // Each line may keep an entry and its mirror: 2 × 16 bytes for the
                        // 4 bytes of the shortest line, which must fit.
                        let most = 8 * text.len() as u64;
                        check_host_memory(
                            || format!("the entries of {}", self.path.display()),
                            most,
                        )?;
                        body.feed(&text)?;
                    }
                    Piece::Last(text) => {
                        body.feed(&text)?;
                        return body.finish();
                    }
                    Piece::Stopped { text, read, why } => {
                        let line = last_line(body.line() - 1, &text);
                        return Err(match why {
                            Stop::Io(source) => Error::io(self.path, source),
                            Stop::Corrupt(source) => {
                                corrupt_stream(Some(self.path), read, line, source)
                            }
                            Stop::Bound(limit) => match self.bound {
                                Bound::Length(len) => grew_while_read(self.path, len),
                                Bound::Inflation => inflates_past(&h, limit, first_line - 1, line),
                            },
                            Stop::Memory(e) => e,
                        });
                    }
                }
            }
            unreachable!("the reading thread ends with its last piece or why it stopped")
        })
    }

    /// Reads the text after `text` (`read` bytes in) and sends it on in pieces of whole
    /// lines of about a window each, then the last piece or why it stopped; stops early when
    /// the parsing has stopped.
    fn produce(
        &self, reader: &mut impl Read, mut text: Vec<u8>, mut read: u64, limit: u64,
        send: std::sync::mpsc::SyncSender<Piece>,
    ) {
        let gzip = matches!(self.bound, Bound::Inflation);
        loop {
            let want = self.window.saturating_sub(text.len()).max(self.window / 2).max(1);
            if text.try_reserve(want).is_err() {
                let needed = (text.len() + want) as u64;
                let what = format!("a window of the text of {}", self.path.display());
                let e = Error::out_of_memory(what, needed, available_memory().unwrap_or(0));
                let _ = send.send(Piece::Stopped { text, read, why: Stop::Memory(e) });
                return;
            }
            let before = text.len();
            let outcome = reader.take(want as u64).read_to_end(&mut text);
            read += (text.len() - before) as u64;
            let stop = match outcome {
                Err(source) if gzip => Some(Stop::Corrupt(source)),
                Err(source) => Some(Stop::Io(source)),
                Ok(_) if read > limit => Some(Stop::Bound(limit)),
                Ok(_) => None,
            };
            if let Some(why) = stop {
                let _ = send.send(Piece::Stopped { text, read, why });
                return;
            }
            if text.len() - before < want {
                let _ = send.send(Piece::Last(text)); // the end of the text
                return;
            }
            // Whole lines only; a line longer than the window waits for more text.
            let Some(end) = text.iter().rposition(|&b| b == b'\n') else { continue };
            let rest = text.split_off(end + 1);
            if send.send(Piece::Lines(std::mem::replace(&mut text, rest))).is_err() {
                return; // the parsing stopped
            }
        }
    }
}

/// The error of a file that grew past its length of `len` bytes (when opened) while it was
/// read.
fn grew_while_read(path: &Path, len: u64) -> Error {
    let error = std::io::Error::other(format!(
        "the file grew past its length of {len} bytes while it was read"
    ));
    Error::io(path, error)
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::PathBuf;

    use super::*;
    use crate::io::read_matrix_market_bytes;

    /// Windows from one byte (every line straddles windows) to larger than the text.
    const WINDOWS: [usize; 5] = [1, 7, 100, 4096, 1 << 20];

    fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spmv-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    /// A matrix's arrays, values as bits.
    fn parts(a: &Csr<f64>) -> (Vec<usize>, Vec<u32>, Vec<u64>) {
        let bits = a.values().iter().map(|v| v.to_bits()).collect();
        (a.row_ptr().to_vec(), a.col_idx().to_vec(), bits)
    }

    /// [`parts`] of rows `rows` of `a` (clipped), as a matrix of their own.
    fn block(a: &Csr<f64>, rows: &Range<usize>) -> (Vec<usize>, Vec<u32>, Vec<u64>) {
        let start = rows.start.min(a.nrows());
        parts(&a.row_block(start..rows.end.clamp(start, a.nrows())))
    }

    /// A text of `entries` random entries in every layout the reader takes, with comments,
    /// blank lines, repeats, CRLF line ends and no final newline.
    fn text(banner: &str, m: usize, n: usize, entries: usize, seed: u64) -> String {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut next = |bound: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % bound
        };
        let array = banner.contains("array");
        let skew = banner.contains("skew");
        let symmetric = banner.contains("symmetric");
        let pattern = banner.contains("pattern");
        let integer = banner.contains("integer");
        let count = if array {
            match (symmetric, skew) {
                (_, true) => m * (m - 1) / 2,
                (true, false) => m * (m + 1) / 2,
                _ => m * n,
            }
        } else {
            entries
        };
        let mut s = format!("%%MatrixMarket matrix {banner}\n% a comment\n{m} {n}");
        if !array {
            s += &format!(" {count}");
        }
        s += "\n";
        for k in 0..count {
            match next(20) {
                0 => s += "% comment line\n",
                1 => s += "\n",
                2 => s += "   \t\r\n",
                _ => {}
            }
            let value = match next(4) {
                0 => "0".to_string(),
                _ if integer => format!("{}", next(1000) as i64 - 500),
                _ => format!("{}.25e{}", next(1000) as i64 - 500, next(9)),
            };
            if array {
                s += &value;
            } else {
                let (mut r, mut c) = (next(m), next(n));
                if symmetric && c > r {
                    (r, c) = (c, r);
                }
                if skew && r == c {
                    r = (r + 1) % m;
                    if r < c {
                        (r, c) = (c, r);
                    }
                }
                s += &format!("{} {}", r + 1, c + 1);
                if !pattern {
                    s += &format!(" {value}");
                }
            }
            s += if k % 3 == 0 { "\r\n" } else { "\n" };
        }
        if s.ends_with("\r\n") {
            s.truncate(s.len() - 2); // no final newline
        }
        s
    }

    #[test]
    fn rows_read_in_windows_are_the_rows_of_the_whole_matrix() {
        let banners = [
            "coordinate real general",
            "coordinate real symmetric",
            "coordinate integer skew-symmetric",
            "coordinate pattern general",
            "coordinate pattern symmetric",
            "array real general",
            "array real symmetric",
            "array real skew-symmetric",
        ];
        let options = ReadOptions::default();
        for (k, banner) in banners.iter().enumerate() {
            let (m, n) = if banner.contains("general") { (37, 23) } else { (29, 29) };
            let text = text(banner, m, n, 700, k as u64);
            for (kind, bytes) in
                [("plain", text.clone().into_bytes()), ("gz", gzip(text.as_bytes()))]
            {
                let path = temp_file(&format!("t{k}.{kind}.mtx"), &bytes);
                // The reader of a text held whole is the reference.
                let whole: Csr<f64> = read_matrix_market_bytes(&bytes).unwrap();
                for window in WINDOWS {
                    let got: Csr<f64> = read(&path, &options, None, window).unwrap();
                    assert_eq!((got.nrows(), got.ncols()), (m, n));
                    assert_eq!(parts(&got), parts(&whole), "{banner} {kind} window {window}");
                    #[allow(clippy::reversed_empty_ranges)] // a reversed range reads no rows
                    for rows in [0..0, 0..1, 0..m, 3..17, 20..m + 5, m..m + 3, 5..2] {
                        let got: Csr<f64> =
                            read(&path, &options, Some(rows.clone()), window).unwrap();
                        assert_eq!(got.ncols(), n);
                        assert_eq!(
                            parts(&got),
                            block(&whole, &rows),
                            "{banner} {kind} rows {rows:?} window {window}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn rows_read_in_windows_give_the_whole_files_errors() {
        let good = text("coordinate real general", 40, 40, 500, 9);
        let lines: Vec<&str> = good.split('\n').collect();
        let late = lines.len() - 20;
        let with_line = |k: usize, line: &str| {
            let mut l = lines.clone();
            l[k] = line;
            l.join("\n")
        };
        let cases = [
            with_line(late, "3 4 x1.5"),
            with_line(late, "41 1 1.0"),
            with_line(late, "1 2"),
            with_line(late, "1 2 3 4"),
            with_line(late, "1 1 1e999"),
            lines[..late].join("\n"),             // too few
            format!("{good}\n1 1 1\n"),           // too many
            good.replacen(" 500\n", " 498\n", 1), // too many, earlier
            "%%MatrixMarket matrix coordinate real general\n2 2 1\n".into(), // too few: none
            "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n".into(),
            "%%MatrixMarket matrix array real skew-symmetric\n2 2\n1\n2\n".into(), // too many
        ];
        let options = ReadOptions::default();
        for (k, text) in cases.iter().enumerate() {
            for (kind, bytes) in
                [("plain", text.clone().into_bytes()), ("gz", gzip(text.as_bytes()))]
            {
                let path = temp_file(&format!("e{k}.{kind}.mtx"), &bytes);
                let whole = read_matrix_market_bytes::<f64>(&bytes).unwrap_err().to_string();
                for window in WINDOWS {
                    for rows in [None, Some(0..40), Some(0..0), Some(39..40)] {
                        let got =
                            read::<f64>(&path, &options, rows, window).unwrap_err().to_string();
                        assert_eq!(got, whole, "case {k} {kind} window {window}");
                    }
                }
            }
        }
    }

    #[test]
    fn truncated_gzip_and_inflation_past_the_size_line_are_refused() {
        let text = text("coordinate real general", 50, 50, 3000, 4);
        let packed = gzip(text.as_bytes());
        let options = ReadOptions::default();
        let cut = temp_file("cut.mtx.gz", &packed[..packed.len() * 2 / 3]);
        for window in WINDOWS {
            for rows in [None, Some(0..10)] {
                let e = read::<f64>(&cut, &options, rows, window).unwrap_err();
                assert!(matches!(e, Error::Io { .. }), "{e}");
                assert!(e.to_string().contains("truncated or corrupt"), "{e}");
            }
        }
        // A size line of one entry followed by 3 MB of blank lines: refused once the text
        // passes what one entry line allows.
        let bomb = format!(
            "%%MatrixMarket matrix coordinate real general\n2 2 1\n{}1 1 1\n",
            "\n".repeat(3 << 20)
        );
        let path = temp_file("bomb.mtx.gz", &gzip(bomb.as_bytes()));
        for window in [4096, 1 << 20] {
            for rows in [None, Some(0..1)] {
                let e = read::<f64>(&path, &options, rows, window).unwrap_err().to_string();
                assert!(e.contains("inflates past"), "{e}");
            }
        }
    }
}
