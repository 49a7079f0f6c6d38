//! Seeded randomness, split into independent streams.
//!
//! One seed per run; each component (a qdisc, a flow's start jitter, a Poisson
//! source) draws from its own stream, derived from (seed, stream id) with SplitMix64,
//! as ns-3's `AssignStreams`. Adding a flow then does not shift every other flow's
//! draws. The generator is pinned (xoshiro256++) so golden results survive crate
//! upgrades.

use rand::SeedableRng;

/// The generator every component uses.
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// SplitMix64's finaliser: a bijective mix of 64 bits.
pub const fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The stream numbered `stream` of the run seeded with `seed`.
pub fn stream(seed: u64, stream: u64) -> Rng {
    Rng::seed_from_u64(mix64(seed ^ mix64(stream)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: u64 = stream(1, 0).gen();
        let b: u64 = stream(1, 0).gen();
        let c: u64 = stream(1, 1).gen();
        let d: u64 = stream(2, 0).gen();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
