//! The class table of the fair-queueing family: which queue a packet belongs to,
//! each queue's weight, and the queues themselves in one shared buffer.
//!
//! A class is a flow (`classify = "flow"`, keyed by `Packet::flow`) or an aggregate
//! (`classify = "aggregate"`, keyed by `Packet::aggregate`). Its weight comes from
//! the flows the engine announced in [`LinkInfo::flows`]: a flow's own weight, or an
//! aggregate's sum over its flows, unless the qdisc's `weights` table overrides it;
//! a class nobody announced weighs 1.
//!
//! Classes live in slots that are handed out when a class gets its first packet and
//! taken back when the scheduler and the buffer manager both say they keep nothing
//! for it, so state is bounded by the classes with packets (plus the few a scheduler
//! or buffer manager still remembers), never by `limit` or by every flow ever seen.
//! The key-to-slot map hashes with a fixed mix, and is only ever looked up, never
//! iterated, so nothing depends on a random hash seed.

use crate::packet::Packet;
use crate::parts::fifo::PacketFifo;
use crate::qdisc::{LinkInfo, ParamError};
use crate::rng::mix64;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A class's slot number.
pub type ClassId = u32;

/// Weights are kept in fixed point, in units of 2^-24, so that the sums that fair
/// shares and WFQ's virtual time divide by are exact integers: a float sum that
/// classes keep joining and leaving drifts, and with weights far apart (1e6 and
/// 1e-6) can cancel to zero while a class is still counted.
const WEIGHT_SCALE: f64 = (1u64 << 24) as f64;

/// The largest weight accepted (so that a weight's units fit in 64 bits).
pub const MAX_WEIGHT: f64 = 1e9;

/// A weight in units of 2^-24 (at least one unit).
#[inline]
pub fn weight_units(w: f64) -> u64 {
    ((w * WEIGHT_SCALE).round() as u64).max(1)
}

/// A sum of weight units as a weight.
#[inline]
pub fn units_weight(units: u128) -> f64 {
    // Sums nearly always fit 64 bits, whose conversion is one instruction.
    match u64::try_from(units) {
        Ok(u) => u as f64 / WEIGHT_SCALE,
        Err(_) => units as f64 / WEIGHT_SCALE,
    }
}

/// Checks a weight from the flow table or the `weights` table.
pub fn weight_ok(w: f64) -> Result<(), &'static str> {
    if !(w > 0.0 && w.is_finite()) {
        Err("must be positive")
    } else if w > MAX_WEIGHT {
        Err("must be at most 1e9")
    } else {
        Ok(())
    }
}

/// What a class is.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Classify {
    /// One queue per flow (`Packet::flow`): per-flow fair queueing.
    #[default]
    Flow,
    /// One queue per aggregate (`Packet::aggregate`): aggregate fair queueing.
    Aggregate,
}

/// SplitMix64 over a u32 key: a fixed, seedless hash for lookups only.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ b as u64);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = mix64(self.0 ^ i as u64);
    }
}

type KeyMap<V> = HashMap<u32, V, BuildHasherDefault<KeyHasher>>;

#[derive(Debug, Clone, Default)]
struct Slot {
    key: u32,
    /// The weight, rounded to whole units, and the units.
    weight: f64,
    units: u64,
    queue: PacketFifo,
    live: bool,
}

#[derive(Debug, Clone)]
pub struct Classes {
    classify: Classify,
    limit: u32,
    slots: Vec<Slot>,
    free: Vec<ClassId>,
    index: KeyMap<ClassId>,
    /// Weights of the announced classes (bounded by the flow table).
    weights: KeyMap<f64>,
    len: usize,
    bytes: u64,
    /// Classes with packets, and the sum of their weight units.
    backlogged: u32,
    backlogged_units: u128,
}

impl Classes {
    /// Builds the table for `link`'s announced flows, with `overrides` (aggregate id
    /// -> weight, already validated) replacing the aggregates' summed weights.
    pub fn new(
        classify: Classify,
        limit: u32,
        link: &LinkInfo<'_>,
        overrides: &[(u32, f64)],
    ) -> Result<Self, ParamError> {
        let mut weights = KeyMap::default();
        let mut seen = KeyMap::default();
        for fc in link.flows {
            if let Err(rule) = weight_ok(fc.weight) {
                return Err(ParamError::new(
                    "weight",
                    fc.weight,
                    format!("of flow {} {rule}", fc.flow.0),
                ));
            }
            if seen.insert(fc.flow.0, ()).is_some() {
                return Err(ParamError::new(
                    "flows",
                    fc.flow.0,
                    "is announced twice to the same link",
                ));
            }
            match classify {
                Classify::Flow => {
                    weights.insert(fc.flow.0, fc.weight);
                }
                Classify::Aggregate => *weights.entry(fc.aggregate).or_insert(0.0) += fc.weight,
            }
        }
        for &(agg, w) in overrides {
            weights.insert(agg, w);
        }
        Ok(Classes {
            classify,
            limit,
            slots: Vec::new(),
            free: Vec::new(),
            index: KeyMap::default(),
            weights,
            len: 0,
            bytes: 0,
            backlogged: 0,
            backlogged_units: 0,
        })
    }

    /// The key a packet is classified by.
    #[inline]
    pub fn key_of(&self, pkt: &Packet) -> u32 {
        match self.classify {
            Classify::Flow => pkt.flow.0,
            Classify::Aggregate => pkt.aggregate,
        }
    }

    /// The weight a class of `key` has (or would have).
    pub fn weight_of_key(&self, key: u32) -> f64 {
        self.weights.get(&key).copied().unwrap_or(1.0)
    }

    /// The live class of `key`, if it has one.
    pub fn find(&self, key: u32) -> Option<ClassId> {
        self.index.get(&key).copied()
    }

    /// `pkt`'s class, and whether it was just created (its slot may be a reused one).
    pub fn lookup_or_create(&mut self, pkt: &Packet) -> (ClassId, bool) {
        let key = self.key_of(pkt);
        if let Some(&c) = self.index.get(&key) {
            return (c, false);
        }
        let units = weight_units(self.weight_of_key(key));
        let c = match self.free.pop() {
            Some(c) => c,
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1) as ClassId
            }
        };
        let slot = &mut self.slots[c as usize];
        debug_assert!(!slot.live && slot.queue.is_empty());
        slot.key = key;
        slot.units = units;
        slot.weight = units_weight(units as u128);
        slot.live = true;
        self.index.insert(key, c);
        (c, true)
    }

    /// Gives a live, empty class's slot back.
    pub fn release(&mut self, c: ClassId) {
        let slot = &mut self.slots[c as usize];
        debug_assert!(slot.live && slot.queue.is_empty());
        slot.live = false;
        self.index.remove(&slot.key);
        self.free.push(c);
    }

    #[inline]
    pub fn is_live(&self, c: ClassId) -> bool {
        self.slots.get(c as usize).is_some_and(|s| s.live)
    }

    /// Appends `pkt` to class `c`.
    #[inline]
    pub fn push(&mut self, c: ClassId, pkt: Packet) {
        let slot = &mut self.slots[c as usize];
        if slot.queue.is_empty() {
            self.backlogged += 1;
            self.backlogged_units += slot.units as u128;
        }
        self.len += 1;
        self.bytes += pkt.size as u64;
        slot.queue.push_back(pkt);
    }

    /// Takes class `c`'s head packet.
    #[inline]
    pub fn pop_front(&mut self, c: ClassId) -> Option<Packet> {
        let slot = &mut self.slots[c as usize];
        let pkt = slot.queue.pop_front()?;
        self.len -= 1;
        self.bytes -= pkt.size as u64;
        if slot.queue.is_empty() {
            self.backlogged -= 1;
            self.backlogged_units -= slot.units as u128;
        }
        Some(pkt)
    }

    /// Packets in class `c`.
    #[inline]
    pub fn len_of(&self, c: ClassId) -> usize {
        self.slots[c as usize].queue.len()
    }

    /// Class `c`'s weight.
    #[inline]
    pub fn weight(&self, c: ClassId) -> f64 {
        self.slots[c as usize].weight
    }

    /// Class `c`'s weight in units of 2^-24, for exact sums.
    #[inline]
    pub fn units(&self, c: ClassId) -> u64 {
        self.slots[c as usize].units
    }

    /// Class `c`'s key (flow or aggregate id).
    pub fn key(&self, c: ClassId) -> u32 {
        self.slots[c as usize].key
    }

    /// Class `c`'s head packet.
    #[inline]
    pub fn head(&self, c: ClassId) -> Option<&Packet> {
        self.slots[c as usize].queue.front()
    }

    /// Class `c`'s length relative to its weight: what "longest" compares.
    #[inline]
    pub fn normalized(&self, c: ClassId) -> f64 {
        self.len_of(c) as f64 / self.weight(c)
    }

    /// Class `c`'s weighted fair share of the buffer, `w_c B / sum w` over the
    /// classes that hold packets (docs/qdiscs.md says why those).
    #[inline]
    pub fn share(&self, c: ClassId) -> f64 {
        let slot = &self.slots[c as usize];
        let total = if slot.queue.is_empty() {
            self.backlogged_units + slot.units as u128
        } else {
            self.backlogged_units
        };
        slot.weight * self.limit as f64 / units_weight(total)
    }

    /// Packets in all classes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes in all classes.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The shared buffer, in packets.
    #[inline]
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Is the shared buffer full?
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len >= self.limit as usize
    }

    /// Classes holding packets.
    pub fn backlogged(&self) -> usize {
        self.backlogged as usize
    }

    /// Slots ever allocated: the bound of every per-class `Vec`.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Live classes, in slot order (for tests and inspection, never the hot path).
    pub fn live(&self) -> impl Iterator<Item = ClassId> + '_ {
        (0..self.slots.len() as ClassId).filter(|&c| self.is_live(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::FlowClass;
    use crate::units::Rate;

    fn table() -> Vec<FlowClass> {
        // Aggregate 1: flows 0-2 of weight 1; aggregate 2: flow 3 of weight 10.
        let mut t: Vec<FlowClass> = (0..3).map(|f| FlowClass::new(FlowId(f), 1, 1.0)).collect();
        t.push(FlowClass::new(FlowId(3), 2, 10.0));
        t
    }

    #[test]
    fn weights_come_from_the_flows_the_sum_or_the_override() {
        let t = table();
        let link = LinkInfo::new(Rate::from_mbps(1)).with_flows(&t);
        let flows = Classes::new(Classify::Flow, 10, &link, &[]).unwrap();
        assert_eq!(flows.weight_of_key(0), 1.0);
        assert_eq!(flows.weight_of_key(3), 10.0);
        assert_eq!(flows.weight_of_key(99), 1.0, "unannounced");
        let aggs = Classes::new(Classify::Aggregate, 10, &link, &[]).unwrap();
        assert_eq!(aggs.weight_of_key(1), 3.0);
        assert_eq!(aggs.weight_of_key(2), 10.0);
        assert_eq!(aggs.weight_of_key(7), 1.0);
        let over = Classes::new(Classify::Aggregate, 10, &link, &[(1, 10.0)]).unwrap();
        assert_eq!(over.weight_of_key(1), 10.0);
    }

    #[test]
    fn bad_flow_tables_are_errors() {
        let mut t = table();
        t[0].weight = -1.0;
        let link = LinkInfo::new(Rate::from_mbps(1)).with_flows(&t);
        let e = Classes::new(Classify::Flow, 10, &link, &[]).unwrap_err();
        assert_eq!(e.to_string(), "weight = -1 of flow 0 must be positive");
        let mut t = table();
        t[1].flow = FlowId(0);
        let link = LinkInfo::new(Rate::from_mbps(1)).with_flows(&t);
        let e = Classes::new(Classify::Flow, 10, &link, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "flows = 0 is announced twice to the same link"
        );
    }

    #[test]
    fn shares_count_the_backlogged_classes_and_slots_are_reused() {
        let t = table();
        let link = LinkInfo::new(Rate::from_mbps(1)).with_flows(&t);
        let mut c = Classes::new(Classify::Aggregate, 22, &link, &[]).unwrap();
        let mut p = Packet::new(FlowId(0), 100);
        p.aggregate = 1;
        let (a, new) = c.lookup_or_create(&p);
        assert!(new);
        // Alone, aggregate 1 (weight 3) may have the whole buffer.
        assert_eq!(c.share(a), 22.0);
        c.push(a, p);
        p.aggregate = 2;
        let (b, _) = c.lookup_or_create(&p);
        // An empty class is counted as if it were backlogged: 10 / 13 of 22.
        assert!((c.share(b) - 220.0 / 13.0).abs() < 1e-9);
        c.push(b, p);
        assert!((c.share(a) - 66.0 / 13.0).abs() < 1e-9);
        assert_eq!((c.len(), c.bytes(), c.backlogged()), (2, 200, 2));
        c.pop_front(a).unwrap();
        c.release(a);
        assert_eq!(c.find(1), None);
        p.aggregate = 7;
        let (d, new) = c.lookup_or_create(&p);
        assert!(new);
        assert_eq!(d, a, "the freed slot is reused");
        assert_eq!(c.weight(d), 1.0);
    }
}
