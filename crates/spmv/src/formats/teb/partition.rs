//! TEB's two preprocessing phases on the row lengths alone: the reordering row merge
//! (Algorithm 2), the block-nnz variance (eq. 5), the heuristic threshold selection
//! (Algorithm 1 with the decision tree of Fig. 11) and the block-count search with the
//! eq. (10) stop. PBC shares the sorted order, the variance and the candidate counts; PBC and
//! AMF-CSR report their blocks' variance and max over mean with TEB's functions.
//!
//! Every partition is computed on the sorted row lengths stored as runs of equal length, so
//! the merge takes a whole run of short rows in one step: one partition costs
//! O(blocks + distinct lengths), not O(rows), which is what makes searching many block
//! counts affordable on matrices of millions of rows.

use rayon::prelude::*;

/// Offset parameter k of the heuristic's first probe (eq. 7, left side).
pub const K_ONE: f64 = 1.0;
/// Offset parameter k of the heuristic's second probe (eq. 7, right side).
pub const K_PROBE: f64 = 1.01;
/// The decision tree's k (Fig. 11): AVG_bLN > AVG_critical.
pub const K_LARGE_BLOCKS: f64 = 1.005;
/// The decision tree's k: AVG_critical / 2 < AVG_bLN ≤ AVG_critical.
pub const K_MEDIUM_BLOCKS: f64 = 1.01;
/// The decision tree's k: AVG_bLN ≤ AVG_critical / 2.
pub const K_SMALL_BLOCKS: f64 = 1.03;

/// Multiprocessors of the H200: candidate block counts are whole multiples of it, so the
/// blocks fill whole waves of the device.
pub const DEVICE_SMS: usize = 132;
/// Candidate counts stay at or below one block per this many rows on average (one warp of
/// rows per thread block), and at or below `DEVICE_SMS` for smaller matrices.
pub const MIN_ROWS_PER_BLOCK: usize = 32;
/// Multiples of `DEVICE_SMS` are tried one by one up to this many waves, then doubling.
pub const DENSE_WAVES: usize = 64;
/// Algorithm 1 probes every block count 2..=this, then only the candidate counts above.
pub const CRITICAL_DENSE_LIMIT: usize = 4096;

/// Row lengths in TEB's sorted order (longest first), as runs of equal length.
#[derive(Clone, Debug)]
pub struct SortedLengths {
    /// Distinct row lengths, descending.
    len: Vec<usize>,
    /// `start[j]`: sorted position of run `j`'s first row; `start[runs] = rows`.
    start: Vec<usize>,
    nnz: usize,
}

impl SortedLengths {
    /// From CSR row offsets (a counting sort by length: O(rows + longest row)).
    pub fn new(row_ptr: &[usize]) -> Self {
        let rows = row_ptr.len().saturating_sub(1);
        let max = row_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        let mut count = vec![0usize; max + 1];
        for w in row_ptr.windows(2) {
            count[w[1] - w[0]] += 1;
        }
        let (mut len, mut start) = (Vec::new(), vec![0]);
        for (l, &c) in count.iter().enumerate().rev().filter(|(_, &c)| c > 0) {
            len.push(l);
            start.push(start.last().unwrap() + c);
        }
        debug_assert_eq!(*start.last().unwrap(), rows);
        SortedLengths {
            len,
            start,
            nnz: row_ptr.last().copied().unwrap_or(0) - row_ptr.first().copied().unwrap_or(0),
        }
    }
    /// Number of rows.
    pub fn rows(&self) -> usize {
        *self.start.last().unwrap()
    }
    /// Entries of all the rows.
    pub fn nnz(&self) -> usize {
        self.nnz
    }
    /// The longest row (the paper's `Row_NNZNum[0]`).
    pub fn max_len(&self) -> usize {
        self.len.first().copied().unwrap_or(0)
    }
    /// Number of distinct row lengths.
    pub fn runs(&self) -> usize {
        self.len.len()
    }
    /// Length of the row at sorted position `p` (binary search over the runs).
    pub fn len_at(&self, p: usize) -> usize {
        self.len[self.start.partition_point(|&s| s <= p) - 1]
    }
}

/// One TEB block as Algorithm 2 forms it: `head` rows in sorted order from the begin cursor
/// (1 for every block but the last, which takes every row still left; 0 for an empty block),
/// then `tail` rows from the end cursor, shortest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergedBlock {
    /// Rows taken from the begin cursor (the longest left).
    pub head: usize,
    /// Rows taken from the end cursor (the shortest left).
    pub tail: usize,
    /// Entries of the block's rows.
    pub nnz: usize,
}

/// `Threshold_bLN = AVG_bLN · k` with `AVG_bLN = NNZ / bLN` (eqs. 3–4).
pub fn threshold(nnz: usize, blocks: usize, k: f64) -> f64 {
    nnz as f64 / blocks as f64 * k
}

/// Largest `t ≤ avail` with `sum + t·len ≤ threshold` (compared exactly: the sums are
/// integers below 2^53).
fn rows_that_fit(sum: usize, len: usize, avail: usize, threshold: f64) -> usize {
    let fits = |t: usize| ((sum + t * len) as f64) <= threshold;
    if avail == 0 || !fits(1) {
        return 0;
    }
    if len == 0 {
        return avail;
    }
    let mut t = (((threshold - sum as f64) / len as f64).floor().max(0.0) as usize).min(avail);
    while t < avail && fits(t + 1) {
        t += 1;
    }
    while t > 0 && !fits(t) {
        t -= 1;
    }
    t
}

/// The reordering row merge (Algorithm 2, with `≤`) into `blocks` blocks; calls `emit` for
/// each block in order.
///
/// Block i (all but the last) starts with the longest row left (the begin cursor), then
/// takes the shortest rows left (the end cursor) while its nnz plus the next one's stays
/// `≤ threshold`, never passing the begin cursor. The last block takes every row left.
/// Blocks formed after every row is taken are empty.
pub fn merge(s: &SortedLengths, blocks: usize, threshold: f64, mut emit: impl FnMut(MergedBlock)) {
    // Rows begin..end (sorted positions) are not yet in a block.
    let (mut begin, mut end) = (0usize, s.rows());
    let mut nnz_left = s.nnz;
    let (mut begin_run, mut end_run) = (0usize, s.runs().saturating_sub(1));
    for b in 0..blocks {
        if begin == end {
            emit(MergedBlock { head: 0, tail: 0, nnz: 0 });
            continue;
        }
        if b + 1 == blocks {
            emit(MergedBlock { head: end - begin, tail: 0, nnz: nnz_left });
            (begin, nnz_left) = (end, 0);
            continue;
        }
        while s.start[begin_run + 1] <= begin {
            begin_run += 1;
        }
        let mut sum = s.len[begin_run];
        begin += 1;
        let mut tail = 0;
        while begin < end {
            while s.start[end_run] >= end {
                end_run -= 1; // start[0] = 0 < end: stops
            }
            let len = s.len[end_run];
            let avail = end - s.start[end_run].max(begin);
            let take = rows_that_fit(sum, len, avail, threshold);
            sum += take * len;
            tail += take;
            end -= take;
            if take < avail {
                break;
            }
        }
        nnz_left -= sum;
        emit(MergedBlock { head: 1, tail, nnz: sum });
    }
}

/// The blocks of [`merge`], collected.
pub fn merge_blocks(s: &SortedLengths, blocks: usize, threshold: f64) -> Vec<MergedBlock> {
    let mut v = Vec::with_capacity(blocks);
    merge(s, blocks, threshold, |b| v.push(b));
    v
}

/// Variance of the blocks' nnz around `NNZ / blocks` (eq. 5), of any partition.
pub fn variance(block_nnz: &[usize]) -> f64 {
    if block_nnz.is_empty() {
        return 0.0;
    }
    let avg = block_nnz.iter().sum::<usize>() as f64 / block_nnz.len() as f64;
    block_nnz.iter().map(|&b| (b as f64 - avg).powi(2)).sum::<f64>() / block_nnz.len() as f64
}

/// The largest block's nnz over the mean block's, of any partition: 1 for equal blocks (and
/// for a partition without entries).
pub fn max_over_mean(block_nnz: &[usize]) -> f64 {
    let nnz: usize = block_nnz.iter().sum();
    if nnz == 0 {
        return 1.0;
    }
    let mean = nnz as f64 / block_nnz.len() as f64;
    *block_nnz.iter().max().unwrap() as f64 / mean
}

/// Variance (eq. 5) of the merge into `blocks` blocks with threshold `threshold`.
pub fn merge_variance(s: &SortedLengths, blocks: usize, threshold: f64) -> f64 {
    let avg = s.nnz as f64 / blocks as f64;
    let mut acc = 0.0f64;
    merge(s, blocks, threshold, |b| {
        let d = b.nnz as f64 - avg;
        acc += d * d;
    });
    acc / blocks as f64
}

/// Block counts that give whole waves on the device: every count 2..=rows when the matrix
/// has at most `DEVICE_SMS · MIN_ROWS_PER_BLOCK` rows (capped at `DEVICE_SMS`), otherwise
/// multiples of `DEVICE_SMS` (one by one up to `DENSE_WAVES` waves, then doubling) up to one
/// block per `MIN_ROWS_PER_BLOCK` rows.
pub fn wave_counts(rows: usize) -> Vec<usize> {
    let upper = (rows / MIN_ROWS_PER_BLOCK).max(rows.min(DEVICE_SMS));
    if upper <= DEVICE_SMS {
        return (2..=upper).collect();
    }
    let mut v: Vec<usize> =
        (1..=DENSE_WAVES).map(|j| j * DEVICE_SMS).take_while(|&c| c <= upper).collect();
    let mut c = DENSE_WAVES * DEVICE_SMS * 2;
    while c <= upper {
        v.push(c);
        c *= 2;
    }
    v
}

/// TEB's bounded set of block counts: every count 2..=min(rows, DEVICE_SMS − 1) (so the
/// eq. (10) stop always leaves some), then the [`wave_counts`] above.
pub fn candidate_counts(rows: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (2..DEVICE_SMS.min(rows + 1)).collect();
    v.extend(wave_counts(rows).into_iter().filter(|&c| c >= DEVICE_SMS));
    v
}

/// Algorithm 1's critical block count: the first count of `sequence` for which the merge
/// with k = 1.01 has a lower variance than with k = 1 (eq. 7). Probed in parallel in
/// chunks; the first hit in order wins.
pub fn critical_blocks(s: &SortedLengths, sequence: &[usize]) -> Option<usize> {
    let nnz = s.nnz;
    let hit = |&i: &usize| {
        merge_variance(s, i, threshold(nnz, i, K_ONE))
            > merge_variance(s, i, threshold(nnz, i, K_PROBE))
    };
    sequence.chunks(128).find_map(|chunk| chunk.par_iter().find_first(|i| hit(i)).copied())
}

/// The sequence Algorithm 1 probes for a search up to `largest` blocks: every count
/// 2..=min(largest, rows, CRITICAL_DENSE_LIMIT), then the candidate counts above.
pub fn critical_sequence(rows: usize, candidates: &[usize]) -> Vec<usize> {
    let largest = candidates.last().copied().unwrap_or(0);
    let dense = largest.min(rows).min(CRITICAL_DENSE_LIMIT);
    let mut v: Vec<usize> = (2..=dense).collect();
    v.extend(candidates.iter().copied().filter(|&c| c > dense));
    v
}

/// The decision tree of Fig. 11: k for `blocks` blocks given the critical count.
///
/// Algorithm 1 looks for the critical count among the counts below `blocks`; when there is
/// none (no critical count, or one ≥ `blocks`), AVG_critical ≤ AVG_bLN does not exist below
/// and the tree's first branch applies: k = 1.005.
pub fn k_for(nnz: usize, blocks: usize, critical: Option<usize>) -> f64 {
    match critical {
        Some(c) if c < blocks => {
            let avg = nnz as f64 / blocks as f64;
            let avg_critical = nnz as f64 / c as f64;
            if avg > avg_critical {
                K_LARGE_BLOCKS
            } else if avg > avg_critical / 2.0 {
                K_MEDIUM_BLOCKS
            } else {
                K_SMALL_BLOCKS
            }
        }
        _ => K_LARGE_BLOCKS,
    }
}

/// The block count TEB uses and how it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The block count chosen.
    pub blocks: usize,
    /// The decision tree's offset parameter k for that count.
    pub k: f64,
    /// `Threshold_bLN = AVG_bLN · k`: the entries a block is filled up to (eqs. 3–4).
    pub threshold: f64,
    /// Variance of the blocks' nnz (eq. 5).
    pub variance: f64,
    /// Algorithm 1's critical count (None: not found in the probed sequence).
    pub critical: Option<usize>,
    /// Candidate counts evaluated (those before the eq. (10) stop).
    pub tried: usize,
}

/// Algorithm 1 and the block-count search: for each candidate count (ascending) k from the
/// decision tree and Threshold = AVG·k; stop at the first count whose threshold is below
/// half the longest row (eq. 10); keep the count with the smallest variance (the smallest
/// count on ties). `rows ≤ 1` gives `rows` blocks.
pub fn choose_blocks(s: &SortedLengths) -> Choice {
    let (rows, nnz) = (s.rows(), s.nnz);
    if rows <= 1 {
        let t = threshold(nnz, rows.max(1), K_LARGE_BLOCKS);
        return Choice {
            blocks: rows,
            k: K_LARGE_BLOCKS,
            threshold: t,
            variance: 0.0,
            critical: None,
            tried: 0,
        };
    }
    let candidates = candidate_counts(rows);
    let critical = critical_blocks(s, &critical_sequence(rows, &candidates));
    let allowed: Vec<(usize, f64, f64)> = candidates
        .iter()
        .map(|&b| {
            let k = k_for(nnz, b, critical);
            (b, k, threshold(nnz, b, k))
        })
        .take_while(|&(_, _, t)| s.max_len() as f64 <= 2.0 * t)
        .collect();
    let variances: Vec<f64> =
        allowed.par_iter().map(|&(b, _, t)| merge_variance(s, b, t)).collect();
    // Non-empty: count 2 always passes eq. (10) since 2·Threshold_2 = NNZ·k ≥ the longest row.
    let best =
        (0..allowed.len()).fold(0, |best, i| if variances[i] < variances[best] { i } else { best });
    let (blocks, k, t) = allowed[best];
    Choice { blocks, k, threshold: t, variance: variances[best], critical, tried: allowed.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths(lens: &[usize]) -> SortedLengths {
        let mut row_ptr = vec![0];
        for &l in lens {
            row_ptr.push(row_ptr.last().unwrap() + l);
        }
        SortedLengths::new(&row_ptr)
    }

    /// Algorithm 2 row by row, as printed (with `≤` and the cursor check), on a plain sorted
    /// list: the reference the run-based merge must equal.
    fn merge_rowwise(lens: &[usize], blocks: usize, threshold: f64) -> Vec<MergedBlock> {
        let mut sorted = lens.to_vec();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let (mut begin, mut end) = (0usize, sorted.len());
        let mut out = Vec::new();
        for b in 0..blocks {
            if begin == end {
                out.push(MergedBlock { head: 0, tail: 0, nnz: 0 });
            } else if b + 1 == blocks {
                out.push(MergedBlock {
                    head: end - begin,
                    tail: 0,
                    nnz: sorted[begin..end].iter().sum(),
                });
                begin = end;
            } else {
                let mut sum = sorted[begin];
                begin += 1;
                let mut tail = 0;
                while begin < end && (sum + sorted[end - 1]) as f64 <= threshold {
                    sum += sorted[end - 1];
                    end -= 1;
                    tail += 1;
                }
                out.push(MergedBlock { head: 1, tail, nnz: sum });
            }
        }
        out
    }

    #[test]
    fn the_papers_example_merges_into_four_balanced_blocks() {
        // Row lengths of Fig. 1's matrix A; bLN = 4, k = 1: Threshold = 4 (Fig. 13).
        let s = lengths(&[3, 1, 2, 2, 1, 2, 1, 4]);
        assert_eq!(threshold(s.nnz(), 4, 1.0), 4.0);
        let blocks = merge_blocks(&s, 4, 4.0);
        let nnz: Vec<usize> = blocks.iter().map(|b| b.nnz).collect();
        assert_eq!(nnz, [4, 4, 4, 4]);
        // {4}, {3,1}, {2,1,1}, {2,2}
        let shape: Vec<(usize, usize)> = blocks.iter().map(|b| (b.head, b.tail)).collect();
        assert_eq!(shape, [(1, 0), (1, 1), (1, 2), (2, 0)]);
        assert_eq!(merge_variance(&s, 4, 4.0), 0.0);
        // The printed `<` would stop block 0 at {4} but give block 1 only {3}: not Fig. 13.
        assert_eq!(merge_blocks(&s, 4, 4.0 - 1e-9)[1].nnz, 3);
    }

    #[test]
    fn block_balance_figures_of_any_partition() {
        // AMF-CSR's sub-blocks of the TEB paper's Fig. 5: S² = 8/9, max 6 over mean 16/3.
        assert!((variance(&[6, 6, 4]) - 8.0 / 9.0).abs() < 1e-12);
        assert!((max_over_mean(&[6, 6, 4]) - 1.125).abs() < 1e-12);
        assert_eq!((variance(&[4; 4]), max_over_mean(&[4; 4])), (0.0, 1.0));
        // No entries, or no blocks: balanced.
        assert_eq!((variance(&[]), max_over_mean(&[])), (0.0, 1.0));
        assert_eq!(max_over_mean(&[0, 0]), 1.0);
    }

    #[test]
    fn run_based_merge_equals_the_row_by_row_algorithm() {
        let mut state = 99u64;
        let mut next = |k: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % k
        };
        for case in 0..400 {
            let rows = 1 + next(60) as usize;
            let lens: Vec<usize> = (0..rows)
                .map(|_| match next(10) {
                    0 => 0,
                    1 => next(200) as usize,
                    _ => next(8) as usize,
                })
                .collect();
            let s = lengths(&lens);
            for blocks in 1..=rows + 2 {
                for k in [0.7, 1.0, 1.005, 1.01, 1.03, 1.5] {
                    let t = threshold(s.nnz(), blocks, k);
                    assert_eq!(
                        merge_blocks(&s, blocks, t),
                        merge_rowwise(&lens, blocks, t),
                        "case {case}: {lens:?}, {blocks} blocks, k = {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_row_lands_in_exactly_one_block() {
        let lens = [0, 0, 5, 9, 1, 1, 0, 30, 2, 2, 2, 7];
        let s = lengths(&lens);
        for blocks in 1..20 {
            for k in [1.0, 1.03] {
                let b = merge_blocks(&s, blocks, threshold(s.nnz(), blocks, k));
                assert_eq!(b.len(), blocks);
                assert_eq!(b.iter().map(|b| b.head + b.tail).sum::<usize>(), lens.len());
                assert_eq!(b.iter().map(|b| b.nnz).sum::<usize>(), s.nnz());
            }
        }
        // Empty matrix: every block empty.
        let empty = lengths(&[]);
        assert!(merge_blocks(&empty, 3, 0.0)
            .iter()
            .all(|b| *b == MergedBlock { head: 0, tail: 0, nnz: 0 }));
    }

    #[test]
    fn decision_tree_and_critical_count() {
        // No critical count below bLN: k = 1.005.
        assert_eq!(k_for(1000, 10, None), K_LARGE_BLOCKS);
        assert_eq!(k_for(1000, 10, Some(10)), K_LARGE_BLOCKS);
        assert_eq!(k_for(1000, 10, Some(20)), K_LARGE_BLOCKS);
        // AVG_critical / 2 < AVG_bLN ≤ AVG_critical: 1.01; below half: 1.03.
        assert_eq!(k_for(1000, 10, Some(6)), K_MEDIUM_BLOCKS);
        assert_eq!(k_for(1000, 13, Some(6)), K_SMALL_BLOCKS);
        assert_eq!(k_for(1000, 11, Some(6)), K_MEDIUM_BLOCKS);

        // Fig. 1's matrix: the first count with S²(k = 1) > S²(k = 1.01).
        let s = lengths(&[3, 1, 2, 2, 1, 2, 1, 4]);
        let c = critical_blocks(&s, &critical_sequence(8, &candidate_counts(8)));
        for i in 2..c.unwrap_or(9) {
            let (v1, v2) = (
                merge_variance(&s, i, threshold(16, i, 1.0)),
                merge_variance(&s, i, threshold(16, i, 1.01)),
            );
            assert!(v1 <= v2, "{i} blocks: {v1} > {v2} comes before the critical count {c:?}");
        }
        if let Some(c) = c {
            assert!(
                merge_variance(&s, c, threshold(16, c, 1.0))
                    > merge_variance(&s, c, threshold(16, c, 1.01))
            );
        }
    }

    #[test]
    fn the_block_count_search_stops_at_eq_10_and_minimises_the_variance() {
        // One row of 1000 among 4000 rows of 2: NNZ = 9000. Threshold_bLN ≥ 500 needs
        // bLN ≤ 18.09 (k = 1.005): counts above are never tried.
        let mut lens = vec![2; 4000];
        lens[17] = 1000;
        let s = lengths(&lens);
        let c = choose_blocks(&s);
        assert!(c.tried >= 2);
        assert!(c.blocks <= 18, "{c:?}");
        assert!(s.max_len() as f64 <= 2.0 * c.threshold);
        let tried = &candidate_counts(4000)[..c.tried];
        assert_eq!(*tried.last().unwrap(), 18);
        for &b in tried {
            let k = k_for(s.nnz(), b, c.critical);
            assert!(merge_variance(&s, b, threshold(s.nnz(), b, k)) >= c.variance);
        }
        // A single row or none.
        assert_eq!(choose_blocks(&lengths(&[5])).blocks, 1);
        assert_eq!(choose_blocks(&lengths(&[])).blocks, 0);
    }

    #[test]
    fn candidate_counts_are_bounded_and_fill_waves() {
        assert_eq!(candidate_counts(1), Vec::<usize>::new());
        assert_eq!(candidate_counts(8), (2..=8).collect::<Vec<_>>());
        assert_eq!(*candidate_counts(1000).last().unwrap(), 132);
        let big = candidate_counts(2_000_000);
        assert!(big.windows(2).all(|w| w[0] < w[1]));
        assert!(big.iter().filter(|&&c| c >= DEVICE_SMS).all(|c| c % DEVICE_SMS == 0));
        assert!(*big.last().unwrap() <= 2_000_000 / MIN_ROWS_PER_BLOCK);
        assert!(big.len() < 250);
        assert_eq!(wave_counts(100), (2..=100).collect::<Vec<_>>());
        assert!(wave_counts(1_000_000).iter().all(|c| c % DEVICE_SMS == 0));
    }
}
