use crate::formats::test_support::prelude::*;

use super::*;
use crate::reference::{test_vector, Oracle};

/// The module doc's matrix: rows of lengths 20, 0, 6 × 8, 1, 3, 2, 2, 4 over 32 columns.
fn example() -> Csr<f64> {
    let lens = [20, 0, 6, 6, 6, 6, 6, 6, 6, 6, 1, 3, 2, 2, 4];
    let mut row_ptr = vec![0];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for (r, &l) in lens.iter().enumerate() {
        for k in 0..l {
            cols.push((r + k) as u32 % 32);
            vals.push((r * 10 + k) as f64 + 1.0);
        }
        // Columns of a row must be strictly increasing: sort this row's part.
        let start = *row_ptr.last().unwrap();
        let mut row: Vec<(u32, f64)> =
            cols[start..].iter().copied().zip(vals[start..].iter().copied()).collect();
        row.sort_by_key(|e| e.0);
        for (i, (c, v)) in row.into_iter().enumerate() {
            cols[start + i] = c;
            vals[start + i] = v;
        }
        row_ptr.push(cols.len());
    }
    Csr::new_checked(lens.len(), 32, row_ptr, cols, vals).unwrap()
}

fn matches_oracle(d: &Dasp<f64>, a: &Csr<f64>) -> bool {
    let x = test_vector::<f64>(a.ncols());
    let mut y = vec![f64::NAN; a.nrows()];
    d.spmv_cpu(&x, &mut y);
    Oracle::new(a, &x).check(&y).passed()
}

#[test]
fn worked_example_gives_the_documented_layout() {
    let a = example();
    let d = Dasp::with_max_len(&a, 8).unwrap();
    // Long: row 0, one group of 64 with 20 real entries.
    assert_eq!((d.long.rows.as_slice(), d.long.group_ptr.as_slice()), (&[0][..], &[0, 1][..]));
    assert_eq!(d.long.groups.len(), LONG_GROUP);
    assert_eq!(&d.long.groups.val[..20], a.row(0).1);
    assert!(
        d.long.groups.val[20..].iter().all(|&v| v == 0.0)
            && d.long.groups.cid[20..].iter().all(|&c| c == 0)
    );
    // Medium: rows 2..=9, one block, tile 0 regular (32 real), positions 4-5 irregular.
    assert_eq!(d.medium.rows, (2..10).collect::<Vec<u32>>());
    assert_eq!(d.medium.block_tile_ptr, [0, 1]);
    assert_eq!(d.medium.regular.len(), TILE);
    for i in 0..8 {
        assert_eq!(&d.medium.regular.val[4 * i..4 * i + 4], &a.row(2 + i).1[..4], "row {}", 2 + i);
    }
    assert_eq!(d.medium.irreg_ptr, (0..=8).map(|i| 2 * i).collect::<Vec<usize>>());
    assert_eq!(&d.medium.irregular.val[..2], &a.row(2).1[4..]);
    // Short: 1&3 (10, 11), 2&2 (12, 13), group 4 (14); no leftovers.
    assert_eq!(d.short.rows_13, [[10, 11]]);
    assert_eq!(d.short.rows_22, [[12, 13]]);
    assert_eq!(d.short.rows_4, [14]);
    assert!(d.short.rows_1.is_empty());
    assert_eq!(d.short.slots.len(), 12);
    assert_eq!(&d.short.slots.val[..4], &[a.row(10).1, a.row(11).1].concat()[..]);
    assert_eq!(d.empty_rows, [1]);
    assert!(matches_oracle(&d, &a));
    let s = d.stats();
    assert_eq!((s.nnz, s.stored), (a.nnz(), 64 + 32 + 16 + 12));
    let extra = |k: &str| s.extra.iter().find(|e| e.0 == k).unwrap().1;
    assert_eq!((extra("long_nnz"), extra("medium_nnz"), extra("short_nnz")), (20.0, 48.0, 12.0));
}

#[test]
fn leftover_short_rows_and_a_sparse_block() {
    // Lengths 1,1,1,3,2,2,2: one 1&3 pair, two leftover 1s, one 2&2 pair, a leftover 2.
    let lens = [1, 1, 1, 3, 2, 2, 2];
    let mut row_ptr = vec![0];
    let mut cols = Vec::new();
    for &l in &lens {
        cols.extend(0..l as u32);
        row_ptr.push(cols.len());
    }
    let vals: Vec<f64> = (0..cols.len()).map(|i| i as f64 + 0.5).collect();
    let a = Csr::new_checked(lens.len(), 4, row_ptr, cols, vals).unwrap();
    let d = Dasp::new(&a).unwrap();
    assert_eq!(
        (d.short.rows_13.as_slice(), d.short.rows_1.as_slice()),
        (&[[0, 3]][..], &[1, 2][..])
    );
    assert_eq!((d.short.rows_22.as_slice(), d.short.rows_4.as_slice()), (&[[4, 5]][..], &[6][..]));
    assert!(matches_oracle(&d, &a));
    // A row-block whose first tile has fewer than 24 real entries keeps no regular tile.
    assert_eq!(regular_tiles(&[8, 5, 5, 5, 5, 5], 24), 1); // 4 × 6 = 24 in tile 0
    assert_eq!(regular_tiles(&[8, 5, 5, 5, 5], 24), 0); // 20 < 24
    assert_eq!(regular_tiles(&[12; 8], 24), 3);
}

#[test]
fn bad_max_len_is_a_format_error() {
    assert!(matches!(Dasp::with_max_len(&example(), 3), Err(Error::Format { format: "dasp", .. })));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn cpu_path_matches_the_oracle(a in random_csr(), max_len in 4usize..20) {
        let d = Dasp::with_max_len(&a, max_len).unwrap();
        prop_assert!(matches_oracle(&d, &a));
        // Every row is in exactly one class.
        let s = &d.short;
        let mut rows: Vec<u32> = d.long.rows.iter().chain(&d.medium.rows).chain(&d.empty_rows)
            .chain(&s.rows_4).chain(&s.rows_1).copied().collect();
        rows.extend(s.rows_13.iter().chain(&s.rows_22).flatten());
        rows.sort_unstable();
        prop_assert_eq!(rows, (0..a.nrows() as u32).collect::<Vec<_>>());
        prop_assert_eq!(d.stats().nnz, a.nnz());
    }
}
