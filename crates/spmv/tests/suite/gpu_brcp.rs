//! BRCP on the GPU is bitwise identical run after run: 20 runs (over two uploads) of every
//! matrix with very long rows — rows spanning three and more blocks included — in f64 and
//! f32, each run into a NaN-poisoned `y` and checked against the oracle. BRC, whose atomics
//! make no such promise, is run the same way and its differing rows are printed (not
//! asserted: an order that happens to repeat is not an error). Run on a CUDA machine with
//! `--include-ignored`; the premise (such rows exist) is checked on the CPU too.

use crate::common;

use std::sync::Arc;

use spmv::formats::brc::Brc;
use spmv::formats::brcp::Brcp;
use spmv::formats::SpmvFormat;
use spmv::gpu::Gpu;
use spmv::reference::{test_vector, Oracle};
use spmv::{Csr, Scalar};

const RUNS: usize = 20;

/// Matrices with very long rows (power-law and Kronecker graphs, a few rows of 50 000 among
/// rows of 4) and one built so that at the default T most long rows start mid-block.
fn long_row_matrices() -> Vec<(String, Csr<f64>)> {
    let specs = [
        "powerlaw:n=200000,mean=8,exp=2.1",
        "powerlaw:n=100000,mean=20,exp=1.8,seed=3",
        "kron:scale=16",
        "longrows:n=100000,short=4,count=3,long=50000",
        "longrows:n=50000,short=2,count=40,long=3001,seed=5",
    ];
    let mut v: Vec<(String, Csr<f64>)> = specs
        .iter()
        .map(|spec| {
            (
                spec.to_string(),
                spmv::io::gen::generate(spec).unwrap_or_else(|e| panic!("{spec}: {e}")),
            )
        })
        .collect();
    // One row in 1600 has 2000 to 4000 entries, the rest 1 to 3: T = round(μ + σ) is about
    // 80, so a long row takes 25 to 50 slots of 80 entries and, starting anywhere in a block,
    // often spans three blocks.
    v.push((
        "sparse long rows 200000x200000".into(),
        common::random(200_000, 200_000, 41, |r, rnd| {
            if r % 1600 == 7 {
                2000 + rnd(2000) as usize
            } else {
                1 + rnd(3) as usize
            }
        }),
    ));
    v
}

/// Per matrix: the most blocks one row spans in BRCP, the rows spanning three or more, and
/// the most chunks (CUDA blocks) one BRCP block is cut into.
fn layout_figures(matrices: &[(String, Csr<f64>)]) -> Vec<(String, usize, usize, u32)> {
    matrices
        .iter()
        .map(|(name, a)| {
            let f = Brcp::new(a).unwrap();
            let three = f.spans().iter().filter(|s| s.last - s.first >= 2).count();
            (
                name.clone(),
                f.max_blocks_per_row(),
                three,
                f.tile_chunk().iter().max().map_or(0, |c| c + 1),
            )
        })
        .collect()
}

#[test]
fn the_matrices_have_rows_spanning_three_or_more_blocks_and_chunked_blocks() {
    let mut matrices = long_row_matrices();
    matrices.extend(common::edge_cases());
    let figures = layout_figures(&matrices);
    eprintln!(
        "(matrix, most blocks per row, rows over 3+ blocks, most chunks per block): {figures:?}"
    );
    assert!(figures.iter().filter(|f| f.1 >= 3).count() >= 3, "{figures:?}");
    assert!(figures.iter().map(|f| f.2).sum::<usize>() >= 20, "{figures:?}");
    // Blocks summed by several CUDA blocks (the last chunk to finish adds them up).
    assert!(figures.iter().filter(|f| f.3 >= 2).count() >= 2, "{figures:?}");
}

/// `RUNS` results of `format` on the GPU (half on each of two uploads), as bit patterns,
/// each checked against the oracle; returns the failures.
fn runs<T: Scalar>(
    gpu: &Arc<Gpu>, format: &dyn SpmvFormat<T>, a: &Csr<T>, label: &str,
) -> (Vec<Vec<u64>>, Vec<String>) {
    let x = test_vector::<T>(a.ncols());
    let oracle = Oracle::new(a, &x);
    let mut results = Vec::new();
    let mut failures = Vec::new();
    let mut go = || -> spmv::Result<()> {
        let x_dev = gpu.upload(&x)?;
        let mut y_dev = gpu.alloc::<T>(a.nrows())?;
        for _ in 0..2 {
            let device = format.upload(gpu)?;
            for _ in 0..RUNS / 2 {
                gpu.fill(&mut y_dev, T::nan())?;
                // SAFETY: the format's own launch: x and y have the matrix's lengths, nrows > 0
                // (empty matrices are skipped), the GPU of the upload, one thread.
                unsafe { device.launch(gpu, &x_dev, &mut y_dev) }?;
                let y = gpu.download(&y_dev)?;
                let check = oracle.check(&y);
                if !check.passed() {
                    failures.push(format!("{label} (run {}): {check:?}", results.len()));
                }
                results.push(y.iter().map(|v| v.to_f64().to_bits()).collect());
            }
        }
        Ok(())
    };
    if let Err(e) = go() {
        failures.push(format!("{label}: {e}"));
    }
    (results, failures)
}

/// Rows that differ between run 0 and any later run.
fn differing_rows(results: &[Vec<u64>]) -> usize {
    let Some(first) = results.first() else { return 0 };
    (0..first.len()).filter(|&r| results.iter().any(|y| y[r] != first[r])).count()
}

fn check<T: Scalar>(gpu: &Arc<Gpu>, name: &str, a64: &Csr<f64>) -> Vec<String> {
    let a: Csr<T> = a64.cast();
    let label = format!("{name} / brcp / {}", T::SUFFIX);
    let brcp = Brcp::new(&a).unwrap();
    if a.nrows() == 0 {
        return Vec::new(); // DeviceMatrix returns before any launch: nothing to repeat
    }
    let (results, mut failures) = runs(gpu, &brcp, &a, &label);
    if results.len() != RUNS && failures.is_empty() {
        failures.push(format!("{label}: {} runs instead of {RUNS}", results.len()));
    }
    let differ = differing_rows(&results);
    if differ > 0 {
        failures.push(format!("{label}: {differ} rows differ between runs"));
    }
    let (brc_results, brc_failures) =
        runs(gpu, &Brc::new(&a).unwrap(), &a, &format!("{name} / brc / {}", T::SUFFIX));
    eprintln!(
        "{name} {}: brcp {} runs, {differ} rows differ (max {} blocks per row, {} spans); brc {} rows differ",
        T::SUFFIX,
        results.len(),
        brcp.max_blocks_per_row(),
        brcp.spans().len(),
        differing_rows(&brc_results)
    );
    failures.extend(brc_failures);
    failures
}

#[test]
#[ignore = "needs a CUDA device"]
fn brcp_is_bit_identical_over_20_runs() {
    let gpu = Gpu::detect().unwrap_or_else(|e| panic!("this test needs a CUDA device: {e}"));
    let mut matrices = long_row_matrices();
    matrices.extend(common::edge_cases());
    let mut failures = Vec::new();
    for (name, a) in &matrices {
        failures.extend(check::<f64>(&gpu, name, a));
        failures.extend(check::<f32>(&gpu, name, a));
    }
    common::assert_clean(failures);
}
