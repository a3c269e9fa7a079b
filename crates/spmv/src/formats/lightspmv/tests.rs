use super::*;
use crate::formats::test_support::prelude::*;
use crate::formats::test_support::rows::*;

#[test]
fn worked_example() {
    let a = example();
    let f = LightSpmv::new(&a).unwrap();
    assert_eq!((f.lanes(), f.vectors_per_warp()), (2, 16));
    assert_example_product(&f, &a);
    let s = f.stats();
    assert_eq!((s.nnz, s.stored, s.padded_zeros(), s.max_row_len), (8, 8, 0, 3));
    assert_eq!(s.bytes, 4 * 6 + 12 * 8 + 4);
    assert_eq!(s.extra[0], ("lanes_per_vector".to_string(), 2.0));
    assert_eq!(s.extra[1], ("rows_per_warp_fetch".to_string(), 16.0));
}

#[test]
fn row_sum_follows_the_lane_order_of_the_kernel() {
    // Values whose sum depends on the order: 1e16 + 1 - 1e16 ... in f64.
    let vals = [1e16, 1.0, -1e16, 1.0, 3.0];
    let cols = [0u32, 1, 2, 3, 4];
    let x = [1.0; 5];
    // 2 lanes: lane 0 = (1e16 - 1e16) + 3 = 3, lane 1 = 1 + 1 = 2 -> 5.
    assert_eq!(cpu::row_sum(0, &cols, &vals, &x, 2), 5.0);
    // 4 lanes: lane 0 = 1e16 + 3 (rounds to 1e16 + 4), lane 1 = 1, lane 2 = -1e16, lane 3 = 1;
    // tree: (l0 + l2) + (l1 + l3) = 4 + 2.
    assert_eq!(cpu::row_sum(0, &cols, &vals, &x, 4), 6.0);
    // 32 lanes on a row longer than 32: entry k goes to lane (start + k) mod 32, so the
    // row's start (its alignment) changes the order, as in the kernel.
    let long: Vec<f64> = (0..40)
        .map(|k| match k {
            0 => 1e16,
            31 => -1e16,
            _ => 1.0,
        })
        .collect();
    let cols: Vec<u32> = (0..40).collect();
    let x = vec![1.0; 40];
    let aligned = cpu::row_sum(0, &cols, &long, &x, 32);
    let shifted = cpu::row_sum(1, &cols, &long, &x, 32);
    let by_lanes = |shift: usize| {
        let mut p = [0.0f64; 32];
        for (k, v) in long.iter().enumerate() {
            p[(k + shift) % 32] += v;
        }
        let mut o = 16;
        while o > 0 {
            for l in 0..o {
                p[l] += p[l + o];
            }
            o /= 2;
        }
        p[0]
    };
    assert_eq!(aligned, by_lanes(0));
    assert_eq!(shifted, by_lanes(1));
}

#[test]
fn every_width_is_correct_and_bad_widths_are_refused() {
    let a = crate::io::gen::generate("powerlaw:n=5000,mean=6,exp=2.1").unwrap();
    for lanes in [2, 4, 8, 16, 32] {
        assert!(
            cpu_matches_oracle(&LightSpmv::with_lanes(&a, lanes).unwrap(), &a),
            "{lanes} lanes"
        );
        let a32: Csr<f32> = a.cast();
        assert!(
            cpu_matches_oracle(&LightSpmv::with_lanes(&a32, lanes).unwrap(), &a32),
            "{lanes} lanes f32"
        );
    }
    for lanes in [0, 1, 3, 64] {
        assert!(matches!(LightSpmv::with_lanes(&a, lanes), Err(Error::Format { .. })), "{lanes}");
    }
}

#[test]
fn cpu_result_does_not_depend_on_the_thread_count() {
    assert_cpu_bits_independent_of_threads(LightSpmv::new);
}

/// LightSpMV of every width on the GPU, 5 times each into NaN-poisoned outputs: against the
/// oracle, and bit for bit against each other.
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_matches_the_oracle_for_every_width_and_is_bit_identical_across_runs() {
    let gpu = gpu();
    let specs: Vec<String> =
        [2, 4, 8, 16, 32].iter().map(|lanes| format!("{NAME}:lanes={lanes}")).collect();
    let mut failures = Vec::new();
    for matrix in [
        "powerlaw:n=300000,mean=8,exp=2.1",
        "longrows:n=100000,short=4,count=3,long=50000",
        "kron:scale=16",
    ] {
        let a = crate::io::gen::generate(matrix).unwrap();
        failures.extend(
            gpu_failures(&gpu, &a, &specs, 5).into_iter().map(|f| format!("{matrix}: {f}")),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_matrices_and_widths_match_the_oracle(a in random_csr(), width in 1u32..6) {
        let lanes = 1 << width;
        prop_assert!(cpu_matches_oracle(&LightSpmv::with_lanes(&a, lanes).unwrap(), &a));
        let a32: Csr<f32> = a.cast();
        prop_assert!(cpu_matches_oracle(&LightSpmv::with_lanes(&a32, lanes).unwrap(), &a32));
        let f = LightSpmv::new(&a).unwrap();
        prop_assert_eq!(f.lanes(), crate::formats::csr::vector_lanes(a.mean_row_len()));
        prop_assert!(cpu_matches_oracle(&f, &a));
    }
}
