//! Column compression: 16-bit deltas from a per-row base (the row's first column), when every
//! row's columns span less than 2^16. The column of entry `i` in row `r` is `base[r] + delta[i]`,
//! exactly: nothing about the product changes but the bytes read (2 per entry instead of 4, plus
//! 4 per row).

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::matrix::{Csr, Scalar};

/// The `cols` parameter of the formats that take it.
pub const COLUMN_CHOICES: &[&str] = &["full", "delta16", "auto"];
/// The doc line of the `cols` parameter.
pub const COLUMNS_DOC: &str = "column storage: full (32-bit), delta16 (16-bit deltas from each row's first column; rows spanning ≥ 65,536 columns decline), auto (delta16 where it fits)";

/// Columns as 16-bit deltas from each row's base.
#[derive(Clone, Debug)]
pub struct Delta16Columns {
    /// Per entry (CSR order), its column minus its row's base.
    pub deltas: Vec<u16>,
    /// The smallest column of each row (0 for an empty row).
    pub bases: Vec<u32>,
}

impl Delta16Columns {
    /// The deltas of `a`'s columns, or why they do not fit (naming `format` and the first row
    /// that spans too many columns).
    pub fn of<T: Scalar>(a: &Csr<T>, format: &'static str) -> Result<Self> {
        let m = a.nrows();
        let bases: Vec<u32> =
            (0..m).into_par_iter().map(|r| a.row(r).0.iter().copied().min().unwrap_or(0)).collect();
        let too_wide = (0..m)
            .into_par_iter()
            .find_first(|&r| a.row(r).0.iter().any(|&c| c - bases[r] > u16::MAX as u32));
        if let Some(r) = too_wide {
            let cols = a.row(r).0;
            let span = cols.iter().max().unwrap() - bases[r];
            return Err(Error::format(
                format,
                format!(
                    "cols=delta16: row {r} spans {span} columns, more than 65,535 from its first"
                ),
            ));
        }
        let row_ptr = a.row_ptr();
        let mut deltas = vec![0u16; a.nnz()];
        // Each row's deltas are written by one task (rows are disjoint ranges of entries).
        deltas.par_chunks_mut(1 << 16).enumerate().for_each(|(k, chunk)| {
            let first = k << 16;
            let mut r = row_ptr.partition_point(|&p| p <= first) - 1;
            for (j, d) in chunk.iter_mut().enumerate() {
                let e = first + j;
                while row_ptr[r + 1] <= e {
                    r += 1;
                }
                *d = (a.col_idx()[e] - bases[r]) as u16;
            }
        });
        Ok(Delta16Columns { deltas, bases })
    }

    /// Column of entry `i` of row `r`.
    #[inline]
    pub fn col(&self, r: usize, i: usize) -> u32 {
        self.bases[r] + self.deltas[i] as u32
    }

    /// Device bytes: 2 per entry and 4 per row.
    pub fn device_bytes(&self) -> usize {
        2 * self.deltas.len() + 4 * self.bases.len()
    }
}
