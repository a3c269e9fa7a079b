//! Lossless compression (`values=…`, `cols=delta16`, formats/values): every format that takes
//! the parameters gives, with every codec the matrix qualifies for, the same bits as with
//! `values=full` — on the CPU here, on the GPU with `--include-ignored` — and declines the
//! codecs it does not qualify for with the reason. The matrices are the edge cases, generated
//! ones and (on the GPU) every shared matrix, each also with its values replaced so that
//! every codec is exercised: a pattern, small integers, a few distinct floats, values exact in
//! half and in single precision.

use crate::common;

use std::sync::Arc;

use spmv::formats::values::VALUE_CHOICES;
use spmv::formats::{build, parse_spec, registry};
use spmv::gpu::Gpu;
use spmv::reference::test_vector;
use spmv::{Csr, Error, Scalar};

/// The registered formats with a `values` parameter.
fn coded_formats() -> Vec<&'static str> {
    let names = common::formats_with_param("values");
    assert!(names.contains(&"csr-vector"), "{names:?}");
    names
}

/// `a` and copies of it with values that qualify for each codec.
fn value_variants(name: &str, a: &Csr<f64>) -> Vec<(String, Csr<f64>)> {
    let with = |f: fn(usize, f64) -> f64| {
        let values = a.values().iter().enumerate().map(|(i, &v)| f(i, v)).collect();
        Csr::new_checked(a.nrows(), a.ncols(), a.row_ptr().to_vec(), a.col_idx().to_vec(), values)
            .unwrap()
    };
    vec![
        (name.to_string(), a.clone()),
        (format!("{name} (pattern 1.5)"), with(|_, _| 1.5)),
        (format!("{name} (integers)"), with(|i, _| ((i * 37) % 255) as f64 - 127.0)),
        (format!("{name} (few floats)"), with(|i, _| [0.1, -2.7, 1e-5, 3.3][i % 4])),
        (format!("{name} (halves)"), with(|i, _| ((i * 13) % 4000) as f64 / 8.0 - 250.0)),
        (format!("{name} (singles)"), with(|_, v| f64::from(v as f32))),
    ]
}

fn matrices(shared: bool) -> Vec<(String, Csr<f64>)> {
    let mut base = common::edge_cases();
    for spec in ["poisson3d:n=20", "kron:scale=12", "powerlaw:n=20000,mean=8,exp=2.1"] {
        base.push((spec.to_string(), spmv::io::gen::generate(spec).unwrap()));
    }
    let mut all: Vec<(String, Csr<f64>)> =
        base.iter().flat_map(|(n, a)| value_variants(n, a)).collect();
    // The shared matrices with their own values: each qualifies for the codecs it qualifies
    // for (the generated variants above exercise every codec).
    if shared {
        all.extend(common::shared_matrices().iter().cloned());
    }
    all
}

/// Runs `spec` on `a` (CPU, or the GPU when given): y bits, or `None` when the format
/// declines the matrix (a codec it does not qualify for, or a size it cannot hold).
fn run<T: Scalar>(
    gpu: Option<&Arc<Gpu>>, a: &Csr<T>, spec: &str,
) -> Result<Option<Vec<u64>>, String> {
    let host = match build(&parse_spec(spec).unwrap(), a) {
        Ok(h) => h,
        Err(Error::Format { .. }) => return Ok(None),
        Err(e) => return Err(format!("{spec}: {e}")),
    };
    let x = test_vector::<T>(a.ncols());
    let y = match gpu {
        None => {
            let mut y = vec![T::nan(); a.nrows()];
            host.spmv(&x, &mut y).map_err(|e| e.to_string())?;
            y
        }
        // Matrices without rows have nothing to run on the device.
        Some(_) if a.nrows() == 0 => return Ok(None),
        Some(gpu) => common::gpu_product(gpu, &host, &x).map_err(|e| format!("{spec}: {e}"))?,
    };
    Ok(Some(y.iter().map(|v| v.to_f64().to_bits()).collect()))
}

/// The (format, codec) pairs a check has seen give the bits of `values=full`.
type Exercised = std::collections::HashSet<(&'static str, &'static str)>;

/// Every codec of every coded format on every matrix: the bits of `values=full`.
fn check<T: Scalar>(gpu: Option<&Arc<Gpu>>, matrices: &[(String, Csr<f64>)]) -> Vec<String> {
    // The matrices are shared out among a few threads (one GPU stream, the products queue
    // on it): the host's conversions and copies dominate.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let parts: Vec<(Vec<String>, Exercised)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let (mut failures, mut exercised) =
                        (Vec::new(), std::collections::HashSet::new());
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((name, a)) = matrices.get(i) else { break };
                        check_matrix::<T>(gpu, name, &a.cast(), &mut failures, &mut exercised);
                    }
                    (failures, exercised)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut failures = Vec::new();
    let mut exercised = std::collections::HashSet::new();
    for (f, e) in parts {
        failures.extend(f);
        exercised.extend(e);
    }
    if !exercised.contains(&("csr-vector", "delta16")) {
        failures.push(format!("csr-vector:cols=delta16 {} was never exercised", T::SUFFIX));
    }
    for format in coded_formats() {
        for codec in VALUE_CHOICES {
            let applies = !matches!(
                (*codec, T::SUFFIX),
                ("f32", "f32" | "f16") | ("f16", "f16") | ("full", _)
            );
            if applies && !exercised.contains(&(format, *codec)) {
                failures.push(format!("{format}:values={codec} {} was never exercised", T::SUFFIX));
            }
        }
    }
    failures
}

/// Every coded variant of every coded format on one matrix, against its values=full product.
fn check_matrix<T: Scalar>(
    gpu: Option<&Arc<Gpu>>, name: &str, a: &Csr<T>, failures: &mut Vec<String>,
    exercised: &mut Exercised,
) {
    for format in coded_formats() {
        let full = match run(gpu, a, &format!("{format}:values=full")) {
            Ok(Some(y)) => y,
            Ok(None) => continue,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let has_cols = registry::<f64>()
            .iter()
            .any(|f| f.name == format && f.params.iter().any(|p| p.key == "cols"));
        let specs = VALUE_CHOICES
            .iter()
            .filter(|c| **c != "full")
            .map(|c| (format!("{format}:values={c}"), *c))
            .chain(
                VALUE_CHOICES
                    .iter()
                    .filter(|_| has_cols)
                    .map(|c| (format!("{format}:values={c},cols=delta16"), "delta16")),
            );
        for (spec, codec) in specs {
            match run(gpu, a, &spec) {
                Ok(Some(y)) if y == full => {
                    exercised.insert((format, codec));
                }
                Ok(Some(_)) => {
                    failures.push(format!("{name} {}: {spec} differs from values=full", T::SUFFIX))
                }
                Ok(None) => {}
                Err(e) => failures.push(format!("{name} {}: {e}", T::SUFFIX)),
            }
        }
    }
}

#[test]
fn cpu_coded_values_give_the_bits_of_full_values() {
    let m = matrices(false);
    let mut failures = check::<f64>(None, &m);
    failures.extend(check::<f32>(None, &m));
    common::assert_clean(failures);
}

#[test]
fn a_codec_the_values_do_not_fit_is_declined_with_the_reason() {
    // A matrix every coded format holds (diagonal structure), with values no narrow codec fits.
    let p = spmv::io::gen::generate("poisson2d:n=40").unwrap();
    let values = (0..p.nnz()).map(|i| i as f64 * 0.37 + 0.01).collect();
    let a =
        Csr::new_checked(p.nrows(), p.ncols(), p.row_ptr().to_vec(), p.col_idx().to_vec(), values)
            .unwrap();
    for format in coded_formats() {
        for codec in ["pattern", "i8", "i16"] {
            let e = build::<f64>(&parse_spec(&format!("{format}:values={codec}")).unwrap(), &a)
                .unwrap_err();
            let text = e.to_string();
            assert!(
                matches!(e, Error::Format { .. })
                    && text.contains(format)
                    && text.contains(&format!("values={codec}: entry")),
                "{text}"
            );
        }
        let e = build::<f32>(&parse_spec(&format!("{format}:values=f32")).unwrap(), &a.cast())
            .unwrap_err();
        assert!(e.to_string().contains("nothing narrower than f32"), "{e}");
        // auto always builds and reports the bytes per value it chose.
        let f = build::<f64>(&parse_spec(&format!("{format}:values=auto")).unwrap(), &a).unwrap();
        assert!(
            f.stats().bytes
                <= build::<f64>(&parse_spec(format).unwrap(), &a).unwrap().stats().bytes
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_coded_values_give_the_bits_of_full_values() {
    let gpu = common::gpu();
    let m = matrices(true);
    let mut failures = check::<f64>(Some(&gpu), &m);
    failures.extend(check::<f32>(Some(&gpu), &m));
    common::assert_clean(failures);
}
