//! A bounded list of the most recently seen flows with per-flow counters: the
//! state of Scalable Fair RED's MRU list (`mrul`) and of LRU-RED's LRU cache
//! (`lru_red`). Both rest on the same observation: a router sees packets of a fast
//! flow more often than those of a slow one, so a short list ordered by recency
//! holds the flows that matter, with state bounded by the list, not the flows.
//!
//! - [`RecencyList`]: at most N entries in recency order, with O(1) lookup,
//!   move-to-front and eviction of the least recent (a slab linked both ways plus
//!   a `flow -> entry` map that is only looked up; nothing allocated per packet
//!   once the list is full).
//! - [`FlowCounters`]: the list with R_i and D_i per entry (packets received and
//!   dropped) and R, D over the listed flows, all halving every `aging_period`.
//!   Aging is lazy and O(1): R and D halve when a period boundary passes, an entry
//!   by the periods it missed when next touched; halving rounds down per entry, so
//!   R may exceed the exact sum by one packet per entry per period (subtraction
//!   saturates). An evicted entry's counts leave R and D.

use crate::packet::FlowId;
use crate::parts::flow_hash::FlowMap;
use crate::qdisc::{check, ParamError};
use crate::time::{Dur, Time};

const NIL: u32 = u32::MAX;

/// The most entries a list may have: each costs memory once its flow is seen.
pub const MAX_ENTRIES: u32 = 1 << 22;

/// A list size: at least 1, at most [`MAX_ENTRIES`].
pub fn check_size(key: &'static str, v: u32) -> Result<(), ParamError> {
    check::at_least(key, v, 1)?;
    if v > MAX_ENTRIES {
        return Err(ParamError::new(
            key,
            v,
            format!("must be at most {MAX_ENTRIES}"),
        ));
    }
    Ok(())
}

/// An aging period: positive.
pub fn check_period(key: &'static str, v: Dur) -> Result<(), ParamError> {
    if v.is_zero() {
        return Err(ParamError::new(key, v, "must be positive"));
    }
    Ok(())
}

/// One listed flow and its counters.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub flow: FlowId,
    /// R_i: packets received (aged).
    pub received: u64,
    /// D_i: packets dropped (aged).
    pub dropped: u64,
    /// The aging period the counters were last brought up to date in.
    epoch: u64,
    prev: u32,
    next: u32,
}

/// At most N entries in recency order: O(1) lookup, move-to-front and eviction
/// of the least recent.
#[derive(Debug, Clone)]
pub struct RecencyList {
    cap: usize,
    entries: Vec<Entry>,
    index: FlowMap<u32>,
    head: u32,
    tail: u32,
}

impl RecencyList {
    /// Bytes a list of `cap` entries takes once full.
    pub fn bytes_at_most(cap: u64) -> u64 {
        use crate::table_bytes::{map_bytes, vec_bytes};
        vec_bytes::<Entry>(cap).saturating_add(map_bytes::<FlowId, u32>(cap))
    }

    pub fn new(cap: usize) -> Self {
        RecencyList {
            cap,
            entries: Vec::new(),
            index: FlowMap::default(),
            head: NIL,
            tail: NIL,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry of `flow`, if listed.
    pub fn get(&self, flow: FlowId) -> Option<u32> {
        self.index.get(&flow).copied()
    }

    /// Entry `e` (from [`RecencyList::get`] or [`RecencyList::touch`]).
    pub fn entry(&self, e: u32) -> &Entry {
        &self.entries[e as usize]
    }

    /// Moves `flow` to the front, creating its entry (zeroed, stamped `epoch`) if
    /// needed. Returns the entry and the entry it evicted to make room, if any.
    pub fn touch(&mut self, flow: FlowId, epoch: u64) -> (u32, Option<Entry>) {
        if let Some(e) = self.get(flow) {
            self.unlink(e);
            self.push_front(e);
            return (e, None);
        }
        let fresh = Entry {
            flow,
            received: 0,
            dropped: 0,
            epoch,
            prev: NIL,
            next: NIL,
        };
        let (e, evicted) = if self.entries.len() < self.cap {
            self.entries.push(fresh);
            ((self.entries.len() - 1) as u32, None)
        } else {
            let e = self.tail;
            let old = self.entries[e as usize];
            self.unlink(e);
            self.index.remove(&old.flow);
            self.entries[e as usize] = fresh;
            (e, Some(old))
        };
        self.index.insert(flow, e);
        self.push_front(e);
        (e, evicted)
    }

    fn unlink(&mut self, e: u32) {
        let Entry { prev, next, .. } = self.entries[e as usize];
        if prev != NIL {
            self.entries[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.entries[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    fn push_front(&mut self, e: u32) {
        let old = self.head;
        self.entries[e as usize].prev = NIL;
        self.entries[e as usize].next = old;
        if old != NIL {
            self.entries[old as usize].prev = e;
        } else {
            self.tail = e;
        }
        self.head = e;
    }

    /// Flows from most to least recently seen: O(N), for tests.
    pub fn recency_order(&self) -> Vec<FlowId> {
        let mut out = Vec::with_capacity(self.len());
        let mut e = self.head;
        while e != NIL {
            out.push(self.entries[e as usize].flow);
            e = self.entries[e as usize].next;
        }
        out
    }

    /// Entries indexed by the flow map (equals `len`; for tests).
    pub fn indexed(&self) -> usize {
        self.index.len()
    }
}

/// Halves `x` once per period missed.
#[inline]
pub fn aged(x: u64, periods: u64) -> u64 {
    x.checked_shr(periods.min(64) as u32).unwrap_or(0)
}

/// A [`RecencyList`] with R and D over its entries, halving every period.
#[derive(Debug, Clone)]
pub struct FlowCounters {
    list: RecencyList,
    /// R and D over the listed flows.
    received: u64,
    dropped: u64,
    /// The current aging period, `now / period`.
    epoch: u64,
    period: Dur,
}

impl FlowCounters {
    /// A list of at most `cap` flows whose counters halve every `period` (> 0).
    pub fn new(cap: usize, period: Dur) -> Self {
        debug_assert!(!period.is_zero());
        FlowCounters {
            list: RecencyList::new(cap),
            received: 0,
            dropped: 0,
            epoch: 0,
            period,
        }
    }

    pub fn list(&self) -> &RecencyList {
        &self.list
    }

    /// Listed flows: N_a.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// R and D over the listed flows.
    pub fn totals(&self) -> (u64, u64) {
        (self.received, self.dropped)
    }

    /// Entry `e`'s counters as of its last update.
    pub fn entry(&self, e: u32) -> &Entry {
        self.list.entry(e)
    }

    /// `flow`'s (R_i, D_i) as of its last packet, if listed.
    pub fn flow_stats(&self, flow: FlowId) -> Option<(u64, u64)> {
        let e = self.list.entry(self.list.get(flow)?);
        Some((e.received, e.dropped))
    }

    /// Brings R and D to the period of `now`, halving once per period passed.
    #[inline]
    pub fn age(&mut self, now: Time) {
        let epoch = now.as_nanos() / self.period.as_nanos();
        if epoch > self.epoch {
            let missed = epoch - self.epoch;
            self.received = aged(self.received, missed);
            self.dropped = aged(self.dropped, missed);
            self.epoch = epoch;
        }
    }

    /// Lists `flow` at the front (evicting the least recent if full: its counts
    /// leave R and D), brings its counters to the current period and counts one
    /// packet in R_i and R. Returns its entry. Call [`FlowCounters::age`] first.
    pub fn arrival(&mut self, flow: FlowId) -> u32 {
        let (e, evicted) = self.list.touch(flow, self.epoch);
        if let Some(old) = evicted {
            let missed = self.epoch.saturating_sub(old.epoch);
            self.received = self.received.saturating_sub(aged(old.received, missed));
            self.dropped = self.dropped.saturating_sub(aged(old.dropped, missed));
        }
        let epoch = self.epoch;
        let entry = &mut self.list.entries[e as usize];
        if entry.epoch < epoch {
            let missed = epoch - entry.epoch;
            entry.received = aged(entry.received, missed);
            entry.dropped = aged(entry.dropped, missed);
            entry.epoch = epoch;
        }
        entry.received += 1;
        self.received += 1;
        e
    }

    /// Counts a drop of entry `e`'s packet in D_i and D.
    pub fn dropped(&mut self, e: u32) {
        self.list.entries[e as usize].dropped += 1;
        self.dropped += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_operations_are_constant_time() {
        // 400k touches on a list of 100k entries, most of them misses that evict
        // the tail and hits deep in the list: quadratic work would take minutes.
        let mut list = RecencyList::new(100_000);
        let mut x = 1u64;
        for i in 0..400_000u32 {
            x = crate::rng::mix64(x);
            let flow = if i % 2 == 0 { (x % 150_000) as u32 } else { i };
            list.touch(FlowId(flow), 0);
        }
        assert_eq!(list.len(), 100_000);
        let order = list.recency_order();
        assert_eq!(order.len(), 100_000);
        assert_eq!(order[0], FlowId(399_999));
        for f in &order {
            let e = list.get(*f).expect("listed flows are indexed");
            assert_eq!(list.entry(e).flow, *f);
        }
        assert_eq!(list.indexed(), 100_000);
    }

    #[test]
    fn counters_follow_the_list_and_halve_every_period() {
        let mut c = FlowCounters::new(2, Dur::from_millis(100));
        let at = |ms| Time::ZERO + Dur::from_millis(ms);
        for (ms, flow) in [(0, 1), (10, 1), (20, 1), (30, 2)] {
            c.age(at(ms));
            let e = c.arrival(FlowId(flow));
            if flow == 2 {
                c.dropped(e);
            }
        }
        assert_eq!(c.totals(), (4, 1));
        assert_eq!(c.flow_stats(FlowId(1)), Some((3, 0)));
        // Two periods later R and D have halved twice; flow 1 catches up on touch.
        c.age(at(250));
        assert_eq!(c.totals(), (1, 0));
        c.arrival(FlowId(1));
        assert_eq!(c.flow_stats(FlowId(1)), Some((1, 0))); // 3 >> 2 = 0, + 1
                                                           // A third flow evicts flow 2 (the least recent) and its counts leave.
        c.arrival(FlowId(3));
        assert_eq!(c.flow_stats(FlowId(2)), None);
        assert_eq!(c.len(), 2);
        assert_eq!(c.totals(), (3, 0));
    }
}
