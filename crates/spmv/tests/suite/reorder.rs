//! Reordered products (`crate::reorder`): every registered format, built on P·A·Pᵀ for RCM and
//! degree orderings of shuffled matrices, multiplies in the original order: y equals the
//! oracle of A (CPU here; GPU with `--include-ignored`).

use crate::common;

use std::sync::Arc;

use spmv::formats::registry;
use spmv::gpu::Gpu;
use spmv::reference::{test_vector, Oracle};
use spmv::reorder::{build_reordered, permutation, Permutation, Reordering};
use spmv::{Csr, Error, Scalar};

/// Square matrices with their rows and columns shuffled (so that reordering has work to do).
fn matrices() -> Vec<(String, Csr<f64>)> {
    let mut v: Vec<(String, Csr<f64>)> =
        common::edge_cases().into_iter().filter(|(_, a)| a.nrows() == a.ncols()).collect();
    for spec in ["poisson2d:n=50", "kron:scale=11", "powerlaw:n=8000,mean=8,exp=2.1"] {
        v.push((spec.to_string(), spmv::io::gen::generate(spec).unwrap()));
    }
    v.into_iter()
        .map(|(name, a)| {
            let n = a.nrows() as u64;
            let order: Vec<u32> = (0..n).map(|i| ((i * 7919 + 13) % n.max(1)) as u32).collect();
            // 7919 is prime: i ↦ 7919·i + 13 mod n is a bijection unless n is a multiple of it.
            let shuffled =
                Permutation::from_old_of_new(order).map_or(a.clone(), |p| p.apply(&a).unwrap());
            (format!("{name} (shuffled)"), shuffled)
        })
        .collect()
}

fn check<T: Scalar>(gpu: Option<&Arc<Gpu>>) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, a64) in matrices() {
        let a: Csr<T> = a64.cast();
        let x = test_vector::<T>(a.ncols());
        let oracle = Oracle::new(&a, &x);
        for method in [Reordering::Rcm, Reordering::Degree] {
            let perm = Arc::new(permutation(&a, method).unwrap());
            let permuted = perm.apply(&a).unwrap();
            for info in registry::<T>() {
                let label = format!("{name} / {}+{method} / {}", info.name, T::SUFFIX);
                let host =
                    match build_reordered(&info.default_spec().into(), &permuted, &perm, method) {
                        Ok(h) => h,
                        Err(Error::Format { .. }) => continue,
                        Err(e) => {
                            failures.push(format!("{label}: {e}"));
                            continue;
                        }
                    };
                let y = match gpu {
                    None => {
                        let mut y = vec![T::nan(); a.nrows()];
                        host.spmv(&x, &mut y).map(|_| y)
                    }
                    // Matrices without rows have nothing to run on the device.
                    Some(_) if a.nrows() == 0 => continue,
                    Some(gpu) => common::gpu_product(gpu, &host, &x),
                };
                match y.map(|y| oracle.check(&y)) {
                    Ok(check) if check.passed() => {}
                    Ok(check) => failures.push(format!("{label}: {check:?}")),
                    Err(e) => failures.push(format!("{label}: {e}")),
                }
            }
        }
    }
    failures
}

#[test]
fn cpu_reordered_formats_match_the_oracle_in_the_original_order() {
    let mut failures = check::<f64>(None);
    failures.extend(check::<f32>(None));
    common::assert_clean(failures);
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_reordered_formats_match_the_oracle_in_the_original_order() {
    let gpu = common::gpu();
    let mut failures = check::<f64>(Some(&gpu));
    failures.extend(check::<f32>(Some(&gpu)));
    common::assert_clean(failures);
}
