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

/// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)];
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
