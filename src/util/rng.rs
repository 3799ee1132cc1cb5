//! A tiny deterministic random number generator (SplitMix64), so that every generated
//! input is the same for the same `--seed` on every board and architecture.

/// SplitMix64: small, fast, and identical on 32- and 64-bit targets.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    // Inlined even unoptimised: generated objects of GiBs call these per 8 bytes.
    #[inline(always)]
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (bound > 0); the tiny modulo bias is irrelevant here.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// A float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal draw (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos()
    }

    /// Fills `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

/// FNV-1a 64-bit hash: used to check that data read back equals data written. Not fast,
/// so it is only ever used outside measured code.
pub fn fnv1a64(data: &[u8]) -> u64 {
    let mut hash = Fnv1a64::default();
    hash.update(data);
    hash.0
}

/// [`fnv1a64`] over data that comes in pieces (an object too large to hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv1a64(pub u64);

impl Default for Fnv1a64 {
    fn default() -> Fnv1a64 {
        Fnv1a64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a64 {
    pub fn update(&mut self, data: &[u8]) {
        const PRIME: u64 = 0x0100_0000_01b3;
        // Eight bytes a step, unrolled, indexed: unoptimised builds (the tests') pay for
        // every call and iterator step.
        let mut h = self.0;
        let mut i = 0;
        while i + 8 <= data.len() {
            h = (h ^ data[i] as u64).wrapping_mul(PRIME);
            h = (h ^ data[i + 1] as u64).wrapping_mul(PRIME);
            h = (h ^ data[i + 2] as u64).wrapping_mul(PRIME);
            h = (h ^ data[i + 3] as u64).wrapping_mul(PRIME);
            h = (h ^ data[i + 4] as u64).wrapping_mul(PRIME);
            h = (h ^ data[i + 5] as u64).wrapping_mul(PRIME);
            h = (h ^ data[i + 6] as u64).wrapping_mul(PRIME);
            h = (h ^ data[i + 7] as u64).wrapping_mul(PRIME);
            i += 8;
        }
        while i < data.len() {
            h = (h ^ data[i] as u64).wrapping_mul(PRIME);
            i += 1;
        }
        self.0 = h;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_different_seed_differs() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(8);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        // SplitMix64's published first output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn fnv_matches_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
