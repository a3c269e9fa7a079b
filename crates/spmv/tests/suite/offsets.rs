//! 64-bit device offsets (formats/offsets.rs): every format with an `offsets` parameter gives,
//! with `offsets=64`, the same bits as with 32-bit offsets (cuSPARSE: within the oracle's
//! bound, its ALG1 not being bit-reproducible) — on the GPU with `--include-ignored`, on the
//! edge cases, generated matrices and every shared matrix, in f64, f32 and f16 — and with
//! α and β. On the CPU: the spec parameter, the byte counts, and `auto` keeping to the wide
//! formats from 2^31 entries on (a matrix that large cannot be built in CI; the refusal of
//! the other formats is tested in the library's unit tests).

use crate::common;

use std::sync::Arc;

use spmv::auto::{Features, Options};
use spmv::formats::offsets::WIDE_ENTRIES;
use spmv::formats::{build, is_wide, parse_spec, registry};
use spmv::gpu::Gpu;
use spmv::reference::{test_vector, Oracle};
use spmv::{Csr, Scalar};

/// The registered formats with an `offsets` parameter (the ones with 64-bit kernels).
fn wide_formats() -> Vec<&'static str> {
    let names = common::formats_with_param("offsets");
    for name in ["csr-scalar", "csr-vector", "merge-csr", "sell-c-sigma", "dasp", "cusparse-alg1"] {
        assert!(names.contains(&name), "{name} has no offsets parameter: {names:?}");
    }
    names
}

#[test]
fn offsets_is_a_parameter_of_the_wide_formats_and_shows_in_the_stats() {
    let a = spmv::io::gen::generate("poisson3d:n=12").unwrap();
    for name in wide_formats() {
        assert!(is_wide(name), "{name}");
        let narrow = build::<f64>(&parse_spec(&format!("{name}:offsets=32")).unwrap(), &a).unwrap();
        let wide = build::<f64>(&parse_spec(&format!("{name}:offsets=64")).unwrap(), &a).unwrap();
        let auto = build::<f64>(&parse_spec(name).unwrap(), &a).unwrap();
        let offset_bytes = |m: &spmv::HostMatrix<f64>| {
            m.stats().extra.iter().find(|(k, _)| k == "offset_bytes").map(|(_, v)| *v)
        };
        assert_eq!(
            (offset_bytes(&narrow), offset_bytes(&wide), offset_bytes(&auto)),
            (Some(4.0), Some(8.0), Some(4.0)),
            "{name}"
        );
        assert!(wide.stats().bytes > narrow.stats().bytes, "{name}");
        // The CPU path is the same code whatever the device width.
        let x = test_vector::<f64>(a.ncols());
        let (mut y32, mut y64) = (vec![f64::NAN; a.nrows()], vec![f64::NAN; a.nrows()]);
        narrow.spmv(&x, &mut y32).unwrap();
        wide.spmv(&x, &mut y64).unwrap();
        assert_eq!(y32, y64, "{name}");
    }
    for bad in ["csr-vector:offsets=16", "merge-csr:offsets=auto64"] {
        assert!(parse_spec(bad).unwrap_err().to_string().contains("offsets"), "{bad}");
    }
    assert!(parse_spec("ell:offsets=64").is_err(), "ell has no 64-bit kernels");
    // Coded values have 32-bit kernels only: declined with the reason (when the spec is read).
    let e = parse_spec("csr-vector:values=i8,offsets=64").unwrap_err().to_string();
    assert!(e.contains("32-bit row offsets only"), "{e}");
    // DASP's coded values too.
    let e = parse_spec("dasp:values=i8,offsets=64").unwrap_err().to_string();
    assert!(e.contains("format dasp") && e.contains("32-bit slot indices only"), "{e}");
}

#[test]
fn auto_ranks_only_wide_formats_from_two_to_the_31_entries() {
    let a = spmv::io::gen::generate("poisson3d:n=100").unwrap();
    let mut f = Features::of(&a, spmv::auto::TRAINING_L2_BYTES);
    let small = Options::default().rank::<f64>(&f);
    assert!(small.iter().any(|(name, _)| !is_wide(base(name))), "small matrices rank every format");
    // The same stencil on an 800³ grid: 512 times the rows and entries.
    let grow = 512.0;
    (f.rows, f.nnz, f.size_over_l2) = (f.rows * grow, f.nnz * grow, f.size_over_l2 * grow);
    assert!(f.nnz >= WIDE_ENTRIES as f64);
    let large = Options::default().rank::<f64>(&f);
    assert!(!large.is_empty());
    let narrow: Vec<&String> =
        large.iter().map(|(n, _)| n).filter(|n| !is_wide(base(n)) || library(n)).collect();
    assert!(narrow.is_empty(), "ranked without 64-bit offsets: {narrow:?}");
    // The 800³ Poisson grid (3.6e9 entries, 112x the largest training matrix) ranks as the
    // stencil it is: DIA with 1-byte values, 4.4x faster there than merge-csr (docs/scale.md).
    assert!(large[0].0.starts_with("dia"), "{large:?}");
}

fn base(spec: &str) -> &str {
    spec.split(':').next().unwrap_or(spec)
}

/// cuSPARSE's entries (the registry's `library_baseline`).
fn library(spec: &str) -> bool {
    spmv::formats::find::<f64>(base(spec)).is_ok_and(|f| f.library_baseline)
}

fn matrices() -> Vec<(String, Csr<f64>)> {
    common::with_generated(&[
        "poisson3d:n=20",
        "kron:scale=12",
        "powerlaw:n=20000,mean=8,exp=2.1",
        "longrows:n=20000,short=8,count=16,long=5000",
    ])
}

/// `y = alpha·A·x + beta·y0` on the GPU with `spec`, as bits; `None` when the format declines.
fn gpu_run<T: Scalar>(
    gpu: &Arc<Gpu>, a: &Csr<T>, spec: &str, alpha: T, beta: T,
) -> Result<Option<Vec<T>>, String> {
    let host = match build(&parse_spec(spec).unwrap(), a) {
        Ok(h) => h,
        Err(spmv::Error::Format { .. }) => return Ok(None),
        Err(e) => return Err(format!("{spec}: {e}")),
    };
    let run = || -> spmv::Result<Vec<T>> {
        let device = host.upload(gpu)?;
        let x = gpu.upload(&test_vector::<T>(a.ncols()))?;
        let mut y = gpu.upload(&common::start_vector::<T>(a.nrows()))?;
        device.apply(alpha, &x, beta, &mut y)?;
        gpu.download(&y)
    };
    run().map(Some).map_err(|e| format!("{spec}: {e}"))
}

fn check<T: Scalar>(gpu: &Arc<Gpu>, matrices: &[(String, Csr<f64>)]) -> Vec<String> {
    let half = |name: &str| registry::<f64>().iter().any(|f| f.name == name && f.half);
    let formats: Vec<&str> = wide_formats()
        .into_iter()
        .filter(|f| T::PRECISION != spmv::Precision::F16 || half(f))
        .collect();
    let mut failures = Vec::new();
    let mut exercised = 0;
    for (name, a) in matrices.iter().filter(|(_, a)| a.nrows() > 0) {
        let a: Csr<T> = a.cast();
        let x = test_vector::<T>(a.ncols());
        let oracle = Oracle::new(&a, &x);
        for format in &formats {
            for (alpha, beta) in [(T::ONE, T::ZERO), (T::from_f64(-2.5), T::ONE)] {
                let narrow = gpu_run(gpu, &a, &format!("{format}:offsets=32"), alpha, beta);
                let wide = gpu_run(gpu, &a, &format!("{format}:offsets=64"), alpha, beta);
                let bits = |y: &[T]| y.iter().map(|v| v.to_f64().to_bits()).collect::<Vec<_>>();
                match (narrow, wide) {
                    (Ok(Some(n)), Ok(Some(w))) if library(format) => {
                        let y0 = common::start_vector::<T>(a.nrows());
                        let c = oracle.check_scaled(alpha, beta, &y0, &w);
                        if !c.passed() {
                            failures.push(format!(
                                "{name} {} {format}:offsets=64 (α = {alpha:?}): {c:?}",
                                T::SUFFIX
                            ));
                        }
                        exercised += usize::from(n.len() == w.len());
                    }
                    (Ok(Some(n)), Ok(Some(w))) if bits(&n) == bits(&w) => exercised += 1,
                    (Ok(Some(_)), Ok(Some(_))) => failures.push(format!(
                        "{name} {} {format}: offsets=64 differs from offsets=32 (α = {alpha:?})",
                        T::SUFFIX
                    )),
                    (Ok(None), Ok(None)) => {}
                    // cuSPARSE refuses 64-bit indices in f16 (wrong sums measured on the H200).
                    (Ok(Some(_)), Ok(None))
                        if library(format) && T::PRECISION == spmv::Precision::F16 => {}
                    (n, w) => failures.push(format!(
                        "{name} {} {format}: offsets=32 {n:?}, offsets=64 {w:?}",
                        T::SUFFIX
                    )),
                }
            }
        }
    }
    if exercised == 0 {
        failures.push(format!("no product ran in {}", T::SUFFIX));
    }
    failures
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_wide_offsets_give_the_bits_of_32_bit_offsets() {
    let gpu = common::gpu();
    let sweeps = [check::<f64>, check::<f32>, check::<spmv::f16>];
    common::assert_clean(common::in_each_precision(&gpu, &matrices(), sweeps));
}
