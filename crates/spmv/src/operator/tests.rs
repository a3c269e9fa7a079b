use super::*;

#[test]
fn layouts_convert_both_ways() {
    // Two vectors of length 3: columns [1 2 3] and [4 5 6].
    let row_major = [1, 4, 2, 5, 3, 6];
    let cols = to_columns(&row_major, 3, 2, Layout::RowMajor);
    assert_eq!(cols, [1, 2, 3, 4, 5, 6]);
    let mut back = [0; 6];
    from_columns(&cols, 3, 2, Layout::RowMajor, &mut back);
    assert_eq!(back, row_major);
}

#[test]
fn tiled_layout_conversions_match_the_definition() {
    // Rows around the tile size and past it, k from 1 to 17.
    for n in [1, 7, TILE_ROWS - 1, TILE_ROWS, 2 * TILE_ROWS + 5] {
        for k in [1, 2, 3, 8, 17] {
            let row_major: Vec<u32> = (0..(n * k) as u32).collect();
            let cols = to_columns(&row_major, n, k, Layout::RowMajor);
            for j in 0..k {
                for i in 0..n {
                    assert_eq!(cols[j * n + i], row_major[i * k + j], "n = {n}, k = {k}");
                }
            }
            let mut back = vec![u32::MAX; n * k];
            from_columns(&cols, n, k, Layout::RowMajor, &mut back);
            assert_eq!(back, row_major, "n = {n}, k = {k}");
        }
    }
    assert!(to_columns::<f64>(&[], 0, 3, Layout::RowMajor).is_empty());
    from_columns::<f64>(&[], 5, 0, Layout::RowMajor, &mut []);
}

#[test]
fn block_shapes_are_checked() {
    assert!(check_block((3, 2), 4, 6, Block::columns(2)).is_ok());
    assert!(check_block((3, 2), 4, 5, Block::rows(2)).is_err());
    assert!(check_block((3, 2), 0, 0, Block::columns(0)).is_err());
    assert!(check_block((usize::MAX, 2), 4, 6, Block::columns(2)).is_err());
    assert!(check_transpose((3, 2), 3, 2).is_ok());
    assert!(check_transpose((3, 2), 2, 3).is_err());
}
