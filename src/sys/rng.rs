//! A small deterministic random source (xorshift64), for what needs spread rather than secrecy:
//! think-time jitter, retry backoff, and the random hands of tests and benches. Seeded, so a run
//! or a test is reproducible; never for anything an attacker could exploit.

/// xorshift64 (Marsaglia's 13, 7, 17).
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A source seeded with `seed` (0 is replaced: xorshift would stay at 0 for ever).
    pub fn new(seed: u64) -> XorShift {
        XorShift(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (`n` > 0; the modulo's bias is negligible for small `n`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_seed_still_moves_and_stays_in_range() {
        let mut rng = XorShift::new(0);
        let first = rng.next_u64();
        assert_ne!(first, 0);
        assert_ne!(rng.next_u64(), first);
        assert!((0..1000).all(|_| rng.below(7) < 7));
    }
}
