//! A heavy-hitter set: the frequent-elements algorithm of Karp, Shenker &
//! Papadimitriou (ACM TODS 2003; also Misra & Gries 1982), in O(1) worst-case time
//! per packet. BREATHe (seed 001, Algorithm 1) keeps its set ψ with it.
//!
//! K counters. A packet of a flow with a counter increments it; a packet of a flow
//! without one takes a free counter (set to 1) if fewer than K are in use, and
//! otherwise *decrements every counter*, and counters reaching zero leave the set.
//! After n packets every flow sent more than n / (K + 1) of them is in the set:
//! each decrement step cancels K + 1 packets (K counters and the arrival), so there
//! are at most n / (K + 1) of them, and a counter underestimates its flow's true
//! count by at most that.
//!
//! Lines (6)-(11) of Algorithm 1 loop over the counters; "this can be implicitly
//! implemented in constant time ... using a slightly more sophisticated data
//! structure" [KSP 2003]. That structure, here:
//! - a global `base`: the number of decrement steps so far. A counter stores an
//!   absolute value; its count is `value - base`, so "decrement all" is `base += 1`.
//! - counters with equal value share a *group*; groups form a doubly-linked list in
//!   increasing value, and each group holds a doubly-linked list of its members.
//!   An increment moves a member to the next group (value + 1), creating it if
//!   needed: O(1).
//! - groups with `value <= base` are *dead* (count zero) and sit at the front of the
//!   list, before `first_live`. When a decrement makes the lowest live group dead,
//!   its members leave the set in one step, by moving `first_live`, without touching
//!   them. Their slots are reclaimed one at a time, when an insertion needs one.
//! - a `flow -> slot` map finds a flow's counter. Nothing ever iterates it; a flow
//!   whose slot is dead is not in the set.
//!
//! Storage grows with the flows seen, up to K slots, K + 1 groups and a map of K
//! entries, and is never given back, so once K flows have been seen observing a
//! packet never allocates; a set of a million counters costs nothing until
//! traffic needs it.

use crate::packet::FlowId;
use crate::parts::flow_hash::FlowMap;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Slot {
    flow: FlowId,
    group: u32,
    prev: u32,
    next: u32,
}

#[derive(Debug, Clone, Copy)]
struct Group {
    /// Absolute counter value; the count is `value - base`.
    value: u64,
    /// First member slot.
    first: u32,
    len: u32,
    prev: u32,
    next: u32,
}

/// A set of at most K flows that holds every flow above 1 / (K + 1) of the packets.
#[derive(Debug, Clone)]
pub struct HeavyHitters {
    k: usize,
    slots: Vec<Slot>,
    groups: Vec<Group>,
    free_groups: Vec<u32>,
    index: FlowMap<u32>,
    base: u64,
    /// Lowest group (dead or live), highest group, lowest live group.
    first: u32,
    last: u32,
    first_live: u32,
    live: usize,
}

impl HeavyHitters {
    /// Bytes a set of `k` counters takes once every counter is in use.
    pub fn bytes_at_most(k: u64) -> u64 {
        use crate::table_bytes::{map_bytes, vec_bytes};
        vec_bytes::<Slot>(k)
            .saturating_add(vec_bytes::<Group>(k))
            .saturating_add(vec_bytes::<u32>(k))
            .saturating_add(map_bytes::<FlowId, u32>(k))
    }

    /// A set of `k` counters (`k >= 1`).
    pub fn new(k: usize) -> Self {
        assert!(k >= 1, "a heavy-hitter set needs at least one counter");
        HeavyHitters {
            k,
            slots: Vec::new(),
            groups: Vec::new(),
            free_groups: Vec::new(),
            index: FlowMap::default(),
            base: 0,
            first: NIL,
            last: NIL,
            first_live: NIL,
            live: 0,
        }
    }

    /// K, the number of counters.
    pub fn capacity(&self) -> usize {
        self.k
    }

    /// Flows in the set (counters above zero).
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Decrement steps so far: the most any counter underestimates its flow by.
    pub fn decrements(&self) -> u64 {
        self.base
    }

    /// Is `flow` in the set?
    #[inline]
    pub fn contains(&self, flow: FlowId) -> bool {
        self.count(flow) > 0
    }

    /// `flow`'s counter: between its true count minus [`decrements`](Self::decrements)
    /// and its true count; 0 when it is not in the set.
    #[inline]
    pub fn count(&self, flow: FlowId) -> u64 {
        match self.index.get(&flow) {
            Some(&s) => self.groups[self.slots[s as usize].group as usize]
                .value
                .saturating_sub(self.base),
            None => 0,
        }
    }

    /// Counts one packet of `flow` (Algorithm 1, one iteration). O(1).
    pub fn observe(&mut self, flow: FlowId) {
        let existing = self.index.get(&flow).copied();
        if let Some(s) = existing {
            if self.groups[self.slots[s as usize].group as usize].value > self.base {
                self.increment(s);
                return;
            }
        }
        if self.live == self.k {
            self.decrement_all();
            return;
        }
        let s = match existing {
            Some(s) => {
                // Its counter had reached zero: reuse the slot.
                self.detach(s);
                s
            }
            None => {
                let s = self.take_slot();
                self.slots[s as usize].flow = flow;
                self.index.insert(flow, s);
                s
            }
        };
        self.insert_at_one(s);
    }

    /// "Decrement every counter": one step of `base`; the lowest live group dies if
    /// it reaches zero.
    fn decrement_all(&mut self) {
        self.base += 1;
        let g = self.first_live;
        if g != NIL && self.groups[g as usize].value <= self.base {
            self.live -= self.groups[g as usize].len as usize;
            self.first_live = self.groups[g as usize].next;
        }
    }

    fn increment(&mut self, s: u32) {
        let g = self.slots[s as usize].group;
        let value = self.groups[g as usize].value + 1;
        let next = self.groups[g as usize].next;
        let target = if next != NIL && self.groups[next as usize].value == value {
            next
        } else {
            self.new_group_after(g, value)
        };
        self.detach(s);
        self.attach(s, target);
    }

    /// Puts slot `s` (detached) in the set with count 1.
    fn insert_at_one(&mut self, s: u32) {
        let value = self.base + 1;
        let fl = self.first_live;
        let target = if fl != NIL && self.groups[fl as usize].value == value {
            fl
        } else {
            let prev = if fl != NIL {
                self.groups[fl as usize].prev
            } else {
                self.last
            };
            let g = self.new_group_after(prev, value);
            self.first_live = g;
            g
        };
        self.attach(s, target);
        self.live += 1;
    }

    /// A slot for a new flow: never used, or reclaimed from the lowest dead group.
    fn take_slot(&mut self) -> u32 {
        if self.slots.len() < self.k {
            self.slots.push(Slot {
                flow: FlowId(0),
                group: NIL,
                prev: NIL,
                next: NIL,
            });
            return (self.slots.len() - 1) as u32;
        }
        let g = self.first;
        debug_assert!(g != NIL && g != self.first_live, "no dead slot to reclaim");
        let s = self.groups[g as usize].first;
        self.detach(s);
        let old = self.slots[s as usize].flow;
        self.index.remove(&old);
        s
    }

    /// A new empty group with `value`, linked after `prev` (`NIL`: at the front).
    fn new_group_after(&mut self, prev: u32, value: u64) -> u32 {
        let next = if prev == NIL {
            self.first
        } else {
            self.groups[prev as usize].next
        };
        let group = Group {
            value,
            first: NIL,
            len: 0,
            prev,
            next,
        };
        let g = match self.free_groups.pop() {
            Some(g) => {
                self.groups[g as usize] = group;
                g
            }
            None => {
                self.groups.push(group);
                (self.groups.len() - 1) as u32
            }
        };
        if prev == NIL {
            self.first = g;
        } else {
            self.groups[prev as usize].next = g;
        }
        if next == NIL {
            self.last = g;
        } else {
            self.groups[next as usize].prev = g;
        }
        g
    }

    fn attach(&mut self, s: u32, g: u32) {
        let head = self.groups[g as usize].first;
        self.slots[s as usize] = Slot {
            flow: self.slots[s as usize].flow,
            group: g,
            prev: NIL,
            next: head,
        };
        if head != NIL {
            self.slots[head as usize].prev = s;
        }
        let group = &mut self.groups[g as usize];
        group.first = s;
        group.len += 1;
    }

    /// Unlinks slot `s` from its group, and the group from the list if it empties.
    fn detach(&mut self, s: u32) {
        let Slot {
            group: g,
            prev,
            next,
            ..
        } = self.slots[s as usize];
        if prev != NIL {
            self.slots[prev as usize].next = next;
        } else {
            self.groups[g as usize].first = next;
        }
        if next != NIL {
            self.slots[next as usize].prev = prev;
        }
        self.slots[s as usize].group = NIL;
        self.groups[g as usize].len -= 1;
        if self.groups[g as usize].len == 0 {
            self.unlink_group(g);
        }
    }

    fn unlink_group(&mut self, g: u32) {
        let Group { prev, next, .. } = self.groups[g as usize];
        if prev != NIL {
            self.groups[prev as usize].next = next;
        } else {
            self.first = next;
        }
        if next != NIL {
            self.groups[next as usize].prev = prev;
        } else {
            self.last = prev;
        }
        if self.first_live == g {
            self.first_live = next;
        }
        self.free_groups.push(g);
    }

    /// Walks the whole structure and checks its invariants: O(K), for tests.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        let (mut g, mut prev, mut live, mut members) = (self.first, NIL, 0usize, 0usize);
        let mut seen_live = false;
        let mut last_value = None;
        while g != NIL {
            let group = &self.groups[g as usize];
            assert_eq!(group.prev, prev);
            assert!(group.len > 0, "empty group in the list");
            if let Some(v) = last_value {
                assert!(group.value > v, "groups out of order");
            }
            last_value = Some(group.value);
            if g == self.first_live {
                seen_live = true;
            }
            assert_eq!(group.value > self.base, seen_live, "dead group after live");
            let (mut s, mut sprev, mut n) = (group.first, NIL, 0);
            while s != NIL {
                let slot = &self.slots[s as usize];
                assert_eq!((slot.group, slot.prev), (g, sprev));
                assert_eq!(self.index.get(&slot.flow), Some(&s));
                sprev = s;
                s = slot.next;
                n += 1;
            }
            assert_eq!(n, group.len);
            members += n as usize;
            if seen_live {
                live += n as usize;
            }
            prev = g;
            g = group.next;
        }
        assert_eq!(self.last, prev);
        assert_eq!(live, self.live);
        assert!(live <= self.k);
        assert_eq!(members, self.slots.len());
        assert_eq!(self.index.len(), self.slots.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn f(x: u32) -> FlowId {
        FlowId(x)
    }

    #[test]
    fn counts_and_evicts_as_algorithm_1() {
        let mut h = HeavyHitters::new(2);
        h.observe(f(1));
        h.observe(f(1));
        h.observe(f(2));
        assert_eq!((h.count(f(1)), h.count(f(2)), h.len()), (2, 1, 2));
        h.observe(f(3)); // full, 3 absent: every counter drops by one, 2 leaves
        assert_eq!((h.count(f(1)), h.count(f(2)), h.count(f(3))), (1, 0, 0));
        assert_eq!((h.len(), h.decrements()), (1, 1));
        h.observe(f(3)); // a free counter now
        assert_eq!((h.count(f(3)), h.len()), (1, 2));
        h.observe(f(2)); // 2's old slot is gone; the set is full: decrement
        assert_eq!(
            (h.contains(f(1)), h.contains(f(3)), h.len()),
            (false, false, 0)
        );
        h.observe(f(2));
        assert_eq!((h.count(f(2)), h.len()), (1, 1));
        h.check_invariants();
    }

    #[test]
    fn a_majority_flow_is_always_in_a_one_counter_set() {
        let mut h = HeavyHitters::new(1);
        for i in 0..1000u32 {
            h.observe(f(if i % 3 == 0 { i } else { 7 }));
            h.check_invariants();
        }
        assert!(h.contains(f(7)));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// After any sequence, every flow whose share of the packets exceeds 1/K is
        /// in the set (indeed every one above 1/(K+1)), and each counter is within
        /// `decrements` below the exact count.
        #[test]
        fn holds_every_flow_above_one_over_k(
            k in 1usize..8,
            flows in prop::collection::vec(
                prop_oneof![3 => 0u32..3, 2 => 0u32..40, 1 => 0u32..1000],
                0..600,
            ),
        ) {
            let mut h = HeavyHitters::new(k);
            let mut exact: BTreeMap<u32, u64> = BTreeMap::new();
            for (i, &x) in flows.iter().enumerate() {
                h.observe(f(x));
                *exact.entry(x).or_default() += 1;
                let n = (i + 1) as u64;
                prop_assert!(h.decrements() * (k as u64 + 1) <= n);
                for (&flow, &c) in &exact {
                    if c * (k as u64 + 1) > n {
                        prop_assert!(h.contains(f(flow)), "flow {} with {} of {} packets, K = {}", flow, c, n, k);
                    }
                    let est = h.count(f(flow));
                    prop_assert!(est <= c && est + h.decrements() >= c);
                }
                prop_assert!(h.len() <= k);
            }
            h.check_invariants();
        }
    }
}
