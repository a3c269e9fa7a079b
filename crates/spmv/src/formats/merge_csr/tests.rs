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

// Every `items`, 7 by default; tiles of 32 × 3 items. On the GPU, the CPU path's bits are
// those of the kernel's order of additions, which it documents.
split_rows_tests! {
    format: MergeCsr,
    key: "items",
    values: ITEMS_CHOICES,
    default: 7,
    tile: (3, 96),
    refused: &[0, 1, 2, 4, 16, 1000],
    random: 1usize..8,
}
