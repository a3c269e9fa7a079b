//! Building blocks shared by the diagonal family (DIA, HDIA, HDC, DIA-Adaptive, DRM): the
//! census of a matrix's diagonals, the offsets of a range of rows, filling DIA-style blocks,
//! the DIA-style product of a block on the CPU (and the CPU loops of whole-matrix DIA and of
//! blocks of fixed height), the padding limit, the operand figures and statistics, and the
//! kernel set-up the family's launches share.
//!
//! Conventions of the whole family: a diagonal is named by its offset `d = col − row` (0 the
//! main diagonal, `d > 0` above it), held as `i32`, so both dimensions must stay below 2^31
//! (`check_shape`). A *DIA-style block* of `h` rows and diagonals `offsets[0..k]` (sorted
//! ascending) stores the entry of its local row `l` on diagonal `i` at `i·stride + l`
//! (`stride ≥ h`), and an explicit zero where the diagonal has no entry in that row.

use std::ops::Range;
use std::time::Instant;

use cudarc::driver::CudaSlice;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::formats::FormatStats;
use crate::gpu::{grid_for, Gpu, Kernel, KernelModule};
use crate::matrix::{threads, Csr, Scalar};
use crate::measure::ms_since;

/// Rows of an HDIA hack, a DRM segment and a BRCSD-II block in the registered formats: one
/// warp (the paper's nrows = 32). The layouts take any height ≥ 1; the worked examples use 2.
pub const SEGMENT_ROWS: usize = 32;

/// Largest accepted stored/nnz ratio of the DIA-based formats (above [`PADDING_FLOOR_SLOTS`])
/// by default, the same figure as ELL's limit; DIA takes another through
/// [`Dia::with_limit`](super::Dia::with_limit).
pub const PADDING_LIMIT_RATIO: usize = 20;
/// Layouts of at most this many stored slots are accepted whatever their padding ratio (a
/// few MiB: small matrices always convert).
pub const PADDING_FLOOR_SLOTS: usize = 1 << 20;
/// Largest accepted size of a DIA-based format's value array, in bytes: an H200's memory
/// (the host must also have the room, checked with the conversion).
pub const MAX_STORED_BYTES: u64 = 140 << 30;

/// Refuses matrices whose dimensions do not fit the family's 32-bit signed offsets.
pub(crate) fn check_shape<T: Scalar>(format: &'static str, a: &Csr<T>) -> Result<()> {
    let limit = i32::MAX as usize;
    if a.nrows() > limit || a.ncols() > limit {
        return Err(Error::format(
            format,
            format!(
                "a {} x {} matrix exceeds the 2^31 - 1 rows and columns that 32-bit signed diagonal offsets address",
                a.nrows(),
                a.ncols()
            ),
        ));
    }
    Ok(())
}

/// Checks the padding limit for a layout of `stored` value slots holding `nnz` entries,
/// before anything is allocated: at most `max_padding` × nnz slots (the registered formats
/// pass [`PADDING_LIMIT_RATIO`]) unless at most [`PADDING_FLOOR_SLOTS`], and at most
/// [`MAX_STORED_BYTES`] of values. `layout` describes the layout for the message (e.g.
/// "3767 diagonals x 4960 rows"); the error names the padded zeros, the ratio and the limit.
pub(crate) fn check_padding(
    format: &'static str, layout: &str, stored: u128, nnz: usize, elem: usize, max_padding: f64,
) -> Result<()> {
    let bytes = stored * elem as u128;
    let ratio = stored as f64 / nnz.max(1) as f64;
    let padded = stored.saturating_sub(nnz as u128);
    let ratio_ok =
        stored <= PADDING_FLOOR_SLOTS as u128 || stored as f64 <= max_padding * nnz.max(1) as f64;
    if !ratio_ok {
        return Err(Error::format(
            format,
            format!(
                "{layout} would store {stored} slots for {nnz} entries: {padded} padded zeros, padding ratio \
                 {ratio:.1} (stored/nnz) above the limit {max_padding} (this format suits diagonal-structured \
                 matrices only)"
            ),
        ));
    }
    if bytes > MAX_STORED_BYTES as u128 {
        return Err(Error::format(
            format,
            format!(
                "{layout} would store {stored} slots ({:.1} GiB of values, {padded} padded zeros, padding ratio \
                 {ratio:.1}), above the cap of {} GiB",
                bytes as f64 / (1u64 << 30) as f64,
                MAX_STORED_BYTES >> 30
            ),
        ));
    }
    crate::error::check_host_memory(
        || format!("format {format}: {layout}, {stored} slots"),
        bytes as u64,
    )
}

/// The diagonal of entry `(row, col)`: `col − row`. Both are below 2^31 ([`check_shape`]).
#[inline]
pub(crate) fn offset_of(row: usize, col: u32) -> i32 {
    (col as i64 - row as i64) as i32
}

/// The local rows `l` in `0..h` of a block starting at `row0` whose column `row0 + l + d`
/// lies in `0..ncols`, as a range (empty when none does).
#[inline]
pub(crate) fn rows_in_range(row0: usize, h: usize, d: i32, ncols: usize) -> Range<usize> {
    let (row0, h, d, ncols) = (row0 as i64, h as i64, d as i64, ncols as i64);
    let lo = (-d - row0).clamp(0, h);
    let hi = (ncols - d - row0).clamp(lo, h);
    lo as usize..hi as usize
}

/// One occupied diagonal of a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Diagonal {
    pub offset: i32,
    /// Entries on the diagonal.
    pub entries: u32,
    /// First and last row holding one of them.
    pub first_row: u32,
    pub last_row: u32,
}

/// Every occupied diagonal of `a`, by ascending offset. One pass over the entries with
/// arrays indexed by `d + m − 1` (O(nnz + m + n)); the matrix must pass [`check_shape`].
pub(crate) fn census<T: Scalar>(a: &Csr<T>) -> Vec<Diagonal> {
    let (m, n) = (a.nrows(), a.ncols());
    if m == 0 || n == 0 || a.nnz() == 0 {
        return Vec::new();
    }
    let bias = m - 1; // d + bias lies in 0..m+n-1
                      // [entries, first row, last row] per diagonal, together so that an entry touches one line.
    let mut seen = vec![[0u32; 3]; m + n - 1];
    for r in 0..m {
        for &c in a.row(r).0 {
            let k = &mut seen[c as usize + bias - r];
            if k[0] == 0 {
                k[1] = r as u32;
            }
            k[0] += 1; // at most min(m, n) < 2^31
            k[2] = r as u32;
        }
    }
    seen.iter()
        .enumerate()
        .filter(|(_, k)| k[0] > 0)
        .map(|(i, k)| Diagonal {
            offset: (i as i64 - bias as i64) as i32,
            entries: k[0],
            first_row: k[1],
            last_row: k[2],
        })
        .collect()
}

/// Sorted distinct offsets of the entries in `rows`.
pub(crate) fn offsets_in_rows<T: Scalar>(a: &Csr<T>, rows: Range<usize>) -> Vec<i32> {
    let mut offsets = Vec::new();
    for r in rows {
        offsets.extend(a.row(r).0.iter().map(|&c| offset_of(r, c)));
    }
    offsets.sort_unstable();
    offsets.dedup();
    offsets
}

/// The rows of segment `s` of `h` rows (the last segment may be short).
#[inline]
pub(crate) fn segment_rows(s: usize, h: usize, m: usize) -> Range<usize> {
    s * h..((s + 1) * h).min(m)
}

/// The offsets of every segment of `h` rows, segments in parallel.
pub(crate) fn segment_offsets<T: Scalar>(a: &Csr<T>, h: usize) -> Vec<Vec<i32>> {
    let m = a.nrows();
    (0..m.div_ceil(h))
        .into_par_iter()
        .with_min_len(64)
        .map(|s| offsets_in_rows(a, segment_rows(s, h, m)))
        .collect()
}

/// Writes the entries of `rows` into a zeroed DIA-style block: the entry of local row `l` on
/// diagonal `offsets[i]` goes to `out[i·stride + l]`. Every entry's offset must be in
/// `offsets` (sorted ascending).
pub(crate) fn fill_block<T: Scalar>(
    a: &Csr<T>, rows: Range<usize>, offsets: &[i32], stride: usize, out: &mut [T],
) {
    let row0 = rows.start;
    for r in rows {
        let (cols, vals) = a.row(r);
        let mut i = 0;
        for (&c, &v) in cols.iter().zip(vals) {
            // A row's offsets ascend with its columns: search only the rest of the list.
            let d = offset_of(r, c);
            i += offsets[i..].partition_point(|&o| o < d);
            debug_assert_eq!(offsets[i], d, "offset of ({r}, {c}) missing from the block's list");
            out[i * stride + (r - row0)] = v;
        }
    }
}

/// Fills a zeroed DIA-style block of the rows `rows` with stride `rows.len()` (the whole
/// matrix for DIA: diagonal `i` at `data[i·m .. (i+1)·m]`): each diagonal is cut into chunks
/// of rows filled in parallel, each slot looked up in its row. For tall blocks, where
/// [`fill_block`]'s one task per block would leave the threads idle.
pub(crate) fn fill_diagonals<T: Scalar>(
    a: &Csr<T>, rows: Range<usize>, offsets: &[i32], data: &mut [T],
) {
    const CHUNK: usize = 1 << 14;
    let h = rows.len();
    if h == 0 {
        return;
    }
    for (&d, column) in offsets.iter().zip(data.chunks_mut(h)) {
        column.par_chunks_mut(CHUNK).enumerate().for_each(|(k, part)| {
            let row0 = rows.start + k * CHUNK;
            for l in rows_in_range(row0, part.len(), d, a.ncols()) {
                let r = row0 + l;
                let (cols, vals) = a.row(r);
                if let Ok(p) = cols.binary_search(&((r as i64 + d as i64) as u32)) {
                    part[l] = vals[p];
                }
            }
        });
    }
}

/// Stored slots of a DIA-style block whose column lies inside the matrix: what a kernel
/// with the column guard reads (rows past `m` in a padded block count as outside).
pub(crate) fn slots_in_range(
    row0: usize, h: usize, offsets: &[i32], nrows: usize, ncols: usize,
) -> usize {
    let h = h.min(nrows.saturating_sub(row0));
    offsets.iter().map(|&d| rows_in_range(row0, h, d, ncols).len()).sum()
}

/// `acc[l] += Σ_i data[i·stride + l] · x[row0 + l + offsets[i]]` over the local rows whose
/// column lies inside `x`: a DIA-style block on the CPU, streaming one diagonal at a time
/// (each row still adds its diagonals in ascending order, as the GPU kernels do).
pub(crate) fn accumulate_block<T: Scalar>(
    acc: &mut [T], row0: usize, offsets: &[i32], data: &[T], stride: usize, x: &[T],
) {
    for (i, &d) in offsets.iter().enumerate() {
        let rows = rows_in_range(row0, acc.len(), d, x.len());
        if rows.is_empty() {
            continue;
        }
        let first_col = (row0 as i64 + rows.start as i64 + d as i64) as usize;
        let vals = &data[i * stride + rows.start..i * stride + rows.end];
        let xs = &x[first_col..first_col + rows.len()];
        for ((s, &v), &xv) in acc[rows].iter_mut().zip(vals).zip(xs) {
            *s += v * xv;
        }
    }
}

/// Rows per task of [`spmv_dia`]: long enough runs along each diagonal, enough tasks to
/// balance.
const DIA_CHUNK: usize = 2048;

/// `y = A·x` on the CPU for a DIA block of the whole matrix (diagonal `i` at
/// `data[i·m .. (i+1)·m]`, `m = y.len()`), then `rest(row0, out)` adds whatever else the
/// rows `row0 .. row0 + out.len()` hold (HDC's CSR part; nothing for DIA): chunks of rows
/// over rayon's threads (or the calling thread: `matrix::threads`), each chunk's block
/// streamed diagonal by diagonal.
pub(crate) fn spmv_dia<T: Scalar>(
    offsets: &[i32], data: &[T], x: &[T], y: &mut [T], rest: impl Fn(usize, &mut [T]) + Sync,
) {
    let m = y.len();
    let chunk = |(k, out): (usize, &mut [T])| {
        let row0 = k * DIA_CHUNK;
        out.fill(T::ZERO);
        // Block = rows row0.. of every diagonal: data[i·m + row0 + l], stride m.
        accumulate_block(out, row0, offsets, &data[row0.min(data.len())..], m, x);
        rest(row0, out);
    };
    // On the calling thread where rayon's threads do not pay (the same sums either way).
    threads::cpu_product(
        data.len() + m,
        y,
        |y| y.chunks_mut(DIA_CHUNK).enumerate().for_each(chunk),
        |y| y.par_chunks_mut(DIA_CHUNK).enumerate().for_each(chunk),
    );
}

/// `y = A·x` on the CPU for blocks of `h` rows stored DIA-style with stride `h`, one after
/// the other (HDIA's hacks, BRCSD-II's blocks; a short last block padded to `h` rows): blocks
/// over rayon's threads; `block(k)` gives block `k`'s offsets and its slots from its first
/// diagonal on.
pub(crate) fn spmv_row_blocks<'a, T: Scalar>(
    h: usize, x: &[T], y: &mut [T], block: impl Fn(usize) -> (&'a [i32], &'a [T]) + Sync,
) {
    y.par_chunks_mut(h).with_min_len((256 / h).max(1)).enumerate().for_each(|(k, out)| {
        let (offsets, data) = block(k);
        out.fill(T::ZERO);
        accumulate_block(out, k * h, offsets, data, h, x);
    });
}

/// Segments of `h` rows stored DIA-style one after the other, each with its own diagonals
/// and a stride of `h` (the layout of HDIA, DRM and BRCSD-II; a short last segment is padded
/// to `h` rows, as the paper's `ope_h = dig_h × nrows` counts it).
pub(crate) struct SegmentBlocks<T> {
    /// Cumulative diagonal count per stored segment (`segments + 1` entries): segment `k`
    /// holds diagonals `diag_ptr[k] .. diag_ptr[k+1]`.
    pub diag_ptr: Vec<u32>,
    /// Offset of each stored diagonal.
    pub offsets: Vec<i32>,
    /// Element of local row `l` of diagonal `i` (counted over all segments) at `i·h + l`.
    pub values: Vec<T>,
}

/// Stored slots of segments of `h` rows with these offset lists: `Σ diagonals · h`.
pub(crate) fn segment_slots(offsets: &[Vec<i32>], h: usize) -> u128 {
    offsets.iter().map(|o| o.len() as u128).sum::<u128>() * h as u128
}

/// The offsets of every segment of `h` rows ([`segment_offsets`]) and the milliseconds that
/// scan took, checked before anything is stored: the default padding limit on the segments'
/// slots, and 32-bit indices for their stored diagonals (HDIA's and DRM's first step). The
/// errors describe the layout as "`name` with `k` `unit` of `h` rows (`d` diagonals)".
pub(crate) fn scan_segments<T: Scalar>(
    format: &'static str, a: &Csr<T>, h: usize, name: &str, unit: &str,
) -> Result<(Vec<Vec<i32>>, f64)> {
    let t = Instant::now();
    let offsets = segment_offsets(a, h);
    let scan_ms = ms_since(t);
    let total: usize = offsets.iter().map(Vec::len).sum();
    let layout = format!("{name} with {} {unit} of {h} rows ({total} diagonals)", offsets.len());
    let stored = segment_slots(&offsets, h);
    check_padding(
        format,
        &layout,
        stored,
        a.nnz(),
        std::mem::size_of::<T>(),
        PADDING_LIMIT_RATIO as f64,
    )?;
    if total > u32::MAX as usize {
        return Err(Error::format(
            format,
            format!("{layout}: more than 2^32 - 1 stored diagonals"),
        ));
    }
    Ok((offsets, scan_ms))
}

/// Stored slots of segments of `h` rows with these offset lists whose row and column lie
/// inside the `nrows × ncols` matrix (what the kernels read), segments in parallel.
pub(crate) fn segment_slots_in_range(
    offsets: &[Vec<i32>], h: usize, nrows: usize, ncols: usize,
) -> usize {
    offsets.par_iter().enumerate().map(|(s, o)| slots_in_range(s * h, h, o, nrows, ncols)).sum()
}

/// Stores the segments of `a` in the given `order` (original segment ids), each with its
/// offsets from `offsets`; segments filled in parallel. The caller has checked the padding
/// limit and that the diagonal count fits 32 bits.
pub(crate) fn build_segments<T: Scalar>(
    a: &Csr<T>, h: usize, offsets: &[Vec<i32>], order: &[u32],
) -> SegmentBlocks<T> {
    let m = a.nrows();
    let mut diag_ptr = Vec::with_capacity(order.len() + 1);
    diag_ptr.push(0u32);
    let mut total = 0usize;
    for &s in order {
        total += offsets[s as usize].len();
        diag_ptr.push(total as u32);
    }
    let mut all_offsets = Vec::with_capacity(total);
    for &s in order {
        all_offsets.extend_from_slice(&offsets[s as usize]);
    }
    let mut values = vec![T::ZERO; total * h];
    let mut parts = Vec::with_capacity(order.len());
    let mut rest = values.as_mut_slice();
    for &s in order {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(offsets[s as usize].len() * h);
        parts.push((s as usize, part));
        rest = tail;
    }
    parts.into_par_iter().with_min_len(64).for_each(|(s, part)| {
        fill_block(a, segment_rows(s, h, m), &offsets[s], h, part);
    });
    SegmentBlocks { diag_ptr, offsets: all_offsets, values }
}

/// How evenly the operands (stored slots, padding included: the paper's "operands") are
/// spread over a format's work units (hacks, sub-blocks, blocks).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OperandSpread {
    /// Number of work units.
    pub units: usize,
    /// Mean operands per unit.
    pub mean: f64,
    /// Population variance, the paper's formula (13): Σ (ope − mean)² / units.
    pub variance: f64,
    /// Most operands of one unit.
    pub max: u64,
}

impl OperandSpread {
    pub(crate) fn of(operands: impl Iterator<Item = u64> + Clone) -> Self {
        let (units, sum, max) = operands
            .clone()
            .fold((0usize, 0f64, 0u64), |(k, s, mx), o| (k + 1, s + o as f64, mx.max(o)));
        if units == 0 {
            return OperandSpread::default();
        }
        let mean = sum / units as f64;
        let variance = operands.map(|o| (o as f64 - mean).powi(2)).sum::<f64>() / units as f64;
        OperandSpread { units, mean, variance, max }
    }
    /// Standard deviation over mean: a spread that compares units of different sizes.
    pub fn cv(&self) -> f64 {
        if self.mean > 0.0 {
            self.variance.sqrt() / self.mean
        } else {
            0.0
        }
    }
    /// The figures as `FormatStats::extra` entries, named `<prefix>_units` ...
    pub(crate) fn extra(&self, prefix: &str) -> Vec<(String, f64)> {
        vec![
            (format!("{prefix}_units"), self.units as f64),
            (format!("{prefix}_mean"), self.mean),
            (format!("{prefix}_variance"), self.variance),
            (format!("{prefix}_cv"), self.cv()),
            (format!("{prefix}_max"), self.max as f64),
        ]
    }
}

/// What the family's statistics take from a conversion: the source matrix's figures and the
/// milliseconds of each preprocessing phase.
#[derive(Clone, Debug)]
pub(crate) struct Conversion {
    /// Entries of the source matrix.
    pub nnz: usize,
    max_row_len: usize,
    mean_row_len: f64,
    /// Each phase's name as reported (`scan_ms` ...) and its milliseconds, in order.
    phases: Vec<(&'static str, f64)>,
}

impl Conversion {
    /// The figures of `a`, converted in the given phases.
    pub fn of<T: Scalar>(
        a: &Csr<T>, phases: impl IntoIterator<Item = (&'static str, f64)>,
    ) -> Self {
        Conversion {
            nnz: a.nnz(),
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
            phases: phases.into_iter().collect(),
        }
    }

    /// The statistics of a format of the family storing `stored` slots in `bytes` bytes: the
    /// format's own figures `own`, each operand spread under its prefix
    /// ([`OperandSpread::extra`]), then the phases and their sum as `preprocess_ms`.
    pub fn stats(
        &self, bytes: usize, stored: usize, own: impl IntoIterator<Item = (&'static str, f64)>,
        spreads: &[(&str, OperandSpread)],
    ) -> FormatStats {
        let mut stats =
            FormatStats::new(bytes, self.nnz, stored, self.max_row_len, self.mean_row_len)
                .with(own);
        for (prefix, spread) in spreads {
            stats.extra.extend(spread.extra(prefix));
        }
        let total = self.phases.iter().map(|p| p.1).sum();
        stats.with(self.phases.iter().copied().chain([("preprocess_ms", total)]))
    }
}

/// Threads per block of the family's one-thread-per-row kernels.
const ROW_BLOCK: u32 = 256;

/// Device code the family's kernel modules share (prepended to each).
pub const CUDA_HEADER: &str = include_str!("diagonals.cuh");

/// Kernel `<name>_<T>` of `module`, one thread per row of `m` rows in blocks of 256: the
/// grid of DIA, HDIA, HDC and BRCSD-II.
pub(crate) fn row_kernel<T: Scalar>(
    gpu: &Gpu, module: &KernelModule, name: &str, m: usize,
) -> Result<Kernel> {
    Kernel::for_type::<T>(gpu, module, name, grid_for(m as u64, ROW_BLOCK)?)
}

/// The kernels' `m` and `n` at a launch: `y.len()` and `x.len()`, which the device layer has
/// checked against the matrix, below 2^31 by [`check_shape`]. Taking them from the vectors
/// bounds the kernels' `y` and `x` indices by the buffers themselves.
pub(crate) fn launch_dims<T>(x: &CudaSlice<T>, y: &CudaSlice<T>) -> (u32, u32) {
    (y.len() as u32, x.len() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::diagonal::assert_empty_shapes_give_zeros;
    use crate::formats::test_support::small_csr;

    #[test]
    fn rows_in_range_clips_at_both_edges() {
        // 4 rows from row 2 of a matrix with 5 columns: columns r + d.
        assert_eq!(rows_in_range(2, 4, 0, 5), 0..3); // columns 2, 3, 4 (5 is outside)
        assert_eq!(rows_in_range(2, 4, -3, 5), 1..4); // columns -1 | 0, 1, 2
        assert_eq!(rows_in_range(2, 4, 10, 5), 0..0);
        assert_eq!(rows_in_range(2, 4, -10, 5), 4..4);
        assert_eq!(rows_in_range(0, 0, 0, 5), 0..0);
        assert_eq!(slots_in_range(30, 32, &[0, 1], 40, 40), 10 + 9);
    }

    #[test]
    fn census_counts_entries_and_extents() {
        // | 1 . 2 |
        // | . 3 . |
        // | 4 . 5 |   diagonals -2: (2,0); 0: three entries; 2: (0,2)
        let a = small_csr((3, 3), &[0, 2, 3, 5], &[0, 2, 1, 0, 2], &[1., 2., 3., 4., 5.]);
        let c = census(&a);
        let d = |offset, entries, first_row, last_row| Diagonal {
            offset,
            entries,
            first_row,
            last_row,
        };
        assert_eq!(c, vec![d(-2, 1, 2, 2), d(0, 3, 0, 2), d(2, 1, 0, 0)]);
        assert!(census(&Csr::<f64>::zeros(0, 4)).is_empty());
        assert!(census(&Csr::<f64>::zeros(4, 0)).is_empty());
    }

    #[test]
    fn operand_spread_is_the_population_variance() {
        let s = OperandSpread::of([10u64, 10].into_iter());
        assert_eq!((s.units, s.mean, s.variance, s.max), (2, 10.0, 0.0, 10));
        let s = OperandSpread::of([8u64, 6, 4, 2].into_iter());
        assert_eq!((s.mean, s.variance), (5.0, 5.0));
        assert!((s.cv() - 5f64.sqrt() / 5.0).abs() < 1e-12);
        assert_eq!(OperandSpread::of(std::iter::empty()), OperandSpread::default());
    }

    #[test]
    fn every_format_of_the_family_stores_nothing_without_entries() {
        let specs = [
            "dia",
            "hdc",
            "hdia",
            "hdia:hack_rows=1",
            "hdia:hack_rows=7",
            "drm",
            "drm:segment_rows=7",
        ];
        let layouts = ["dia", "brcsd1", "brcsd2"]
            .map(|l| format!("dia-adaptive:layout={l},block_rows=7,piece_rows=5"));
        for spec in
            specs.into_iter().chain(["dia-adaptive"]).chain(layouts.iter().map(String::as_str))
        {
            assert_empty_shapes_give_zeros(spec);
        }
    }

    #[test]
    fn padding_limit_names_the_padding() {
        let check = |layout, stored, nnz, max_padding| {
            check_padding("dia", layout, stored, nnz, 8, max_padding)
        };
        let err =
            check("3 diagonals x 2000000 rows", 6_000_000, 100, 20.0).unwrap_err().to_string();
        assert!(
            err.contains("5999900 padded zeros") && err.contains("padding ratio 60000.0"),
            "{err}"
        );
        assert!(err.contains("above the limit 20 "), "{err}");
        assert!(check("x", PADDING_FLOOR_SLOTS as u128, 1, 20.0).is_ok());
        assert!(check("x", 20 * 100_000, 100_000, 20.0).is_ok());
        assert!(check("x", 20 * 100_000 + 1, 100_000, 20.0).is_err());
        assert!(check("x", 5 * 1_000_000, 1_000_000, 5.0).is_ok());
        assert!(check("x", 5 * 1_000_000, 1_000_000, 4.5)
            .unwrap_err()
            .to_string()
            .contains("above the limit 4.5 "));
        let err = check("x", 20 << 30, 1 << 30, 20.0).unwrap_err().to_string();
        assert!(err.contains("160.0 GiB") && err.contains("cap of 140 GiB"), "{err}");
    }
}
