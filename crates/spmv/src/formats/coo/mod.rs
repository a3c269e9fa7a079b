//! COO (coordinate) storage with two kernels: `coo-atomic` (the textbook kernel, one
//! `atomicAdd` per entry) and `coo-segmented` (a deterministic segmented reduction).
//!
//! ```text
//!     | 1 . 2 . |      rows = [0, 0, 2, 2, 2, 3]
//! A = | . . . . |      cols = [0, 2, 0, 1, 2, 1]
//!     | 3 4 5 . |      vals = [1, 2, 3, 4, 5, 6]
//!     | . 6 . . |
//! ```
//! Three arrays of `nnz` entries, built from CSR and therefore sorted by row (then column).
//! Row and column indices are `u32`; the row count must fit `u32` (the all-ones value is
//! the kernels' "no row" sentinel).
//!
//! **coo-atomic.** Consecutive threads take consecutive entries (a grid-stride loop, about
//! [`ATOMIC_ENTRIES_PER_THREAD`] entries per thread, loads coalesced) and do
//! `atomicAdd(&y[row], val * x[col])`. `y` must start at zero: the launch first fills
//! `y` with 0 on the same stream, so **the measured time includes that fill**. The
//! order in which the atomics land varies between runs, so the float result is not
//! bit-reproducible.
//!
//! **coo-segmented.** Deterministic, no float atomics. The entries are cut into chunks of
//! [`SEGMENT_CHUNK`] = 256 threads × 4 entries; one thread block per chunk:
//! 1. loads its chunk's rows and products `val * x[col]` into shared memory (striped, so
//!    the global loads are coalesced), plus the row of the first entry after the chunk;
//! 2. each thread takes 4 consecutive entries, reduces them under the segmented-sum
//!    operator `(flag, sum)` (flag: a row starts inside), and a block-wide exclusive scan of
//!    those pairs (warp shuffles, then the 8 warp totals in a fixed order) gives each thread
//!    the partial sum of the row that is open when its entries begin;
//! 3. each thread walks its entries again: where a row ends inside the chunk it stores the
//!    row's in-chunk sum to `y[row]`; the chunk's last row, when it continues into the next
//!    chunk, goes to the carry array instead (`carry_row[b]`, `carry_val[b]`; row = all-ones
//!    when there is none);
//! 4. a second kernel, one thread per chunk, finds each run of equal carry rows (the chunks
//!    a long row crosses), sums the run in chunk order and adds it to `y[row]` (which holds
//!    the row's partial from the chunk where it ends).
//!
//! Every sum is formed in a fixed order, so results are bit-identical across runs. Empty
//! rows get 0: the thread holding the first entry of a row writes 0 to the empty rows just
//! before it (and the last entry's thread to the empty rows after it), unless some run of
//! empty rows is longer than [`ZERO_GAP_LIMIT`] rows; then the launch fills `y` with 0 first
//! instead (one extra pass over `y`, included in the time) so that no thread writes a long
//! run serially. The chunk offsets are 32-bit: `nnz` must fit `u32`.
//!
//! Worked example (chunks of 4 entries instead of 1024): chunk 0 holds entries 0..4, rows
//! `[0, 0, 2, 2]`: row 0 ends inside, so `y[0] = 1·x0 + 2·x2`; the thread that starts row 2
//! writes `y[1] = 0`; row 2 continues into chunk 1, so `carry[0] = (2, 3·x0 + 4·x1)`.
//! Chunk 1 holds rows `[2, 3]`: `y[2] = 5·x2`, `y[3] = 6·x1`, no carry. The second kernel
//! adds `carry[0]` to `y[2]`.
//!
//! The CPU paths follow the same algorithms: `coo-segmented` runs the chunks (of the same
//! size) in parallel, each writing the rows that end inside it and returning its carry, then
//! adds the carries in chunk order; `coo-atomic` zeroes `y` and adds the entries in
//! parallel chunks cut at row starts (the CPU needs no atomics for that).

pub(crate) mod cpu;
mod gpu;

use rayon::prelude::*;

use super::{FormatInfo, FormatSpec};
use super::{FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::KernelModule;
use crate::matrix::{Csr, Scalar};

/// The atomic, segmented and carry kernels (`kernel.cu`).
pub const KERNELS: KernelModule =
    KernelModule { name: "coo", source: include_str!("kernel.cu"), headers: &[] };

/// Threads per block of the segmented kernel (`COO_SEG_BLOCK` in kernel.cu).
pub const SEGMENT_BLOCK: usize = 256;
/// Consecutive entries per thread of the segmented kernel (`COO_SEG_ITEMS` in kernel.cu).
pub const SEGMENT_ITEMS: usize = 4;
/// Entries per chunk (one thread block) of the segmented kernel.
pub const SEGMENT_CHUNK: usize = SEGMENT_BLOCK * SEGMENT_ITEMS;
/// Longest run of empty rows that the segmented kernel zeroes from inside (one thread per
/// run); beyond it the launch fills `y` with 0 first.
pub const ZERO_GAP_LIMIT: usize = 256;
/// Nominal entries per thread of the atomic kernel's grid-stride loop.
pub const ATOMIC_ENTRIES_PER_THREAD: usize = 4;

/// Which COO kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CooKernel {
    /// `coo-atomic`: one `atomicAdd` per entry into a zeroed `y`; not deterministic.
    Atomic,
    /// `coo-segmented`: a segmented reduction per chunk and a carry pass; deterministic.
    Segmented,
}

impl CooKernel {
    /// The registered format that runs this kernel: `coo-atomic` or `coo-segmented`.
    pub fn format_name(self) -> &'static str {
        match self {
            CooKernel::Atomic => "coo-atomic",
            CooKernel::Segmented => "coo-segmented",
        }
    }
}

/// Row-sorted triplets: the COO arrays (also HYB's COO part).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Triplets<T> {
    /// Row of each entry, non-decreasing.
    pub rows: Vec<u32>,
    /// Column of each entry, increasing within a row.
    pub cols: Vec<u32>,
    /// Value of each entry.
    pub vals: Vec<T>,
}

impl<T: Scalar> Triplets<T> {
    /// Every entry of `a`, in row-major order.
    pub fn from_csr(a: &Csr<T>) -> Self {
        let rows = (0..a.nrows())
            .into_par_iter()
            .flat_map_iter(|r| std::iter::repeat_n(r as u32, a.row_len(r)))
            .collect();
        Triplets { rows, cols: a.col_idx().to_vec(), vals: a.values().to_vec() }
    }

    /// The entries of each row of `a` after its first `skip`, in row-major order.
    pub fn from_csr_tail(a: &Csr<T>, skip: usize) -> Self {
        if skip == 0 {
            return Self::from_csr(a);
        }
        let tail = |r: usize| a.row_ptr()[r] + skip.min(a.row_len(r))..a.row_ptr()[r + 1];
        let rows = (0..a.nrows())
            .into_par_iter()
            .flat_map_iter(|r| std::iter::repeat_n(r as u32, tail(r).len()))
            .collect();
        let cols = (0..a.nrows())
            .into_par_iter()
            .flat_map_iter(|r| a.col_idx()[tail(r)].iter().copied())
            .collect();
        let vals = (0..a.nrows())
            .into_par_iter()
            .flat_map_iter(|r| a.values()[tail(r)].iter().copied())
            .collect();
        Triplets { rows, cols, vals }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.vals.len()
    }
    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.vals.is_empty()
    }
    /// Device bytes of the three arrays.
    pub fn bytes(&self) -> usize {
        (8 + std::mem::size_of::<T>()) * self.len()
    }
}

/// Row counts beyond `u32::MAX - 1` cannot be COO rows (all-ones is the "no row" sentinel).
pub(crate) fn check_rows(format: &'static str, nrows: usize) -> Result<()> {
    if nrows >= u32::MAX as usize {
        return Err(Error::format(
            format,
            format!("{nrows} rows exceed the 2^32 - 1 that 32-bit row indices allow"),
        ));
    }
    Ok(())
}

/// The longest run of consecutive empty rows (leading and trailing runs included).
fn longest_empty_run(nrows: usize, rows: &[u32]) -> usize {
    let mut longest = 0;
    let mut next = 0usize; // first row not yet seen
    for &r in rows {
        let r = r as usize;
        if r >= next {
            longest = longest.max(r - next);
            next = r + 1;
        }
    }
    longest.max(nrows - next.min(nrows))
}

/// A matrix in COO storage and the kernel to run it with.
pub struct CooFormat<T> {
    nrows: usize,
    entries: Triplets<T>,
    kernel: CooKernel,
    max_row_len: usize,
    mean_row_len: f64,
    /// Longest run of empty rows (decides how `coo-segmented` zeroes them).
    longest_empty_run: usize,
}

impl<T: Scalar> CooFormat<T> {
    /// Converts `a`. Errors when the rows do not fit `u32`, or (segmented) `nnz` does not.
    pub fn new(a: &Csr<T>, kernel: CooKernel) -> Result<Self> {
        let name = kernel.format_name();
        check_rows(name, a.nrows())?;
        if kernel == CooKernel::Segmented && a.nnz() > u32::MAX as usize {
            return Err(Error::format(
                name,
                format!(
                    "{} entries exceed the 2^32 - 1 that the 32-bit chunk offsets address",
                    a.nnz()
                ),
            ));
        }
        let entries = Triplets::from_csr(a);
        Ok(CooFormat {
            nrows: a.nrows(),
            longest_empty_run: longest_empty_run(a.nrows(), &entries.rows),
            entries,
            kernel,
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
        })
    }

    /// The row-sorted triplets.
    pub fn entries(&self) -> &Triplets<T> {
        &self.entries
    }

    /// Chunks of the segmented kernel (thread blocks, carry slots).
    pub fn chunks(&self) -> usize {
        self.entries.len().div_ceil(SEGMENT_CHUNK)
    }

    /// Whether `coo-segmented` fills `y` with 0 before its kernel (a long run of empty rows).
    pub fn zero_fill_first(&self) -> bool {
        self.longest_empty_run > ZERO_GAP_LIMIT
    }

    fn device_bytes(&self) -> usize {
        let carries = match self.kernel {
            CooKernel::Atomic => 0,
            CooKernel::Segmented => self.chunks() * (4 + std::mem::size_of::<T>()),
        };
        self.entries.bytes() + carries
    }
}

impl<T: Scalar> SpmvFormat<T> for CooFormat<T> {
    fn stats(&self) -> FormatStats {
        let nnz = self.entries.len();
        let stats =
            FormatStats::new(self.device_bytes(), nnz, nnz, self.max_row_len, self.mean_row_len);
        match self.kernel {
            CooKernel::Atomic => stats,
            CooKernel::Segmented => stats.with([
                ("chunk_entries", SEGMENT_CHUNK as f64),
                ("chunks", self.chunks() as f64),
                ("zero_fill_first", f64::from(u8::from(self.zero_fill_first()))),
            ]),
        }
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        let e = &self.entries;
        match self.kernel {
            CooKernel::Atomic => {
                y.par_iter_mut().for_each(|v| *v = T::ZERO);
                cpu::accumulate(e, x, y);
            }
            CooKernel::Segmented => cpu::spmv_segmented(e, x, y, SEGMENT_CHUNK),
        }
    }
    super::upload_with!(gpu::DeviceCoo::new);
}

/// The registry's entry for the format of `kernel`, `coo-atomic` or `coo-segmented` (both
/// listed in [`super::registry`]).
pub(crate) fn entry<T: Scalar>(kernel: CooKernel) -> FormatInfo<T> {
    let description = match kernel {
        CooKernel::Atomic => "COO, one atomicAdd per entry (y zeroed first, timed)",
        CooKernel::Segmented => {
            "COO, segmented reduction over chunks of 1024 entries plus a carry pass; deterministic"
        }
    };
    let info = FormatInfo::new(kernel.format_name(), description, build).kernels(&[KERNELS]);
    match kernel {
        // Its atomic additions change y's bits from run to run, it is the per-matrix best on
        // only 18 of the 331 training matrices and there by at most 1.21x (CUDA-graph times,
        // H200), and in leave-one-out its two choices were the only ones below 0.7 of the best
        // (NotreDame_www 0.40, G38 0.56); passed over, the score is 0.975 against 0.976, with
        // none below 0.7 (docs/auto.md).
        CooKernel::Atomic => info.not_auto_candidate(),
        CooKernel::Segmented => info.deterministic(),
    }
}

/// The registered builder of both COO formats: the kernel is the one the spec names.
fn build<T: Scalar>(a: &Csr<T>, s: &FormatSpec) -> Result<Box<dyn SpmvFormat<T>>> {
    let atomic = s.name() == CooKernel::Atomic.format_name();
    let kernel = if atomic { CooKernel::Atomic } else { CooKernel::Segmented };
    Ok(Box::new(CooFormat::new(a, kernel)?))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::formats::test_support::prelude::*;
    use crate::formats::test_support::rows::*;
    use crate::reference::{test_vector, Oracle};

    #[test]
    fn worked_example_gives_the_documented_arrays() {
        let a = example_4x3();
        let coo = CooFormat::new(&a, CooKernel::Segmented).unwrap();
        assert_eq!(coo.entries().rows, [0, 0, 2, 2, 2, 3]);
        assert_eq!(coo.entries().cols, [0, 2, 0, 1, 2, 1]);
        assert_eq!(coo.entries().vals, [1., 2., 3., 4., 5., 6.]);
        let s = coo.stats();
        assert_eq!((s.nnz, s.stored, s.max_row_len), (6, 6, 3));
        assert_eq!(s.bytes, 6 * 16 + 12, "entries plus one carry slot");
        assert_example_product(&coo, &a);
        assert_example_product(&CooFormat::new(&a, CooKernel::Atomic).unwrap(), &a);
    }

    #[test]
    fn worked_example_chunks_of_four() {
        let a = example_4x3();
        let e = Triplets::from_csr(&a);
        let x = [1.0, 10.0, 100.0];
        let mut y = [f64::NAN; 4];
        let carries = cpu::segmented_chunks(&e, &x, &mut y, 4);
        // Chunk 0 carries row 2's first two entries; row 2 ends in chunk 1 with 5·x2 written.
        assert_eq!(carries, [Some((2, 3.0 + 40.0)), None]);
        assert_eq!(y, [201.0, 0.0, 500.0, 60.0]);
        let mut y = [f64::NAN; 4];
        cpu::spmv_segmented(&e, &x, &mut y, 4);
        assert_eq!(y, [201.0, 0.0, 543.0, 60.0]);
    }

    #[test]
    fn tail_triplets_skip_the_first_entries_of_each_row() {
        let t = Triplets::from_csr_tail(&example_4x3(), 2);
        assert_eq!((t.rows, t.cols, t.vals), (vec![2], vec![2], vec![5.0]));
        let t = Triplets::from_csr_tail(&example_4x3(), 1);
        assert_eq!((t.rows, t.cols), (vec![0, 2, 2], vec![2, 1, 2]));
    }

    #[test]
    fn longest_empty_run_counts_leading_inner_and_trailing_runs() {
        assert_eq!(longest_empty_run(0, &[]), 0);
        assert_eq!(longest_empty_run(5, &[]), 5);
        assert_eq!(longest_empty_run(10, &[3, 3, 4]), 5); // rows 5..10
        assert_eq!(longest_empty_run(10, &[6, 9]), 6); // rows 0..6
        assert_eq!(longest_empty_run(10, &[0, 4, 9]), 4); // rows 5..9
        assert_eq!(longest_empty_run(3, &[0, 1, 2]), 0);
    }

    #[test]
    fn kernel_constants_match_the_rust_side() {
        let src = KERNELS.source;
        assert!(src.contains(&format!("#define COO_SEG_BLOCK {SEGMENT_BLOCK}\n")));
        assert!(src.contains(&format!("#define COO_SEG_ITEMS {SEGMENT_ITEMS}\n")));
    }

    /// A matrix whose rows cross chunk boundaries in every way: long rows over several
    /// chunks, rows ending exactly at a boundary, empty rows at the start, inside and end.
    fn boundary_matrix() -> Csr<f64> {
        let lens = [0, 0, 1, 7, 0, 2, 3, 0, 0, 11, 1, 1, 4, 0, 5, 0];
        rows_of_lengths(&lens, 11, |r, c| (r * 16 + c) as f64 * 0.25 - 3.0)
    }

    #[test]
    fn segmented_cpu_with_tiny_chunks_matches_the_oracle() {
        let a = boundary_matrix();
        let e = Triplets::from_csr(&a);
        let x = test_vector::<f64>(a.ncols());
        let oracle = Oracle::new(&a, &x);
        for chunk in [1, 2, 3, 4, 5, 7, 8, 13, 64, 1024] {
            let mut y = vec![f64::NAN; a.nrows()];
            cpu::spmv_segmented(&e, &x, &mut y, chunk);
            assert!(oracle.check(&y).passed(), "chunk {chunk}: {y:?}");
            // Entries are exact multiples of 1/4 times x: every order gives the same bits.
            let mut serial = vec![0.0; a.nrows()];
            a.spmv_serial(&x, &mut serial);
            assert_eq!(y, serial, "chunk {chunk}");
        }
    }

    #[test]
    fn atomic_cpu_with_tiny_chunks_matches_the_oracle() {
        let a = boundary_matrix();
        let e = Triplets::from_csr(&a);
        let x = test_vector::<f64>(a.ncols());
        let mut serial = vec![0.0; a.nrows()];
        a.spmv_serial(&x, &mut serial);
        for chunk in [1, 2, 3, 5, 8, 1024] {
            let mut y = vec![0.0; a.nrows()];
            cpu::accumulate_chunked(&e, &x, &mut y, chunk);
            assert_eq!(y, serial, "chunk {chunk}");
        }
    }

    #[test]
    fn segmented_cpu_is_bit_reproducible() {
        let a = boundary_matrix();
        let e = Triplets::from_csr(&a);
        let x: Vec<f64> = (0..a.ncols()).map(|i| 1.0 / (i as f64 + 3.0)).collect();
        let run = || {
            let mut y = vec![f64::NAN; a.nrows()];
            cpu::spmv_segmented(&e, &x, &mut y, 3);
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        let first = run();
        for _ in 0..5 {
            assert_eq!(run(), first);
        }
    }

    #[test]
    fn rows_beyond_u32_are_refused() {
        // (A matrix that large would need 32 GiB of row offsets: check the rule itself.)
        let e = check_rows("coo-atomic", u32::MAX as usize).expect_err("must fail");
        assert!(matches!(e, Error::Format { format: "coo-atomic", .. }), "{e}");
        assert!(check_rows("coo-atomic", u32::MAX as usize - 1).is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn cpu_paths_match_the_oracle(a in random_csr(), chunk in 1usize..9) {
            for kernel in [CooKernel::Atomic, CooKernel::Segmented] {
                prop_assert!(cpu_matches_oracle(&CooFormat::new(&a, kernel).unwrap(), &a), "{kernel:?}");
            }
            let e = Triplets::from_csr(&a);
            let x = test_vector::<f64>(a.ncols());
            let mut y = vec![f64::NAN; a.nrows()];
            cpu::spmv_segmented(&e, &x, &mut y, chunk);
            prop_assert!(Oracle::new(&a, &x).check(&y).passed(), "chunk {chunk}: {y:?}");
        }
    }
}
