use super::*;
use crate::formats::brc::tests::{
    assert_block_invariants, assert_blocks, assert_paper_product, assert_rules_own_t_blocks,
    paper_matrix,
};
use crate::formats::test_support::blocks::*;
use crate::formats::test_support::prelude::*;
use crate::formats::test_support::rows::*;
use crate::reference::test_vector;

/// Rows of the given lengths (columns 0.., values exact in f32), in that order.
fn rows_of(lens: &[usize], ncols: usize) -> Csr<f64> {
    let mut row_ptr = vec![0];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for (r, &k) in lens.iter().enumerate() {
        for c in 0..k {
            cols.push(((c * 7 + r) % ncols) as u32);
            vals.push(((r * 31 + c * 3) % 64) as f64 / 16.0 - 2.0);
        }
        let row = row_ptr.len() - 1;
        let (lo, hi) = (row_ptr[row], cols.len());
        // Columns must be sorted and distinct.
        let mut pairs: Vec<(u32, f64)> =
            cols[lo..hi].iter().copied().zip(vals[lo..hi].iter().copied()).collect();
        pairs.sort_by_key(|p| p.0);
        pairs.dedup_by_key(|p| p.0);
        cols.truncate(lo);
        vals.truncate(lo);
        cols.extend(pairs.iter().map(|p| p.0));
        vals.extend(pairs.iter().map(|p| p.1));
        row_ptr.push(cols.len());
    }
    Csr::new_checked(lens.len(), ncols, row_ptr, cols, vals).unwrap()
}

#[test]
fn paper_example_with_2x2_blocks_gives_the_documented_arrays() {
    let a = paper_matrix();
    let f = Brcp::with_params(&a, 2, 2).unwrap();
    assert_blocks(
        &f,
        &[0, 4, 8],
        &[3., 5., 4., 0., 1., 6., 2., 0.],
        &[0, 3, 1, 3, 0, 2, 2, 2],
        &[2, 2, 0, 3],
    );
    assert_eq!((f.block_width(0), f.block_width(1)), (2, 2));
    assert_eq!(f.row_seg_len(), &[2, 0, 1, 1]);
    assert_eq!(f.empty_rows(), &[1]);
    assert!(f.spans().is_empty());
    assert_eq!(f.max_blocks_per_row(), 1);
    assert_eq!(f.tiles(), &[0, 2]);
    assert_eq!(f.tile_chunk(), &[0]);
    let s = f.stats();
    assert_eq!((s.nnz, s.stored, s.padded_zeros(), s.max_row_len), (6, 8, 2, 3));
    // block_ptr 3, row_perm 4, col_idx 8, empty_rows 1, tiles 2, tile_chunk 1;
    // row_seg_len 4 bytes; values 8 and enter/leave 2 x 2 doubles.
    assert_eq!(s.bytes, 4 * (3 + 4 + 8 + 1 + 2 + 1) + 4 + 8 * (8 + 4));
    assert_paper_product(&f);
}

#[test]
fn paper_example_with_the_rules_own_t_and_with_t_1() {
    let a = paper_matrix();
    // T = 3: block 0 V = min(3, max(3, 2)) = 3: row 2, row 0; block 1: current row 3
    // with 1 entry and no next row: V = 1: row 3 and a dummy slot.
    let f = Brcp::with_params(&a, 2, threshold(&a)).unwrap();
    assert_eq!(f.threshold(), 3);
    assert_rules_own_t_blocks(&f);
    assert_eq!(f.row_seg_len(), &[1, 1, 1, 0]);
    assert_paper_product(&f);

    // T = 1: every block is 1 wide. Block 0: row 2's first two entries; block 1: row 2's
    // last, row 0's first; block 2: row 0's last, row 3. Rows 2 and 0 span two blocks.
    let f = Brcp::with_params(&a, 2, 1).unwrap();
    assert_blocks(
        &f,
        &[0, 2, 4, 6],
        &[3., 4., 5., 1., 2., 6.],
        &[0, 1, 3, 0, 2, 2],
        &[2, 2, 2, 0, 0, 3],
    );
    assert_eq!(f.row_seg_len(), &[2, 0, 1, 1, 1, 1]);
    assert_eq!(
        f.spans(),
        &[Span { row: 2, first: 0, last: 1 }, Span { row: 0, first: 1, last: 2 }]
    );
    assert_paper_product(&f);
}

#[test]
fn width_rule_widens_blocks_for_rows_above_2ht() {
    // H = 4, T = 2: rows above 2·4·2 = 16 entries get V = ceil(k / 8).
    let a = rows_of(&[40, 16, 3, 3, 1], 64);
    let f = Brcp::with_params(&a, 4, 2).unwrap();
    // Block 0: row 0 (40 > 16): V = 5, 4 slots of 5. Block 1: row 0 continues (20
    // left, still 40 > 16): V = 5, 4 slots. Block 2: row 1 (16, not above 16): V =
    // min(2, max(16, 3)) = 2: 4 slots. Block 3: row 1 continues, 8 left: V = 2, 4 slots.
    // Block 4: row 2, V = min(2, max(3, 3)) = 2: rows 2 (2 slots), 3 (2 slots).
    // Block 5: row 4: V = min(2, max(1, 0)) = 1: row 4 and 3 dummies.
    let widths: Vec<usize> = (0..f.blocks()).map(|b| f.block_width(b)).collect();
    assert_eq!(widths, [5, 5, 2, 2, 2, 1]);
    assert_eq!(f.stats().extra[2], ("widened_blocks".into(), 2.0));
    assert_eq!(
        f.spans(),
        &[Span { row: 0, first: 0, last: 1 }, Span { row: 1, first: 2, last: 3 }]
    );
    assert_eq!(&f.row_seg_len()[16..24], &[2, 0, 2, 0, 1, 0, 0, 0]);
    assert!(cpu_matches_oracle(&f, &a));
}

#[test]
fn rows_spanning_three_or_more_blocks() {
    // H = 4, T = 1: every row is at most 2H·T = 8 long, so V = 1 throughout. Row 0
    // fills blocks 0-1, row 1 block 2 and three slots of block 3, row 2 the last slot of
    // block 3, all of block 4 and two slots of block 5: three blocks.
    let a = rows_of(&[8, 7, 7, 2, 1], 32);
    let f = Brcp::with_params(&a, 4, 1).unwrap();
    assert_eq!(f.blocks(), 7);
    assert_eq!(
        f.spans(),
        &[
            Span { row: 0, first: 0, last: 1 },
            Span { row: 1, first: 2, last: 3 },
            Span { row: 2, first: 3, last: 5 },
        ]
    );
    assert_eq!(f.max_blocks_per_row(), 3);
    assert_eq!(&f.row_seg_len()[12..24], &[3, 0, 0, 1, 4, 0, 0, 0, 2, 0, 2, 0]);
    assert!(cpu_matches_oracle(&f, &a));
    let x = test_vector::<f64>(32);
    let mut y = vec![f64::NAN; 5];
    f.spmv_cpu(&x, &mut y);
    let mut serial = vec![0.0; 5];
    a.spmv_serial(&x, &mut serial);
    // Values are multiples of 1/16 and x has 24-bit entries: every order gives the same bits.
    assert_eq!(y, serial);
    // A generous T keeps each row in one block.
    assert_eq!(Brcp::with_params(&a, 4, 100).unwrap().max_blocks_per_row(), 1);
}

#[test]
fn tiles_group_narrow_blocks_and_chunk_wide_ones() {
    assert_eq!(tiles(&[]), (vec![0], vec![]));
    assert_eq!(tiles(&[1; 20]), (vec![0, 20], vec![0]));
    assert_eq!(tiles(&[1; 70]), (vec![0, 32, 64, 70], vec![0, 0, 0]));
    assert_eq!(tiles(&[100, 3, 3, 64, 63]), (vec![WIDE_TILE, 1, 3 | WIDE_TILE, 4, 5], vec![0; 4]));
    // A narrow run cut by a wide block.
    assert_eq!(tiles(&[1, 1, 70, 1]), (vec![0, 2 | WIDE_TILE, 3, 4], vec![0; 3]));
    // Wide blocks of 1024 and 2049 entries per slot: 1 and 3 chunks.
    let (t, c) = tiles(&[2049, 1024, 5]);
    assert_eq!(t, vec![WIDE_TILE, WIDE_TILE, WIDE_TILE, 1 | WIDE_TILE, 2, 3]);
    assert_eq!(c, vec![0, 1, 2, 0, 0]);
}

#[test]
fn very_wide_blocks_are_cut_into_chunks() {
    // One row of 5000 entries and 40 of 30: T = round(μ + σ) = round(151.2 + 766.7) = 918;
    // 5000 is not above 2H·T, so block 0 is V = min(918, 5000) = 918 wide (one chunk)...
    let mut lens = vec![5000];
    lens.extend([30; 40]);
    let a = rows_of(&lens, 6000);
    let f = Brcp::new(&a).unwrap();
    assert_eq!(f.threshold(), 918);
    assert!(!f.has_chunked_blocks());
    // ... and with T = 3000 it is 3000 wide: 3 chunks of 1024.
    let f = Brcp::with_params(&a, 32, 3000).unwrap();
    assert_eq!(f.block_width(0), 3000);
    assert_eq!(&f.tile_chunk()[..3], &[0, 1, 2]);
    assert!(f.has_chunked_blocks());
    let tiles = f.tile_chunk().len();
    assert_eq!(f.device_bytes() - f.bytes_read(), 2 * f.blocks() * 8 + tiles * (32 * 8 + 4));
    assert!(cpu_matches_oracle(&f, &a));
}

#[test]
fn kernel_constants_match_the_rust_side() {
    let src = KERNELS.source;
    assert!(src.contains(&format!("#define BRCP_TILE_WARPS {TILE_WARPS}\n")));
    assert!(src.contains(&format!("#define BRCP_CHUNK {CHUNK_WIDTH}\n")));
    assert!(src.contains(&format!("#define BRCP_WIDE 0x{WIDE_TILE:x}u\n")));
    assert!(src.contains(&format!("#define BRCP_NO_ROW 0x{NO_ROW:x}u\n")));
}

#[test]
fn bad_parameters_are_format_errors() {
    let a = paper_matrix();
    for (h, t) in [(0, 3), (33, 3), (32, 0)] {
        assert!(
            matches!(Brcp::with_params(&a, h, t), Err(Error::Format { .. })),
            "H = {h}, T = {t}"
        );
    }
}

#[test]
fn empty_matrices() {
    assert_empty_products(|a| {
        let f = Brcp::new(a).unwrap();
        assert_eq!((f.stored(), f.blocks(), f.empty_rows().len()), (0, 0, a.nrows()));
        assert_eq!(f.max_blocks_per_row(), 0);
        f
    });
}

/// Power-law-like rows: mostly short, some of hundreds to thousands of entries.
fn skewed(m: usize, n: usize, seed: u64) -> Csr<f64> {
    random_rows(m, n, seed, |rng| match rng.below(1000) {
        0..=199 => 0,
        200..=899 => 1 + rng.below(6),
        900..=989 => rng.below(200),
        _ => rng.below(4000),
    })
}

#[test]
fn skewed_matrix_matches_the_oracle_with_spans_and_wide_blocks() {
    let a = skewed(20000, 20000, 7);
    let f = Brcp::new(&a).unwrap();
    assert!(cpu_matches_oracle(&f, &a));
    assert!(cpu_matches_oracle(&Brcp::new(&a.cast::<f32>()).unwrap(), &a.cast::<f32>()));
    assert!(!f.spans().is_empty());
    assert!(f.tiles().iter().any(|&t| t & WIDE_TILE != 0), "no wide block");
    // Every slot is accounted for: real slots hold every entry once.
    let real: usize = f.block_nnz().iter().sum();
    assert_eq!(real, a.nnz());
    // Spans are consistent with row_perm.
    for s in f.spans() {
        let h = f.block_rows();
        assert_eq!(f.row_perm()[s.first as usize * h + h - 1], s.row);
        assert_eq!(f.row_perm()[s.last as usize * h], s.row);
    }
    for (h, t) in [(32, 1), (32, 5), (7, 3), (1, 2)] {
        let g = Brcp::with_params(&a, h, t).unwrap();
        assert!(cpu_matches_oracle(&g, &a), "H = {h}, T = {t}");
    }
}

#[test]
fn cpu_result_is_bit_reproducible() {
    let a = skewed(20000, 20000, 11);
    let f = Brcp::with_params(&a, 32, 3).unwrap();
    assert!(f.max_blocks_per_row() >= 3);
    let x: Vec<f64> = (0..a.ncols()).map(|i| 1.0 / (i as f64 + 3.0)).collect();
    let run = || {
        let mut y = vec![f64::NAN; a.nrows()];
        f.spmv_cpu(&x, &mut y);
        y.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    };
    let first = run();
    for _ in 0..5 {
        assert_eq!(run(), first);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_matrices_match_the_oracle(a in random_csr(), h in 1usize..=32, t in 1usize..20) {
        let f = Brcp::with_params(&a, h, t).unwrap();
        assert_block_invariants(&f, &a);
        prop_assert!(cpu_matches_oracle(&f, &a));
        prop_assert_eq!(f.empty_rows().len(), (0..a.nrows()).filter(|&r| a.row_len(r) == 0).count());
        // Each row's slots are consecutive, and row_seg_len sums to the real slots.
        let real = f.row_perm().iter().filter(|&&r| r != NO_ROW).count();
        prop_assert_eq!(f.row_seg_len().iter().map(|&l| l as usize).sum::<usize>(), real);
        let a32: Csr<f32> = a.cast();
        prop_assert!(cpu_matches_oracle(&Brcp::with_params(&a32, h, t).unwrap(), &a32));
        prop_assert!(cpu_matches_oracle(&Brcp::new(&a).unwrap(), &a));
    }
}
