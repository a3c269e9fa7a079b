//! Shared test helpers of the formats (see mod.rs).
//!
//! The diagonal family's (DIA, HDIA, HDC, DIA-Adaptive, DRM): a format with one test case's
//! parameters built in either precision ([`Case`]: a format spec such as `"hdia:hack_rows=7"`,
//! or DRM's launch plans), and the checks every format of the family runs on its cases: the
//! CPU product against the oracle in f64 and f32, the product of the family's example matrix,
//! matrices without entries, and the GPU against the oracle.

use std::fmt::Debug;
use std::sync::Arc;

use super::{cpu_matches_oracle, example_product};
pub(crate) use super::{example, random_diagonal_csr};
use crate::error::Result;
use crate::formats::{build, parse_spec, DeviceFormat, HostMatrix};
use crate::gpu::Gpu;
use crate::reference::{test_vector, Oracle};
use crate::{Csr, Scalar};

/// A format of the family with the parameters of one test case (its `Debug` names the case in
/// failure messages).
pub(crate) trait Case: Copy + Debug {
    /// The format of `a` in `T`.
    fn build<T: Scalar>(self, a: &Csr<T>) -> Result<HostMatrix<T>>;
    /// The format of `a` uploaded to `gpu` (DRM's cases also choose the launch plan).
    fn upload<T: Scalar>(self, gpu: &Arc<Gpu>, a: &Csr<T>) -> Result<Box<dyn DeviceFormat<T>>> {
        self.build(a)?.format().upload(gpu)
    }
}

/// A format spec is a case: the registered format with these parameters.
impl Case for &str {
    fn build<T: Scalar>(self, a: &Csr<T>) -> Result<HostMatrix<T>> {
        build(&parse_spec(self)?, a)
    }
}

/// The case's CPU product passes the oracle's check for `a` in f64 and for `a` cast to f32.
pub(crate) fn cpu_matches_in_both_precisions(case: impl Case, a: &Csr<f64>) -> bool {
    let a32: Csr<f32> = a.cast();
    cpu_matches_oracle(case.build(a).unwrap().format(), a)
        && cpu_matches_oracle(case.build(&a32).unwrap().format(), &a32)
}

/// Asserts that the case's CPU product of [`example`] on a NaN-poisoned output is exactly
/// [`example_product`]'s, in f64 and in f32 (exact in f32 too: in the order the family adds
/// a row's terms, its partial sums stay integers below 2^24 until the last term, so each row
/// rounds once, as its exact sum does).
#[track_caller]
pub(crate) fn assert_example_product(case: impl Case) {
    fn product<T: Scalar>(case: impl Case, x: &[f64]) -> Vec<T> {
        let f = case.build(&example().cast::<T>()).unwrap();
        let mut y = vec![T::nan(); 8];
        f.format().spmv_cpu(&x.iter().map(|&v| T::from_f64(v)).collect::<Vec<_>>(), &mut y);
        y
    }
    let (x, expect) = example_product();
    assert_eq!(product::<f64>(case, &x), expect, "{case:?}, f64");
    let expect32: Vec<f32> = expect.iter().map(|&v| v as f32).collect();
    assert_eq!(product::<f32>(case, &x), expect32, "{case:?}, f32");
}

/// Asserts that the case stores nothing for matrices without entries, empty or rectangular,
/// and that its CPU product still writes zeros over a NaN-poisoned output.
#[track_caller]
pub(crate) fn assert_empty_shapes_give_zeros(case: impl Case) {
    for (m, n) in [(0, 0), (0, 5), (5, 0), (40, 3), (3, 40)] {
        let f = case.build(&Csr::<f32>::zeros(m, n)).unwrap();
        assert_eq!(f.stats().stored, 0, "{case:?}, {m} x {n}");
        let mut y = vec![f32::NAN; m];
        f.format().spmv_cpu(&vec![1.0; n], &mut y);
        assert!(y.iter().all(|&v| v == 0.0), "{case:?}, {m} x {n}: {y:?}");
    }
}

/// Asserts that every case's GPU product of `a`, in f64 and in f32 on a NaN-poisoned output,
/// passes the oracle's check; the message lists every failure. Needs a CUDA device.
pub(crate) fn assert_gpu_matches_oracle<C: Case>(a: &Csr<f64>, cases: impl IntoIterator<Item = C>) {
    let gpu = Gpu::detect().unwrap_or_else(|e| panic!("this test needs a CUDA device: {e}"));
    let mut failures = Vec::new();
    for case in cases {
        for (precision, ok) in
            [("f64", gpu_passes::<f64>(&gpu, case, a)), ("f32", gpu_passes::<f32>(&gpu, case, a))]
        {
            if !matches!(ok, Ok(true)) {
                failures.push(format!("{case:?}, {precision}: {ok:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One launch of the case's format of `a` in `T`: whether it passes the oracle's check.
fn gpu_passes<T: Scalar>(gpu: &Arc<Gpu>, case: impl Case, a: &Csr<f64>) -> Result<bool> {
    let a: Csr<T> = a.cast();
    let x = test_vector::<T>(a.ncols());
    let device = case.upload(gpu, &a)?;
    let mut y = gpu.alloc::<T>(a.nrows())?;
    gpu.fill(&mut y, T::nan())?;
    // SAFETY: x and y have the matrix's lengths, the test matrices have rows, one thread.
    unsafe { device.launch(gpu, &gpu.upload(&x)?, &mut y) }?;
    Ok(Oracle::new(&a, &x).check(&gpu.download(&y)?).passed())
}
