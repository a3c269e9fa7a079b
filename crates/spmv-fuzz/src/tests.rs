//! The fuzz targets replayed on fixed inputs: the seed corpus in `fuzz/corpus`, mutations of
//! it (byte flips, cuts, repeats, splices) and pseudo-random bytes, all from one seed so that
//! a failure repeats. A few thousand inputs each: seconds, not the hours of a fuzzing run.

use std::path::PathBuf;

/// xorshift64*: the same inputs on every run and machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the seed corpus is in the repo")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.into_iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// One random edit of `input`, of the kinds libFuzzer makes.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    const TOKENS: &[&[u8]] = &[
        b" ",
        b"\n",
        b"\r",
        b"%",
        b"-",
        b"+",
        b"0",
        b"1",
        b"9",
        b"e",
        b"4294967296",
        b"1e400",
        b"nan",
        b"\x1b",
        b"\xff",
    ];
    let mut out = input.to_vec();
    let at = rng.below(out.len() + 1);
    match rng.below(6) {
        0 if !out.is_empty() => {
            let i = at.min(out.len() - 1);
            out[i] ^= 1 << rng.below(8);
        }
        1 => out.truncate(at),
        2 => {
            let token = TOKENS[rng.below(TOKENS.len())];
            out.splice(at..at, token.iter().copied());
        }
        3 if at < out.len() => {
            let end = (at + rng.below(16)).min(out.len());
            out.drain(at..end);
        }
        4 => {
            let end = (at + rng.below(64)).min(out.len());
            let piece = out[at..end].to_vec();
            out.splice(at..at, piece);
        }
        _ => {
            let from = rng.below(other.len() + 1);
            out.truncate(at);
            out.extend_from_slice(&other[from..]);
        }
    }
    out
}

#[test]
fn matrix_market_target_holds_on_the_corpus_and_its_mutations() {
    let seeds = corpus("matrix_market");
    assert!(seeds.len() >= 5);
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for seed in &seeds {
        crate::matrix_market(seed);
    }
    for _ in 0..20_000 {
        let (a, b) = (&seeds[rng.below(seeds.len())], &seeds[rng.below(seeds.len())]);
        let mut input = mutate(&mut rng, a, b);
        for _ in 0..rng.below(4) {
            input = mutate(&mut rng, &input, b);
        }
        crate::matrix_market(&input);
    }
}

#[test]
fn formats_cpu_target_holds_on_random_inputs() {
    let mut rng = Rng(0x5eed_1234_abcd_0002);
    for seed in corpus("formats_cpu") {
        crate::formats_cpu(&seed);
    }
    for _ in 0..10_000 {
        let len = rng.below(600);
        let input: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        crate::formats_cpu(&input);
    }
}
