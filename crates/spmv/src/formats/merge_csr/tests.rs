use super::*;
use crate::formats::test_support::prelude::*;
use crate::formats::test_support::rows::*;

#[test]
fn worked_example() {
    let a = example();
    let f = MergeCsr::with_lanes(&a, 3, 2).unwrap();
    assert_eq!(f.tile_row(), &[0, 2, 4, 5]);
    assert_split_example(&f, f.segments());
    let s = MergeCsr::new(&a, 7).unwrap().stats();
    assert_eq!((s.nnz, s.stored, s.padded_zeros()), (8, 8, 0));
    assert_eq!(s.extra[0], ("items_per_lane".to_string(), 7.0));
    assert_eq!(s.extra[1], ("tiles".to_string(), 1.0));
    assert_eq!(s.extra[2], ("segments".to_string(), 0.0));
}

#[test]
fn merge_path_search_agrees_with_walking_the_path() {
    let a =
        random_rows(300, 50, 7, |g| if g.below(10) == 0 { 40 + g.below(100) } else { g.below(4) });
    let row_ptr = a.row_ptr();
    let (mut i, mut j) = (0usize, 0usize);
    for d in 0..=a.nrows() + a.nnz() {
        assert_eq!(merge_path_row(row_ptr, d), i, "diagonal {d}");
        if d == a.nrows() + a.nnz() {
            break;
        }
        if i < a.nrows() && j < row_ptr[i + 1] {
            j += 1;
        } else {
            i += 1;
        }
    }
}

#[test]
fn edge_shapes_rows_of_every_length_and_rows_crossing_every_tile() {
    // No rows, no entries, empty rows only, one entry, and rows of 0, 1 and 10^6 entries.
    assert_split_rows_edge_shapes(MergeCsr::new, ITEMS_CHOICES, 7);
    // Tiles of 32 × 3 items.
    assert_rows_cross_tiles(MergeCsr::new, MergeCsr::new, |f| f.segments().len(), (3, 96));
}

#[test]
fn bad_items_and_oversized_paths_are_refused() {
    assert_values_refused(MergeCsr::new, "merge-csr", "items", &[0, 1, 2, 4, 16, 1000]);
}

#[test]
fn cpu_result_does_not_depend_on_the_thread_count() {
    assert_cpu_bits_independent_of_threads(|a| MergeCsr::new(a, 7));
}

/// Merge-CSR with every `items` on the GPU, in f64, f32 and f16, 3 runs each into NaN-poisoned
/// outputs: against the oracle, bit for bit across runs, and bit for bit against the CPU path
/// (which documents the kernel's order of additions).
#[test]
#[ignore = "needs a CUDA device"]
fn gpu_matches_the_oracle_and_the_cpu_bit_for_bit() {
    assert_split_rows_gpu_equals_cpu_bits(NAME, "items", ITEMS_CHOICES);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_matrices_tiles_and_items_match_the_oracle(a in random_csr(), items in 1usize..8, lanes in 1usize..5) {
        let f = MergeCsr::with_lanes(&a, items, lanes).unwrap();
        prop_assert!(cpu_matches_oracle(&f, &a));
        let a32: Csr<f32> = a.cast();
        prop_assert!(cpu_matches_oracle(&MergeCsr::with_lanes(&a32, items, lanes).unwrap(), &a32));
        // Segments: consecutive tiles, each row once, rows increasing.
        for w in f.segments().windows(2) {
            prop_assert!(w[0].row < w[1].row && w[0].end <= w[1].first);
        }
    }
}
