//! ALQD+ (`buffer = "alqd_plus"`; Sun & Shin, *TCP Performance under Aggregate
//! Fair Queueing*, 003 IV, Fig. 2 and Table I): ALQD with early drops that only
//! ever take a packet of the arriving packet's own flow, at a rate BLUE learns per
//! queue, updated in rounds.
//!
//! For a packet arriving to queue k (the steps of Fig. 2 as the text gives them):
//!
//! 1. **Buffer full**: if `qlen_k > share_k`, the head of queue k is dropped
//!    (`front_drop`); otherwise, as in ALQD, the head of the registered longest
//!    queue (`push_out`, or `front_drop` if that is k). The arrival is queued.
//! 2. **Early drop** (buffer not full): go to step 3 if the buffer holds more than
//!    a% of B and `qlen_k > b% share_k`, or, if `qlen_k > c% share_k`, with
//!    probability `d_k`. Otherwise queue the arrival.
//! 3. **Packet match**: if queue k's head is of the arrival's flow, drop that head
//!    (`early`); in every case queue the arrival. So no flow ever loses a packet
//!    early because another flow's packet arrived.
//!
//! `share_k = w_k B / sum w` with the sum over the classes holding packets (see
//! [`Classes::share`]); lengths are compared before the arrival is counted ("already
//! exceeds").
//!
//! **`d_k`, BLUE in rounds** (Table I). A round of queue k starts at a packet of
//! some flow f and ends just before f's next packet arrives at queue k; drops taken
//! from queue k during the round (steps 1 and 3, whoever's arrival caused them) are
//! counted, and when f's next packet arrives, if the round had drops and more than
//! `freeze_time` passed since `d_k` last changed, `d_k += increment *
//! max(count, (now - last_update) / freeze_time)`. When the link sends queue k's
//! last packet and more than `freeze_time` passed, `d_k -= decrement`. `d_k` stays in
//! [0, 1]. Readings the text leaves open, each in docs/qdiscs.md: the delimiting
//! flow is the first flow seen after the queue was last empty, and an emptied
//! queue ends its round (with the loss update if it had drops, before the empty
//! update), so a flow that has left cannot hold a round open for ever once the
//! queue drains; `last_update` starts when the class is created, not at time
//! zero (otherwise the first update after a long quiet start would add many
//! `increment`s at once); a class keeps its BLUE state while `d_k > 0`, even empty.

use super::classes::{ClassId, Classes};
use super::manager::{head_of, Admit, BufferManager};
use super::register::LongestRegister;
use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::qdisc::Ctx;
use crate::time::{Dur, Time};

/// ALQD+'s constants, from the qdisc's validated parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AlqdPlusConfig {
    /// Fractions (not percentages) of B, of share_k, of share_k.
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub increment: f64,
    pub decrement: f64,
    pub freeze_time: Dur,
}

/// BLUE's probability step, clamped to [0, 1]: the one piece of BLUE that ALQD+
/// uses (the shared BLUE part will take its place). Snaps to the ends so that
/// 1/step steps reach exactly 1 and back to exactly 0 despite rounding.
#[inline]
fn blue_step(p: f64, step: f64) -> f64 {
    let p = p + step;
    if p > 1.0 - 1e-9 {
        1.0
    } else if p < 1e-12 {
        0.0
    } else {
        p
    }
}

/// Queue k's BLUE state and its current round.
#[derive(Copy, Clone, Debug, Default)]
struct ClassBlue {
    /// d_k, the early-drop probability.
    d: f64,
    last_update: Time,
    /// The flow whose next packet ends the round; none until the first arrival.
    round_flow: Option<FlowId>,
    /// Drops taken from the queue during the round.
    round_drops: u32,
}

impl ClassBlue {
    /// The round ends: Table I's packet-loss update with the round's drop count.
    fn end_round(&mut self, cfg: &AlqdPlusConfig, now: Time) {
        let count = std::mem::take(&mut self.round_drops);
        let since = now.saturating_since(self.last_update);
        if count > 0 && since > cfg.freeze_time {
            let periods = since.as_secs_f64() / cfg.freeze_time.as_secs_f64();
            self.d = blue_step(self.d, cfg.increment * (count as f64).max(periods));
            self.last_update = now;
        }
    }
}

#[derive(Debug, Clone)]
pub struct AlqdPlus {
    cfg: AlqdPlusConfig,
    register: LongestRegister,
    blue: Vec<ClassBlue>,
}

impl AlqdPlus {
    pub fn new(cfg: AlqdPlusConfig) -> Self {
        AlqdPlus {
            cfg,
            register: LongestRegister::default(),
            blue: Vec::new(),
        }
    }

    /// d_k of class `c`.
    pub fn drop_probability(&self, c: ClassId) -> f64 {
        self.blue.get(c as usize).map_or(0.0, |b| b.d)
    }

    /// The class the register names.
    pub fn registered(&self) -> Option<ClassId> {
        self.register.get()
    }

    /// A packet of `flow` arrives at queue `c`: a packet of the round's flow ends
    /// the round (Table I's packet-loss update if it had drops) and starts the next.
    fn round(&mut self, c: ClassId, flow: FlowId, now: Time) {
        let cfg = self.cfg;
        let s = &mut self.blue[c as usize];
        match s.round_flow {
            None => {
                s.round_flow = Some(flow);
                s.round_drops = 0;
            }
            Some(f) if f == flow => s.end_round(&cfg, now),
            Some(_) => {}
        }
    }

    /// Counts a drop from queue `c` in its round.
    #[inline]
    fn count_drop(&mut self, c: ClassId) {
        let s = &mut self.blue[c as usize];
        s.round_drops = s.round_drops.saturating_add(1);
    }
}

impl BufferManager for AlqdPlus {
    fn admit(&mut self, classes: &Classes, k: ClassId, pkt: &Packet, ctx: &mut Ctx<'_>) -> Admit {
        self.round(k, pkt.flow, ctx.now);
        let qlen = classes.len_of(k) as f64;
        let share = classes.share(k);
        if classes.is_full() {
            let victim = if qlen > share {
                k
            } else {
                self.register.victim(classes, k)
            };
            self.count_drop(victim);
            return head_of(classes, victim, k);
        }
        let cfg = self.cfg;
        let over_early =
            classes.len() as f64 > cfg.a * classes.limit() as f64 && qlen > cfg.b * share;
        let d = self.blue[k as usize].d;
        let to_match = over_early || (qlen > cfg.c * share && d > 0.0 && ctx.uniform() < d);
        if to_match && classes.head(k).is_some_and(|h| h.flow == pkt.flow) {
            self.count_drop(k);
            return Admit::DropHead {
                victim: k,
                reason: DropReason::Early,
            };
        }
        Admit::Accept
    }

    #[inline]
    fn changed(&mut self, classes: &Classes, c: ClassId) {
        self.register.touched(classes, c);
    }

    fn emptied(&mut self, c: ClassId, now: Time) {
        let cfg = self.cfg;
        let s = &mut self.blue[c as usize];
        // An emptied queue ends its round (the flow that delimited it may be gone
        // for good): a round with drops updates d_k first, which also freezes it
        // against the decrement below, as BLUE's one change per freeze_time.
        s.end_round(&cfg, now);
        s.round_flow = None;
        if now.saturating_since(s.last_update) > cfg.freeze_time {
            s.d = blue_step(s.d, -cfg.decrement);
            s.last_update = now;
        }
    }

    fn created(&mut self, c: ClassId, now: Time) {
        let i = c as usize;
        if i >= self.blue.len() {
            self.blue.resize(i + 1, ClassBlue::default());
        }
        self.blue[i] = ClassBlue {
            last_update: now,
            ..ClassBlue::default()
        };
    }

    fn released(&mut self, c: ClassId) {
        self.register.released(c);
    }

    fn keeps(&self, c: ClassId) -> bool {
        self.blue[c as usize].d > 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::any::AnyQdisc;
    use crate::fq::buffer::Buffer;
    use crate::fq::testkit::{build, inside, offer, table};
    use crate::rng;
    use crate::testing::Harness;
    use rand::Rng as _;

    fn d_of(h: &Harness<AnyQdisc>, key: u32) -> f64 {
        let (c, b) = inside(h.q.qdisc());
        let Buffer::AlqdPlus(m) = b else {
            unreachable!()
        };
        c.find(key).map_or(0.0, |id| m.drop_probability(id))
    }

    /// Random arrivals of 4 flows in each of 3 aggregates, and departures. Every
    /// early drop takes a packet of the arriving packet's own flow, from a buffer
    /// that was not full.
    fn packet_match_holds(config: &str) -> usize {
        let t = table(&[1, 2, 3], 4);
        let mut h = build(config, &t);
        let mut r = rng::stream(8, 0);
        let mut early = 0;
        for seq in 0..40_000u32 {
            h.advance(crate::Dur::from_micros(r.gen_range(0..400)));
            if r.gen_bool(0.35) {
                h.dequeue();
                continue;
            }
            let agg = [1, 1, 1, 2, 2, 3][r.gen_range(0..6)];
            let flow = agg * 100 + r.gen_range(0..4);
            let full = h.q.len() == 30;
            let before = h.sink.drops.len();
            offer(&mut h, flow, agg, 1000, seq);
            for (p, reason) in &h.sink.drops[before..] {
                if *reason == DropReason::Early {
                    early += 1;
                    assert_eq!(p.flow.0, flow, "packet {} of another flow", p.tag);
                    assert!(!full);
                }
            }
        }
        early
    }

    #[test]
    fn packet_match_never_drops_another_flows_packet_early() {
        // Early steps at every arrival past the thresholds.
        let eager = "kind = \"wfq\"\nclassify = \"aggregate\"\nlimit = 30\nbuffer = \"alqd_plus\"\na = 0\nb = 0";
        assert!(packet_match_holds(eager) > 1_000);
        // The paper's parameters: early drops only as d_k learns to.
        let paper = "kind = \"drr\"\nclassify = \"aggregate\"\nlimit = 30\nbuffer = \"alqd_plus\"\nfreeze_time = \"5ms\"\nincrement = 0.05";
        assert!(packet_match_holds(paper) > 100);
    }

    #[test]
    fn early_drops_need_the_thresholds_and_a_matching_head() {
        // Two aggregates of weight 1 with 100 packets of buffer: share 50 each once
        // both hold packets. a = b = 25: step 3 needs more than 25 packets queued
        // and more than 12.5 in the arrival's queue.
        let t = table(&[1, 2], 2);
        let mut h = build(
            "kind = \"wfq\"\nclassify = \"aggregate\"\nlimit = 100\nbuffer = \"alqd_plus\"",
            &t,
        );
        offer(&mut h, 200, 2, 1000, 0);
        for seq in 1..=24 {
            offer(&mut h, 100, 1, 1000, seq);
        }
        assert_eq!(h.q.counts().total_drops(), 0, "25 packets: not above 25");
        // The 26th packet finds 25 (not above 25% of 100) and is queued; the 27th
        // finds 26: flow 100's head (tag 1) is dropped early, and so on.
        offer(&mut h, 100, 1, 1000, 25);
        offer(&mut h, 100, 1, 1000, 26);
        offer(&mut h, 100, 1, 1000, 27);
        assert_eq!(h.dropped_seqs(DropReason::Early), vec![1, 2]);
        // Flow 101 is in the same aggregate, but the head is flow 100's: it is
        // queued and nothing is dropped.
        offer(&mut h, 101, 1, 1000, 28);
        assert_eq!(h.dropped_seqs(DropReason::Early), vec![1, 2]);
        assert_eq!(h.q.len(), 27);
    }

    #[test]
    fn a_full_buffer_takes_the_own_head_above_the_share_else_the_longest() {
        // a = 100 and d = 0: no early drops, only step 1.
        let t = table(&[1, 2, 3], 1);
        let mut h = build(
            "kind = \"drr\"\nclassify = \"aggregate\"\nlimit = 10\nbuffer = \"alqd_plus\"\na = 100",
            &t,
        );
        for seq in 0..6 {
            offer(&mut h, 100, 1, 1000, seq);
        }
        for seq in 10..14 {
            offer(&mut h, 200, 2, 1000, seq);
        }
        // Aggregate 1 holds 6 > its share 5: its own head goes.
        offer(&mut h, 100, 1, 1000, 6);
        assert_eq!(h.dropped_seqs(DropReason::FrontDrop), vec![0]);
        // Aggregate 2 holds 4 <= 5: the registered longest (aggregate 1) loses.
        offer(&mut h, 200, 2, 1000, 14);
        assert_eq!(h.dropped_seqs(DropReason::PushOut), vec![1]);
        // Aggregate 3 is empty, share 10/3: again the longest, aggregate 1 (5
        // against 5 for aggregate 2, which the register does not prefer).
        offer(&mut h, 300, 3, 1000, 20);
        assert_eq!(h.dropped_seqs(DropReason::PushOut), vec![1, 2]);
        assert_eq!(h.q.len(), 10);
    }

    #[test]
    fn d_rises_at_the_end_of_a_round_with_drops_and_falls_when_the_queue_empties() {
        // One aggregate, flows 100 and 101, a = b = 0: from the second packet on,
        // every arrival whose flow heads the queue drops that head early.
        let t = table(&[1], 2);
        let mut h = build(
            "kind = \"wfq\"\nclassify = \"aggregate\"\nlimit = 100\nbuffer = \"alqd_plus\"\na = 0\nb = 0\nfreeze_time = \"10ms\"",
            &t,
        );
        // The round starts with flow 100. Queue: [100], [100 101], then 100's
        // arrival matches the head: [101 100], then 101's: [100 101]. Two drops.
        for (seq, f) in [100, 101, 100, 101].into_iter().enumerate() {
            offer(&mut h, f, 1, 1000, seq as u32);
        }
        assert_eq!(h.drops(DropReason::Early), 2);
        assert_eq!(d_of(&h, 1), 0.0);
        // 15 ms on, flow 100 ends the round: d += 0.01 * max(2, 15 / 10).
        h.advance(crate::Dur::from_millis(15));
        offer(&mut h, 100, 1, 1000, 4);
        assert!((d_of(&h, 1) - 0.02).abs() < 1e-12, "{}", d_of(&h, 1));
        // That arrival matched the head too (a drop in the new round); the next
        // round ends 1 ms later, inside the freeze: no change.
        h.advance(crate::Dur::from_millis(1));
        offer(&mut h, 101, 1, 1000, 5);
        offer(&mut h, 100, 1, 1000, 6);
        assert!((d_of(&h, 1) - 0.02).abs() < 1e-12);
        // 50 ms after the last change, a round with one drop: max(1, 50/10) = 5.
        h.advance(crate::Dur::from_millis(49));
        offer(&mut h, 101, 1, 1000, 7);
        offer(&mut h, 100, 1, 1000, 8);
        assert!((d_of(&h, 1) - 0.07).abs() < 1e-12, "{}", d_of(&h, 1));
        // The link empties the queue 20 ms later. The open round had a drop (8's
        // arrival matched the head) and 20 ms > freeze_time, so emptying ends it
        // with a loss update first (max(1, 20/10) = 2), which freezes the decrement.
        h.advance(crate::Dur::from_millis(20));
        h.drain_seqs();
        assert!((d_of(&h, 1) - 0.09).abs() < 1e-12, "{}", d_of(&h, 1));
        // Empty again 11 ms later: d -= 0.01.
        h.advance(crate::Dur::from_millis(11));
        offer(&mut h, 100, 1, 1000, 9);
        h.dequeue();
        assert!((d_of(&h, 1) - 0.08).abs() < 1e-12, "{}", d_of(&h, 1));
        // The class is kept while d > 0, though empty.
        assert!(inside(h.q.qdisc()).0.find(1).is_some());
    }

    #[test]
    fn d_is_the_probability_of_an_early_step_below_a() {
        // increment = 1: one round with a drop sets d = 1; then a = 100 leaves only
        // the d_k branch, with c = 0.
        let t = table(&[1], 2);
        let mut h = build(
            "kind = \"drr\"\nclassify = \"aggregate\"\nlimit = 4\nbuffer = \"alqd_plus\"\na = 100\nc = 0\nincrement = 1\ndecrement = 0.5\nfreeze_time = \"1ms\"",
            &t,
        );
        for seq in 0..5 {
            offer(&mut h, 100, 1, 1000, seq); // the fifth overflows: a drop
        }
        h.advance(crate::Dur::from_millis(2));
        offer(&mut h, 100, 1, 1000, 5); // ends the round: d = 1
        assert_eq!(d_of(&h, 1), 1.0);
        // Flow 100 heads the queue; with d = 1 every arrival of flow 100 to a
        // non-full buffer drops that head early.
        h.dequeue();
        let early = h.drops(DropReason::Early);
        offer(&mut h, 100, 1, 1000, 6);
        assert_eq!(h.drops(DropReason::Early), early + 1);
    }
}
