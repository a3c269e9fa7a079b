//! HDIA (hacked DIA, Barbieri et al.): the rows cut into hacks of `h` rows (32 in the
//! registered format: one warp), each hack stored DIA-style with only the diagonals it
//! touches.
//!
//! - `hack_offsets` (`hacks + 1` entries, cumulative): hack `k` holds the diagonals
//!   `hack_offsets[k] .. hack_offsets[k+1]` of the lists below (the paper's `hackOffsets`).
//! - `offsets`: each hack's sorted offsets, hack after hack (the paper's `hdi_offsets`).
//! - `data`: each hack's block, `h` slots per diagonal: the slot of local row `l` on stored
//!   diagonal `i` (counted over all hacks) is `data[i·h + l]` (the paper's `hdi_data`). The
//!   last hack is padded to `h` rows, so a hack's operands are `dig_k × h` as in the paper.
//!
//! The example matrix of [`dia`](super::dia) with hacks of 2 rows (32 on the GPU; a small
//! `h` keeps the example short):
//! ```text
//!      c0 c1 c2 c3 c4 c5 c6 c7
//! r0 |  1  .  .  .  .  .  .  . |   hack 0 (rows 0-1): {0}
//! r1 |  .  2  .  .  .  .  .  . |
//! r2 |  .  .  3  4  .  .  .  . |   hack 1 (rows 2-3): {0, 1}
//! r3 |  .  .  .  5  6  .  .  . |
//! r4 |  .  .  7  .  8  9  . 10 |   hack 2 (rows 4-5): {-2, 0, 1, 3}
//! r5 |  .  .  . 11  . 12 13  . |
//! r6 |  .  .  .  . 14  . 15 16 |   hack 3 (rows 6-7): {-2, 0, 1}
//! r7 |  .  .  .  .  . 17  . 18 |
//!
//! hack_offsets = [0, 1, 3, 7, 10]
//! offsets      = [0 | 0, 1 | -2, 0, 1, 3 | -2, 0, 1]
//! data         = [1, 2 | 3, 5, 4, 6 | 7, 11, 8, 12, 9, 13, 10, 0 | 14, 17, 15, 18, 16, 0]
//! ```
//! 20 slots for 18 entries: 2 padded zeros (`d = 3` and `d = 1` leave the matrix in rows 5
//! and 7), against DIA's 14; with hacks of 4 rows, 24 slots. Operands per hack: {2, 4, 8, 6}.
//!
//! **Kernel.** One thread per row (blocks of 256 threads): row `r` is lane `r mod h` of hack
//! `r / h`; it walks the hack's diagonals, adding `data[i·h + lane] · x[r + offsets[i]]` when
//! the column lies inside the matrix. With h = 32 a warp is one hack: one trip count, 32
//! consecutive slots per load. Rows add their diagonals in ascending order: deterministic.
//! Hacks cost in proportion to their diagonals, so a warp's work varies with the structure
//! (the imbalance DRM addresses); the statistics report the operand variance per hack.
//!
//! **Limits.** As DIA (see [`dia`](super::dia)): the stored slots `Σ dig_k · h` obey the
//! family's padding limit (20 × nnz above 2^20 slots, 16 GiB of values), checked before
//! allocating; `hack_offsets` is 32-bit, slot offsets 64-bit.

mod cpu;
mod gpu;

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::dia::diagonals::{self, OperandSpread, SegmentBlocks, PADDING_LIMIT_RATIO, SEGMENT_ROWS};
use super::{DeviceFormat, FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};

pub const KERNELS: KernelModule = KernelModule { name: "hdia", source: include_str!("kernel.cu") };

const NAME: &str = "hdia";

/// A matrix in HDIA (see the module doc for the layout).
pub struct Hdia<T> {
    nrows: usize,
    ncols: usize,
    nnz: usize,
    /// Rows per hack.
    hack_rows: usize,
    /// `diag_ptr` is `hack_offsets`.
    blocks: SegmentBlocks<T>,
    /// Slots whose row and column lie inside the matrix (what the kernel reads of `data`).
    in_range: usize,
    operands: OperandSpread,
    max_row_len: usize,
    mean_row_len: f64,
    scan_ms: f64,
    fill_ms: f64,
}

impl<T: Scalar> Hdia<T> {
    /// Converts from CSR with hacks of 32 rows.
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_hack_rows(a, SEGMENT_ROWS)
    }

    /// Converts from CSR with hacks of `hack_rows ≥ 1` rows; refuses beyond the padding limit.
    pub fn with_hack_rows(a: &Csr<T>, hack_rows: usize) -> Result<Self> {
        diagonals::check_shape(NAME, a)?;
        if hack_rows == 0 || hack_rows > i32::MAX as usize {
            return Err(Error::format(NAME, format!("{hack_rows} rows per hack: the hack height must be in 1..2^31")));
        }
        let (m, n, h) = (a.nrows(), a.ncols(), hack_rows);
        let t = Instant::now();
        let hack_diagonals = diagonals::segment_offsets(a, h);
        let scan_ms = diagonals::ms_since(t);
        let stored = diagonals::segment_slots(&hack_diagonals, h);
        let total: usize = hack_diagonals.iter().map(Vec::len).sum();
        let layout = format!("HDIA with {} hacks of {h} rows ({total} diagonals)", hack_diagonals.len());
        diagonals::check_padding(NAME, &layout, stored, a.nnz(), std::mem::size_of::<T>(), PADDING_LIMIT_RATIO as f64)?;
        if total > u32::MAX as usize {
            return Err(Error::format(NAME, format!("{layout}: more than 2^32 - 1 stored diagonals")));
        }

        let t = Instant::now();
        let order: Vec<u32> = (0..hack_diagonals.len() as u32).collect();
        let blocks = diagonals::build_segments(a, h, &hack_diagonals, &order);
        let in_range = (0..hack_diagonals.len())
            .into_par_iter()
            .map(|k| diagonals::slots_in_range(k * h, h, &hack_diagonals[k], m, n))
            .sum();
        let operands = OperandSpread::of(hack_diagonals.iter().map(|o| (o.len() * h) as u64));
        Ok(Hdia {
            nrows: m,
            ncols: n,
            nnz: a.nnz(),
            hack_rows: h,
            blocks,
            in_range,
            operands,
            max_row_len: a.max_row_len(),
            mean_row_len: a.mean_row_len(),
            scan_ms,
            fill_ms: diagonals::ms_since(t),
        })
    }

    pub fn hack_rows(&self) -> usize {
        self.hack_rows
    }
    pub fn hacks(&self) -> usize {
        self.blocks.diag_ptr.len() - 1
    }
    /// Cumulative diagonal count per hack (`hacks + 1` entries).
    pub fn hack_offsets(&self) -> &[u32] {
        &self.blocks.diag_ptr
    }
    /// Each hack's offsets, hack after hack.
    pub fn offsets(&self) -> &[i32] {
        &self.blocks.offsets
    }
    /// `hack_rows` slots per stored diagonal.
    pub fn data(&self) -> &[T] {
        &self.blocks.values
    }
    /// Stored slots, padding included.
    pub fn stored(&self) -> usize {
        self.blocks.values.len()
    }
    /// Operands (stored slots) per hack.
    pub fn operand_spread(&self) -> OperandSpread {
        self.operands
    }
    fn index_bytes(&self) -> usize {
        4 * (self.blocks.diag_ptr.len() + self.blocks.offsets.len())
    }
    /// Device bytes: `hack_offsets` (`u32`), `offsets` (`i32`), `data`.
    pub fn device_bytes(&self) -> usize {
        self.index_bytes() + std::mem::size_of::<T>() * self.stored()
    }
}

impl<T: Scalar> SpmvFormat<T> for Hdia<T> {
    fn stats(&self) -> FormatStats {
        let mut extra = vec![
            ("hack_rows".into(), self.hack_rows as f64),
            ("diagonals".into(), self.blocks.offsets.len() as f64),
        ];
        extra.extend(self.operands.extra("operand"));
        extra.extend([
            ("scan_ms".into(), self.scan_ms),
            ("fill_ms".into(), self.fill_ms),
            ("preprocess_ms".into(), self.scan_ms + self.fill_ms),
        ]);
        FormatStats {
            bytes: self.device_bytes(),
            nnz: self.nnz,
            stored: self.stored(),
            max_row_len: self.max_row_len,
            mean_row_len: self.mean_row_len,
            extra,
        }
    }
    /// All but the slots outside the matrix.
    fn bytes_read(&self) -> usize {
        self.index_bytes() + std::mem::size_of::<T>() * self.in_range
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        cpu::spmv(self, x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(gpu::DeviceHdia::new(gpu, self)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::dia::Dia;
    use crate::formats::test_support::{
        cpu_matches_oracle as cpu_matches, example, example_product, random_diagonal_csr,
    };
    use crate::reference::{test_vector, Oracle};
    use proptest::prelude::*;

    #[test]
    fn worked_example_gives_the_documented_arrays() {
        let a = example();
        let f = Hdia::with_hack_rows(&a, 2).unwrap();
        assert_eq!(f.hack_offsets(), &[0, 1, 3, 7, 10]);
        assert_eq!(f.offsets(), &[0, 0, 1, -2, 0, 1, 3, -2, 0, 1]);
        #[rustfmt::skip]
        let data = [1.0, 2.0, 3.0, 5.0, 4.0, 6.0, 7.0, 11.0, 8.0, 12.0, 9.0, 13.0, 10.0, 0.0, 14.0, 17.0, 15.0, 18.0, 16.0, 0.0];
        assert_eq!(f.data(), &data);
        let s = f.stats();
        assert_eq!((s.stored, s.padded_zeros()), (20, 2));
        assert_eq!(s.bytes, 4 * (5 + 10) + 8 * 20);
        assert_eq!(f.bytes_read(), 4 * (5 + 10) + 8 * 18);
        let spread = f.operand_spread();
        assert_eq!((spread.units, spread.mean, spread.variance), (4, 5.0, 5.0)); // {2, 4, 8, 6}
        let (x, expect) = example_product();
        let mut y = vec![f64::NAN; 8];
        f.spmv_cpu(&x, &mut y);
        assert_eq!(y, expect);
        // The paper's Fig. 5 figures: hacks of 4 rows pad 6 zeros, DIA 14.
        assert_eq!(Hdia::with_hack_rows(&a, 4).unwrap().stats().padded_zeros(), 6);
        // Registered height: one hack of 32 rows padded beyond the 8 real ones.
        let f = Hdia::new(&a).unwrap();
        assert_eq!((f.hacks(), f.stored()), (1, 4 * 32));
        let mut y = vec![f64::NAN; 8];
        f.spmv_cpu(&x, &mut y);
        assert_eq!(y, expect);
    }

    #[test]
    fn hacks_never_store_more_than_dia() {
        let a = crate::io::gen::generate("banded:n=5000,offsets=-300;-2;0;1;7;2000,broken=0.3,scatter=0.01").unwrap();
        let dia = Dia::new(&a).unwrap();
        for h in [1, 2, 7, 32, 100, 5000] {
            let f = Hdia::with_hack_rows(&a, h).unwrap();
            // Padding rows of a short last hack aside, a hack stores a subset of DIA's slots.
            assert!(f.stored() <= dia.stored() + h * dia.offsets().len(), "h = {h}");
            assert!(cpu_matches(&f, &a), "h = {h}");
        }
        assert!(Hdia::new(&a).unwrap().stored() < dia.stored() / 4);
    }

    #[test]
    fn bad_hack_heights_are_format_errors() {
        assert!(matches!(Hdia::with_hack_rows(&example(), 0), Err(Error::Format { .. })));
    }

    fn gpu_check<T: Scalar>(gpu: &Arc<Gpu>, a: &Csr<f64>, h: usize) -> Result<bool> {
        let a: Csr<T> = a.cast();
        let x = test_vector::<T>(a.ncols());
        let device = Hdia::with_hack_rows(&a, h)?.upload(gpu)?;
        let x_dev = gpu.upload(&x)?;
        let mut y_dev = gpu.alloc::<T>(a.nrows())?;
        gpu.fill(&mut y_dev, T::nan())?;
        device.launch(gpu, &x_dev, &mut y_dev)?;
        Ok(Oracle::new(&a, &x).check(&gpu.download(&y_dev)?).passed())
    }

    #[test]
    #[ignore = "needs a CUDA device"]
    fn gpu_matches_the_oracle_for_several_hack_heights() {
        let gpu = Gpu::detect().unwrap_or_else(|e| panic!("this test needs a CUDA device: {e}"));
        let a = crate::io::gen::generate("banded:n=5003,offsets=-300;-2;0;1;7;2000,broken=0.3,scatter=0.01").unwrap();
        let mut failures = Vec::new();
        for h in [1, 2, 7, 32, 33, 100, 5003, 6000] {
            for (precision, ok) in [("f64", gpu_check::<f64>(&gpu, &a, h)), ("f32", gpu_check::<f32>(&gpu, &a, h))] {
                if !matches!(ok, Ok(true)) {
                    failures.push(format!("h = {h}, {precision}: {ok:?}"));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn random_diagonal_matrices_match_the_oracle(a in random_diagonal_csr(), h in 1usize..40) {
            let f = Hdia::with_hack_rows(&a, h).unwrap();
            prop_assert_eq!(f.hacks(), a.nrows().div_ceil(h));
            prop_assert_eq!(*f.hack_offsets().last().unwrap() as usize * h, f.stored());
            prop_assert!(cpu_matches(&f, &a));
            let a32: Csr<f32> = a.cast();
            prop_assert!(cpu_matches(&Hdia::with_hack_rows(&a32, h).unwrap(), &a32));
            prop_assert!(cpu_matches(&Hdia::new(&a).unwrap(), &a));
        }
    }
}
