//! AMF-CSR, adaptive multi-row folding of CSR (Gao et al., ICPADS 2021), as the TEB paper
//! describes it (`../shared/papers/000` §2.3, digest `FORMATS.md` §2): consecutive rows are
//! folded into row-blocks while their total nnz stays below Ts, consecutive row-blocks into
//! sub-blocks while the total stays below Tl, and one thread block runs each sub-block.
//!
//! **Folding** (strict `<`, as the TEB paper's Fig. 5 example needs): a row-block starts with
//! the next row and takes the following row while the row-block's nnz plus that row's is
//! below Ts; so a row of Ts entries or more is a row-block of its own, and empty rows fold
//! into the row-block before them. Sub-blocks fold row-blocks the same way with Tl. Rows keep
//! their order (no reordering), so `values` and `col_idx` are exactly CSR's.
//!
//! **Arrays.** The paper's RowPtr has two parts: the row-block pointers (`row_block_ptr`,
//! first row of each row-block, row-blocks + 1 entries) and each sub-block's first and last
//! row-block (`sub_block_ptr`: sub-block s holds row-blocks `sub_block_ptr[s]` up to
//! `sub_block_ptr[s+1] − 1`, sub-blocks + 1 entries). The CSR `row_ptr` is kept too: the
//! kernel needs each row's end to split a folded row back into rows (the paper's text does
//! not say how its kernel finds them).
//!
//! Matrix A of the TEB paper's Fig. 1 (see [`teb`]) with the paper's Ts = 4, Tl = 7 (Fig. 5):
//! ```text
//! row lengths     3 | 1 2 | 2 1 | 2 1 | 4          row_block_ptr = [0, 1, 3, 5, 7, 8]
//! row-block nnz   3 |  3  |  3  |  3  | 4          (3 + 1 = 4 is not < 4: R0 alone)
//! sub-blocks      [3 3] [3 3] [4] = 6, 6, 4        sub_block_ptr = [0, 2, 4, 5]
//! ```
//! eq. (5) gives S² = 0.89 for (6, 6, 4) (the paper prints 1.29).
//!
//! **Kernel.** 256 threads per sub-block; warp w takes the sub-block's row-blocks w, w + 8, …
//! and reads each folded row's entries 32 at a time (coalesced, since the rows are
//! consecutive), finds each entry's row by a binary search in `row_ptr`, adds the products
//! of each row with a segmented warp scan and carries a row that continues into the next 32
//! entries; empty rows are written 0. Deterministic (fixed order, no atomics).
//!
//! **Rules this code had to choose** (the TEB paper: "thresholds preset from the matrix size
//! and nnz"; the original's formulas were not available):
//! 1. Ts = the mean row length rounded up to a multiple of 32, at least 32: a folded row is
//!    about one warp-width of entries (the unit the kernel reads), and rows longer than the
//!    mean stay alone.
//! 2. Tl = max(8·Ts, ⌈nnz / 8448⌉): at least one folded row per warp of the 8-warp thread
//!    block, and no more than about 8448 sub-blocks (8 waves of 8 resident 256-thread blocks
//!    on the H200's 132 SMs) on large matrices.
//!
//! Statistics (`extra`): `ts`, `tl`, `row_blocks`, `sub_blocks`, `sub_block_nnz_variance`
//! (eq. 5), `max_sub_block_nnz_over_mean`, `fold_ms`.
//!
//! [`teb`]: super::teb

mod cpu;
mod gpu;

use std::sync::Arc;
use std::time::Instant;

use super::teb::partition::variance;
use super::{DeviceFormat, FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};

pub const KERNELS: KernelModule = KernelModule { name: "amf_csr", source: include_str!("kernel.cu") };

const NAME: &str = "amf-csr";
/// Threads per block (8 warps).
const BLOCK: u32 = 256;
/// Sub-blocks aimed at on large matrices: 8 waves of 8 blocks of 256 threads on 132 SMs.
pub const TARGET_SUB_BLOCKS: usize = 8 * 8 * 132;
/// Largest row count and nnz: `r += 32` and `base + 32` in the kernel must not wrap a u32.
const MAX_INDEX: usize = u32::MAX as usize - 64;

/// A matrix in AMF-CSR (see the module doc).
pub struct AmfCsr<T> {
    nrows: usize,
    ncols: usize,
    ts: usize,
    tl: usize,
    /// First row of each row-block, `row_blocks + 1` entries (RowPtr, part 1).
    row_block_ptr: Vec<u32>,
    /// First row-block of each sub-block, `sub_blocks + 1` entries (RowPtr, part 2).
    sub_block_ptr: Vec<u32>,
    row_ptr: Vec<u32>,
    col_idx: Vec<u32>,
    values: Vec<T>,
    fold_ms: f64,
    max_row_len: usize,
    mean_row_len: f64,
}

/// Folds consecutive items (sizes `sizes`) into groups: a group starts with the next item
/// and takes the following one while its total plus that item's size is below `limit`.
/// Returns the first item of each group plus the item count.
fn fold(sizes: impl ExactSizeIterator<Item = usize>, limit: usize) -> Vec<u32> {
    let count = sizes.len();
    let mut starts = Vec::new();
    let mut total = 0usize;
    for (i, s) in sizes.enumerate() {
        if i == 0 || total + s >= limit {
            starts.push(i as u32);
            total = 0;
        }
        total += s;
    }
    starts.push(count as u32);
    starts
}

/// `(Ts, Tl)` by the module doc's rules 1 and 2 for `nnz` entries in `rows` rows: the
/// thresholds of [`AmfCsr::new`].
pub fn thresholds(rows: usize, nnz: usize) -> (usize, usize) {
    let mean = nnz.div_ceil(rows.max(1));
    let ts = (mean.div_ceil(32) * 32).max(32);
    (ts, (8 * ts).max(nnz.div_ceil(TARGET_SUB_BLOCKS)))
}

impl<T: Scalar> AmfCsr<T> {
    /// Converts from CSR with the thresholds of [`thresholds`].
    pub fn new(a: &Csr<T>) -> Result<Self> {
        let (ts, tl) = thresholds(a.nrows(), a.nnz());
        Self::with_thresholds(a, ts, tl)
    }

    /// Converts from CSR with given thresholds (both ≥ 1).
    pub fn with_thresholds(a: &Csr<T>, ts: usize, tl: usize) -> Result<Self> {
        if ts == 0 || tl == 0 {
            return Err(Error::format(NAME, format!("Ts = {ts}, Tl = {tl}: both thresholds must be at least 1")));
        }
        let (m, nnz) = (a.nrows(), a.nnz());
        if m > MAX_INDEX || nnz > MAX_INDEX {
            return Err(Error::format(
                NAME,
                format!("{m} rows, {nnz} entries: both must be at most {MAX_INDEX} for 32-bit device indices"),
            ));
        }
        let started = Instant::now();
        let row_ptr = a.row_ptr();
        let row_block_ptr = fold(row_ptr.windows(2).map(|w| w[1] - w[0]), ts);
        let sub_block_ptr = fold(row_block_ptr.windows(2).map(|w| row_ptr[w[1] as usize] - row_ptr[w[0] as usize]), tl);
        let fold_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(AmfCsr {
            nrows: m,
            ncols: a.ncols(),
            ts,
            tl,
            row_block_ptr,
            sub_block_ptr,
            row_ptr: row_ptr.iter().map(|&p| p as u32).collect(),
            col_idx: a.col_idx().to_vec(),
            values: a.values().to_vec(),
            fold_ms,
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
        })
    }

    pub fn thresholds(&self) -> (usize, usize) {
        (self.ts, self.tl)
    }
    pub fn row_blocks(&self) -> usize {
        self.row_block_ptr.len() - 1
    }
    pub fn sub_blocks(&self) -> usize {
        self.sub_block_ptr.len() - 1
    }
    /// First row of each row-block (RowPtr, part 1).
    pub fn row_block_ptr(&self) -> &[u32] {
        &self.row_block_ptr
    }
    /// First row-block of each sub-block (RowPtr, part 2).
    pub fn sub_block_ptr(&self) -> &[u32] {
        &self.sub_block_ptr
    }
    /// nnz of each sub-block.
    pub fn sub_block_nnz(&self) -> Vec<usize> {
        self.sub_block_ptr
            .windows(2)
            .map(|s| {
                let (r0, r1) = (self.row_block_ptr[s[0] as usize], self.row_block_ptr[s[1] as usize]);
                (self.row_ptr[r1 as usize] - self.row_ptr[r0 as usize]) as usize
            })
            .collect()
    }
    /// Device bytes: the three u32 offset arrays, `col_idx` and `values`.
    pub fn device_bytes(&self) -> usize {
        4 * (self.row_block_ptr.len() + self.sub_block_ptr.len() + self.row_ptr.len() + self.col_idx.len())
            + std::mem::size_of::<T>() * self.values.len()
    }
}

impl<T: Scalar> SpmvFormat<T> for AmfCsr<T> {
    fn stats(&self) -> FormatStats {
        let nnz = self.values.len();
        let sub_nnz = self.sub_block_nnz();
        let mean = nnz as f64 / self.sub_blocks().max(1) as f64;
        let max = sub_nnz.iter().max().copied().unwrap_or(0) as f64;
        FormatStats {
            bytes: self.device_bytes(),
            nnz,
            stored: nnz,
            max_row_len: self.max_row_len,
            mean_row_len: self.mean_row_len,
            extra: vec![
                ("ts".into(), self.ts as f64),
                ("tl".into(), self.tl as f64),
                ("row_blocks".into(), self.row_blocks() as f64),
                ("sub_blocks".into(), self.sub_blocks() as f64),
                ("sub_block_nnz_variance".into(), variance(&sub_nnz)),
                ("max_sub_block_nnz_over_mean".into(), if nnz == 0 { 1.0 } else { max / mean }),
                ("fold_ms".into(), self.fold_ms),
            ],
        }
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        cpu::spmv(self, x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(gpu::DeviceAmfCsr::new(gpu, self)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::{cpu_matches_oracle as check, random_csr};
    use crate::formats::teb::tests::{paper_matrix, varied};
    use crate::reference::{test_vector, Oracle};
    use proptest::prelude::*;

    fn assert_invariants<T: Scalar>(f: &AmfCsr<T>, a: &Csr<T>) {
        let (ts, tl) = f.thresholds();
        assert_eq!(*f.row_block_ptr().last().unwrap() as usize, a.nrows());
        assert_eq!(*f.sub_block_ptr().last().unwrap() as usize, f.row_blocks());
        assert!(f.row_block_ptr().windows(2).all(|w| w[0] < w[1]), "row-blocks are non-empty");
        assert!(f.sub_block_ptr().windows(2).all(|w| w[0] < w[1]), "sub-blocks are non-empty");
        // Below the threshold unless a single item; maximal (the next item would not fit).
        let rb_nnz: Vec<usize> =
            f.row_block_ptr().windows(2).map(|w| a.row_ptr()[w[1] as usize] - a.row_ptr()[w[0] as usize]).collect();
        for (k, w) in f.row_block_ptr().windows(2).enumerate() {
            assert!(w[1] - w[0] == 1 || rb_nnz[k] < ts);
            if (w[1] as usize) < a.nrows() {
                assert!(rb_nnz[k] + a.row_len(w[1] as usize) >= ts);
            }
        }
        for (s, w) in f.sub_block_ptr().windows(2).enumerate() {
            let nnz = f.sub_block_nnz()[s];
            assert!(w[1] - w[0] == 1 || nnz < tl);
            if (w[1] as usize) < f.row_blocks() {
                assert!(nnz + rb_nnz[w[1] as usize] >= tl);
            }
        }
    }

    #[test]
    fn the_papers_fig_5_example() {
        let a = paper_matrix();
        let f = AmfCsr::with_thresholds(&a, 4, 7).unwrap();
        assert_eq!(f.row_block_ptr(), &[0, 1, 3, 5, 7, 8]);
        assert_eq!(f.sub_block_ptr(), &[0, 2, 4, 5]);
        assert_eq!(f.sub_block_nnz(), [6, 6, 4]);
        let s = f.stats();
        let var = s.extra.iter().find(|(n, _)| n == "sub_block_nnz_variance").unwrap().1;
        assert!((var - 8.0 / 9.0).abs() < 1e-12);
        assert_eq!(s.bytes, 4 * (6 + 4 + 9 + 16) + 8 * 16);
        assert_invariants(&f, &a);
        let x = [1.0, 10.0, 100.0, 1000.0, 1e4, 1e5, 1e6, 1e7];
        let mut y = [f64::NAN; 8];
        f.spmv_cpu(&x, &mut y);
        assert_eq!(y, [81_000_200.0, 3.0, 90_006_000.0, 76.0, 2e6, 850_000.0, 60_000.0, 12_400_005.0]);
        // The registered thresholds on this small matrix: one row-block, one sub-block.
        assert_eq!(thresholds(8, 16), (32, 256));
        assert_eq!(AmfCsr::new(&a).unwrap().row_block_ptr(), &[0, 8]);
    }

    #[test]
    fn threshold_rule() {
        assert_eq!(thresholds(0, 0), (32, 256));
        assert_eq!(thresholds(1000, 7000), (32, 256));
        assert_eq!(thresholds(1000, 40_000), (64, 512));
        assert_eq!(thresholds(2_000_000, 32_000_000), (32, 32_000_000usize.div_ceil(TARGET_SUB_BLOCKS)));
        assert!(matches!(AmfCsr::with_thresholds(&paper_matrix(), 0, 7), Err(Error::Format { .. })));
        assert!(matches!(AmfCsr::with_thresholds(&paper_matrix(), 4, 0), Err(Error::Format { .. })));
    }

    #[test]
    fn folds_are_maximal_and_correct() {
        for (m, n, seed) in [(5003, 4000, 1), (20000, 300, 2), (700, 9000, 3)] {
            let a = varied(m, n, seed);
            let f = AmfCsr::new(&a).unwrap();
            assert_invariants(&f, &a);
            assert!(check(&f, &a), "m = {m}");
            for (ts, tl) in [(1, 1), (4, 7), (32, 40), (100, 5000), (10_000, 1)] {
                let f = AmfCsr::with_thresholds(&a, ts, tl).unwrap();
                assert_invariants(&f, &a);
                assert!(check(&f, &a), "Ts = {ts}, Tl = {tl}");
            }
            let a32: Csr<f32> = a.cast();
            assert!(check(&AmfCsr::new(&a32).unwrap(), &a32));
        }
    }

    #[test]
    fn edge_shapes() {
        for (m, n) in [(0, 0), (0, 5), (5, 0), (1, 1), (70, 3)] {
            let a = Csr::<f32>::zeros(m, n);
            let f = AmfCsr::new(&a).unwrap();
            assert_eq!(f.row_blocks(), usize::from(m > 0));
            let mut y = vec![f32::NAN; m];
            f.spmv_cpu(&vec![1.0; n], &mut y);
            assert!(y.iter().all(|&v| v == 0.0));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn random_matrices_match_the_oracle(a in random_csr(), ts in 1usize..70, tl in 1usize..300) {
            let f = AmfCsr::new(&a).unwrap();
            assert_invariants(&f, &a);
            prop_assert!(check(&f, &a));
            let g = AmfCsr::with_thresholds(&a, ts, tl).unwrap();
            assert_invariants(&g, &a);
            prop_assert!(check(&g, &a));
            let a32: Csr<f32> = a.cast();
            prop_assert!(check(&AmfCsr::with_thresholds(&a32, ts, tl).unwrap(), &a32));
        }
    }

    #[test]
    #[ignore = "needs a CUDA device"]
    fn gpu_matches_the_oracle_for_several_thresholds_bitwise_reproducibly() {
        let gpu = Gpu::detect().unwrap_or_else(|e| panic!("this test needs a CUDA device: {e}"));
        let mut failures = Vec::new();
        // Rows spanning many rounds of 32, runs of empty rows, tiny and huge thresholds.
        for (name, a) in [("paper", paper_matrix()), ("varied", varied(5003, 4000, 1)), ("tall", varied(40000, 500, 5))]
        {
            for th in [None, Some((1, 1)), Some((4, 7)), Some((33, 100)), Some((100, 5000)), Some((4000, 1 << 20))] {
                let run = || -> Result<bool> {
                    let f = match th {
                        None => AmfCsr::new(&a)?,
                        Some((ts, tl)) => AmfCsr::with_thresholds(&a, ts, tl)?,
                    };
                    let x = test_vector::<f64>(a.ncols());
                    let device = f.upload(&gpu)?;
                    let x_dev = gpu.upload(&x)?;
                    let mut y = gpu.alloc::<f64>(a.nrows())?;
                    let mut first = None;
                    for _ in 0..3 {
                        gpu.fill(&mut y, f64::NAN)?;
                        device.launch(&gpu, &x_dev, &mut y)?;
                        let out = gpu.download(&y)?;
                        if !Oracle::new(&a, &x).check(&out).passed() {
                            return Ok(false);
                        }
                        let bits: Vec<u64> = out.iter().map(|v| v.to_bits()).collect();
                        if *first.get_or_insert_with(|| bits.clone()) != bits {
                            return Ok(false);
                        }
                    }
                    Ok(true)
                };
                let ok = run();
                if !matches!(ok, Ok(true)) {
                    failures.push(format!("{name}, thresholds {th:?}: {ok:?}"));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
