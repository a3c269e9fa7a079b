//! Algorithm 1 of the DRM paper ("rearrange & merge"): groups the segments into sub-blocks
//! whose operand counts are close.
//!
//! With `P` the groups' operand counts (at first one group per segment):
//! 1. While `max(P) > 2·min(P)` and `max(P) > 2·second-smallest(P)`: merge the two smallest
//!    groups into one (their counts add up).
//! 2. If `|P|` is odd (and at least 3), merge the two smallest once more.
//! 3. If `|P| > 2`, pair the largest with the smallest, the second largest with the second
//!    smallest, and so on: each pair is one sub-block. Otherwise each group is a sub-block.
//!
//! The paper re-sorts `P` after every merge; a min-heap gives the same merges in
//! O(S log S) (the new group's count only matters through the heap and the running max).
//! Ties between equal counts, which the paper leaves to its sort, are broken by creation
//! order: the group created first counts as the smaller (an original segment by its index,
//! merged groups after every original one, in the order they were formed). The segments
//! of a merged group keep the order "larger group first", and a sub-block lists the larger
//! of its pair first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A group of segments: one segment, or two groups merged (larger first).
enum Group {
    Segment(u32),
    Merged(usize, usize),
}

/// Runs Algorithm 1 on the segments' operand counts; returns the sub-blocks, each a list of
/// segment indices, in pairing order (the pair of the largest group first). Every segment
/// appears in exactly one sub-block.
pub fn rearrange_and_merge(operands: &[u64]) -> Vec<Vec<u32>> {
    let mut groups: Vec<Group> = (0..operands.len() as u32).map(Group::Segment).collect();
    let mut count: Vec<u64> = operands.to_vec();
    let mut max = count.iter().copied().max().unwrap_or(0);
    let merge = |groups: &mut Vec<Group>, count: &mut Vec<u64>, larger: usize, smaller: usize| {
        groups.push(Group::Merged(larger, smaller));
        count.push(count[larger] + count[smaller]);
        groups.len() - 1
    };

    // Step 1, with the smallest groups on a min-heap keyed by (count, creation order).
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> =
        count.iter().enumerate().map(|(g, &c)| Reverse((c, g))).collect();
    while heap.len() >= 2 {
        let Reverse((min1, g1)) = heap.pop().expect("two groups");
        let Reverse((min2, g2)) = *heap.peek().expect("two groups");
        if max > min1.saturating_mul(2) && max > min2.saturating_mul(2) {
            heap.pop();
            let g = merge(&mut groups, &mut count, g2, g1);
            max = max.max(count[g]);
            heap.push(Reverse((count[g], g)));
        } else {
            heap.push(Reverse((min1, g1)));
            break;
        }
    }

    // P in descending order of (count, creation order).
    let mut p: Vec<usize> = heap.into_iter().map(|Reverse((_, g))| g).collect();
    let descending =
        |p: &mut Vec<usize>, count: &[u64]| p.sort_unstable_by_key(|&g| Reverse((count[g], g)));
    descending(&mut p, &count);
    // Step 2.
    if p.len() % 2 == 1 && p.len() >= 3 {
        let smallest = p.pop().expect("three groups");
        let second = p.pop().expect("three groups");
        let g = merge(&mut groups, &mut count, second, smallest);
        p.push(g);
        descending(&mut p, &count);
    }
    // Step 3.
    let sub_blocks: Vec<Vec<usize>> = if p.len() > 2 {
        let len = p.len();
        (0..len / 2).map(|r| vec![p[r], p[len - 1 - r]]).collect()
    } else {
        p.iter().map(|&g| vec![g]).collect()
    };
    sub_blocks.into_iter().map(|roots| segments_of(&groups, &roots)).collect()
}

/// The segments of the given groups, in order (iterative: merge trees can be deep).
fn segments_of(groups: &[Group], roots: &[usize]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(g) = stack.pop() {
        match groups[g] {
            Group::Segment(s) => out.push(s),
            Group::Merged(larger, smaller) => {
                stack.push(smaller);
                stack.push(larger);
            }
        }
    }
    out
}

/// Splits every sub-block of more than `max_segments` segments into the fewest parts of at
/// most `max_segments`, as equal in segment count as possible (33 → 17 + 16): the paper's
/// split of sub-blocks over 1024 rows, the most threads a CUDA block may have.
pub fn split_large(sub_blocks: Vec<Vec<u32>>, max_segments: usize) -> Vec<Vec<u32>> {
    let max_segments = max_segments.max(1);
    let mut out = Vec::with_capacity(sub_blocks.len());
    for block in sub_blocks {
        if block.len() <= max_segments {
            out.push(block);
            continue;
        }
        let parts = block.len().div_ceil(max_segments);
        let (base, extra) = (block.len() / parts, block.len() % parts);
        let mut start = 0;
        for k in 0..parts {
            let len = base + usize::from(k < extra);
            out.push(block[start..start + len].to_vec());
            start += len;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sums(operands: &[u64], blocks: &[Vec<u32>]) -> Vec<u64> {
        blocks.iter().map(|b| b.iter().map(|&s| operands[s as usize]).sum()).collect()
    }

    #[test]
    fn the_papers_example_gives_two_sub_blocks_of_ten() {
        // Fig. 7: P = {8, 6, 4, 2}; 8 > 2·2 but not 8 > 2·4, so no merge; |P| = 4 is even;
        // pairs (8, 2) and (6, 4).
        let operands = [8, 6, 4, 2];
        let blocks = rearrange_and_merge(&operands);
        assert_eq!(blocks, vec![vec![0, 3], vec![1, 2]]);
        assert_eq!(sums(&operands, &blocks), vec![10, 10]);
        // The same counts in the order of the family's example matrix (segments 0..3 hold
        // 2, 4, 8 and 6 operands).
        assert_eq!(rearrange_and_merge(&[2, 4, 8, 6]), vec![vec![2, 0], vec![3, 1]]);
    }

    #[test]
    fn small_groups_are_merged_until_they_reach_half_the_largest() {
        // 100 > 2·10 and 100 > 2·10: merge 10 + 10 = 20; then 20, 20 → 40 ... until every
        // group is at least 50.
        let operands = [100, 10, 10, 10, 10, 10, 10, 10, 10];
        let blocks = rearrange_and_merge(&operands);
        let s = sums(&operands, &blocks);
        assert_eq!(s.iter().sum::<u64>(), 180);
        // Step 1 reaches {100, 40, 40}, merges 40 + 40 (100 > 80), then stops at {100, 80}
        // (100 > 160 fails); |P| = 2: two sub-blocks, no pairing.
        assert_eq!(s, vec![100, 80]);
        assert_eq!(blocks[0], vec![0]);
    }

    #[test]
    fn odd_counts_merge_the_two_smallest_once() {
        assert_eq!(sums(&[5, 5, 5], &rearrange_and_merge(&[5, 5, 5])), vec![10, 5]);
        // Five equal: merge two → {10, 5, 5, 5} → pairs (10, 5), (5, 5).
        assert_eq!(sums(&[3; 5], &rearrange_and_merge(&[3; 5])), vec![9, 6]);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(rearrange_and_merge(&[]).is_empty());
        assert_eq!(rearrange_and_merge(&[7]), vec![vec![0]]);
        assert_eq!(rearrange_and_merge(&[7, 1]), vec![vec![0], vec![1]]);
        // All empty segments: nothing exceeds twice nothing; pairs of empty segments.
        let blocks = rearrange_and_merge(&[0; 6]);
        assert_eq!(blocks.len(), 3);
        assert!(blocks.iter().all(|b| b.len() == 2));
    }

    #[test]
    fn large_sub_blocks_split_evenly() {
        let block: Vec<u32> = (0..33).collect();
        let parts = split_large(vec![block.clone(), vec![40, 41]], 32);
        assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), vec![17, 16, 2]);
        assert_eq!(parts.concat(), [block, vec![40, 41]].concat());
        assert_eq!(split_large(vec![(0..64).collect()], 32).len(), 2);
    }

    proptest! {
        #[test]
        fn every_segment_lands_in_exactly_one_sub_block(operands in prop::collection::vec(0u64..500, 0..300)) {
            let blocks = rearrange_and_merge(&operands);
            let mut all: Vec<u32> = blocks.concat();
            all.sort_unstable();
            prop_assert_eq!(all, (0..operands.len() as u32).collect::<Vec<_>>());
            prop_assert!(blocks.iter().all(|b| !b.is_empty()));
            let split = split_large(blocks.clone(), 4);
            prop_assert!(split.iter().all(|b| !b.is_empty() && b.len() <= 4));
            prop_assert_eq!(split.concat(), blocks.concat());
            // Merging never leaves a sub-block with more than the total, and the step-1 loop
            // leaves the groups within a factor 2 of the largest unless only 2 remain.
            let s = sums(&operands, &blocks);
            prop_assert_eq!(s.iter().sum::<u64>(), operands.iter().sum::<u64>());
        }
    }
}
