//! The generators' own pseudo-random numbers: splitmix64 to seed, xoshiro256** to draw.
//!
//! Written out here (not taken from an RNG crate) so that a seed gives the same matrix
//! forever, whatever crate versions are in use. Every random stream is derived from
//! `(seed, tag, index)` with [`hash3`], so rows (or chunks of edges) are generated
//! independently and in parallel, and the result does not depend on the thread count.

/// One step of splitmix64: advances `state` and returns the next output.
#[inline]
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix64(*state)
}

/// The splitmix64 finaliser: a bijective 64-bit mixer.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hash of three words, used to derive independent streams and per-entry values.
#[inline]
pub(crate) fn hash3(a: u64, b: u64, c: u64) -> u64 {
    let h = mix64(a.wrapping_add(0x9E37_79B9_7F4A_7C15));
    let h = mix64(h ^ b.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    mix64(h ^ c.wrapping_mul(0xA076_1D64_78BD_642F))
}

/// A uniform value in [0, 1) with 53 random bits.
#[inline]
pub(crate) fn unit_from(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A matrix value uniform over the 2^24 odd multiples of 2^-24 in (-1, 1): inside
/// [-1, 1), never zero, symmetric around 0, and exact in `f32` (24 significant bits).
#[inline]
pub(crate) fn value_from(bits: u64) -> f64 {
    let i = (bits >> 40) as i64; // 24 bits: 0 .. 2^24
    (2 * i - (1 << 24) + 1) as f64 * (1.0 / (1u64 << 24) as f64)
}

/// The value of entry `(r, c)` of a random matrix with this seed: a pure function of its
/// position, so it does not depend on the order in which entries are generated.
#[inline]
pub(crate) fn entry_value(seed: u64, r: usize, c: u32) -> f64 {
    value_from(hash3(seed ^ 0x5641_4C55_4553_0000, r as u64, c as u64))
}

/// Natural logarithm of a positive normal `x` from +, -, ×, ÷ only (IEEE-exact operations),
/// so unlike `f64::ln` (the platform's libm) it gives the same bits everywhere. Relative
/// error about 1e-15.
pub(crate) fn det_ln(x: f64) -> f64 {
    debug_assert!(x.is_normal() && x > 0.0);
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7FF) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52)); // [1, 2)
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), |s| < 0.172.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut series = 0.0;
    for k in (0..14).rev() {
        series = series * s2 + 1.0 / (2 * k + 1) as f64;
    }
    e as f64 * std::f64::consts::LN_2 + 2.0 * s * series
}

/// `e^y` for `0 ≤ y ≤ 700` from basic operations only (see [`det_ln`]).
pub(crate) fn det_exp(y: f64) -> f64 {
    debug_assert!((0.0..=700.0).contains(&y));
    let k = (y / std::f64::consts::LN_2 + 0.5).floor();
    // Cody–Waite reduction (fdlibm's split of ln 2: k · LN2_HI is exact for k < 2^11).
    const LN2_HI: f64 = 0.693_147_180_369_123_8;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let r = (y - k * LN2_HI) - k * LN2_LO; // |r| ≤ ln 2 / 2
    let mut term = 1.0;
    let mut sum = 1.0;
    for i in 1..=22 {
        term = term * r / i as f64;
        sum += term;
    }
    sum * f64::from_bits(((k as i64 + 1023) as u64) << 52)
}

/// A Pareto weight `u^(-inv)` for `u` in (0, 1] (`inv ≥ 0`), capped at 1e150; the same
/// bits on every platform.
pub(crate) fn pareto_weight(u: f64, inv: f64) -> f64 {
    let y = -inv * det_ln(u);
    if y >= 345.0 {
        1e150 // e^345 ≈ 1e150
    } else {
        det_exp(y).min(1e150)
    }
}

/// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s =
            [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)];
        // splitmix64 is a bijection of successive states, so the four words are never all 0.
        Rng { s }
    }

    /// The stream number `index` of family `tag` under `seed`.
    pub(crate) fn stream(seed: u64, tag: u64, index: u64) -> Self {
        Rng::new(hash3(seed, tag, index))
    }

    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, m) by Lemire's multiply-shift (bias below m / 2^64); 0 when m = 0.
    #[inline]
    pub(crate) fn below(&mut self, m: u64) -> u64 {
        ((self.next_u64() as u128 * m as u128) >> 64) as u64
    }

    /// Uniform in [0, 1).
    #[inline]
    pub(crate) fn unit(&mut self) -> f64 {
        unit_from(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_reference_sequence() {
        // xoshiro256** from the state {1, 2, 3, 4}: the reference implementation's output.
        let mut r = Rng { s: [1, 2, 3, 4] };
        let got: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
        assert_eq!(got, [11520, 0, 1509978240, 1215971899390074240]);
    }

    #[test]
    fn splitmix_reference() {
        // splitmix64 with seed 1234567: first outputs of the reference implementation.
        let mut s = 1234567u64;
        assert_eq!(splitmix64(&mut s), 6457827717110365317);
        assert_eq!(splitmix64(&mut s), 3203168211198807973);
    }

    #[test]
    fn deterministic_ln_exp_are_accurate() {
        for x in [1.0, 0.5, 0.3, 1e-16, 2f64.powi(-53), 0.999999, 0.7, 0.71, 1.41, 1.42, 123.456] {
            let (a, b) = (det_ln(x), x.ln());
            assert!((a - b).abs() <= 4e-16 * b.abs().max(1.0), "ln {x}: {a} vs {b}");
        }
        for y in [0.0, 1e-9, 0.3, 0.35, 1.0, 10.0, 36.7, 100.0, 344.9, 690.0] {
            let (a, b) = (det_exp(y), y.exp());
            assert!((a - b).abs() <= 1e-14 * b, "exp {y}: {a} vs {b}");
        }
        assert_eq!(pareto_weight(1.0, 5.0), 1.0);
        assert_eq!(pareto_weight(2f64.powi(-53), 100.0), 1e150);
        let w = pareto_weight(0.25, 0.5);
        assert!((w - 2.0).abs() < 1e-14, "{w}");
    }

    #[test]
    fn values_are_in_range_and_exact_in_f32() {
        for bits in [0u64, u64::MAX, 1 << 63, 12345 << 40] {
            let v = value_from(bits);
            assert!((-1.0..1.0).contains(&v) && v != 0.0);
            assert_eq!(v as f32 as f64, v);
        }
        assert_eq!(value_from(0), -1.0 + 1.0 / (1u64 << 24) as f64);
        assert_eq!(value_from(u64::MAX), 1.0 - 1.0 / (1u64 << 24) as f64);
    }
}
