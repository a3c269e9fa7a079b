use super::*;
use crate::formats::test_support::prelude::*;

fn bits<T: Scalar>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

fn decoded<T: Scalar>(e: &EncodedValues<T>) -> Vec<T> {
    (0..e.len()).map(|i| e.get(i)).collect()
}

/// Every codec that qualifies for `values` decodes to the same bits; the others are declined.
fn round_trips<T: Scalar>(values: &[T]) -> Vec<ValueCodec> {
    let analysis = analyse(values);
    let mut fits = Vec::new();
    for codec in ValueCodec::ALL {
        match EncodedValues::encode(values, ValueChoice::Codec(codec), "test") {
            Ok(e) => {
                assert!(analysis.check(codec, values).is_ok());
                assert_eq!(bits(&decoded(&e)), bits(values), "{codec:?}");
                assert_eq!(
                    e.device_bytes(),
                    values.len() * codec.code_bytes::<T>()
                        + e.table.len() * std::mem::size_of::<T>()
                );
                fits.push(codec);
            }
            Err(e) => assert!(e.to_string().contains(&format!("values={}", codec.name())), "{e}"),
        }
    }
    fits
}

#[test]
fn each_codec_qualifies_exactly_when_its_values_decode_to_the_same_bits() {
    use ValueCodec::*;
    assert_eq!(round_trips(&[2.0f64; 5]), [Pattern, I8, Dict8, I16, F16, Dict16, F32, Full]);
    assert_eq!(
        round_trips(&[1.0f64, -3.0, 127.0, -127.0]),
        [I8, Dict8, I16, F16, Dict16, F32, Full]
    );
    // 128 is outside the symmetric i8 range; -0.0 is not the integer 0.
    assert_eq!(round_trips(&[1.0f64, 128.0]), [Dict8, I16, F16, Dict16, F32, Full]);
    assert_eq!(round_trips(&[1.0f64, -0.0]), [Dict8, F16, Dict16, F32, Full]);
    assert_eq!(round_trips(&[0.5f64, 0.25, 1e-3]), [Dict8, Dict16, Full]);
    assert_eq!(round_trips(&[0.5f64, 2f64.powi(100), 1.0 / 1024.0]), [Dict8, Dict16, F32, Full]);
    let many: Vec<f64> = (0..300).map(|i| i as f64 + 0.5).collect();
    assert_eq!(round_trips(&many), [F16, Dict16, F32, Full]);
    let too_many: Vec<f64> = (0..70_000).map(|i| i as f64 * 0.1).collect();
    assert_eq!(round_trips(&too_many), [Full]);
    // f32 values: no f32 codes; f16 values: neither f16 nor f32 codes.
    assert_eq!(round_trips(&[0.5f32, 0.25]), [Dict8, F16, Dict16, Full]);
    let h: Vec<crate::f16> = [4096.0, -2.0, 0.5].iter().map(|&v| crate::f16::from_f64(v)).collect();
    assert_eq!(round_trips(&h), [Dict8, Dict16, Full]);
    let h: Vec<crate::f16> = [4096.0, -2.0].iter().map(|&v| crate::f16::from_f64(v)).collect();
    assert_eq!(round_trips(&h), [Dict8, I16, Dict16, Full]);
    // No entries: every codec holds them.
    assert_eq!(round_trips::<f64>(&[]).len(), 8);
}

#[test]
fn auto_takes_the_narrowest_and_reasons_name_an_entry() {
    let enc = |v: &[f64]| EncodedValues::encode(v, ValueChoice::Auto, "test").unwrap().codec();
    assert_eq!(enc(&[3.0; 10]), ValueCodec::Pattern);
    assert_eq!(enc(&[3.0, -1.0]), ValueCodec::I8);
    assert_eq!(enc(&[0.1, 0.7, 0.1]), ValueCodec::Dict8);
    assert_eq!(enc(&(0..1000).map(|i| i as f64 + 0.5).collect::<Vec<_>>()), ValueCodec::F16);
    assert_eq!(enc(&(0..70_000).map(|i| i as f64 * 0.1).collect::<Vec<_>>()), ValueCodec::Full);
    let e =
        EncodedValues::encode(&[1.0, 2.0, 0.5], ValueChoice::Codec(ValueCodec::I8), "csr-vector")
            .unwrap_err();
    assert_eq!(
        e.to_string(),
        "format csr-vector: values=i8: entry 2 (value 0.5) is not an integer in -127..=127"
    );
    let e = EncodedValues::encode(&[1.0, 2.0], ValueChoice::Codec(ValueCodec::Pattern), "dia")
        .unwrap_err();
    assert!(e.to_string().contains("entry 1 (value 2) differs from the first"), "{e}");
    let e =
        EncodedValues::encode(&[1.0f32], ValueChoice::Codec(ValueCodec::F32), "dia").unwrap_err();
    assert!(e.to_string().contains("nothing narrower than f32"), "{e}");
    assert_eq!(ValueChoice::parse("dict16"), Some(ValueChoice::Codec(ValueCodec::Dict16)));
    assert_eq!(ValueChoice::parse("auto"), Some(ValueChoice::Auto));
    assert_eq!(ValueChoice::parse("i32"), None);
    for name in VALUE_CHOICES {
        assert!(ValueChoice::parse(name).is_some(), "{name}");
    }
}

#[test]
fn the_dictionary_is_in_order_of_first_appearance() {
    let v = [0.7, 0.1, 0.7, 0.3];
    let e = EncodedValues::encode(&v, ValueChoice::Codec(ValueCodec::Dict8), "test").unwrap();
    assert_eq!(e.table, [0.7, 0.1, 0.3]);
    assert_eq!(e.codes, [0, 1, 0, 2]);
    assert_eq!(e.bytes_read(4), 4 + 3 * 8);
}

#[test]
fn a_large_analysis_in_parallel_finds_the_same_as_a_small_one() {
    let mut v: Vec<f64> = (0..1_000_000).map(|i| (i % 200) as f64 - 100.0).collect();
    let a = analyse(&v);
    assert_eq!(a.distinct, 200);
    assert_eq!(a.narrowest(&v), ValueCodec::I8);
    v[777_777] = 0.5;
    let a = analyse(&v);
    assert_eq!(a.distinct, 201);
    assert!(a.check(ValueCodec::I8, &v).unwrap_err().contains("entry 777777"));
    assert_eq!(a.narrowest(&v), ValueCodec::Dict8);
}

proptest! {
    #[test]
    fn random_values_round_trip_in_every_qualifying_codec(
        v in proptest::collection::vec(prop_oneof![
            (-130i32..130).prop_map(f64::from),
            (0u8..4).prop_map(|k| f64::from(k) * 0.25),
            any::<f64>().prop_filter("finite", |x| x.is_finite()),
            Just(-0.0),
        ], 0..200)
    ) {
        round_trips(&v);
        let v32: Vec<f32> = v.iter().map(|&x| x as f32).filter(|x| x.is_finite()).collect();
        round_trips(&v32);
    }
}

#[test]
fn column_deltas_fit_rows_spanning_fewer_than_65536_columns() {
    use super::columns::Delta16Columns;
    let a = small_csr((3, 200_000), &[0, 2, 2, 5], &[5, 65_540, 100, 30_000, 65_635], &[1.0; 5]);
    let d = Delta16Columns::of(&a, "csr-vector").unwrap();
    assert_eq!(
        (d.bases.as_slice(), d.deltas.as_slice()),
        (&[5, 0, 100][..], &[0, 65_535, 0, 29_900, 65_535][..])
    );
    assert!((0..5).all(|i| d.col([0, 0, 2, 2, 2][i], i) == a.col_idx()[i]));
    assert_eq!(d.device_bytes(), 2 * 5 + 4 * 3);
    let wide = small_csr((2, 200_000), &[0, 1, 3], &[7, 1, 65_537], &[1.0; 3]);
    let e = Delta16Columns::of(&wide, "csr-vector").unwrap_err();
    assert_eq!(e.to_string(), "format csr-vector: cols=delta16: row 1 spans 65536 columns, more than 65,535 from its first");
}
