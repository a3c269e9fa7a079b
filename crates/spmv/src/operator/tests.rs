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
fn block_shapes_are_checked() {
    assert!(check_block((3, 2), 4, 6, Block::columns(2)).is_ok());
    assert!(check_block((3, 2), 4, 5, Block::rows(2)).is_err());
    assert!(check_block((3, 2), 0, 0, Block::columns(0)).is_err());
    assert!(check_block((usize::MAX, 2), 4, 6, Block::columns(2)).is_err());
    assert!(check_transpose((3, 2), 3, 2).is_ok());
    assert!(check_transpose((3, 2), 2, 3).is_err());
}
