use super::*;
use crate::formats::FormatHandle;

#[test]
fn features_describe_shape_rows_and_diagonals() {
    let a = crate::io::gen::generate("poisson2d:n=100").unwrap();
    let f = Features::of(&a, TRAINING_L2_BYTES);
    assert_eq!((f.rows, f.nnz), (10_000.0, a.nnz() as f64));
    assert!((f.mean_row - 4.96).abs() < 1e-9);
    assert!(f.row_cv < 0.1 && f.max_over_mean < 1.1 && f.empty_rows == 0.0);
    // Five diagonals of 10^4 rows for 49,600 entries (estimated on every third row).
    assert!((f.diagonal_fill - 5.0 * 10_000.0 / 49_600.0).abs() < 0.01, "{}", f.diagonal_fill);
    assert!(f.col_spread < 0.03);
    let g = Features::of(
        &crate::io::gen::generate("powerlaw:n=20000,mean=8,exp=1.9").unwrap(),
        TRAINING_L2_BYTES,
    );
    assert!(g.row_cv > 1.0 && g.max_over_mean > 10.0 && g.diagonal_fill > 100.0, "{g:?}");
    let e = Features::of(&Csr::<f64>::zeros(0, 0), TRAINING_L2_BYTES);
    assert!(e.vector().iter().all(|v| v.is_finite()));
}

#[test]
fn auto_builds_a_candidate_and_says_which() {
    for spec in ["poisson2d:n=60", "kron:scale=12", "longrows:n=20000,short=4,count=2,long=5000"] {
        let a = crate::io::gen::generate(spec).unwrap();
        let (host, choice) = choose(&a, Options::default()).unwrap();
        assert_eq!(host.spec().label(), choice.chosen);
        assert!(candidates::<f64>(false).contains(&choice.chosen.as_str()));
        assert_eq!(choice.ranking.len(), candidates::<f64>(false).len());
        assert!(crate::formats::test_support::cpu_matches_oracle(host.format(), &a));
        let (det, choice) = choose(&a, DETERMINISTIC).unwrap();
        assert!(det.info().deterministic, "{}", choice.chosen);
        let half: Csr<crate::f16> = a.cast();
        let (_, choice) = choose(&half, Options::default()).unwrap();
        let name = crate::formats::parse_spec(&choice.chosen).unwrap().name().to_string();
        assert!(crate::formats::find::<crate::f16>(&name).unwrap().half);
    }
}

/// The shipped model, scored by leave-one-out cross-validation (each matrix predicted from the
/// others): the issue asks ≥ 0.90 of the per-matrix best format's speed.
#[test]
fn the_shipped_models_cross_validate_well() {
    for timing in [Timing::Host, Timing::Graph] {
        let model = Model::h200(timing);
        let count = model.training.matrices.len();
        assert!(count >= 300, "{timing:?}: {count} matrices");
        let names: Vec<String> = {
            let mut c: Vec<String> =
                model.training.matrices.iter().flat_map(|m| m.times_ms.keys().cloned()).collect();
            c.sort();
            c.dedup();
            c
        };
        let candidates: Vec<&str> = names.iter().map(String::as_str).collect();
        let cv = model.cross_validate(&candidates, model.training.k, 1, None);
        assert!(cv.geomean >= 0.90, "{timing:?}: {cv:?}");
    }
}

/// `heldout=true` leaves a training matrix out of its own choice: the ranking is the one
/// leave-one-out cross-validation scores.
#[test]
fn held_out_choice_leaves_the_matrix_out_of_the_model() {
    let candidates = candidates::<f64>(false);
    // Each timing ranks by its own table; the caller's, unset, is host-issued.
    for (timing, set) in [
        (Timing::Host, None),
        (Timing::Host, Some(Timing::Host)),
        (Timing::Graph, Some(Timing::Graph)),
    ] {
        let model = Model::h200(timing);
        let options = Options { timing: set, ..Options::default() };
        let held_out = Options { held_out: true, ..options };
        for (i, m) in model.training.matrices.iter().enumerate().step_by(37) {
            let same = model.same_matrices(&m.features);
            assert!(same.contains(&i), "{}", m.name);
            assert_eq!(
                held_out.rank::<f64>(&m.features),
                model.predict(&m.features, &candidates, model.training.k, &same)
            );
            assert_eq!(
                options.rank::<f64>(&m.features),
                model.predict(&m.features, &candidates, model.training.k, &[])
            );
        }
    }
}

const DETERMINISTIC: Options = Options { deterministic: true, held_out: false, timing: None };

/// On the CPU `tune` measures `auto`'s CPU choice first and the CPU's usual leaders next, so it
/// keeps nothing it measured slower than `auto`'s choice and sees TEB and csr-vector even where
/// the GPU model ranks them low.
#[test]
fn tune_on_the_cpu_measures_autos_choice_and_the_cpu_leaders_first() {
    let budget = std::time::Duration::from_secs(5);
    for spec in ["poisson2d:n=80", "powerlaw:n=40000,mean=4,exp=2.1"] {
        let a = crate::io::gen::generate(spec).unwrap();
        let (_, tuned) =
            tune_with_cache(&crate::Backend::Cpu, &a, budget, Options::default(), None).unwrap();
        let auto = choose_cpu(&a).unwrap().spec().label();
        let labels: Vec<&str> = tuned.measured.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels.first(), Some(&auto.as_str()), "{spec}: {labels:?}");
        for leader in ["csr-vector", "teb"] {
            assert!(labels.contains(&leader), "{spec}: {leader} not measured: {labels:?}");
        }
        let auto_ms = tuned.measured[0].1;
        let chosen_ms = tuned
            .measured
            .iter()
            .find(|(l, _)| *l == crate::formats::parse_spec(&tuned.chosen).unwrap().label());
        assert!(chosen_ms.is_some_and(|(_, ms)| *ms <= auto_ms), "{spec}: {tuned:?}");
    }
}

#[test]
fn tune_measures_the_first_candidates_and_caches_the_answer() {
    let dir = std::env::temp_dir().join(format!("spmv-tune-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let a = crate::io::gen::generate("poisson2d:n=80").unwrap();
    let budget = std::time::Duration::from_secs(5);
    let (host, first) =
        tune_with_cache(&crate::Backend::Cpu, &a, budget, Options::default(), Some(&dir)).unwrap();
    assert!(
        !first.cached && !first.measured.is_empty() && first.measured.len() <= TUNE_CANDIDATES,
        "{first:?}"
    );
    assert_eq!(host.spec().to_string(), first.chosen);
    let fastest = first.measured.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    assert_eq!(crate::formats::parse_spec(&first.chosen).unwrap().label(), fastest.0);
    assert!(crate::formats::test_support::cpu_matches_oracle(host.format(), &a));
    // The second run reads the cache; another matrix or precision does not.
    let (again, second) =
        tune_with_cache(&crate::Backend::Cpu, &a, budget, Options::default(), Some(&dir)).unwrap();
    assert!(second.cached && second.chosen == first.chosen && again.spec() == host.spec());
    let (_, other) = tune_with_cache(
        &crate::Backend::Cpu,
        &a.cast::<f32>(),
        budget,
        Options::default(),
        Some(&dir),
    )
    .unwrap();
    assert!(!other.cached);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "one file per key, no temporary left");
    // Concurrent tuners of one key: every one gets an answer, the file stays whole.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let b = crate::io::gen::generate("poisson2d:n=81").unwrap();
                tune_with_cache(&crate::Backend::Cpu, &b, budget, DETERMINISTIC, Some(&dir))
                    .unwrap();
            });
        }
    });
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(serde_json::from_slice::<Tuned>(&bytes).is_ok());
    }
    // No cache folder: tuning still answers.
    assert!(!tune_with_cache(&crate::Backend::Cpu, &a, budget, Options::default(), None)
        .unwrap()
        .1
        .measured
        .is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fingerprints_tell_matrices_apart() {
    let a = crate::io::gen::generate("poisson2d:n=50").unwrap();
    assert_eq!(fingerprint(&a), fingerprint(&a.clone()));
    let b = Csr::new_checked(
        a.nrows(),
        a.ncols(),
        a.row_ptr().to_vec(),
        a.col_idx().to_vec(),
        a.values().iter().map(|v| v * 2.0).collect(),
    )
    .unwrap();
    assert_ne!(fingerprint(&a), fingerprint(&b));
    assert_ne!(fingerprint(&a), fingerprint(&crate::io::gen::generate("poisson2d:n=51").unwrap()));
}

/// The shipped model's first training matrix that `pick` takes (`what` says which).
fn training_matrix(what: &str, pick: impl Fn(&TrainingMatrix) -> bool) -> &'static TrainingMatrix {
    let found = Model::h200(Timing::Graph).training.matrices.iter().find(|m| pick(m));
    found.unwrap_or_else(|| panic!("no training matrix: {what}"))
}

#[test]
fn auto_passes_over_coo_atomic_where_it_ranks_first() {
    // A training matrix where coo-atomic was the fastest by graph replay: ranked with the
    // model's own data, coo-atomic comes first; auto takes the next that accepts and says why.
    let m = training_matrix("bp_1600", |m| m.name == "bp_1600");
    let graph = Options { timing: Some(Timing::Graph), ..Options::default() };
    let ranking = graph.rank::<f64>(&m.features);
    assert!(passed_over(&ranking[0].0), "{:?}", &ranking[..3]);
    let a = crate::io::gen::generate("random:rows=800,cols=800,mean=6").unwrap();
    let (host, choice) = choose_with(&a, m.features, graph).unwrap();
    assert!(
        !passed_over(&choice.chosen) && host.spec().name() != "coo-atomic",
        "{}",
        choice.chosen
    );
    assert!(
        choice
            .declined
            .iter()
            .any(|(f, why)| f == "coo-atomic" && why.contains("tune measures it")),
        "{:?}",
        choice.declined
    );
}

/// `auto` on the CPU: csr-vector alone where the product runs on the calling thread; above,
/// the faster of its candidates raced on this machine (DIA only where its slots fit), the
/// answer remembered for the matrix; every candidate gives the product of A, with the same
/// bits on f64.
#[test]
fn auto_on_the_cpu_races_its_candidates_and_remembers_the_answer() {
    let auto = crate::choice::Choice::parse("auto").unwrap();
    let cases = [
        ("poisson2d:n=40", vec!["csr-vector"]),
        ("random:rows=2000,cols=2000,mean=5", vec!["csr-vector"]),
        ("random:rows=20000,cols=20000,mean=8", vec!["teb", "csr-vector"]),
        ("poisson3d:n=40", vec!["dia", "teb", "csr-vector"]),
        // A band with holes: DIA's slots are twice its entries.
        ("banded:n=40000,offsets=-2;-1;0;1;2,broken=0.5", vec!["teb", "csr-vector"]),
    ];
    for (spec, expected) in cases {
        let a = crate::io::gen::generate(spec).unwrap();
        assert_eq!(cpu_candidates(&a), expected, "{spec}");
        let x = crate::reference::test_vector::<f64>(a.ncols());
        let product = |h: &HostMatrix<f64>| {
            let mut y = vec![f64::NAN; a.nrows()];
            h.spmv(&x, &mut y).unwrap();
            assert!(crate::reference::Oracle::new(&a, &x).check(&y).passed(), "{spec}");
            y.iter().map(|v| v.to_bits()).collect::<Vec<u64>>()
        };
        let h = auto.build_on(&crate::Backend::Cpu, &a).unwrap();
        let chosen = h.chosen().unwrap();
        assert!(expected.contains(&chosen.as_str()), "{spec}: {chosen}");
        assert_eq!(remembered(&cpu_choice_key(&a)), Some(chosen.clone()), "{spec}: remembered");
        let again = auto.build_on(&crate::Backend::Cpu, &a).unwrap();
        assert_eq!(again.chosen().unwrap(), chosen, "{spec}: the same format again");
        let bits = product(&h);
        for name in expected {
            let other = formats::build(&formats::parse_spec(name).unwrap(), &a).unwrap();
            assert_eq!(product(&other), bits, "{spec}: {name} against {chosen}");
        }
    }
}

/// The race keeps the faster of two formats: csr5's CPU product (a reference loop over its
/// tiles) ran 4–10× slower than csr-vector's on the shared matrices.
#[test]
fn the_cpu_race_finds_the_faster_format() {
    let a = crate::io::gen::generate("random:rows=20000,cols=20000,mean=10").unwrap();
    let build = |name: &str| formats::build(&formats::parse_spec(name).unwrap(), &a).unwrap();
    let (fast, slow) = (build("csr-vector"), build("csr5"));
    let x = crate::reference::test_vector::<f64>(a.ncols());
    let slower = crate::measure::cpu_race([&fast, &slow], &x).unwrap();
    assert!(slower > 1.0 && slower.is_finite(), "csr5 over csr-vector: {slower}");
    let faster = crate::measure::cpu_race([&slow, &fast], &x).unwrap();
    assert!(faster < 1.0 && faster > 0.0, "csr-vector over csr5: {faster}");
}

/// The confidence of a choice reads the neighbours' own times: a training matrix's nearest
/// neighbour is itself, where its fastest format is at 1× and a slower one at its measured
/// ratio, and `tune` is judged worth it where a neighbour lost 15% or more.
#[test]
fn confidence_reads_the_neighbours_times() {
    let model = Model::h200(Timing::Graph);
    let m = training_matrix("several formats", |m| m.times_ms.len() >= 3);
    let (best, best_ms) = m.times_ms.iter().min_by(|a, b| a.1.total_cmp(b.1)).unwrap();
    let (slow, slow_ms) = m.times_ms.iter().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
    let c = model.confidence(&m.features, best, 1);
    assert_eq!(c.neighbours.len(), 1);
    assert_eq!((c.range(), c.best_on(), c.declined()), (Some((1.0, 1.0)), 1, 0), "{c:?}");
    assert!(!c.tune_worth());
    let c = model.confidence(&m.features, slow, 1);
    let ratio = slow_ms / best_ms;
    let (lo, hi) = c.range().unwrap();
    assert!((lo - ratio).abs() < 1e-9 * ratio && lo == hi, "{c:?} against {ratio}");
    assert_eq!(c.tune_worth(), ratio >= Confidence::TUNE_WORTH);
    let c = model.confidence(&m.features, "no-such-format", model.training.k);
    assert_eq!((c.range(), c.declined()), (None, model.training.k));
    assert!(c.tune_worth());
}

/// `tune` measures up to its count, and stops early only where three or more are measured and
/// the fastest leads every other by [`CLEAR_LEAD`].
#[test]
fn tune_stops_when_its_leader_is_clear() {
    let most = TUNE_CANDIDATES;
    assert!(keep_measuring(&[], most) && keep_measuring(&[1.0], most));
    assert!(keep_measuring(&[1.0, 9.0], most), "two are never a clear lead");
    assert!(!keep_measuring(&[3.0, 1.0, CLEAR_LEAD], most), "1.0 leads both by 1.5x");
    assert!(keep_measuring(&[3.0, 1.0, 1.4], most));
    assert!(keep_measuring(&[1.0, 1.0, 1.0], most), "ties are no lead");
    assert!(!keep_measuring(&vec![1.0; most], most));
    assert!(!keep_measuring(&[1.0], 1));
}
