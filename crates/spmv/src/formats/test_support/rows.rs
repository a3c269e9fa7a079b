//! Shared test helpers of the formats (see mod.rs).
//!
//! The row family's (CSR, COO, ELL, HYB, JDS, SELL-C-σ, LightSpMV): the example matrix of
//! their module docs and its product, matrices built from row lengths or drawn at random
//! row by row, and the GPU check of a format spec against the oracle.

use std::sync::Arc;

use crate::error::Result;
use crate::formats::carry::Segment;
use crate::formats::test_support::small_csr;
use crate::formats::{build, parse_spec, SpmvFormat};
use crate::gpu::Gpu;
use crate::reference::{test_vector, Oracle};
use crate::{Coo, Csr, Scalar};

/// The example matrix drawn in the module docs of JDS, SELL-C-σ and LightSpMV (5 x 4,
/// 8 entries numbered 1..=8 in row order; row 1 is empty).
pub(crate) fn example() -> Csr<f64> {
    small_csr(
        (5, 4),
        &[0, 2, 2, 5, 6, 8],
        &[0, 2, 0, 1, 2, 1, 2, 3],
        &[1., 2., 3., 4., 5., 6., 7., 8.],
    )
}

/// The first 4 rows and 3 columns of [`example`], drawn in the module docs of COO, ELL and
/// HYB (6 entries).
pub(crate) fn example_4x3() -> Csr<f64> {
    small_csr((4, 3), &[0, 2, 2, 5, 6], &[0, 2, 0, 1, 2, 1], &[1., 2., 3., 4., 5., 6.])
}

/// Checks `f`'s CPU product of `a` ([`example`] or [`example_4x3`]): x = [1, 10, 100, 1000]
/// (cut to `a`'s columns) into a NaN-poisoned y gives [201, 0, 543, 60, 8700] (cut to its
/// rows), each entry's digits naming the entries summed.
#[track_caller]
pub(crate) fn assert_example_product(f: &dyn SpmvFormat<f64>, a: &Csr<f64>) {
    let x = &[1.0, 10.0, 100.0, 1000.0][..a.ncols()];
    let mut y = vec![f64::NAN; a.nrows()];
    f.spmv_cpu(x, &mut y);
    assert_eq!(y, [201.0, 0.0, 543.0, 60.0, 8700.0][..a.nrows()]);
}

/// Checks a split-row format (merge-csr, csr5) built from [`example`] with the tiles its
/// module doc draws: rows 2 and 4 continue into the next tile (`segments`), the product is
/// the example's, and a carry is added after the tile's head, in the doc's order:
/// y2 = tile_head[1] + carry of tile 0 = 5·x2 + (3·x0 + 4·x1).
#[track_caller]
pub(crate) fn assert_split_example(f: &dyn SpmvFormat<f64>, segments: &[Segment]) {
    assert_eq!(
        segments,
        &[Segment { row: 2, first: 0, end: 1 }, Segment { row: 4, first: 1, end: 2 }]
    );
    assert_example_product(f, &example());
    let x = [1e16, 1.0, -1e16, 0.5];
    let mut y = vec![f64::NAN; 5];
    f.spmv_cpu(&x, &mut y);
    assert_eq!(y[2], 5.0 * -1e16 + (3.0 * 1e16 + 4.0));
    assert_eq!(y[4], 0.0 + (7.0 * -1e16 + 8.0 * 0.5));
    assert_eq!(y[1], 0.0);
}

/// Whether `perm` holds each of `0..n` exactly once.
pub(crate) fn is_permutation(perm: &[u32], n: usize) -> bool {
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    sorted.iter().copied().eq(0..n as u32)
}

/// Row `r` holds `lens[r]` entries, in columns `0..lens[r]`, with the values `value(r, c)`.
pub(crate) fn rows_of_lengths(
    lens: &[usize], ncols: usize, value: impl Fn(usize, usize) -> f64,
) -> Csr<f64> {
    let mut row_ptr = vec![0];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for (r, &k) in lens.iter().enumerate() {
        for c in 0..k {
            cols.push(c as u32);
            vals.push(value(r, c));
        }
        row_ptr.push(cols.len());
    }
    Csr::new_checked(lens.len(), ncols, row_ptr, cols, vals).unwrap()
}

/// A deterministic pseudo-random source (a 64-bit linear congruential generator).
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    /// The next number, in `0..k`.
    pub(crate) fn below(&mut self, k: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % k
    }
}

/// `m` x `n` rows drawn from [`Lcg`]`(seed)`: row by row, its length from `row_len`, then
/// each entry's column (uniform in `0..n`, repeats summed) and value (in [-1, 1), exact in
/// f32).
pub(crate) fn random_rows(
    m: usize, n: usize, seed: u64, mut row_len: impl FnMut(&mut Lcg) -> u64,
) -> Csr<f64> {
    let mut rng = Lcg(seed);
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..m {
        for _ in 0..row_len(&mut rng) {
            rows.push(r as u32);
            cols.push(rng.below(n as u64) as u32);
            vals.push(rng.below(1 << 20) as f64 / (1 << 19) as f64 - 1.0);
        }
    }
    Coo::new_checked(m, n, rows, cols, vals).unwrap().to_csr()
}

/// The GPU the test runs on (panics without one: GPU tests are `#[ignore]`d).
pub(crate) fn gpu() -> Arc<Gpu> {
    Gpu::detect().unwrap_or_else(|e| panic!("this test needs a CUDA device: {e}"))
}

/// The format `spec` built from `a` in precision `T` and uploaded to `gpu`, run `runs` times
/// into NaN-poisoned outputs: whether every run passed the oracle, and whether every run
/// gave the bits of the first.
pub(crate) fn gpu_runs<T: Scalar>(
    gpu: &Arc<Gpu>, a: &Csr<f64>, spec: &str, runs: usize,
) -> Result<(bool, bool)> {
    let a: Csr<T> = a.cast();
    let x = test_vector::<T>(a.ncols());
    let oracle = Oracle::new(&a, &x);
    let device = build(&parse_spec(spec)?, &a)?.upload(gpu)?;
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

/// The format `spec` built from `a` in precision `T`, run `runs` times on `gpu` into
/// NaN-poisoned outputs, for formats whose CPU path reproduces the kernel's order of additions:
/// `None` when every run passes the oracle and equals the CPU path bit for bit, else what
/// differed. A matrix beyond `T`'s range is skipped (`None`).
pub(crate) fn gpu_equals_cpu_bits<T: Scalar>(
    gpu: &Arc<Gpu>, a: &Csr<f64>, spec: &str, runs: usize,
) -> Option<String> {
    let a: Csr<T> = a.cast();
    let x = test_vector::<T>(a.ncols());
    let oracle = Oracle::new(&a, &x);
    if oracle.range_error::<T>().is_some() {
        return None;
    }
    let label = format!("{spec} {}", T::SUFFIX);
    let host = build(&parse_spec(spec).unwrap(), &a).unwrap();
    let mut want = vec![T::nan(); a.nrows()];
    host.spmv(&x, &mut want).unwrap();
    let device = host.upload(gpu).unwrap();
    let x_dev = gpu.upload(&x).unwrap();
    let mut y_dev = gpu.alloc::<T>(a.nrows()).unwrap();
    for run in 0..runs {
        gpu.fill(&mut y_dev, T::nan()).unwrap();
        device.spmv(&x_dev, &mut y_dev).unwrap();
        let y = gpu.download(&y_dev).unwrap();
        let check = oracle.check(&y);
        if !check.passed() {
            return Some(format!("{label} run {run}: {check:?}"));
        }
        if let Some(i) =
            y.iter().zip(&want).position(|(g, c)| g.to_f64().to_bits() != c.to_f64().to_bits())
        {
            return Some(format!("{label} run {run}: row {i} GPU {} CPU {}", y[i], want[i]));
        }
    }
    None
}

/// The GPU cases of the formats that split rows between lanes and tiles (merge-csr, csr5): rows
/// of 0, 1, 2, 3 and 10^6 entries with empty rows between, rows that all cross tiles, a matrix
/// without entries, one long row, and skewed generated matrices.
pub(crate) fn split_row_cases() -> Vec<(&'static str, Csr<f64>)> {
    let mut lens = vec![0, 1, 0, 1_000_000, 1, 0, 3];
    lens.extend(std::iter::repeat_n(2, 5000));
    lens.extend(std::iter::repeat_n(0, 100));
    let generate = |spec| crate::io::gen::generate(spec).unwrap();
    vec![
        (
            "rows of 0, 1, 2, 3 and 10^6",
            rows_of_lengths(&lens, 1_000_000, |r, k| ((r * 7 + k) % 13) as f64 - 6.0),
        ),
        (
            "every row crosses tiles",
            rows_of_lengths(&[500; 300], 1000, |r, k| 1.0 + ((r + k) % 5) as f64),
        ),
        ("no entries", Csr::zeros(100, 100)),
        ("one row", rows_of_lengths(&[3000], 3000, |_, k| k as f64)),
        ("powerlaw", generate("powerlaw:n=300000,mean=8,exp=2.1")),
        ("longrows", generate("longrows:n=100000,short=4,count=3,long=50000")),
        ("kron", generate("kron:scale=16")),
    ]
}

/// A format that splits rows between lanes and tiles (merge-csr, csr5) with every `key=value`
/// of `values` on the GPU, in f64, f32 and f16, 3 runs each into NaN-poisoned outputs, on
/// every [`split_row_cases`] matrix: [`gpu_equals_cpu_bits`] (the oracle, bit for bit across
/// runs and against the CPU path).
pub(crate) fn assert_split_rows_gpu_equals_cpu_bits(format: &str, key: &str, values: &[usize]) {
    let gpu = gpu();
    let mut failures = Vec::new();
    for (name, a) in &split_row_cases() {
        for value in values {
            let spec = format!("{format}:{key}={value}");
            for failure in [
                gpu_equals_cpu_bits::<f64>(&gpu, a, &spec, 3),
                gpu_equals_cpu_bits::<f32>(&gpu, a, &spec, 3),
                gpu_equals_cpu_bits::<crate::f16>(&gpu, a, &spec, 3),
            ] {
                failures.extend(failure.map(|f| format!("{name}: {f}")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The tests every format that splits rows (merge-csr, csr5) runs, written into its `tests`
/// module (which names `NAME`, the helpers above, `$format::new(a, value)` and
/// `$format::with_lanes(a, value, lanes)`, `value` its parameter `$key`): the edge shapes with
/// every value of `values` and with `default`, rows crossing tiles of `tile.1` entries with
/// the value `tile.0`, the values `refused` refused, the CPU's bits independent of the thread
/// count, random matrices with values in `random` against the oracle with ordered segments,
/// and every value on the GPU in f64, f32 and f16 against the oracle and the CPU, bit for bit.
macro_rules! split_rows_tests {
    (
        format: $format:ident,
        key: $key:literal,
        values: $values:expr,
        default: $default:expr,
        tile: $tile:expr,
        refused: $refused:expr,
        random: $random:expr $(,)?
    ) => {
        #[test]
        fn edge_shapes_rows_of_every_length_and_rows_crossing_every_tile() {
            assert_split_rows_edge_shapes($format::new, $values, $default);
            assert_rows_cross_tiles($format::new, $format::new, |f| f.segments().len(), $tile);
        }

        #[test]
        fn bad_values_are_refused() {
            assert_values_refused($format::new, NAME, $key, $refused);
        }

        #[test]
        fn cpu_result_does_not_depend_on_the_thread_count() {
            assert_cpu_bits_independent_of_threads(|a| $format::new(a, $default));
        }

        #[test]
        #[ignore = "needs a CUDA device"]
        fn gpu_matches_the_oracle_and_the_cpu_bit_for_bit() {
            assert_split_rows_gpu_equals_cpu_bits(NAME, $key, $values);
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
            #[test]
            fn random_matrices_values_and_lanes_match_the_oracle(a in random_csr(), value in $random, lanes in 1usize..5) {
                let f = $format::with_lanes(&a, value, lanes).unwrap();
                prop_assert!(cpu_matches_oracle(&f, &a));
                let a32: Csr<f32> = a.cast();
                prop_assert!(cpu_matches_oracle(&$format::with_lanes(&a32, value, lanes).unwrap(), &a32));
                // Segments: consecutive tiles, each row once, rows increasing.
                for w in f.segments().windows(2) {
                    prop_assert!(w[0].row < w[1].row && w[0].end <= w[1].first);
                }
            }
        }
    };
}
pub(crate) use split_rows_tests;

/// `build(example, value)` refuses every value of `values` with an error that names the
/// parameter `key` and the `format`.
#[track_caller]
pub(crate) fn assert_values_refused<F>(
    build: impl Fn(&Csr<f64>, usize) -> Result<F>, format: &str, key: &str, values: &[usize],
) {
    let a = example();
    for &value in values {
        let e = build(&a, value).err().unwrap();
        assert!(e.to_string().contains(key) && e.to_string().contains(format), "{e}");
    }
}

/// The edge shapes of a format that splits rows (merge-csr, csr5), built by `build(a, param)`:
/// no rows, no entries and empty rows only with every param of `params`, then rows of 0, 1
/// and 10^6 entries with `param`, each against the oracle on the CPU.
pub(crate) fn assert_split_rows_edge_shapes<F: SpmvFormat<f64>>(
    build: impl Fn(&Csr<f64>, usize) -> Result<F>, params: &[usize], param: usize,
) {
    for a in [Csr::<f64>::zeros(0, 0), Csr::zeros(0, 5), Csr::zeros(7, 0), Csr::zeros(100, 100)] {
        for &p in params {
            assert!(super::cpu_matches_oracle(&build(&a, p).unwrap(), &a), "param {p}");
        }
    }
    let mut lens = vec![0, 1, 0, 0, 1_000_000, 1, 0, 3];
    lens.extend(std::iter::repeat_n(0, 500));
    let a = rows_of_lengths(&lens, 1_000_000, |r, k| ((r * 7 + k) % 13) as f64 - 6.0);
    assert!(super::cpu_matches_oracle(&build(&a, param).unwrap(), &a));
}

/// Rows of `tile + 1` entries, each crossing tile boundaries, in a format that splits rows
/// (merge-csr, csr5) whose tiles hold `tile` entries with `param`: at least one carry segment
/// per row but the last (`segments` counts them), and the oracle's product in f64 and f16.
pub(crate) fn assert_rows_cross_tiles<F: SpmvFormat<f64>, H: SpmvFormat<crate::f16>>(
    build: impl Fn(&Csr<f64>, usize) -> Result<F>,
    build16: impl Fn(&Csr<crate::f16>, usize) -> Result<H>, segments: impl Fn(&F) -> usize,
    (param, tile): (usize, usize),
) {
    let a = rows_of_lengths(&[tile + 1; 40], 200, |r, k| 1.0 + ((r + k) % 5) as f64);
    let f = build(&a, param).unwrap();
    assert!(segments(&f) >= 39, "{} segments", segments(&f));
    assert!(super::cpu_matches_oracle(&f, &a));
    let a16: Csr<crate::f16> = a.cast();
    assert!(super::cpu_matches_oracle(&build16(&a16, param).unwrap(), &a16));
}

/// The CPU path of the format `build` makes of a skewed generated matrix gives the same bits
/// on 1 thread as on 3.
pub(crate) fn assert_cpu_bits_independent_of_threads<F: SpmvFormat<f64>>(
    build: impl Fn(&Csr<f64>) -> Result<F>,
) {
    let a = crate::io::gen::generate("powerlaw:n=20000,mean=12,exp=1.9").unwrap();
    let f = build(&a).unwrap();
    let x = test_vector::<f64>(a.ncols());
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut y = vec![f64::NAN; a.nrows()];
        pool.install(|| f.spmv_cpu(&x, &mut y));
        y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    };
    assert_eq!(run(3), run(1));
}

/// [`gpu_runs`] of every spec in `specs` on `a`, in f64 and in f32: one line for each that
/// failed, erred or differed between runs.
pub(crate) fn gpu_failures(
    gpu: &Arc<Gpu>, a: &Csr<f64>, specs: &[String], runs: usize,
) -> Vec<String> {
    let mut failures = Vec::new();
    for spec in specs {
        for (precision, outcome) in [
            ("f64", gpu_runs::<f64>(gpu, a, spec, runs)),
            ("f32", gpu_runs::<f32>(gpu, a, spec, runs)),
        ] {
            if !matches!(outcome, Ok((true, true))) {
                failures.push(format!("{spec}, {precision}: (oracle, identical) = {outcome:?}"));
            }
        }
    }
    failures
}
