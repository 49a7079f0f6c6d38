//! Flow hashing for the hashed qdiscs (SFB, SFRED, SFQ): a keyed 32-bit hash of a
//! flow id, and the keys, one per (key generation, level). Also [`FlowMap`], the
//! map from flow id that lookup-only tables (BREATHe's heavy hitters, MRUL's
//! list) keep.
//!
//! The key of `level` in key generation `generation` is
//! `mix64(mix64(hash_seed) ^ (generation << 32 | level))`: reproducible from the
//! seed, independent across levels, and fresh at every re-key (a moving hash, a
//! perturbation). Linux keys its hash with a random number instead; a seed makes
//! runs repeatable, and [`hash_seed`] takes it from the scenario's `hash_seed`
//! when pinned, else from the link, whose seed the simulator derives from the
//! run's (`sim::setup::network`). `python/aqmlab/repro/sfb/` replicates both
//! functions and tests on both sides pin their values.

use crate::packet::FlowId;
use crate::qdisc::{check, LinkInfo, ParamError};
use crate::rng::mix64;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by flow id with [`FlowIdHasher`]. Only for maps that are
/// looked up and never iterated, so no order can leak into results.
pub type FlowMap<V> = HashMap<FlowId, V, BuildHasherDefault<FlowIdHasher>>;

/// One multiply per flow id (FxHash's step): std's SipHash with a random key
/// guards servers against chosen keys, which a simulator does not need, and costs
/// a third of BREATHe's enqueue.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowIdHasher(u64);

impl Hasher for FlowIdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The most bins (levels x bins) a table of hashed bins may have: every bin is
/// allocated when the qdisc is built, so this bounds its memory.
pub const MAX_TOTAL_BINS: u32 = 1 << 20;

/// The most hash levels: every level hashes every packet (Linux's SFB has 8, the
/// SFB paper uses at most 3).
pub const MAX_LEVELS: u32 = 32;

/// Checks the shape of a `levels` x `bins` table of hashed bins (SFB, SFRED),
/// naming the key at fault.
pub fn check_bin_table(levels: u32, bins: u32) -> Result<(), ParamError> {
    check::at_least("levels", levels, 1)?;
    if levels > MAX_LEVELS {
        return Err(ParamError::new(
            "levels",
            levels,
            format!("must be at most {MAX_LEVELS}: every level hashes every packet"),
        ));
    }
    check::at_least("bins", bins, 1)?;
    if levels.saturating_mul(bins) > MAX_TOTAL_BINS {
        return Err(ParamError::new(
            "bins",
            bins,
            format!("times levels = {levels} must be at most {MAX_TOTAL_BINS}"),
        ));
    }
    Ok(())
}

/// A keyed 32-bit hash of a flow id: different keys give independent-looking
/// hashes, and re-keying is how a moving hash moves.
#[inline]
pub const fn keyed_hash(key: u64, flow: u32) -> u32 {
    (mix64(key ^ (flow as u64).wrapping_mul(0x2545_f491_4f6c_dd1d)) >> 32) as u32
}

/// The seed a hashed qdisc keys its hashes with: the scenario's `hash_seed` when
/// it pins one, else the link's seed (which the engine derives from the run's).
pub fn hash_seed(pinned: Option<u64>, link: &LinkInfo) -> u64 {
    pinned.unwrap_or(link.seed)
}

/// The key of `level` in key generation `generation`.
pub fn level_key(hash_seed: u64, generation: u32, level: u32) -> u64 {
    mix64(mix64(hash_seed) ^ ((generation as u64) << 32 | level as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_hash_spreads_over_bins() {
        let mut bins = [0u32; 16];
        for f in 0..16_000 {
            bins[(keyed_hash(7, f) % 16) as usize] += 1;
        }
        for b in bins {
            assert!((800..1200).contains(&b), "{bins:?}");
        }
    }

    #[test]
    fn a_flow_map_finds_what_it_holds() {
        let mut m: FlowMap<u32> = FlowMap::default();
        for f in 0..10_000 {
            m.insert(FlowId(f * 7), f);
        }
        assert!((0..10_000).all(|f| m.get(&FlowId(f * 7)) == Some(&f)));
        assert_eq!(m.get(&FlowId(1)), None);
    }

    #[test]
    fn keys_differ_across_levels_generations_and_seeds() {
        let keys = [
            level_key(0, 1, 0),
            level_key(0, 1, 1),
            level_key(0, 2, 0),
            level_key(1, 1, 0),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
