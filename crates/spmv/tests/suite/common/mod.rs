//! Matrices shared by the format tests: generated edge cases and the real matrices (the
//! shared set when present, else the repository's: see [`MatrixSet`]).
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use spmv::{Coo, Csr};

pub mod diagonal;

/// A small deterministic generator (tests must not depend on the library's generators).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn value(&mut self) -> f64 {
        // 20-bit fractions in [-2, 2): exact in f32.
        (self.below(1 << 22) as f64 - (1 << 21) as f64) / (1 << 20) as f64
    }
}

/// A random matrix whose row r has a length drawn by `len(r, rng)`.
pub fn random(
    nrows: usize, ncols: usize, seed: u64,
    mut len: impl FnMut(usize, &mut dyn FnMut(u64) -> u64) -> usize,
) -> Csr<f64> {
    let mut rng = Lcg(seed);
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..nrows {
        let k = len(r, &mut |n| rng.below(n.max(1)));
        for _ in 0..k.min(ncols) {
            rows.push(r as u32);
            cols.push(rng.below(ncols as u64) as u32);
            vals.push(rng.value());
        }
    }
    // Repeated positions are summed by to_csr: still a valid duplicate-free CSR.
    Coo::new_checked(nrows, ncols, rows, cols, vals).unwrap().to_csr()
}

fn dense_row(nrows: usize, ncols: usize, dense: usize) -> Csr<f64> {
    random(nrows, ncols, 7, |r, _| if r == dense { usize::MAX } else { 0 }).clone()
}

/// The generated edge cases every format must handle.
pub fn edge_cases() -> Vec<(String, Csr<f64>)> {
    let mut v: Vec<(String, Csr<f64>)> = vec![
        ("empty 0x0".into(), Csr::zeros(0, 0)),
        ("empty 0x7".into(), Csr::zeros(0, 7)),
        ("empty 7x0".into(), Csr::zeros(7, 0)),
        ("all-zero 50x40".into(), Csr::zeros(50, 40)),
        ("single entry".into(), Csr::new_checked(1, 1, vec![0, 1], vec![0], vec![2.5]).unwrap()),
        (
            "single entry in a corner of 300x200".into(),
            Csr::new_checked(300, 200, [vec![0; 300], vec![1]].concat(), vec![199], vec![-1.5])
                .unwrap(),
        ),
    ];
    // One dense row: a full row of ncols entries among empty ones.
    let mut full = vec![0usize; 101];
    for p in full.iter_mut().skip(51) {
        *p = 3000;
    }
    v.push((
        "one dense row 100x3000".into(),
        Csr::new_checked(
            100,
            3000,
            full,
            (0..3000).collect(),
            (0..3000).map(|i| (i % 17) as f64 - 8.0).collect(),
        )
        .unwrap(),
    ));
    v.push(("dense 1x5000".into(), dense_row(1, 5000, 0)));
    v.push(("dense 64x64".into(), random(64, 64, 3, |_, _| 64 * 4)));
    v.push((
        "empty rows 1000x1000".into(),
        random(1000, 1000, 11, |r, _| if r % 3 == 0 { 0 } else { 5 }),
    ));
    v.push(("tall 5000x30".into(), random(5000, 30, 13, |_, rnd| rnd(6) as usize)));
    v.push(("wide 30x5000".into(), random(30, 5000, 17, |_, rnd| rnd(400) as usize)));
    v.push((
        "one long row 20000x20000".into(),
        random(20000, 20000, 19, |r, rnd| if r == 777 { 20000 } else { rnd(4) as usize }),
    ));
    v.push((
        "varied rows 30000x30000".into(),
        random(30000, 30000, 23, |_, rnd| {
            let k = rnd(100);
            if k < 60 {
                rnd(4) as usize
            } else if k < 95 {
                rnd(40) as usize
            } else {
                rnd(1000) as usize
            }
        }),
    ));
    v.push(("warp-size rows 4096x4096".into(), random(4096, 4096, 29, |r, _| 32 + (r % 3) - 1)));
    v
}

/// The real matrices the tests sweep: the first of `$SPMV_MATRICES`, `../shared/matrices`
/// beside the checkout (the project's 317 SuiteSparse matrices) and the repository's own
/// (`data/matrices` and `data/matrices/small`), so that a fresh clone anywhere runs every
/// test. Which set ran is printed once per run.
pub struct MatrixSet {
    pub name: String,
    pub dirs: Vec<PathBuf>,
}

/// The repository's real matrices: the default bench set and the small ones kept for tests.
fn repository_dirs() -> Vec<PathBuf> {
    let data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/matrices"));
    vec![data.join("small"), data]
}

/// The set of real matrices this run uses (see [`MatrixSet`]).
pub fn matrix_set() -> &'static MatrixSet {
    static SET: OnceLock<MatrixSet> = OnceLock::new();
    SET.get_or_init(|| {
        let shared =
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/matrices"));
        let set = if let Some(dir) = std::env::var_os("SPMV_MATRICES") {
            let dir = PathBuf::from(dir);
            assert!(dir.is_dir(), "SPMV_MATRICES={} is not a folder", dir.display());
            MatrixSet { name: format!("$SPMV_MATRICES ({})", dir.display()), dirs: vec![dir] }
        } else if shared.is_dir() {
            MatrixSet { name: format!("the shared set ({})", shared.display()), dirs: vec![shared] }
        } else {
            MatrixSet {
                name: "the repository's (data/matrices; ../shared/matrices is absent)".into(),
                dirs: repository_dirs(),
            }
        };
        let count = set.dirs.iter().map(|d| matrix_files(d).len()).sum::<usize>();
        announce(&format!("real matrices: {count} from {}", set.name));
        set
    })
}

/// Says something once on the terminal, past the test harness's capture of `eprintln!`: what a
/// passing test ran on must be seen, not only a failing one's.
pub fn announce(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "note: {line}");
}

/// The `.mtx` and `.mtx.gz` files of a folder, sorted.
fn matrix_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_string_lossy().ends_with(".mtx.gz") || p.to_string_lossy().ends_with(".mtx")
        })
        .collect();
    files.sort();
    files
}

/// The matrix files of the run's set.
pub fn matrix_set_files() -> Vec<PathBuf> {
    matrix_set().dirs.iter().flat_map(|d| matrix_files(d)).collect()
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Every real matrix of the run's set (see [`matrix_set`]), loaded once in f64 and kept.
pub fn shared_matrices() -> &'static [(String, Csr<f64>)] {
    use rayon::prelude::*;
    static MATRICES: OnceLock<Vec<(String, Csr<f64>)>> = OnceLock::new();
    MATRICES.get_or_init(|| {
        let files = matrix_set_files();
        assert!(!files.is_empty(), "no matrices in {}", matrix_set().name);
        files
            .par_iter()
            .map(|p| {
                let a = spmv::io::read_matrix_market::<f64>(p)
                    .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                (file_name(p), a)
            })
            .collect()
    })
}

/// The file of the real matrix `name` (`name.mtx.gz` or `name.mtx`): from the run's set, else
/// from the repository's own matrices, else `None`.
pub fn named_matrix_file(name: &str) -> Option<PathBuf> {
    let set = matrix_set().dirs.iter();
    set.chain(repository_dirs().iter())
        .flat_map(|d| [d.join(format!("{name}.mtx.gz")), d.join(format!("{name}.mtx"))])
        .find(|p| p.is_file())
}

/// The real matrices named that are found (see [`named_matrix_file`]), in f64; the names not
/// found are said (`announce`), and those in `required` must be found (the repository ships them).
pub fn named_matrices(test: &str, names: &[&str], required: &[&str]) -> Vec<(String, Csr<f64>)> {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for &name in names {
        match named_matrix_file(name) {
            Some(p) => found.push((
                name.to_string(),
                spmv::io::read_matrix_market::<f64>(&p)
                    .unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            )),
            None => {
                assert!(!required.contains(&name), "{name} is missing from data/matrices/small");
                missing.push(name);
            }
        }
    }
    if !missing.is_empty() {
        announce(&format!(
            "{test}: skipped {} matrices not in {}: {}",
            missing.len(),
            matrix_set().name,
            missing.join(", ")
        ));
    }
    found
}

/// Every (α, β) with α, β ∈ {0, 1, −2.5}.
pub fn alpha_beta<T: spmv::Scalar>() -> Vec<(T, T)> {
    let v = [0.0, 1.0, -2.5].map(T::from_f64);
    v.iter().flat_map(|&a| v.iter().map(move |&b| (a, b))).collect()
}

/// `a` in T, or `None` where T cannot hold its product with the test vector (f16's range).
pub fn cast_if_fits<T: spmv::Scalar>(a: &spmv::Csr<f64>) -> Option<spmv::Csr<T>> {
    let a: spmv::Csr<T> = a.cast();
    let x = spmv::reference::test_vector::<T>(a.ncols());
    spmv::reference::Oracle::new(&a, &x).range_error::<T>().is_none().then_some(a)
}

/// A start vector y0 for y = α·A·x + β·y0: entries in [-1, 1), exact in f32, unlike x.
pub fn start_vector<T: spmv::Scalar>(n: usize) -> Vec<T> {
    (0..n).map(|i| T::from_f64(((i * 7919 + 13) % 2048) as f64 / 1024.0 - 1.0)).collect()
}

/// The first CUDA device; a GPU test without one fails and says why.
pub fn gpu() -> std::sync::Arc<spmv::gpu::Gpu> {
    spmv::gpu::Gpu::detect().unwrap_or_else(|e| panic!("this test needs a CUDA device: {e}"))
}

/// Fails with every failure listed, one per line.
pub fn assert_clean(failures: Vec<String>) {
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// The failures of `check::<T>(args…)` for T = f64, f32 and f16, together.
macro_rules! every_precision {
    ($check:ident($($arg:expr),* $(,)?)) => {{
        let mut failures = $check::<f64>($($arg),*);
        failures.extend($check::<f32>($($arg),*));
        failures.extend($check::<spmv::f16>($($arg),*));
        failures
    }};
}
pub(crate) use every_precision;

/// `y = A·x` on the GPU into a NaN-poisoned `y`: `host` uploaded, `x` copied over, `y` read
/// back (a matrix with rows; `x` may be empty: a zero-length buffer, as the shape check wants).
pub fn gpu_product<T: spmv::Scalar>(
    gpu: &std::sync::Arc<spmv::gpu::Gpu>, host: &spmv::HostMatrix<T>, x: &[T],
) -> spmv::Result<Vec<T>> {
    use spmv::FormatHandle;
    let device = host.upload(gpu)?;
    let x_dev = gpu.upload(x)?;
    let mut y_dev = gpu.alloc::<T>(host.nrows())?;
    gpu.fill(&mut y_dev, T::nan())?;
    device.spmv(&x_dev, &mut y_dev)?;
    gpu.download(&y_dev)
}

/// `spec` built from `a` and uploaded to `gpu`; `None` when the format declines the matrix
/// (its unit tests check its limits), any other error pushed onto `failures` under `label`.
pub fn upload_spec<T: spmv::Scalar>(
    gpu: &std::sync::Arc<spmv::gpu::Gpu>, spec: &str, a: &Csr<T>, label: &str,
    failures: &mut Vec<String>,
) -> Option<spmv::DeviceMatrix<T>> {
    match spmv::formats::build(&spmv::formats::parse_spec(spec).unwrap(), a)
        .and_then(|h| h.upload(gpu))
    {
        Ok(d) => Some(d),
        Err(spmv::Error::Format { .. }) => None,
        Err(e) => {
            failures.push(format!("{label}: {e}"));
            None
        }
    }
}

/// A with its entries' values replaced by `f(row, col, value)`.
pub fn with_values(a: &Csr<f64>, f: impl Fn(usize, usize, f64) -> f64) -> Csr<f64> {
    let mut values = Vec::with_capacity(a.nnz());
    for r in 0..a.nrows() {
        let (cols, vals) = a.row(r);
        values.extend(cols.iter().zip(vals).map(|(&c, &v)| f(r, c as usize, v)));
    }
    Csr::new_checked(a.nrows(), a.ncols(), a.row_ptr().to_vec(), a.col_idx().to_vec(), values)
        .unwrap()
}

/// The GPU's product as a host operator (upload x, multiply, download y): a host solver run
/// on it must give the GPU solver's bits.
pub fn device_product<T: spmv::Scalar>(
    d: &spmv::DeviceMatrix<T>,
) -> spmv::solve::FnOperator<impl Fn(&[T], &mut [T]) + Send + Sync + '_> {
    use spmv::FormatHandle;
    let apply = move |x: &[T], y: &mut [T]| {
        let gpu = d.gpu();
        let mut y_dev = gpu.alloc::<T>(y.len()).unwrap();
        d.spmv(&gpu.upload(x).unwrap(), &mut y_dev).unwrap();
        y.copy_from_slice(&gpu.download(&y_dev).unwrap());
    };
    spmv::solve::FnOperator { shape: (d.nrows(), d.ncols()), apply }
}

/// The edge cases, the matrices of the generator `specs` and every shared matrix: the set
/// the GPU sweeps of a subject run over.
pub fn with_generated(specs: &[&str]) -> Vec<(String, Csr<f64>)> {
    let mut all = edge_cases();
    for spec in specs {
        all.push((spec.to_string(), spmv::io::gen::generate(spec).unwrap()));
    }
    all.extend(shared_matrices().iter().cloned());
    all
}

/// The registered formats that take the parameter `key`.
pub fn formats_with_param(key: &str) -> Vec<&'static str> {
    spmv::formats::registry::<f64>()
        .into_iter()
        .filter(|f| f.params.iter().any(|p| p.key == key))
        .map(|f| f.name)
        .collect()
}

/// A GPU sweep over a set of matrices in one precision, returning its failures.
pub type Sweep = fn(&std::sync::Arc<spmv::gpu::Gpu>, &[(String, Csr<f64>)]) -> Vec<String>;

/// The failures of one sweep instantiated per precision (`[check::<f64>, check::<f32>,
/// check::<spmv::f16>]`), run in that order.
pub fn in_each_precision(
    gpu: &std::sync::Arc<spmv::gpu::Gpu>, matrices: &[(String, Csr<f64>)], sweeps: [Sweep; 3],
) -> Vec<String> {
    sweeps.iter().flat_map(|sweep| sweep(gpu, matrices)).collect()
}

/// A matrix of a sweep in precision T with what its products are checked against.
pub struct ProductCase<'a, T> {
    pub name: &'a str,
    pub a: Csr<T>,
    /// The test vector x.
    pub x: Vec<T>,
    /// The start vector y0 of y = α·A·x + β·y0.
    pub y0: Vec<T>,
    pub oracle: spmv::reference::Oracle,
}

/// Each of `matrices` cast to T with its x, y0 and oracle, less those beyond T's range (f16's:
/// the benchmark's "unsupported").
pub fn product_cases<T: spmv::Scalar>(
    matrices: &[(String, Csr<f64>)],
) -> impl Iterator<Item = ProductCase<'_, T>> {
    matrices.iter().filter_map(|(name, a64)| {
        let a: Csr<T> = a64.cast();
        let x = spmv::reference::test_vector::<T>(a.ncols());
        let y0 = start_vector::<T>(a.nrows());
        let oracle = spmv::reference::Oracle::new(&a, &x);
        oracle.range_error::<T>().is_none().then_some(ProductCase { name, a, x, y0, oracle })
    })
}
