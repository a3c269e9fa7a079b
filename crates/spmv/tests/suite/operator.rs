//! The products every backend gives through `LinearOperator` beside A·x: Aᵀ·x and A·X for
//! blocks of k ∈ {1, 2, 3, 4, 7, 8, 16, 32} vectors, column- and row-major, with α, β ∈ {0, 1, −2.5},
//! against the oracle (of Aᵀ, and of each column), outputs poisoned with NaN where β = 0.
//! Every registered format on the edge cases in f64, f32 and f16, on the CPU and (ignored
//! here) one GPU; the distributed matrix over the GPUs there are.

use crate::common::{self, assert_clean, every_precision};

use spmv::formats::{registry, BlockPath};
use spmv::reference::{test_vector, Oracle};
use spmv::{Backend, Block, Csr, Error, Layout, LinearOperator, Matrix, Scalar};

const BLOCKS: [usize; 8] = [1, 2, 3, 4, 7, 8, 16, 32];

/// Column j of k column-major vectors of length n, from any layout.
fn column<T: Copy>(data: &[T], n: usize, k: usize, j: usize, layout: Layout) -> Vec<T> {
    match layout {
        Layout::ColMajor => data[j * n..(j + 1) * n].to_vec(),
        Layout::RowMajor => (0..n).map(|i| data[i * k + j]).collect(),
    }
}

/// k test vectors of length n in `layout` (each column its own, so that a mixed-up column shows).
fn block_of<T: Scalar>(n: usize, k: usize, layout: Layout) -> Vec<T> {
    let cols: Vec<Vec<T>> =
        (0..k).map(|j| test_vector::<T>(n + j).into_iter().skip(j).collect()).collect();
    (0..n * k)
        .map(|at| match layout {
            Layout::ColMajor => cols[at / n.max(1)][at % n.max(1)],
            Layout::RowMajor => cols[at % k][at / k],
        })
        .collect()
}

/// The bits of each entry, to compare results bitwise.
fn bits<T: Scalar>(v: &[T]) -> Vec<u64> {
    v.iter().map(|v| v.to_f64().to_bits()).collect()
}

/// The columns of a block product `y = α·A·X + β·y0` (X = `xb`, both in `block`'s layout) that
/// the oracle rejects, each as "column j: the check".
fn oracle_rejects<T: Scalar>(
    a: &Csr<T>, xb: &[T], (alpha, beta): (T, T), y0: &[T], y: &[T], block: Block,
) -> Vec<String> {
    let (m, n, Block { k, layout }) = (a.nrows(), a.ncols(), block);
    (0..k)
        .filter_map(|j| {
            let oracle = Oracle::new(a, &column(xb, n, k, j, layout));
            let (yj, y0j) = (column(y, m, k, j, layout), column(y0, m, k, j, layout));
            let check = oracle.check_scaled(alpha, beta, &y0j, &yj);
            (!check.passed()).then(|| format!("column {j}: {check:?}"))
        })
        .collect()
}

/// Aᵀ·x and the block products of `op` (on host vectors) checked against the oracle.
pub fn check_products<T: Scalar, Op: LinearOperator<T, Vector = [T]> + ?Sized>(
    label: &str, a: &Csr<T>, op: &Op,
) -> Vec<String> {
    let mut bad = Vec::new();
    let (m, n) = (a.nrows(), a.ncols());
    let at = a.transpose().unwrap();
    let x = test_vector::<T>(m);
    let oracle = Oracle::new(&at, &x);
    let y0 = common::start_vector::<T>(n);
    for (alpha, beta) in common::alpha_beta::<T>() {
        let mut y = if beta == T::ZERO { vec![T::nan(); n] } else { y0.clone() };
        match op.apply_transpose(alpha, &x, beta, &mut y) {
            Ok(()) => {
                let check = oracle.check_scaled(alpha, beta, &y0, &y);
                if !check.passed() {
                    bad.push(format!("{label}: Aᵀ·x (α = {alpha}, β = {beta}): {check:?}"));
                }
            }
            Err(e) => bad.push(format!("{label}: Aᵀ·x failed: {e}")),
        }
    }
    for k in BLOCKS {
        for layout in [Layout::ColMajor, Layout::RowMajor] {
            let xb = block_of::<T>(n, k, layout);
            let y0b = block_of::<T>(m, k, layout);
            for (alpha, beta) in [(T::ONE, T::ZERO), (T::from_f64(-2.5), T::ONE)] {
                let mut y = if beta == T::ZERO { vec![T::nan(); m * k] } else { y0b.clone() };
                if let Err(e) = op.apply_block(alpha, &xb, beta, &mut y, Block { k, layout }) {
                    bad.push(format!("{label}: A·X (k = {k}, {layout:?}) failed: {e}"));
                    continue;
                }
                let block = Block { k, layout };
                for reject in oracle_rejects(a, &xb, (alpha, beta), &y0b, &y, block) {
                    bad.push(format!(
                        "{label}: A·X (k = {k}, {layout:?}, α = {alpha}, β = {beta}), {reject}"
                    ));
                }
            }
        }
    }
    bad
}

/// Every format on `backend` over `matrices`, in T (formats in parallel).
fn check_backend<T: Scalar>(backend: &Backend, matrices: &[(String, Csr<f64>)]) -> Vec<String> {
    use rayon::prelude::*;
    matrices
        .par_iter()
        .flat_map_iter(|(name, a64)| {
            let a: Csr<T> = a64.cast();
            let x = test_vector::<T>(a.ncols());
            // Beyond f16's range: the benchmark's "unsupported".
            let fits = Oracle::new(&a, &x).range_error::<T>().is_none();
            let matrix = Matrix::from_csr(a.clone());
            let formats = if fits { registry::<T>() } else { Vec::new() };
            formats
                .into_par_iter()
                .flat_map_iter(|info| {
                    let label = format!("{name} / {} / {}", info.name, T::SUFFIX);
                    match matrix.to_device(backend, info.name) {
                        Ok(op) => check_products(&label, &a, &op),
                        Err(Error::Format { .. }) => Vec::new(), // a matrix it cannot hold
                        Err(e) => vec![format!("{label}: conversion failed: {e}")],
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_format_transposes_and_multiplies_blocks_on_the_cpu() {
    let cases = common::edge_cases();
    assert_clean(every_precision!(check_backend(&Backend::Cpu, &cases)));
}

#[test]
fn plain_csr_transposes_and_multiplies_blocks() {
    let failures: Vec<String> =
        common::edge_cases().iter().flat_map(|(name, a)| check_products(name, a, a)).collect();
    assert_clean(failures);
}

/// The CPU block product (`Csr::block_product`, behind every CPU handle's and plain CSR's
/// `apply_block` from 2 vectors on): for k ∈ {1, 2, 3, 4, 7, 8, 16, 32} in both layouts, with
/// four (α, β) pairs, column j has the bits of `Csr::apply(α, x_j, β, y_j)` (f64, f32, f16),
/// on the edge cases, a few shared matrices and a generated one large enough for rayon's
/// threads; β = 0 never reads the NaN-poisoned Y.
#[test]
fn cpu_block_product_gives_each_columns_single_product_bits() {
    fn run<T: Scalar>(cases: &[(String, Csr<f64>)]) -> Vec<String> {
        let mut bad = Vec::new();
        for (name, a64) in cases {
            let Some(a) = common::cast_if_fits::<T>(a64) else { continue };
            let (m, n) = (a.nrows(), a.ncols());
            let handle =
                Matrix::from_csr(a.clone()).to_device(&Backend::Cpu, "csr-vector").unwrap();
            for k in BLOCKS {
                for layout in [Layout::ColMajor, Layout::RowMajor] {
                    let (xb, y0) = (block_of::<T>(n, k, layout), block_of::<T>(m, k, layout));
                    let scalars = [(1.0, 0.0), (-2.5, 1.0), (0.0, -2.5), (1.0, 1.0)];
                    for (alpha, beta) in scalars.map(|(a, b)| (T::from_f64(a), T::from_f64(b))) {
                        let start =
                            if beta == T::ZERO { vec![T::nan(); m * k] } else { y0.clone() };
                        let (mut plain, mut through) = (start.clone(), start.clone());
                        let block = Block { k, layout };
                        a.apply_block(alpha, &xb, beta, &mut plain, block).unwrap();
                        handle.apply_block(alpha, &xb, beta, &mut through, block).unwrap();
                        for j in 0..k {
                            let mut single = column(&start, m, k, j, layout);
                            a.apply(alpha, &column(&xb, n, k, j, layout), beta, &mut single)
                                .unwrap();
                            for (what, y) in [("Csr", &plain), ("csr-vector on the CPU", &through)]
                            {
                                if bits(&column(y, m, k, j, layout)) != bits(&single) {
                                    bad.push(format!(
                                        "{name} / {what} / {} / k = {k} {layout:?} α = {alpha} β = {beta}: column {j} differs from A·x_j",
                                        T::SUFFIX
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        bad
    }
    let mut cases = common::edge_cases();
    let shared = ["bcsstk08", "cage9", "lund_a"];
    cases.extend(common::named_matrices("operator (CPU block product)", &shared, &[]));
    let large = "random:rows=6000,cols=5000,mean=6";
    cases.push((large.into(), spmv::io::gen::generate(large).unwrap()));
    assert_clean(every_precision!(run(&cases)));
}

#[test]
fn wrong_block_and_transpose_shapes_are_errors() {
    let a = Matrix::<f64>::generate("random:rows=30,cols=20,mean=3").unwrap();
    let op = a.to_device(&Backend::Cpu, "csr-vector").unwrap();
    let mut y = vec![0.0; 30 * 2];
    let e = op.apply_block(1.0, &[0.0; 20 * 3], 0.0, &mut y, Block::columns(2)).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");
    let e = op.apply_block(1.0, &[], 0.0, &mut [], Block::columns(0)).unwrap_err();
    assert!(e.to_string().contains("k must be at least 1"), "{e}");
    // A block of many empty vectors costs nothing (a matrix without rows has nothing to write).
    let empty = Matrix::<f64>::from_csr(Csr::zeros(0, 5)).to_device(&Backend::Cpu, "csr-vector");
    let empty = empty.unwrap();
    let start = std::time::Instant::now();
    empty.apply_block(1.0, &[0.0; 5], 0.0, &mut [], Block::columns(1)).unwrap();
    let k = 1usize << 40;
    assert!(empty.apply_block(1.0, &[], 0.0, &mut [], Block::columns(k)).is_err(), "X of 5·2^40");
    spmv::LinearOperator::apply_block(
        &Csr::<f64>::zeros(0, 0),
        1.0,
        &[],
        0.0,
        &mut [],
        Block::columns(k),
    )
    .unwrap();
    assert!(start.elapsed().as_secs() < 5, "2^40 empty columns took {:?}", start.elapsed());
    let e = op.apply_transpose(1.0, &[0.0; 20], 0.0, &mut [0.0; 30]).unwrap_err();
    assert!(e.to_string().contains("needs x of 30 and y of 20"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_every_format_transposes_and_multiplies_blocks() {
    let backend = Backend::Gpu(common::gpu());
    let mut cases = common::edge_cases();
    let small = ["bcsstk08", "cage7", "sherman1", "lund_a"];
    cases.extend(common::named_matrices("operator", &small, &small));
    assert_clean(every_precision!(check_backend(&backend, &cases)));
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_distributed_transposes_and_multiplies_blocks() {
    use spmv::distributed::DistributedMatrix;
    let gpus = crate::distributed::devices();
    let mut failures = Vec::new();
    for (name, a) in common::edge_cases().into_iter().filter(|(_, a)| a.nrows() == a.ncols()) {
        for spec in ["csr-vector", "sell-c-sigma", "auto"] {
            let label = format!("{name} / {spec} / {} parts", gpus.len().max(2));
            let parts: Vec<_> =
                (0..gpus.len().max(2)).map(|i| gpus[i % gpus.len()].clone()).collect();
            let d = DistributedMatrix::new(&a, &parts, &spmv::choice::Choice::parse(spec).unwrap());
            let d = match d {
                Ok(d) => d,
                Err(Error::Format { .. }) => continue,
                Err(e) => {
                    failures.push(format!("{label}: {e}"));
                    continue;
                }
            };
            let n = a.nrows();
            let x = test_vector::<f64>(n);
            let mut y = d.upload(&vec![f64::NAN; n], false).unwrap();
            d.apply_transpose(1.0, &d.upload(&x, true).unwrap(), 0.0, &mut y).unwrap();
            let check = Oracle::new(&a.transpose().unwrap(), &x).check(&d.download(&y).unwrap());
            if !check.passed() {
                failures.push(format!("{label}: Aᵀ·x: {check:?}"));
            }
            for k in BLOCKS {
                let layout = if k % 2 == 0 { Layout::RowMajor } else { Layout::ColMajor };
                let xb = block_of::<f64>(n, k, layout);
                let xd = d.upload_block(&xb, true, Block { k, layout }).unwrap();
                let mut yd = d.zeros(false, k).unwrap();
                d.apply_block(1.0, &xd, 0.0, &mut yd, Block::columns(k)).unwrap();
                let y = d.download_block(&yd, layout).unwrap();
                for j in 0..k {
                    let check = Oracle::new(&a, &column(&xb, n, k, j, layout))
                        .check(&column(&y, n, k, j, layout));
                    if !check.passed() {
                        failures.push(format!("{label}: A·X (k = {k}, column {j}): {check:?}"));
                    }
                }
            }
        }
    }
    assert_clean(failures);
}

/// The formats' own block kernels (block.cu of csr, sell, dia, hdc, dasp and merge-csr): for k ∈
/// {1, 2, 3, 4, 7, 8, 16, 32} in both layouts, with and without α, β, every column has the bits
/// of the single product A·x_j of the same format (CSR-scalar, CSR-vector at every lane count,
/// 64-bit offsets, SELL-C-σ, DIA over full and coded values, HDC, DASP over full and coded
/// values and with most rows long, merge-path CSR with its default and smallest tiles and
/// 64-bit offsets) — CSR-scalar's for CSR's row-major
/// blocks of 8 or more, whose lanes kernels sum each row in order; DASP and merge-csr on
/// balanced rows go to a csr-vector copy (`BlockPath::Copy`), whose bits those columns have;
/// unbalanced rows from k = 8 (CSR's row-major blocks, and DASP's and merge-csr's from 32) to
/// cuSPARSE's SpMM, whose columns the oracle checks; and each format's own kernels must run on
/// some case and k ≥ 2 (kron's rows) — f64, f32 and f16, on
/// the edge cases and shared matrices; the output is poisoned where β = 0. (CSR over coded values
/// has no block kernel: a csr-vector copy's, whose f16 sums meet α and β unrounded where the
/// coded single product rounds A·x to f16 first, or one product per column; checked against
/// the oracle with every format.)
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_block_kernels_give_each_columns_single_product_bits() {
    fn run<T: Scalar>(
        gpu: &std::sync::Arc<spmv::gpu::Gpu>, cases: &[(String, Csr<f64>)],
    ) -> Vec<String> {
        let specs = [
            "csr-scalar",
            "csr-vector:lanes=2",
            "csr-vector:lanes=8",
            "csr-vector:lanes=32",
            "csr-vector:offsets=64",
            "sell-c-sigma",
            "sell-c-sigma:c=8,offsets=64",
            "dia",
            "dia:values=auto",
            "hdc",
            "dasp",
            "dasp:values=auto",
            "dasp:max_len=8",
            "merge-csr",
            "merge-csr:items=3,offsets=64",
        ];
        let mut bad = Vec::new();
        // The specs built in this precision at least once, and those whose own kernels ran.
        let (mut built, mut own) =
            (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for (name, a64) in cases {
            let Some(a) = common::cast_if_fits::<T>(a64) else { continue };
            let (m, n) = (a.nrows(), a.ncols());
            // CSR's row-major blocks of 8 or more run its lanes kernels: CSR-scalar's order.
            let upload = |spec: &str| {
                spmv::formats::build(&spmv::formats::parse_spec(spec).unwrap(), &a)
                    .and_then(|h| h.upload(gpu))
                    .unwrap()
            };
            let scalar = upload("csr-scalar");
            // DASP and merge-csr leave balanced rows to a csr-vector copy (BlockPath::Copy).
            let vector = upload("csr-vector");
            for spec in specs {
                let Some(d) =
                    common::upload_spec(gpu, spec, &a, &format!("{name} / {spec}"), &mut bad)
                else {
                    continue;
                };
                built.insert(spec);
                for k in [1, 2, 3, 4, 7, 8, 16, 32] {
                    for layout in [Layout::ColMajor, Layout::RowMajor] {
                        let xb = block_of::<T>(n, k, layout);
                        let y0 = block_of::<T>(m, k, layout);
                        for (alpha, beta) in [(T::ONE, T::ZERO), (T::from_f64(-2.5), T::ONE)] {
                            let start =
                                if beta == T::ZERO { vec![T::nan(); m * k] } else { y0.clone() };
                            let mut y = gpu.upload(&start).unwrap();
                            let block = Block { k, layout };
                            if let Err(e) =
                                d.apply_block(alpha, &gpu.upload(&xb).unwrap(), beta, &mut y, block)
                            {
                                bad.push(format!("{name} / {spec} / k = {k} {layout:?}: {e}"));
                                continue;
                            }
                            let y = gpu.download(&y).unwrap();
                            let lanes = layout == Layout::RowMajor && k >= 8;
                            let csr = spec.starts_with("csr");
                            let single_of = match d.block_path(block) {
                                BlockPath::Own if lanes && csr => &scalar,
                                BlockPath::Own => {
                                    if k > 1 {
                                        own.insert(spec);
                                    }
                                    &d
                                }
                                BlockPath::Copy("csr-vector") if lanes => &scalar,
                                BlockPath::Copy("csr-vector") => &vector,
                                BlockPath::Copy("cusparse-alg1") => {
                                    // SpMM sums in its own order: the oracle checks it.
                                    let ab = (alpha, beta);
                                    for reject in oracle_rejects(&a, &xb, ab, &start, &y, block) {
                                        bad.push(format!(
                                            "{name} / {spec} / k = {k} {layout:?}: SpMM {reject}"
                                        ));
                                    }
                                    continue;
                                }
                                path => {
                                    bad.push(format!("{name} / {spec} / k = {k}: {path:?}"));
                                    continue;
                                }
                            };
                            for j in 0..k {
                                let xj = gpu.upload(&column(&xb, n, k, j, layout)).unwrap();
                                let mut yj = gpu.upload(&column(&start, m, k, j, layout)).unwrap();
                                single_of.apply(alpha, &xj, beta, &mut yj).unwrap();
                                let single = gpu.download(&yj).unwrap();
                                if bits(&column(&y, m, k, j, layout)) != bits(&single) {
                                    bad.push(format!(
                                        "{name} / {spec} / {} / k = {k} {layout:?} α = {alpha}: column {j} differs from A·x_j",
                                        T::SUFFIX
                                    ));
                                    break;
                                }
                            }
                        }
                    }
                }
            }
        }
        // Every format built in this precision (f16: not SELL, DIA, HDC or coded values) ran
        // its own kernels on a block somewhere (DASP's and merge-csr's on kron's rows from
        // k = 8: up to 7 vectors rows of at most 2048 entries count as balanced).
        for spec in built.iter().filter(|spec| !own.contains(*spec)) {
            bad.push(format!("{spec} / {}: its own block kernels never ran", T::SUFFIX));
        }
        bad
    }
    let gpu = common::gpu();
    let mut cases = common::edge_cases();
    let shared = ["bcsstk08", "cage9", "sherman1", "lund_a", "nos4"];
    cases.extend(common::named_matrices("operator (block kernel)", &shared, &[]));
    cases.push(("kron:scale=12".into(), spmv::io::gen::generate("kron:scale=12").unwrap()));
    assert_clean(every_precision!(run(&gpu, &cases)));
}

/// Row-major blocks whose X and Y do not start on 16 bytes (a view one element into an
/// allocation, as a CuPy or PyTorch array may be): the wide lanes kernels load 16 bytes at a
/// time, so the handle runs the other kernels there; every column gives the bits of the same
/// block product on aligned arrays (DIA, SELL-C-σ, CSR and HDC, f64 and f32, k ∈ {4, 8, 16, 32}),
/// or, where cuSPARSE's SpMM serves the block (CSR's unbalanced rows from k = 8), the oracle's.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_block_kernels_take_unaligned_blocks() {
    use cudarc::driver::DevicePtr as _;
    use std::mem::ManuallyDrop;
    fn run<T: Scalar>(
        gpu: &std::sync::Arc<spmv::gpu::Gpu>, cases: &[(String, Csr<f64>)],
    ) -> Vec<String> {
        let mut bad = Vec::new();
        // `data` uploaded one element into a fresh allocation, returned with it (kept alive
        // and freed by the caller) and as a view that never frees.
        let shifted = |data: &[T]| {
            let mut padded = vec![T::ZERO];
            padded.extend_from_slice(data);
            let whole = gpu.upload(&padded).unwrap();
            let (start, _) = whole.device_ptr(gpu.stream());
            let size = std::mem::size_of::<T>() as u64;
            // SAFETY: the view lies inside `whole`, which outlives it, and is never dropped.
            let view = unsafe { gpu.stream().upgrade_device_ptr::<T>(start + size, data.len()) };
            (whole, ManuallyDrop::new(view))
        };
        for (name, a64) in cases {
            let a: Csr<T> = a64.cast();
            let (m, n) = (a.nrows(), a.ncols());
            for spec in ["dia:values=auto", "sell-c-sigma", "csr-vector", "hdc"] {
                let Some(d) =
                    common::upload_spec(gpu, spec, &a, &format!("{name} / {spec}"), &mut bad)
                else {
                    continue;
                };
                for k in [4, 8, 16, 32] {
                    let block = Block { k, layout: Layout::RowMajor };
                    let (xb, y0) =
                        (block_of::<T>(n, k, block.layout), block_of::<T>(m, k, block.layout));
                    let alpha = T::from_f64(-2.5);
                    let mut y = gpu.upload(&y0).unwrap();
                    d.apply_block(alpha, &gpu.upload(&xb).unwrap(), T::ONE, &mut y, block).unwrap();
                    let aligned = gpu.download(&y).unwrap();
                    let (_x_whole, x) = shifted(&xb);
                    let (_y_whole, mut y) = shifted(&y0);
                    if let Err(e) = d.apply_block(alpha, &x, T::ONE, &mut y, block) {
                        bad.push(format!("{name} / {spec} / k = {k}: {e}"));
                        continue;
                    }
                    let unaligned = gpu.download(&y).unwrap();
                    if d.block_path(block) == BlockPath::Copy("cusparse-alg1") {
                        // cuSPARSE's SpMM picks its kernel by the arrays' alignment too, so
                        // its bits may differ: the oracle checks the unaligned product.
                        let ab = (alpha, T::ONE);
                        for reject in oracle_rejects(&a, &xb, ab, &y0, &unaligned, block) {
                            bad.push(format!("{name} / {spec} / k = {k}: SpMM {reject}"));
                        }
                    } else if bits(&unaligned) != bits(&aligned) {
                        bad.push(format!(
                            "{name} / {spec} / {} / k = {k}: unaligned differs",
                            T::SUFFIX
                        ));
                    }
                }
            }
        }
        bad
    }
    let gpu = common::gpu();
    let mut cases = common::edge_cases();
    cases.extend(common::named_matrices("operator (unaligned blocks)", &["bcsstk08", "nos4"], &[]));
    let mut bad = run::<f64>(&gpu, &cases);
    bad.extend(run::<f32>(&gpu, &cases));
    assert_clean(bad);
}

/// Aᵀ through each `TransposePath` of a GPU handle without a transposed kernel of its own:
/// `apply_transpose` with α, β ∈ {0, 1, −2.5} against the oracle of Aᵀ (y poisoned where β = 0)
/// and bitwise the same on a second run (the one-off path always, the copy where its format is
/// deterministic), on the edge cases and every shared matrix, f64 and f32;
/// `apply_transpose_block` (Aᵀ's block product) on the edge cases and a few shared matrices
/// for k ∈ {1, 3, 16}, both layouts. One handle per path (a copy once built serves `Copy` and
/// `Auto`, so the copy is checked on a handle that never built one before).
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_transposed_paths_match_the_oracle_and_repeat_bitwise() {
    use spmv::TransposePath;
    fn run<T: Scalar>(
        gpu: &std::sync::Arc<spmv::gpu::Gpu>, cases: &[(String, Csr<f64>)], blocks: bool,
    ) -> Vec<String> {
        let mut bad = Vec::new();
        for (name, a64) in cases {
            let a: Csr<T> = a64.cast();
            let (m, n) = (a.nrows(), a.ncols());
            let x = test_vector::<T>(m);
            let at = a.transpose().unwrap();
            let oracle = Oracle::new(&at, &x);
            if oracle.range_error::<T>().is_some() {
                continue;
            }
            for path in [TransposePath::Copy, TransposePath::OneOff] {
                let label = format!("{name} / {path} / {}", T::SUFFIX);
                let op = Matrix::from_csr(a.clone())
                    .to_device(&Backend::Gpu(gpu.clone()), "sell-c-sigma")
                    .unwrap();
                let d = op.device_matrix().unwrap();
                d.set_transpose_path(path);
                let y0 = common::start_vector::<T>(n);
                for (alpha, beta) in common::alpha_beta::<T>() {
                    let start = if beta == T::ZERO { vec![T::nan(); n] } else { y0.clone() };
                    let runs: Vec<Vec<T>> = (0..2)
                        .map(|_| {
                            let mut y = gpu.upload(&start).unwrap();
                            d.apply_transpose(alpha, &gpu.upload(&x).unwrap(), beta, &mut y)
                                .unwrap();
                            gpu.download(&y).unwrap()
                        })
                        .collect();
                    let check = oracle.check_scaled(alpha, beta, &y0, &runs[0]);
                    if !check.passed() {
                        bad.push(format!("{label}: Aᵀ·x (α = {alpha}, β = {beta}): {check:?}"));
                    }
                    // The one-off Aᵀ is csr-vector; the copy is in auto's format for Aᵀ,
                    // deterministic where that format is.
                    let repeatable = match d.transposed_format() {
                        Some(f) => spmv::choice::Choice::parse(f).unwrap().deterministic(),
                        None => true,
                    };
                    if repeatable && bits(&runs[0]) != bits(&runs[1]) {
                        bad.push(format!("{label}: Aᵀ·x differs from run to run"));
                    }
                }
                let kept = d.transposed_bytes().is_some();
                if kept != (path == TransposePath::Copy && n > 0) {
                    bad.push(format!("{label}: a copy of Aᵀ kept: {kept}"));
                }
                if !blocks {
                    continue;
                }
                for k in [1, 3, 16] {
                    for layout in [Layout::ColMajor, Layout::RowMajor] {
                        let xb = block_of::<T>(m, k, layout);
                        let mut y = gpu.upload(&vec![T::nan(); n * k]).unwrap();
                        let block = Block { k, layout };
                        let xd = gpu.upload(&xb).unwrap();
                        if let Err(e) = d.apply_transpose_block(T::ONE, &xd, T::ZERO, &mut y, block)
                        {
                            bad.push(format!("{label}: Aᵀ·X (k = {k}, {layout:?}) failed: {e}"));
                            continue;
                        }
                        let y = gpu.download(&y).unwrap();
                        for j in 0..k {
                            let check = Oracle::new(&at, &column(&xb, m, k, j, layout))
                                .check(&column(&y, n, k, j, layout));
                            if !check.passed() {
                                bad.push(format!(
                                    "{label}: Aᵀ·X (k = {k}, {layout:?}, column {j}): {check:?}"
                                ));
                            }
                        }
                    }
                }
            }
        }
        bad
    }
    let gpu = common::gpu();
    let mut small = common::edge_cases();
    small.extend(common::named_matrices("operator (Aᵀ)", &["bcsstk08", "cage9", "lund_a"], &[]));
    let mut failures = run::<f64>(&gpu, &small, true);
    failures.extend(run::<f32>(&gpu, &small, true));
    failures.extend(run::<f64>(&gpu, common::shared_matrices(), false));
    failures.extend(run::<f32>(&gpu, common::shared_matrices(), false));
    assert_clean(failures);
}
