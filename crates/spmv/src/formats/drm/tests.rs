use super::*;
use std::sync::Arc;

use crate::formats::hdia::Hdia;
use crate::formats::test_support::diagonal::*;
use crate::formats::test_support::prelude::*;
use crate::formats::DeviceFormat;
use crate::formats::HostMatrix;
use crate::gpu::Gpu;

/// DRM with segments of `rows` rows, run on the GPU in one launch for all its sub-blocks
/// (`single`) or in one launch per size class.
#[derive(Clone, Copy, Debug)]
struct Launches {
    rows: usize,
    single: bool,
}

impl Case for Launches {
    fn build<T: Scalar>(self, a: &Csr<T>) -> Result<HostMatrix<T>> {
        format!("drm:segment_rows={}", self.rows).as_str().build(a)
    }
    fn upload<T: Scalar>(self, gpu: &Arc<Gpu>, a: &Csr<T>) -> Result<Box<dyn DeviceFormat<T>>> {
        let f = Drm::with_segment_rows(a, self.rows)?;
        let plan = f.launch_plan(if self.single { usize::MAX } else { 0 });
        Ok(Box::new(gpu::DeviceDrm::with_plan(gpu, &f, plan)?))
    }
}

#[test]
fn worked_example_gives_the_documented_arrays() {
    let a = example();
    let f = Drm::with_segment_rows(&a, 2).unwrap();
    assert_eq!(f.drm_blo(), &[0, 2, 4]);
    assert_eq!(f.drm_index(), &[2, 0, 3, 1]);
    assert_eq!(f.drm_dnum(), &[0, 4, 5, 8, 10]);
    assert_eq!(f.drm_off(), &[-2, 0, 1, 3, 0, -2, 0, 1, 0, 1]);
    #[rustfmt::skip]
    let val = [7.0, 11.0, 8.0, 12.0, 9.0, 13.0, 10.0, 0.0, 1.0, 2.0, 14.0, 17.0, 15.0, 18.0, 16.0, 0.0, 3.0, 5.0, 4.0, 6.0];
    assert_eq!(f.drm_val(), &val);
    assert_eq!(f.launches(), &[Launch { first: 0, sub_blocks: 2, segments: 2 }]);
    // Two sub-blocks of 10 operands: variance 0, against 5 over the segments.
    let (blocks, segments) = (f.operand_spread(), f.segment_operand_spread());
    assert_eq!((blocks.units, blocks.mean, blocks.variance), (2, 10.0, 0.0));
    assert_eq!((segments.units, segments.variance), (4, 5.0));
    let s = f.stats();
    assert_eq!((s.stored, s.padded_zeros()), (20, 2));
    assert_eq!(s.bytes, 4 * (3 + 4 + 5 + 10) + 8 * 20);
    assert_example_product("drm:segment_rows=2");
}

#[test]
fn drm_stores_the_slots_of_hdia_reordered() {
    let a = crate::io::gen::generate(
        "banded:n=20000,offsets=-900;-3;-1;0;1;2;40,broken=0.4,seg=700,scatter=0.02",
    )
    .unwrap();
    for h in [1, 2, 32, 33, 1024] {
        let (drm, hdia) =
            (Drm::with_segment_rows(&a, h).unwrap(), Hdia::with_hack_rows(&a, h).unwrap());
        assert_eq!(drm.stored(), hdia.stored(), "h = {h}");
        assert_eq!(
            drm.bytes_read() - drm.index_bytes(),
            hdia.bytes_read() - 4 * (hdia.hacks() + 1 + hdia.offsets().len())
        );
        let mut sorted = drm.drm_index().to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..hdia.hacks() as u32).collect::<Vec<_>>());
        assert!(drm.launches().iter().all(|l| l.segments as usize * h <= MAX_SUB_BLOCK_ROWS));
        let covered: u32 = drm.launches().iter().map(|l| l.sub_blocks).sum();
        assert_eq!(covered as usize, drm.sub_blocks());
        assert!(cpu_matches_oracle(&drm, &a), "h = {h}");
        // Merging balances: the sub-blocks' spread (relative) is below the segments'.
        if h == 32 {
            assert!(drm.operand_spread().cv() < drm.segment_operand_spread().cv());
        }
    }
}

#[test]
fn empty_segments_merge_and_still_write_zeros() {
    // A band in the first 1000 rows only, then 100 000 empty rows: the empty segments
    // all merge into one group, split into sub-blocks of at most 32 segments.
    let band = crate::io::gen::generate("banded:n=1000,offsets=-1;0;1").unwrap();
    let (_, _, mut row_ptr, cols, vals) = band.into_parts();
    row_ptr.resize(101_001, *row_ptr.last().unwrap());
    let a = Csr::new_checked(101_000, 1000, row_ptr, cols, vals).unwrap();
    let f = Drm::new(&a).unwrap();
    assert!(f.launches().len() >= 2, "{:?}", f.launches());
    assert_eq!(f.launches()[0].segments, 32);
    assert!(cpu_matches_oracle(&f, &a));
}

#[test]
fn one_launch_when_the_grid_fits_else_one_per_size() {
    let band = crate::io::gen::generate("banded:n=1000,offsets=-1;0;1").unwrap();
    let (_, _, mut row_ptr, cols, vals) = band.into_parts();
    row_ptr.resize(101_001, *row_ptr.last().unwrap());
    let f = Drm::new(&Csr::new_checked(101_000, 1000, row_ptr, cols, vals).unwrap()).unwrap();
    let classes = f.launches().to_vec();
    assert!(classes.len() >= 2 && classes[0].segments == 32, "{classes:?}");
    let threads = f.sub_blocks() * 32 * 32;
    assert_eq!(
        f.launch_plan(threads),
        vec![Launch { first: 0, sub_blocks: f.sub_blocks() as u32, segments: 32 }]
    );
    assert_eq!(f.launch_plan(threads - 1), classes);
    // One size class: always its own single launch.
    let f = Drm::with_segment_rows(&example(), 2).unwrap();
    assert_eq!(f.launch_plan(0), f.launches());
    assert_eq!(f.stats().extra.iter().find(|e| e.0 == "size_classes").unwrap().1, 1.0);
}

#[test]
fn bad_segment_heights_are_format_errors() {
    for h in [0, 1025] {
        assert!(matches!(Drm::with_segment_rows(&example(), h), Err(Error::Format { .. })));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn gpu_matches_the_oracle_for_several_segment_heights() {
    let a = crate::io::gen::generate(
        "banded:n=20011,offsets=-900;-3;-1;0;1;2;40,broken=0.4,seg=700,scatter=0.02",
    )
    .unwrap();
    let cases = [1, 2, 7, 32, 33, 100, 1024]
        .map(|rows| [false, true].map(|single| Launches { rows, single }));
    assert_gpu_matches_oracle(&a, cases.into_iter().flatten());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_diagonal_matrices_match_the_oracle(a in random_diagonal_csr(), h in 1usize..40) {
        // HDIA's hacks, regrouped: as many segments, the same slots.
        let (f, hdia) = (Drm::with_segment_rows(&a, h).unwrap(), Hdia::with_hack_rows(&a, h).unwrap());
        prop_assert_eq!((f.segments(), f.stored()), (hdia.hacks(), hdia.stored()));
        prop_assert_eq!(f.segments(), a.nrows().div_ceil(h));
        prop_assert_eq!(*f.drm_blo().last().unwrap() as usize, f.segments());
        prop_assert_eq!(*f.drm_dnum().last().unwrap() as usize * h, f.stored());
        let spec = format!("drm:segment_rows={h}");
        prop_assert!(cpu_matches_in_both_precisions(spec.as_str(), &a));
        prop_assert!(cpu_matches_in_both_precisions("drm", &a));
    }
}
