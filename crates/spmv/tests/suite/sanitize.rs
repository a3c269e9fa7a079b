//! Every kernel of the project once, on small inputs, for `compute-sanitizer` (`lab/run
//! sanitize` runs this test under memcheck with leak checking, racecheck, initcheck and
//! synccheck): every registered format in f64, f32 and f16 (the product and α·A·x + β·y),
//! every value codec of the coded formats, the block products' kernels, CSR5's conversion on
//! the GPU, CG and BiCGSTAB, PageRank,
//! and a matrix split over parts with both halo exchanges and its CG. Small matrices keep the
//! tools' slowdown in bounds; the results are still checked, so a kernel that the tools slow
//! into a wrong answer fails here too.

use crate::common;

use std::sync::Arc;

use spmv::distributed::{DistributedMatrix, Exchange};
use spmv::formats::values::columns::COLUMN_CHOICES;
use spmv::formats::values::VALUE_CHOICES;
use spmv::formats::{build, parse_spec, registry};
use spmv::gpu::Gpu;
use spmv::reference::{test_vector, Oracle};
use spmv::solve::pagerank::{EdgeWeights, Settings, Transition};
use spmv::solve::{bicgstab, cg, gmres, minres, KrylovSettings};
use spmv::{Csr, Error, Scalar};

/// The edge cases that stay small, a real matrix and two generated ones.
fn matrices() -> Vec<(String, Csr<f64>)> {
    let mut all: Vec<(String, Csr<f64>)> =
        common::edge_cases().into_iter().filter(|(_, a)| a.nnz() <= 200_000).collect();
    let file = common::named_matrix_file("wiki-Vote").expect("data/matrices/wiki-Vote.mtx.gz");
    all.push(("wiki-Vote".into(), spmv::io::read_matrix_market(&file).unwrap()));
    for spec in ["poisson3d:n=12", "powerlaw:n=5000,mean=8,exp=2.1"] {
        all.push((spec.into(), spmv::io::gen::generate(spec).unwrap()));
    }
    all
}

/// The specs run on every matrix: each format's default, and each value codec and column
/// coding of the formats that take them (a codec the matrix does not fit is declined).
fn specs<T: Scalar>() -> Vec<String> {
    let mut specs = Vec::new();
    // `auto` and `tune` only choose among these (their kernels are run here already).
    for info in registry::<T>() {
        specs.push(info.name.to_string());
        let takes = |key: &str| info.params.iter().any(|p| p.key == key);
        if takes("values") {
            specs.extend(VALUE_CHOICES[1..].iter().map(|c| format!("{}:values={c}", info.name)));
        }
        if takes("cols") {
            specs.extend(COLUMN_CHOICES[1..].iter().map(|c| format!("{}:cols={c}", info.name)));
        }
    }
    specs
}

/// y = A·x into a NaN-poisoned y and y = −2.5·A·x + y0, each against the oracle.
fn products<T: Scalar>(gpu: &Arc<Gpu>, matrices: &[(String, Csr<f64>)]) -> Vec<String> {
    let mut failures = Vec::new();
    for common::ProductCase { name, a, x, y0, oracle } in common::product_cases::<T>(matrices) {
        for spec in specs::<T>() {
            let label = format!("{name} / {spec} / {}", T::SUFFIX);
            let host = match build(&parse_spec(&spec).unwrap(), &a) {
                Ok(h) => h,
                Err(Error::Format { .. }) => continue,
                Err(e) => {
                    failures.push(format!("{label}: {e}"));
                    continue;
                }
            };
            let mut run = || -> spmv::Result<()> {
                let device = host.upload(gpu)?;
                let x_dev = gpu.upload(&x)?;
                let mut y_dev = gpu.alloc::<T>(a.nrows())?;
                gpu.fill(&mut y_dev, T::nan())?;
                device.spmv(&x_dev, &mut y_dev)?;
                let check = oracle.check(&gpu.download(&y_dev)?);
                if !check.passed() {
                    failures.push(format!("{label}: {check:?}"));
                }
                let mut y_dev = gpu.upload(&y0)?;
                device.apply(T::from_f64(-2.5), &x_dev, T::ONE, &mut y_dev)?;
                let check =
                    oracle.check_scaled(T::from_f64(-2.5), T::ONE, &y0, &gpu.download(&y_dev)?);
                if !check.passed() {
                    failures.push(format!("{label} (α, β): {check:?}"));
                }
                Ok(())
            };
            if let Err(e) = run() {
                failures.push(format!("{label}: {e}"));
            }
        }
    }
    failures
}

/// The block kernels (A·X, common.cuh's tiles, lanes and wide lanes, and the copies' and the
/// transpose's kernels of formats without their own) for k ∈ {3, 4, 8, 32}, row-major and
/// column-major, into a NaN-poisoned Y, each column against the oracle, on the formats with
/// block kernels (DASP's and merge-path CSR's included) and one without (HYB).
fn blocks<T: Scalar>(gpu: &Arc<Gpu>, matrices: &[(String, Csr<f64>)]) -> Vec<String> {
    use spmv::{Block, Layout};
    let mut failures = Vec::new();
    let specs = [
        "csr-scalar",
        "csr-vector",
        "sell-c-sigma",
        "dia",
        "dia:values=auto",
        "hdc",
        "hyb",
        "dasp",
        "dasp:max_len=8",
        "merge-csr",
    ];
    for (name, a64) in matrices.iter().filter(|(_, a)| a.nnz() <= 20_000) {
        let Some(a) = common::cast_if_fits::<T>(a64) else { continue };
        let (m, n) = (a.nrows(), a.ncols());
        for spec in specs {
            let label = format!("{name} / {spec} / {}", T::SUFFIX);
            let Some(device) = common::upload_spec(gpu, spec, &a, &label, &mut failures) else {
                continue;
            };
            for (k, layout) in [3, 4, 8, 32]
                .map(|k| (k, Layout::RowMajor))
                .into_iter()
                .chain([(8, Layout::ColMajor)])
            {
                // Column j of X: the test vector turned by j places; X[i, j] at i·k + j (row-major).
                let column = |j: usize| -> Vec<T> {
                    let v = test_vector::<T>(n);
                    (0..n).map(|i| v[(i + j) % n.max(1)]).collect()
                };
                let at = |i: usize, j: usize, rows: usize| match layout {
                    Layout::RowMajor => i * k + j,
                    Layout::ColMajor => j * rows + i,
                };
                let mut x = vec![T::ZERO; n * k];
                for j in 0..k {
                    for (i, v) in column(j).into_iter().enumerate() {
                        x[at(i, j, n)] = v;
                    }
                }
                let run = || -> spmv::Result<Vec<T>> {
                    let mut y = gpu.upload(&vec![T::nan(); m * k])?;
                    device.apply_block(
                        T::ONE,
                        &gpu.upload(&x)?,
                        T::ZERO,
                        &mut y,
                        Block { k, layout },
                    )?;
                    gpu.download(&y)
                };
                match run() {
                    Ok(y) => {
                        for j in 0..k {
                            let yj: Vec<T> = (0..m).map(|i| y[at(i, j, m)]).collect();
                            let check = Oracle::new(&a, &column(j)).check(&yj);
                            if !check.passed() {
                                failures.push(format!(
                                    "{label} k = {k} {layout:?} column {j}: {check:?}"
                                ));
                                break;
                            }
                        }
                    }
                    Err(e) => failures.push(format!("{label} k = {k} {layout:?}: {e}")),
                }
            }
        }
    }
    failures
}

/// CG (with and without Jacobi), BiCGSTAB, MINRES and GMRES on the GPU, as CUDA graphs and
/// launch by launch, on a system of one block and one of several.
fn solvers<T: Scalar>(gpu: &Arc<Gpu>) -> Vec<String> {
    let mut failures = Vec::new();
    // 576 unknowns: a grid of one block (GMRES's fused step); 1600: several blocks. The
    // Laplacian's diagonal is raised by 4 (eigenvalues in (4, 12)), so that every method
    // converges in about 20 iterations: racecheck runs each launch slowly, and the kernels'
    // every path (GMRES's dots in more than two chunks of KR_GM_CHUNK, its restart) is still met.
    for (n, specs) in [(24, &["csr-vector", "dia", "sell-c-sigma"][..]), (40, &["csr-vector"][..])]
    {
        let (nrows, ncols, row_ptr, col_idx, mut values) =
            spmv::io::gen::generate(&format!("poisson2d:n={n}")).unwrap().into_parts();
        for row in 0..nrows {
            for k in row_ptr[row]..row_ptr[row + 1] {
                if col_idx[k] as usize == row {
                    values[k] += 4.0;
                }
            }
        }
        let a: Csr<T> = Csr::new_checked(nrows, ncols, row_ptr, col_idx, values).unwrap().cast();
        let b = vec![T::ONE; a.nrows()];
        let diagonal: Vec<T> = (0..a.nrows()).map(|_| T::from_f64(0.125)).collect();
        let tol = if T::PRECISION == spmv::Precision::F64 { 1e-10 } else { 1e-5 };
        for spec in specs {
            let device = build(&parse_spec(spec).unwrap(), &a).and_then(|h| h.upload(gpu)).unwrap();
            for graph in [true, false] {
                let s = KrylovSettings {
                    tol,
                    max_iter: 2000,
                    check_every: 5,
                    graph,
                    ..Default::default()
                };
                let outcomes = [
                    ("cg", cg(&device, &b, None, &s)),
                    ("cg jacobi", cg(&device, &b, Some(&diagonal), &s)),
                    ("bicgstab", bicgstab(&device, &b, Some(&diagonal), &s)),
                    ("minres", minres(&device, &b, Some(&diagonal), &s)),
                    ("gmres", gmres(&device, &b, None, &s)),
                    ("gmres jacobi", gmres(&device, &b, Some(&diagonal), &s)),
                ];
                for (method, outcome) in outcomes {
                    match outcome {
                        Ok(solution) if solution.converged() => {}
                        other => failures.push(format!(
                            "{spec} n={n}² {method} {} (graph {graph}): {other:?}",
                            T::SUFFIX
                        )),
                    }
                }
            }
        }
    }
    failures
}

/// PageRank on the GPU in two formats.
fn pagerank<T: Scalar>(gpu: &Arc<Gpu>) -> Vec<String> {
    let g = spmv::io::gen::generate("powerlaw:n=3000,mean=6,exp=2.1").unwrap();
    let t = Transition::new(&g, EdgeWeights::Pattern).unwrap();
    let settings = Settings { tol: 1e-6, ..Settings::default() };
    let mut failures = Vec::new();
    for spec in ["csr-vector", "brcp"] {
        let run = build(&parse_spec(spec).unwrap(), &t.matrix().cast::<T>())
            .and_then(|h| h.upload(gpu))
            .and_then(|d| spmv::solve::pagerank(&d, &t, &settings));
        match run {
            Ok(r) if r.converged => {}
            Ok(r) => failures.push(format!("pagerank {spec} {}: not converged: {r:?}", T::SUFFIX)),
            Err(e) => failures.push(format!("pagerank {spec} {}: {e}", T::SUFFIX)),
        }
    }
    failures
}

/// A matrix over three parts on this GPU (cut into boundary and interior pieces), the
/// product with both exchanges, and the distributed CG.
fn distributed<T: Scalar>(gpu: &Arc<Gpu>) -> Vec<String> {
    let a: Csr<T> = spmv::io::gen::generate("poisson3d:n=48").unwrap().cast();
    let x = test_vector::<T>(a.ncols());
    let oracle = Oracle::new(&a, &x);
    let gpus = vec![gpu.clone(); 3];
    let mut failures = Vec::new();
    for exchange in [Exchange::Peer, Exchange::Nccl] {
        let run = || -> spmv::Result<Vec<T>> {
            let mut d = DistributedMatrix::new(&a, &gpus, &parse_spec("csr-vector")?.into())?;
            d.set_exchange(exchange)?;
            let xd = d.upload(&x, true)?;
            let mut y = d.new_y()?;
            d.spmv(&xd, &mut y)?;
            d.download(&y)
        };
        match run() {
            Ok(y) if oracle.check(&y).passed() => {}
            Ok(y) => failures.push(format!("distributed {exchange:?}: {:?}", oracle.check(&y))),
            // A machine without NCCL runs the rest; the device runner requires it.
            Err(e)
                if exchange == Exchange::Nccl
                    && std::env::var_os("SPMV_REQUIRE_NCCL").is_none() =>
            {
                common::announce(&format!("sanitize: NCCL exchange not run: {e}"));
            }
            Err(e) => failures.push(format!("distributed {exchange:?}: {e}")),
        }
    }
    if T::PRECISION != spmv::Precision::F16 {
        let b = vec![T::ONE; a.nrows()];
        let s = KrylovSettings { tol: 1e-5, max_iter: 2000, ..KrylovSettings::default() };
        let solved = DistributedMatrix::new(&a, &gpus, &parse_spec("csr-vector").unwrap().into())
            .and_then(|d| spmv::solve::cg(&d, &b, None, &s));
        match solved {
            Ok(solution) if solution.converged() => {}
            other => failures.push(format!("distributed cg {}: {other:?}", T::SUFFIX)),
        }
    }
    failures
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_kernel_once_on_small_inputs() {
    let gpu = common::gpu();
    let matrices = matrices();
    let sweeps = [products::<f64>, products::<f32>, products::<spmv::f16>];
    let mut failures = common::in_each_precision(&gpu, &matrices, sweeps);
    // CSR5 converted on the GPU (the conversion's own kernels).
    for (name, a) in &matrices {
        let host = build(&parse_spec("csr5:convert=gpu").unwrap(), a).unwrap();
        let x = test_vector::<f64>(a.ncols());
        match common::gpu_product(&gpu, &host, &x) {
            Ok(y) if Oracle::new(a, &x).check(&y).passed() => {}
            other => failures.push(format!("{name} csr5:convert=gpu: {other:?}")),
        }
    }
    let blocks = [blocks::<f64>, blocks::<f32>, blocks::<spmv::f16>];
    failures.extend(common::in_each_precision(&gpu, &matrices, blocks));
    failures.extend(solvers::<f64>(&gpu));
    failures.extend(solvers::<f32>(&gpu));
    failures.extend(pagerank::<f64>(&gpu));
    failures.extend(pagerank::<f32>(&gpu));
    failures.extend(distributed::<f64>(&gpu));
    failures.extend(distributed::<f32>(&gpu));
    common::assert_clean(failures);
}
