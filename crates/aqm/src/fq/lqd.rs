//! LQD, Longest Queue Drop (`buffer = "lqd"`; Suter, Lakshman, Stiliadis &
//! Choudhury, *Design considerations for supporting TCP with per-flow queueing*,
//! INFOCOM 1998, ref. 1 of Sun & Shin): when the shared buffer is full, a packet
//! is taken from the longest queue, so a class can hold more than its share of the
//! buffer only while nobody else needs it.
//!
//! - **Longest relative to the share**: Sun & Shin weight the fair share,
//!   `share_k = w_k B / sum w`; the longest queue relative to it is the one with the
//!   largest `len_k / w_k`, whichever classes the sum runs over (it is a common
//!   factor). The arrival counts in its own queue, as in Suter et al.'s "the
//!   arriving packet is admitted and a packet is dropped from the longest queue";
//!   ties go to the arrival's own queue.
//! - **From the front**: the head of that queue goes (`front_drop` if it is the
//!   arrival's own queue, `push_out` otherwise), as Lakshman et al.'s drop from
//!   front, which Suter et al. pair with LQD and Sun & Shin's ALQD+ inherits ("the
//!   first packet from the longest queue"). When the own queue is the longest and
//!   empty (a class of tiny weight), the arrival itself is dropped (`overflow`).
//! - **Cost**: a max-heap of `len / w` over the classes holding packets, re-keyed on
//!   every queue operation: O(log n) per packet in the number of backlogged
//!   classes. Linux's `sfq` keeps unit-weight depths in buckets for O(1); weights
//!   make the keys real numbers, hence the heap.

use super::classes::{ClassId, Classes};
use super::heap::IndexedHeap;
use super::manager::{head_of, Admit, BufferManager};
use crate::packet::Packet;
use crate::qdisc::Ctx;

#[derive(Debug, Clone, Default)]
pub struct Lqd {
    /// Backlogged classes keyed by `-len / w`: the top is a longest queue.
    longest: IndexedHeap,
}

impl Lqd {
    /// A longest class (relative to its weight), if any holds packets.
    pub fn longest(&self) -> Option<ClassId> {
        self.longest.peek().map(|(c, _)| c)
    }
}

impl BufferManager for Lqd {
    #[inline]
    fn admit(&mut self, classes: &Classes, k: ClassId, _pkt: &Packet, _: &mut Ctx<'_>) -> Admit {
        if !classes.is_full() {
            return Admit::Accept;
        }
        let own = (classes.len_of(k) + 1) as f64 / classes.weight(k);
        let victim = match self.longest.peek() {
            Some((top, neg)) if top != k && -neg > own => top,
            _ => k,
        };
        head_of(classes, victim, k)
    }

    #[inline]
    fn changed(&mut self, classes: &Classes, c: ClassId) {
        if classes.len_of(c) == 0 {
            self.longest.remove(c);
        } else {
            self.longest.set(c, -classes.normalized(c));
        }
    }

    fn released(&mut self, c: ClassId) {
        self.longest.remove(c);
    }
}

#[cfg(test)]
mod tests {
    use crate::any::AnyQdisc;
    use crate::drop_reason::DropReason;
    use crate::fq::testkit::{build, inside, offer};
    use crate::qdisc::FlowClass;
    use crate::testing::Harness;
    use crate::{rng, FlowId};
    use rand::Rng as _;

    /// Aggregate a (1..=5) has a flows: weights 1..5.
    fn weighted() -> Vec<FlowClass> {
        (1..=5u32)
            .flat_map(|a| (0..a).map(move |i| FlowClass::new(FlowId(a * 100 + i), a, 1.0)))
            .collect()
    }

    /// (key, length, weight) of every class.
    fn lengths(h: &Harness<AnyQdisc>) -> Vec<(u32, usize, f64)> {
        let (c, _) = inside(h.q.qdisc());
        c.live()
            .map(|id| (c.key(id), c.len_of(id), c.weight(id)))
            .collect()
    }

    /// Random arrivals (skewed towards aggregate 5, then 1) and departures into a
    /// buffer of 30. On every arrival to a full buffer exactly one packet goes, and
    /// it comes from a queue whose length over its weight, counting the arrival in
    /// its own queue, is the largest.
    fn always_a_longest(config: &str) {
        let t = weighted();
        let mut h = build(config, &t);
        let mut r = rng::stream(11, 0);
        let (mut checked, mut pushed_out) = (0, 0);
        for seq in 0..30_000u32 {
            if r.gen_bool(0.3) {
                h.dequeue();
                continue;
            }
            let agg = match r.gen_range(0..10) {
                0..=4 => 5,
                5..=6 => 1,
                x => x - 5,
            };
            let mut before = lengths(&h);
            let full = h.q.len() == 30;
            match before.iter_mut().find(|e| e.0 == agg) {
                Some(e) => e.1 += 1,
                None => before.push((agg, 1, agg as f64)),
            }
            let drops_before = h.sink.drops.len();
            offer(&mut h, agg * 100 + seq % agg, agg, 1000, seq);
            let new = &h.sink.drops[drops_before..];
            if !full {
                assert!(new.is_empty());
                continue;
            }
            assert_eq!(new.len(), 1);
            let (victim, reason) = (new[0].0.aggregate, new[0].1);
            let most = before.iter().map(|e| e.1 as f64 / e.2).fold(0.0, f64::max);
            let v = before.iter().find(|e| e.0 == victim).unwrap();
            assert_eq!(v.1 as f64 / v.2, most, "victim {victim} in {before:?}");
            let want = match (victim == agg, v.1 == 1 && victim == agg) {
                (false, _) => DropReason::PushOut,
                (true, false) => DropReason::FrontDrop,
                (true, true) => DropReason::Overflow,
            };
            assert_eq!(reason, want);
            checked += 1;
            pushed_out += (reason == DropReason::PushOut) as u32;
        }
        assert!(
            checked > 5_000 && pushed_out > 1_000,
            "{checked} {pushed_out}"
        );
    }

    #[test]
    fn lqd_always_drops_from_a_longest_queue_relative_to_its_weight() {
        always_a_longest("kind = \"wfq\"\nclassify = \"aggregate\"\nlimit = 30\nbuffer = \"lqd\"");
        always_a_longest("kind = \"drr\"\nclassify = \"aggregate\"\nlimit = 30\nbuffer = \"lqd\"");
    }

    #[test]
    fn the_longest_queue_loses_its_head() {
        let mut h = build("kind = \"drr\"\nlimit = 6", &[]);
        for seq in 0..4 {
            offer(&mut h, 1, 0, 1000, seq);
        }
        offer(&mut h, 2, 0, 1000, 10);
        offer(&mut h, 2, 0, 1000, 11);
        // Flow 2's arrival (3 counting it) is shorter than flow 1's 4: 1's head goes.
        offer(&mut h, 2, 0, 1000, 12);
        assert_eq!(h.dropped_seqs(DropReason::PushOut), vec![0]);
        // Now 3 and 3: flow 1's arrival makes 4, its own head goes.
        offer(&mut h, 1, 0, 1000, 13);
        assert_eq!(h.dropped_seqs(DropReason::FrontDrop), vec![1]);
        let AnyQdisc::Drr(q) = h.q.qdisc() else {
            unreachable!()
        };
        assert_eq!((q.class_len(1), q.class_len(2)), (3, 3));
    }
}
