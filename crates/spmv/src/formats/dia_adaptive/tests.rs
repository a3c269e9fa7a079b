use super::*;
use crate::formats::test_support::diagonal::*;
use crate::formats::test_support::prelude::*;

/// The layouts' names in specs.
const LAYOUTS: [&str; 3] = ["dia", "brcsd1", "brcsd2"];

/// The spec of DIA-Adaptive forced into `layout`, with BRCSD-II blocks of `block_rows` rows
/// and BRCSD-I pieces of `piece_rows`.
fn forced(layout: &str, block_rows: usize, piece_rows: usize) -> String {
    format!("dia-adaptive:layout={layout},block_rows={block_rows},piece_rows={piece_rows}")
}

#[test]
fn worked_example_gives_the_documented_arrays() {
    let a = example();
    let f = DiaAdaptive::new(&a).unwrap();
    let c = f.classification();
    assert_eq!((c.dia_slots, c.brcsd1_slots, c.brcsd1_blocks, c.brcsd2_slots), (32, 18, 5, 128));
    assert_eq!(f.layout(), Layout::Dia);

    let f = DiaAdaptive::with_layout(&a, Some(Layout::Brcsd1), BLOCK_ROWS, PIECE_ROWS).unwrap();
    let one = f.brcsd1().unwrap();
    assert_eq!(one.block_row, [0, 2, 4, 5, 7, 8]);
    assert_eq!(one.block_diag, [0, 1, 3, 7, 10, 12]);
    assert_eq!(one.offsets, [0, 0, 1, -2, 0, 1, 3, -2, 0, 1, -2, 0]);
    assert_eq!(one.block_data, [0, 2, 6, 10, 16, 18]);
    #[rustfmt::skip]
    let data = [1.0, 2.0, 3.0, 5.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 14.0, 12.0, 15.0, 13.0, 16.0, 17.0, 18.0];
    assert_eq!(one.data, data);
    assert_eq!(
        (one.piece_row.as_slice(), one.piece_block.as_slice()),
        (&[0, 2, 4, 5, 7, 8][..], &[0, 1, 2, 3, 4][..])
    );
    assert_eq!(f.stats().padded_zeros(), 0);

    let f = DiaAdaptive::with_layout(&a, Some(Layout::Brcsd2), 2, PIECE_ROWS).unwrap();
    let two = f.brcsd2().unwrap();
    assert_eq!(two.group_block, [0, 1, 2, 3, 4]);
    assert_eq!(two.group_diag, [0, 1, 3, 7, 10]);
    assert_eq!(two.group_data, [0, 2, 6, 14, 20]);
    assert_eq!(f.stored(), 20);

    for layout in LAYOUTS {
        for rows in [1, 2, 3, 32] {
            assert_example_product(forced(layout, rows, rows).as_str());
        }
    }
}

#[test]
fn identical_blocks_share_one_offset_list() {
    // Paper's Fig. 4 idea: blocks with the same offsets are one group.
    let a = crate::io::gen::generate("banded:n=3200,offsets=-1;0;1").unwrap();
    let f = DiaAdaptive::with_layout(&a, Some(Layout::Brcsd2), 32, 64).unwrap();
    let two = f.brcsd2().unwrap();
    assert_eq!((two.groups(), two.offsets.as_slice()), (1, &[-1, 0, 1][..]));
    assert!(cpu_matches_oracle(&f, &a));
}

#[test]
fn the_classification_picks_the_layout_of_each_kind_of_matrix() {
    let layout =
        |spec: &str| DiaAdaptive::new(&crate::io::gen::generate(spec).unwrap()).unwrap().layout();
    // Full diagonals near the main one: DIA.
    assert_eq!(layout("banded:n=20000,offsets=-2;0;1;3"), Layout::Dia);
    // Long offsets (a diagonal far from the main one spans a fifth of the rows) and a
    // diagonal that stops: BRCSD-I.
    assert_eq!(layout("banded:n=20000,offsets=-16000;-1;0;1;16000"), Layout::Brcsd1);
    // Scattered points and long broken diagonals: BRCSD-II.
    assert_eq!(
        layout("banded:n=20000,offsets=-1;0;1,broken=0.3,seg=2000,scatter=0.01"),
        Layout::Brcsd2
    );
    assert_eq!(classify(100, 50, 10, 200, 5), Layout::Dia); // BRCSD-I no candidate
    assert_eq!(classify(100, 95, 5, 200, 10), Layout::Dia); // within 10%
    assert_eq!(classify(100, 80, 5, 200, 10), Layout::Brcsd1);
    assert_eq!(classify(100, 80, 5, 70, 10), Layout::Brcsd2);
}

#[test]
fn every_layout_matches_the_oracle_on_generated_diagonal_matrices() {
    let a = crate::io::gen::generate(
        "banded:n=9000,offsets=-7000;-3;0;2;60;7000,broken=0.3,seg=500,scatter=0.01",
    )
    .unwrap();
    for layout in LAYOUTS {
        for (block_rows, piece_rows) in [(32, 64), (7, 5), (100, 1024)] {
            let spec = forced(layout, block_rows, piece_rows);
            assert!(cpu_matches_in_both_precisions(spec.as_str(), &a), "{spec}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_every_layout_matches_the_oracle() {
    let a = crate::io::gen::generate(
        "banded:n=9001,offsets=-7000;-3;0;2;60;7000,broken=0.3,seg=500,scatter=0.01",
    )
    .unwrap();
    let rows = [(32, 64), (7, 5), (100, 1024), (1, 1)];
    let specs: Vec<String> =
        LAYOUTS.iter().flat_map(|l| rows.map(|(b, p)| forced(l, b, p))).collect();
    assert_gpu_matches_oracle(&a, specs.iter().map(String::as_str));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn random_diagonal_matrices_match_the_oracle(a in random_diagonal_csr(), rows in 1usize..40) {
        for layout in LAYOUTS {
            let spec = forced(layout, rows, rows);
            prop_assert!(spec.as_str().build(&a).unwrap().stats().stored >= a.nnz());
            prop_assert!(cpu_matches_in_both_precisions(spec.as_str(), &a), "{}", spec);
        }
        prop_assert!(cpu_matches_in_both_precisions("dia-adaptive", &a));
        // BRCSD-I never pads more than DIA (it stores a subset of DIA's slots).
        let c = DiaAdaptive::new(&a).unwrap().classification();
        prop_assert!(c.brcsd1_slots <= c.dia_slots);
    }
}
