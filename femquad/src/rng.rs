//! A small, deterministic pseudo-random generator (SplitMix64).
//!
//! Used for mesh jitter and renumbering and for random test data (public,
//! with the test-data helpers `shuffle`, `permutation` and `vec`, only with
//! the `devtools` feature: a tool, not library API). It is not
//! cryptographic; it is fast, seedable and gives the same sequence on every
//! platform and version, so generated meshes are reproducible.

/// SplitMix64 generator (Steele, Lea, Flood, 2014).
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator with the given seed.
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// A generator for stream `stream` of `seed`: independent streams let
    /// parallel code draw reproducible numbers per item.
    pub fn stream(seed: u64, stream: u64) -> Self {
        let mut r = Rng::new(seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03));
        r.next_u64();
        r
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in `0..n` (`n > 0`; returns 0 for `n == 0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Shuffles `items` in place (Fisher–Yates).
    #[cfg(any(test, feature = "devtools"))]
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// A random permutation of `0..n`.
    #[cfg(any(test, feature = "devtools"))]
    pub fn permutation(&mut self, n: usize) -> Vec<u32> {
        let mut p: Vec<u32> = (0..n as u32).collect();
        self.shuffle(&mut p);
        p
    }

    /// `n` values uniform in `[lo, hi)`.
    #[cfg(any(test, feature = "devtools"))]
    pub fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.range(lo, hi)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let a: Vec<u64> = (0..4).map(|_| Rng::new(7).next_u64()).collect();
        assert!(a.iter().all(|&x| x == a[0]));
        let mut r = Rng::new(1);
        for _ in 0..1000 {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
            assert!(r.below(5) < 5);
        }
        let p = Rng::new(3).permutation(100);
        let mut s = p.clone();
        s.sort();
        assert_eq!(s, (0..100).collect::<Vec<u32>>());
        assert_ne!(p, s);
    }

    #[test]
    fn uniform_mean_is_one_half() {
        let mut r = Rng::new(42);
        let m: f64 = (0..100_000).map(|_| r.uniform()).sum::<f64>() / 1e5;
        assert!((m - 0.5).abs() < 0.01, "mean {m}");
    }
}
