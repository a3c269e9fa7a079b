use super::*;
use crate::formats::test_support::prelude::*;
use crate::formats::test_support::rows::*;
use crate::formats::DeviceFormat as _;
use crate::gpu::Gpu;

#[test]
fn worked_example() {
    let a = example();
    let f = Csr5::with_lanes(&a, 2, 2).unwrap();
    assert_eq!((f.row_map.as_slice(), f.empty_rows.as_slice()), (&[0, 2, 3, 4][..], &[1][..]));
    assert_eq!(f.tiles(), 3);
    assert_eq!(f.bits, [0b01, 0b01, 0b10, 0b01, 0b01, 0b00]);
    assert_eq!(f.tile_base, [0, 2, 4, 5]);
    assert_eq!(&f.col5[..4], &[0, 0, 2, 1]);
    assert_split_example(&f, f.segments());
    let s = Csr5::new(&a, 4).unwrap().stats();
    assert_eq!((s.nnz, s.stored), (8, 128));
    assert_eq!(s.extra[0], ("sigma".to_string(), 4.0));
}

#[test]
fn sigma_follows_the_mean_row_length() {
    use crate::matrix::Precision::{F32, F64};
    assert_eq!(auto_sigma(0.5, F64), 4);
    assert_eq!(auto_sigma(7.0, F64), 8);
    assert_eq!(auto_sigma(15.9, F64), 16);
    assert_eq!(auto_sigma(30.0, F64), 16);
    assert_eq!(auto_sigma(30.0, F32), 32);
    assert_eq!(auto_sigma(1000.0, F32), 32);
}

// Every σ, σ = 16 by default; tiles of 32 × σ = 4 entries.
split_rows_tests! {
    format: Csr5,
    key: "sigma",
    values: SIGMA_CHOICES,
    default: 16,
    tile: (4, 128),
    refused: &[0, 1, 2, 5, 64],
    random: 1usize..9,
}

#[test]
fn conversion_on_the_gpu_keeps_the_csr_and_counts_the_same_bytes() {
    let a = example();
    for sigma in [4, 16] {
        let host = Csr5::new(&a, sigma).unwrap();
        let deferred = Csr5OnGpu::new(&a, sigma).unwrap();
        // The segments (12 bytes each) are the device format's workspace once converted.
        assert_eq!(deferred.stats().bytes + 12 * host.segments().len(), host.device_bytes());
        assert_eq!(
            deferred.stats().extra,
            host.stats().extra.into_iter().filter(|(k, _)| k != "segments").collect::<Vec<_>>()
        );
        assert!(cpu_matches_oracle(&deferred, &a));
    }
    assert!(Csr5OnGpu::new(&a, 5).err().unwrap().to_string().contains("sigma"));
    let spec = crate::formats::parse_spec("csr5:convert=gpu").unwrap();
    assert_eq!(spec.label(), "csr5:convert=gpu");
    let bad = crate::formats::parse_spec("csr5:convert=disk")
        .and_then(|s| crate::formats::build::<f64>(&s, &a).map(|_| ()));
    assert!(bad.as_ref().is_err_and(|e| e.to_string().contains("convert")), "{bad:?}");
}

/// The conversion on the GPU gives the host conversion's arrays, bit for bit, for every σ
/// and precision, and its product the host CSR5's bits; its time is recorded.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_conversion_equals_the_host_conversion() {
    fn compare<T: Scalar>(gpu: &Gpu, name: &str, a: &Csr<f64>, sigma: usize) -> Option<String> {
        let a: Csr<T> = a.cast();
        let want = Csr5::new(&a, sigma).unwrap();
        let converted = convert::convert(gpu, &a, sigma);
        let (got, ms) = match converted.and_then(|d| Ok((d.download(gpu)?, d.conversion_ms()))) {
            Ok(got) => got,
            Err(e) => return Some(format!("{name} σ={sigma} {}: {e}", T::SUFFIX)),
        };
        let bits_of = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
        let same = [
            ("tile_base", got.tile_base == want.tile_base),
            ("bits", got.bits == want.bits),
            ("col5", got.col5 == want.col5),
            ("val5", bits_of(&got.val5) == bits_of(&want.val5)),
            ("row_map", got.row_map == want.row_map),
            ("empty_rows", got.empty_rows == want.empty_rows),
            ("conversion_ms", ms.is_some_and(|ms| ms >= 0.0)),
        ];
        let differ: Vec<&str> = same.iter().filter(|(_, ok)| !ok).map(|(what, _)| *what).collect();
        (!differ.is_empty())
            .then(|| format!("{name} σ={sigma} {}: {} differ", T::SUFFIX, differ.join(", ")))
    }
    let gpu = gpu();
    let mut cases = split_row_cases();
    cases.push(("worked example", example()));
    cases.push(("empty 0 x 0", Csr::zeros(0, 0)));
    cases.push((
        "only empty rows at the end",
        rows_of_lengths(&[3, 1, 0, 0, 0], 4, |r, k| (r + k) as f64),
    ));
    let mut failures = Vec::new();
    for (name, a) in &cases {
        for &sigma in SIGMA_CHOICES {
            failures.extend(compare::<f64>(&gpu, name, a, sigma));
            failures.extend(compare::<f32>(&gpu, name, a, sigma));
            failures.extend(compare::<crate::f16>(&gpu, name, a, sigma));
            let spec = format!("{NAME}:sigma={sigma},convert=gpu");
            failures.extend(
                gpu_equals_cpu_bits::<f64>(&gpu, a, &spec, 2).map(|f| format!("{name}: {f}")),
            );
            failures.extend(
                gpu_equals_cpu_bits::<f32>(&gpu, a, &spec, 2).map(|f| format!("{name}: {f}")),
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
