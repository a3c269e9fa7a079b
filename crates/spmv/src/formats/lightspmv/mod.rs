//! LightSpMV (Liu & Schmidt 2018; the baseline of the BRCP paper, papers/003): CSR-vector
//! whose rows are not assigned by thread index but handed out at run time by a global atomic
//! row counter.
//!
//! The storage is plain CSR (32-bit offsets and columns on the device) plus one `u32`
//! counter. A *vector* of `L` lanes computes one row; `L` is the smallest power of two ≥ the
//! mean row length, within 2..=32 (the rule of `csr-vector`, so the two differ only in how
//! rows reach the vectors). A warp holds `32 / L` vectors; its lane 0 takes the next `32 / L`
//! rows with one `atomicAdd(counter, 32 / L)`, broadcasts the first with a shuffle, and the
//! warp's vectors compute those rows; then it fetches again, until the counter passes the
//! last row. The grid holds only as many warps as the device keeps resident, so a warp that
//! drew short rows simply comes back for more: the load balances itself without any
//! preprocessing.
//!
//! ```text
//!     | 1 . 2 . |      row_ptr = [0, 2, 2, 5, 6, 8]
//!     | . . . . |      col_idx = [0, 2, 0, 1, 2, 1, 2, 3]
//! A = | 3 4 5 . |      values  = [1, 2, 3, 4, 5, 6, 7, 8]
//!     | . 6 . . |
//!     | . . 7 8 |      mean row length 8/5 = 1.6  ->  L = 2 lanes, 16 vectors per warp
//!
//! counter = 0 (zeroed on the stream before every launch)
//! warp A: atomicAdd(counter, 16) -> 0    vectors 0..4 take rows 0..4, vectors 5..15 idle
//! warp B: atomicAdd(counter, 16) -> 16   16 >= 5 rows: exits
//! warp A: atomicAdd(counter, 16) -> 32   exits
//!
//! row 2 (entries at positions 2, 3, 4) in its vector of 2 lanes:
//!   lane 0: positions 2, 4  ->  3·x0 + 5·x2
//!   lane 1: position  3     ->  4·x1
//!   y[2] = lane 0 + lane 1  (shuffle reduction)
//! ```
//! **Deterministic.** The result of a row does not depend on which warp takes it, nor when:
//! lane `l` of the vector always adds the row's entries `l, l + L, l + 2L, ...` in order (for
//! L = 32 and rows longer than 32, counted from the row's start rounded down to a multiple of
//! 32, for aligned loads), and the `L` partial sums are combined by the same shuffle tree.
//! Each row is written by exactly one vector, with no atomics on `y`. The dynamic schedule
//! changes only *where* a row is computed, never the order of its additions, so results are
//! bitwise identical from run to run (`deterministic: true` in the registry).
//!
//! The counter must start at 0 for every product: it is zeroed on the stream right before
//! each launch (a 4-byte memset, inside the timed region). Rows are limited to 2^31 − 1 so
//! that the counter, which overshoots the last row by at most one fetch per warp, never wraps;
//! larger matrices are refused with [`Error::Format`].
//!
//! The CPU path (`cpu.rs`) runs the same scheme with rayon's threads as the warps and the
//! same per-row summation order.

mod cpu;
mod gpu;

use std::sync::Arc;

use super::{DeviceFormat, FormatStats, SpmvFormat};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, KernelModule};
use crate::matrix::{Csr, Scalar};

pub const KERNELS: KernelModule = KernelModule { name: "lightspmv", source: include_str!("kernel.cu") };

const NAME: &str = "lightspmv";

/// Most rows the 32-bit row counter can hand out without wrapping.
const MAX_ROWS: u32 = i32::MAX as u32;

/// A CSR matrix with LightSpMV's vector width.
pub struct LightSpmv<T> {
    csr: Csr<T>,
    /// Lanes per vector (2, 4, 8, 16 or 32).
    lanes: u32,
}

impl<T: Scalar> LightSpmv<T> {
    /// Copies the CSR matrix and chooses the vector width from its mean row length.
    /// Refuses matrices beyond 32-bit device offsets or the row counter's 2^31 − 1 rows.
    pub fn new(a: &Csr<T>) -> Result<Self> {
        Self::with_lanes(a, super::csr::vector_lanes(a.mean_row_len()))
    }

    /// The same with a given vector width (a power of two in 2..=32).
    pub fn with_lanes(a: &Csr<T>, lanes: u32) -> Result<Self> {
        if !(2..=32).contains(&lanes) || !lanes.is_power_of_two() {
            return Err(Error::format(NAME, format!("{lanes} lanes per vector: must be 2, 4, 8, 16 or 32")));
        }
        if a.nrows() > MAX_ROWS as usize {
            return Err(Error::format(NAME, format!("{} rows exceed the 2^31 - 1 of the row counter", a.nrows())));
        }
        if a.nnz() > u32::MAX as usize {
            return Err(Error::format(
                NAME,
                format!("{} entries exceed the 2^32 - 1 that 32-bit device row offsets can address", a.nnz()),
            ));
        }
        Ok(LightSpmv { csr: a.clone(), lanes })
    }

    /// Lanes per vector.
    pub fn lanes(&self) -> u32 {
        self.lanes
    }
    /// Vectors per warp, which is also the rows a warp takes per fetch.
    pub fn vectors_per_warp(&self) -> u32 {
        32 / self.lanes
    }
    /// CSR with 32-bit offsets and columns, plus the 4-byte row counter.
    pub fn device_bytes(&self) -> usize {
        super::csr::device_bytes(&self.csr) + 4
    }
}

impl<T: Scalar> SpmvFormat<T> for LightSpmv<T> {
    fn stats(&self) -> FormatStats {
        let mut stats = FormatStats::unpadded(&self.csr, self.device_bytes());
        stats.extra.push(("lanes_per_vector".into(), self.lanes as f64));
        stats.extra.push(("rows_per_warp_fetch".into(), self.vectors_per_warp() as f64));
        stats.extra.push(("cpu_rows_per_fetch".into(), cpu::rows_per_fetch(self.csr.mean_row_len()) as f64));
        stats
    }
    fn spmv_cpu(&self, x: &[T], y: &mut [T]) {
        cpu::spmv(self, x, y)
    }
    fn upload(&self, gpu: &Arc<Gpu>) -> Result<Box<dyn DeviceFormat<T>>> {
        Ok(Box::new(gpu::DeviceLightSpmv::new(gpu, self)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::{cpu_matches_oracle as check, random_csr};
    use crate::reference::{test_vector, Oracle};
    use proptest::prelude::*;

    /// The matrix of the module doc.
    fn example() -> Csr<f64> {
        Csr::new_checked(
            5,
            4,
            vec![0, 2, 2, 5, 6, 8],
            vec![0, 2, 0, 1, 2, 1, 2, 3],
            vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        )
        .unwrap()
    }

    #[test]
    fn worked_example() {
        let a = example();
        let f = LightSpmv::new(&a).unwrap();
        assert_eq!((f.lanes(), f.vectors_per_warp()), (2, 16));
        let x = [1.0, 10.0, 100.0, 1000.0];
        let mut y = [f64::NAN; 5];
        f.spmv_cpu(&x, &mut y);
        assert_eq!(y, [201.0, 0.0, 543.0, 60.0, 8700.0]);
        let s = f.stats();
        assert_eq!((s.nnz, s.stored, s.padded_zeros(), s.max_row_len), (8, 8, 0, 3));
        assert_eq!(s.bytes, 4 * 6 + 12 * 8 + 4);
        assert_eq!(s.extra[0], ("lanes_per_vector".to_string(), 2.0));
        assert_eq!(s.extra[1], ("rows_per_warp_fetch".to_string(), 16.0));
    }

    #[test]
    fn row_sum_follows_the_lane_order_of_the_kernel() {
        // Values whose sum depends on the order: 1e16 + 1 - 1e16 ... in f64.
        let vals = [1e16, 1.0, -1e16, 1.0, 3.0];
        let cols = [0u32, 1, 2, 3, 4];
        let x = [1.0; 5];
        // 2 lanes: lane 0 = (1e16 - 1e16) + 3 = 3, lane 1 = 1 + 1 = 2 -> 5.
        assert_eq!(cpu::row_sum(0, &cols, &vals, &x, 2), 5.0);
        // 4 lanes: lane 0 = 1e16 + 3 (rounds to 1e16 + 4), lane 1 = 1, lane 2 = -1e16, lane 3 = 1;
        // tree: (l0 + l2) + (l1 + l3) = 4 + 2.
        assert_eq!(cpu::row_sum(0, &cols, &vals, &x, 4), 6.0);
        // 32 lanes on a row longer than 32: entry k goes to lane (start + k) mod 32, so the
        // row's start (its alignment) changes the order, as in the kernel.
        let long: Vec<f64> = (0..40)
            .map(|k| match k {
                0 => 1e16,
                31 => -1e16,
                _ => 1.0,
            })
            .collect();
        let cols: Vec<u32> = (0..40).collect();
        let x = vec![1.0; 40];
        let aligned = cpu::row_sum(0, &cols, &long, &x, 32);
        let shifted = cpu::row_sum(1, &cols, &long, &x, 32);
        let by_lanes = |shift: usize| {
            let mut p = [0.0f64; 32];
            for (k, v) in long.iter().enumerate() {
                p[(k + shift) % 32] += v;
            }
            let mut o = 16;
            while o > 0 {
                for l in 0..o {
                    p[l] += p[l + o];
                }
                o /= 2;
            }
            p[0]
        };
        assert_eq!(aligned, by_lanes(0));
        assert_eq!(shifted, by_lanes(1));
    }

    #[test]
    fn every_width_is_correct_and_bad_widths_are_refused() {
        let a = crate::io::gen::generate("powerlaw:n=5000,mean=6,exp=2.1").unwrap();
        for lanes in [2, 4, 8, 16, 32] {
            assert!(check(&LightSpmv::with_lanes(&a, lanes).unwrap(), &a), "{lanes} lanes");
            let a32: Csr<f32> = a.cast();
            assert!(check(&LightSpmv::with_lanes(&a32, lanes).unwrap(), &a32), "{lanes} lanes f32");
        }
        for lanes in [0, 1, 3, 64] {
            assert!(matches!(LightSpmv::with_lanes(&a, lanes), Err(Error::Format { .. })), "{lanes}");
        }
    }

    #[test]
    fn cpu_result_does_not_depend_on_the_thread_count() {
        let a = crate::io::gen::generate("powerlaw:n=20000,mean=12,exp=1.9").unwrap();
        let f = LightSpmv::new(&a).unwrap();
        let x = test_vector::<f64>(a.ncols());
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut y = vec![f64::NAN; a.nrows()];
            pool.install(|| f.spmv_cpu(&x, &mut y));
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        let one = run(1);
        assert_eq!(run(3), one);
        assert_eq!(run(8), one);
    }

    /// LightSpMV on the GPU `runs` times into NaN-poisoned outputs: each against the oracle,
    /// and the bits of every run against the first.
    fn gpu_runs<T: Scalar>(gpu: &Arc<Gpu>, a: &Csr<f64>, lanes: u32, runs: usize) -> Result<(bool, bool)> {
        let a: Csr<T> = a.cast();
        let x = test_vector::<T>(a.ncols());
        let oracle = Oracle::new(&a, &x);
        let spec = crate::formats::parse_spec(&format!("{NAME}:lanes={lanes}"))?;
        let device = crate::formats::build(&spec, &a)?.upload(gpu)?;
        let x_dev = gpu.upload(&x)?;
        let mut y_dev = gpu.alloc::<T>(a.nrows())?;
        let (mut all_pass, mut identical, mut first) = (true, true, None::<Vec<u64>>);
        for _ in 0..runs {
            gpu.fill(&mut y_dev, T::nan())?;
            device.spmv(&x_dev, &mut y_dev)?;
            let y = gpu.download(&y_dev)?;
            all_pass &= oracle.check(&y).passed();
            let bits: Vec<u64> = y.iter().map(|v| v.to_f64().to_bits()).collect();
            match &first {
                None => first = Some(bits),
                Some(f) => identical &= *f == bits,
            }
        }
        Ok((all_pass, identical))
    }

    #[test]
    #[ignore = "needs a CUDA device"]
    fn gpu_matches_the_oracle_for_every_width_and_is_bit_identical_across_runs() {
        let gpu = Gpu::detect().unwrap_or_else(|e| panic!("this test needs a CUDA device: {e}"));
        let mut failures = Vec::new();
        for spec in
            ["powerlaw:n=300000,mean=8,exp=2.1", "longrows:n=100000,short=4,count=3,long=50000", "kron:scale=16"]
        {
            let a = crate::io::gen::generate(spec).unwrap();
            for lanes in [2, 4, 8, 16, 32] {
                for (precision, outcome) in
                    [("f64", gpu_runs::<f64>(&gpu, &a, lanes, 5)), ("f32", gpu_runs::<f32>(&gpu, &a, lanes, 5))]
                {
                    if !matches!(outcome, Ok((true, true))) {
                        failures.push(format!("{spec}, {lanes} lanes, {precision}: (oracle, identical) = {outcome:?}"));
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn random_matrices_and_widths_match_the_oracle(a in random_csr(), width in 1u32..6) {
            let lanes = 1 << width;
            prop_assert!(check(&LightSpmv::with_lanes(&a, lanes).unwrap(), &a));
            let a32: Csr<f32> = a.cast();
            prop_assert!(check(&LightSpmv::with_lanes(&a32, lanes).unwrap(), &a32));
            let f = LightSpmv::new(&a).unwrap();
            prop_assert_eq!(f.lanes(), crate::formats::csr::vector_lanes(a.mean_row_len()));
            prop_assert!(check(&f, &a));
        }
    }
}
