//! Writing `coordinate real general` files whose values read back exactly.

use std::io::Write;
use std::path::Path;

use flate2::write::GzEncoder;
use flate2::Compression;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::matrix::{Csr, Scalar};

/// Writes `a` as `coordinate real general` to `path`, gzipped when the path ends in `.gz`.
///
/// Values are printed with Rust's shortest round-trip representation (`{:?}`: `0.1`,
/// `1.5e-7`, `NaN`, `inf`), so reading the file back gives bit-identical values. The file is
/// written whole or not at all ([`crate::io::output::write_file`]): a failure (a full disk)
/// leaves no partial file.
pub fn write_matrix_market<T: Scalar>(path: &Path, a: &Csr<T>) -> Result<()> {
    let gz = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    crate::io::output::write_file(path, |w| {
        if gz {
            let mut enc = GzEncoder::new(w, Compression::default());
            write_entries(&mut enc, a).and_then(|()| enc.finish()).map(drop)
        } else {
            write_entries(w, a)
        }
    })
}

/// Writes `a` as `coordinate real general` (uncompressed) to `w`. A write error is an
/// [`Error::Io`] with the path `<writer>`.
pub fn write_matrix_market_to<W: Write, T: Scalar>(mut w: W, a: &Csr<T>) -> Result<()> {
    write_entries(&mut w, a).and_then(|()| w.flush()).map_err(|e| Error::io("<writer>", e))
}

/// Entries formatted per block of rows, blocks formatted in parallel and written in order.
fn write_entries<W: Write, T: Scalar>(w: &mut W, a: &Csr<T>) -> std::io::Result<()> {
    writeln!(w, "%%MatrixMarket matrix coordinate real general")?;
    writeln!(w, "{} {} {}", a.nrows(), a.ncols(), a.nnz())?;
    const BLOCK: usize = 1 << 15; // entries per formatted block
    let threads = rayon::current_num_threads().max(1);
    let rows_per_block = {
        let mut blocks = Vec::new();
        let mut r0 = 0;
        while r0 < a.nrows() {
            let mut r1 = r0 + 1;
            while r1 < a.nrows() && a.row_ptr()[r1] - a.row_ptr()[r0] < BLOCK {
                r1 += 1;
            }
            blocks.push((r0, r1));
            r0 = r1;
        }
        blocks
    };
    // A bounded number of blocks in flight keeps memory small for large matrices.
    for window in rows_per_block.chunks(threads * 4) {
        let texts: Vec<Vec<u8>> = window
            .par_iter()
            .map(|&(r0, r1)| {
                let mut buf = Vec::with_capacity((a.row_ptr()[r1] - a.row_ptr()[r0]) * 32);
                for r in r0..r1 {
                    let (cols, vals) = a.row(r);
                    for (&c, &v) in cols.iter().zip(vals) {
                        push_uint(&mut buf, r as u64 + 1);
                        buf.push(b' ');
                        push_uint(&mut buf, u64::from(c) + 1);
                        // Writing to a Vec cannot fail.
                        let _ = writeln!(buf, " {v:?}");
                    }
                }
                buf
            })
            .collect();
        for t in texts {
            w.write_all(&t)?;
        }
    }
    Ok(())
}

fn push_uint(buf: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}
