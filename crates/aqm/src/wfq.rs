//! WFQ: weighted fair queueing, per flow or per aggregate (`kind = "wfq"`), the
//! scheduler of Sun & Shin, *TCP Performance under Aggregate Fair Queueing* (seed
//! 003, sections III and V): packet-by-packet GPS (Demers, Keshav & Shenker 1989;
//! Parekh & Gallager 1993), over the class table and buffer managers of [`crate::fq`].
//!
//! **Virtual time.** V(t) is the GPS virtual time of the link: it grows at
//! `C / sum w` over the classes backlogged *in the fluid GPS system*, which is
//! emulated exactly. Each class keeps the GPS finish of its fluid backlog
//! (`max(F_gps, V(a)) + L/w` per admitted packet); a heap of those finishes tells
//! when the next class leaves GPS, so V is advanced piecewise, one departure at a
//! time, O(log n) per event. A packet dropped from a queue is taken out of the
//! fluid system too (its class's F_gps falls by L/w, not below V), so V is the GPS
//! of the packets the link really carries. Units: bytes per unit weight.
//!
//! **Tags, only at the head** (section III: "an efficient implementation of most FQ
//! algorithms assigns start and finish times only to the first packet in each
//! per-flow queue"). A class keeps its head's start S and finish F = S + L/w:
//! - an arrival to an empty class starts at S = max(F_last, V(now)), F_last being
//!   the finish of the class's last packet sent;
//! - when the head is sent, the next head starts at S = max(F, V(a)), where V(a),
//!   the virtual time at its arrival, rode in the packet's `cb`: exactly PGPS's
//!   per-packet tags, so without drops the schedule is WFQ's to the packet;
//! - when the head is *dropped* (a front drop, a push-out, ALQD+'s early drop), S
//!   stays and the new head's F = S + L/w: the paper's livelock fix ("the start
//!   time of the queue is not updated"). If the dropped head was the only packet
//!   and the arrival that caused the drop takes its place, it inherits S too.
//!
//! The link sends the head with the smallest F (a heap over backlogged classes,
//! ties to the lower slot). With `buffer = "dropfront"` and `livelock_fix = false`
//! every packet is instead tagged at arrival (F = max(F_prev, V(a)) + L/w, in its
//! `cb`) and a dropped head takes its tag with it, as section III's analysis
//! assumes: an unresponsive class whose arrivals outrun its service then sees its
//! head's tag run ahead of every other class's and is never served while they are
//! backlogged (the livelock). Under tail drops the two taggings schedule alike.
//!
//! Why GPS and not WF2Q+ or SCFQ: the paper's scheduler is WFQ, and the livelock
//! and its fix are stated in WFQ's terms; exact GPS costs a second heap, still
//! O(log n) per packet. Requires the link rate (`LinkInfo::rate`); weights and buffer managers are the
//! family's ([`crate::fq::FqParams`]).

use crate::fq::classes::{units_weight, ClassId, Classes};
use crate::fq::heap::IndexedHeap;
use crate::fq::{FairQueue, FqParams, Scheduler, SchedulerKind};
use crate::packet::Packet;
use crate::qdisc::{LinkInfo, ParamError};
use crate::time::Time;

/// `kind = "wfq"`.
pub type Wfq = FairQueue<WfqScheduler>;

/// The property tests' configurations of `wfq` besides its defaults: every buffer
/// manager, per flow and per aggregate, with and without the livelock fix.
pub fn property_configs() -> Vec<FqParams> {
    crate::fq::property_configs(crate::fq::SchedulerKind::Wfq)
}

/// Per-class virtual-time state.
#[derive(Copy, Clone, Debug, Default)]
struct WfqClass {
    /// The head's start and finish tags (head tagging).
    start: f64,
    finish: f64,
    /// Finish of the last packet sent (head tagging).
    last_finish: f64,
    /// Finish tag of the last packet tagged at arrival (per-packet tagging).
    tail_finish: f64,
    /// GPS finish of the class's fluid backlog.
    gps_finish: f64,
    /// The head was just dropped and the class emptied; the arrival that caused
    /// it inherits `start`.
    keep_start: bool,
}

#[derive(Debug, Clone)]
pub struct WfqScheduler {
    /// Link rate, bytes per nanosecond.
    rate: f64,
    /// A new rate, told since the last `advance`: V runs at the old one up to
    /// then.
    pending_rate: Option<f64>,
    /// Tag every packet at arrival (the livelock) instead of only heads.
    per_packet: bool,
    /// Virtual time, and the real time (ns) it was computed for.
    v: f64,
    clock: f64,
    /// Backlogged classes by head finish tag: the next to send is the top.
    heads: IndexedHeap,
    /// Classes backlogged in GPS, by GPS finish, and the sum of their weight
    /// units (exact, see `fq::classes`).
    gps: IndexedHeap,
    gps_units: u128,
    /// `gps_units` as a weight, kept beside it (a u128 to f64 conversion per
    /// step of V costs more than the step).
    gps_weight: f64,
    cls: Vec<WfqClass>,
    /// Classes that left GPS since the caller last asked.
    left_gps: Vec<ClassId>,
}

impl WfqScheduler {
    /// The virtual time as of the last enqueue or dequeue.
    pub fn virtual_time(&self) -> f64 {
        self.v
    }

    /// The finish tag the link will next compare for class `c` (its head's).
    pub fn head_finish(&self, c: ClassId) -> Option<f64> {
        self.heads.key(c)
    }

    fn leave_gps(&mut self, c: ClassId, classes: &Classes) {
        self.gps.remove(c);
        self.gps_units -= classes.units(c) as u128;
        self.gps_weight = units_weight(self.gps_units);
        self.left_gps.push(c);
    }
}

impl Scheduler for WfqScheduler {
    const KIND: SchedulerKind = SchedulerKind::Wfq;

    fn check_link(link: &LinkInfo<'_>) -> Result<(), ParamError> {
        if link.rate.bps() == 0 {
            return Err(ParamError::new(
                "rate",
                link.rate,
                "of the link must be positive: wfq's virtual time runs at it",
            ));
        }
        Ok(())
    }

    fn new(params: &FqParams, link: &LinkInfo<'_>) -> Result<Self, ParamError> {
        Self::check_link(link)?;
        Ok(WfqScheduler {
            rate: link.rate.as_f64() / 8e9,
            pending_rate: None,
            per_packet: params.tags_every_packet(),
            v: 0.0,
            clock: 0.0,
            heads: IndexedHeap::new(),
            gps: IndexedHeap::new(),
            gps_units: 0,
            gps_weight: 0.0,
            cls: Vec::new(),
            left_gps: Vec::new(),
        })
    }

    fn created(&mut self, c: ClassId, _classes: &Classes) {
        let i = c as usize;
        if i >= self.cls.len() {
            self.cls.resize(i + 1, WfqClass::default());
        }
        self.cls[i] = WfqClass {
            last_finish: self.v,
            tail_finish: self.v,
            gps_finish: self.v,
            ..WfqClass::default()
        };
    }

    /// Advances V to `now`, one GPS departure at a time.
    fn advance(&mut self, now: Time, classes: &Classes) {
        let now = now.as_nanos() as f64;
        while let Some((c, f)) = self.gps.peek() {
            let w = self.gps_weight;
            let dt = (f - self.v) * w / self.rate;
            if self.clock + dt <= now {
                self.clock += dt.max(0.0);
                self.v = self.v.max(f);
                self.leave_gps(c, classes);
            } else {
                self.v += (now - self.clock) * self.rate / w;
                break;
            }
        }
        self.clock = now;
        if let Some(rate) = self.pending_rate.take() {
            self.rate = rate;
        }
    }

    /// A link at rate 0 sends nothing and V would stand still; it keeps the
    /// last positive rate instead, so no tag becomes infinite.
    fn set_link_rate(&mut self, rate: crate::units::Rate) {
        if rate.bps() > 0 {
            self.pending_rate = Some(rate.as_f64() / 8e9);
        }
    }

    fn arrived(&mut self, c: ClassId, pkt: &mut Packet, classes: &Classes) {
        let w = classes.weight(c);
        let len = pkt.size as f64 / w;
        let v = self.v;
        let s = &mut self.cls[c as usize];
        // The fluid system.
        s.gps_finish = s.gps_finish.max(v) + len;
        if !self.gps.contains(c) {
            self.gps_units += classes.units(c) as u128;
            self.gps_weight = units_weight(self.gps_units);
        }
        self.gps.set(c, s.gps_finish);
        let was_empty = classes.len_of(c) == 0;
        if self.per_packet {
            let f = s.tail_finish.max(v) + len;
            s.tail_finish = f;
            pkt.cb = f.to_bits();
            if was_empty {
                self.heads.set(c, f);
            }
        } else {
            pkt.cb = v.to_bits();
            if was_empty {
                s.start = if s.keep_start {
                    s.start
                } else {
                    s.last_finish.max(v)
                };
                s.keep_start = false;
                s.finish = s.start + len;
                self.heads.set(c, s.finish);
            }
        }
    }

    fn head_dropped(&mut self, c: ClassId, head: &Packet, replaced: bool, classes: &Classes) {
        let w = classes.weight(c);
        let v = self.v;
        let s = &mut self.cls[c as usize];
        if self.gps.contains(c) {
            s.gps_finish -= head.size as f64 / w;
            if s.gps_finish <= v {
                s.gps_finish = v;
                self.leave_gps(c, classes);
            } else {
                self.gps.set(c, s.gps_finish);
            }
        }
        let s = &mut self.cls[c as usize];
        match classes.head(c) {
            Some(next) if self.per_packet => self.heads.set(c, f64::from_bits(next.cb)),
            Some(next) => {
                s.finish = s.start + next.size as f64 / w;
                self.heads.set(c, s.finish);
            }
            None => {
                self.heads.remove(c);
                s.keep_start = replaced && !self.per_packet;
            }
        }
    }

    #[inline]
    fn select(&mut self, _classes: &Classes) -> Option<ClassId> {
        self.heads.peek().map(|(c, _)| c)
    }

    fn served(&mut self, c: ClassId, _pkt: &Packet, classes: &Classes) {
        let s = &mut self.cls[c as usize];
        match classes.head(c) {
            Some(next) if self.per_packet => self.heads.set(c, f64::from_bits(next.cb)),
            Some(next) => {
                s.last_finish = s.finish;
                s.start = s.finish.max(f64::from_bits(next.cb));
                s.finish = s.start + next.size as f64 / classes.weight(c);
                self.heads.set(c, s.finish);
            }
            None => {
                s.last_finish = s.finish;
                self.heads.remove(c);
            }
        }
    }

    fn idle(&self, c: ClassId) -> bool {
        let s = &self.cls[c as usize];
        // Per-packet tags may run ahead of V (the livelock); keep them while so.
        !self.gps.contains(c) && (!self.per_packet || s.tail_finish <= self.v)
    }

    fn idle_candidate(&mut self) -> Option<ClassId> {
        self.left_gps.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::any::AnyQdisc;
    use crate::fq::testkit::{backlogged, build, class_len, inside, offer, table};
    use crate::qdisc::FlowClass;
    use crate::testing::Harness;
    use crate::time::Dur;
    use crate::units::Rate;
    use crate::{rng, FlowId};
    use rand::Rng as _;

    fn wfq(h: &Harness<AnyQdisc>) -> &Wfq {
        match h.q.qdisc() {
            AnyQdisc::Wfq(q) => q,
            _ => unreachable!(),
        }
    }

    /// Aggregates 1, 2, 3 with 1, 2 and 5 flows: weights 1, 2, 5.
    fn one_two_five() -> Vec<FlowClass> {
        [table(&[1], 1), table(&[2], 2), table(&[3], 5)].concat()
    }

    #[test]
    fn backlogged_aggregates_share_in_proportion_to_weights_within_a_packet() {
        let t = one_two_five();
        let mut h = build(
            "kind = \"wfq\"\nclassify = \"aggregate\"\nbuffer = \"droptail\"",
            &t,
        );
        let aggs = [(1, 1, 1.0), (2, 2, 2.0), (3, 5, 5.0)];
        let sent = backlogged(&mut h, &aggs, &[1000; 3], 3000, 8000, 0.0);
        // 8000 packets in the ratio 1 : 2 : 5.
        assert_eq!(sent.iter().sum::<u64>(), 8_000_000);
        for (s, want) in sent.iter().zip([1_000_000u64, 2_000_000, 5_000_000]) {
            assert!(s.abs_diff(want) <= 1000, "sent {sent:?}");
        }
    }

    #[test]
    fn unequal_packet_sizes_share_bytes_not_packets() {
        let t = one_two_five();
        let mut h = build("kind = \"wfq\"\nclassify = \"aggregate\"", &t);
        let aggs = [(1, 1, 1.0), (2, 2, 2.0), (3, 5, 5.0)];
        let sent = backlogged(&mut h, &aggs, &[1500, 200, 700], 6000, 20_000, 0.0);
        let per_weight: Vec<f64> = sent
            .iter()
            .zip(&aggs)
            .map(|(&s, a)| s as f64 / a.2)
            .collect();
        for x in &per_weight {
            assert!((x / per_weight[0] - 1.0).abs() < 0.002, "{per_weight:?}");
        }
    }

    #[test]
    fn the_weights_table_overrides_the_flow_count() {
        // Aggregate 1 has 3 flows and aggregate 2 one, but the table says 1 : 3.
        let t = [table(&[1], 3), table(&[2], 1)].concat();
        let mut h = build(
            "kind = \"wfq\"\nclassify = \"aggregate\"\nweights = { \"1\" = 1, \"2\" = 3 }",
            &t,
        );
        let sent = backlogged(
            &mut h,
            &[(1, 3, 1.0), (2, 1, 3.0)],
            &[1000; 2],
            3000,
            4000,
            0.0,
        );
        assert_eq!(sent, vec![1_000_000, 3_000_000]);
    }

    #[test]
    fn per_flow_queues_use_each_flows_weight_and_unannounced_flows_weigh_one() {
        let t = [FlowClass::new(FlowId(7), 0, 10.0)];
        let mut h = build("kind = \"wfq\"", &t);
        // Flow 7 (weight 10) against flow 8, which nobody announced (weight 1).
        let sent = backlogged(
            &mut h,
            &[(7, 0, 10.0), (8, 0, 1.0)],
            &[1000; 2],
            3000,
            1100,
            0.0,
        );
        assert_eq!(sent, vec![1_000_000, 100_000]);
    }

    #[test]
    fn virtual_time_runs_at_the_rate_told_from_the_next_event_on() {
        // A flow alone advances V at the full rate: 1000 per ms at 8 Mbit/s.
        let mut h = build("kind = \"wfq\"\nbuffer = \"droptail\"", &[]);
        offer(&mut h, 1, 0, 1500, 1);
        offer(&mut h, 1, 0, 1500, 2);
        h.advance(Dur::from_millis(1));
        h.q.set_link_rate(Rate::from_mbps(4));
        h.dequeue();
        // Up to the event that follows the change, at the old rate.
        assert!((wfq(&h).scheduler().virtual_time() - 1000.0).abs() < 1e-9);
        h.advance(Dur::from_millis(1));
        h.dequeue();
        assert!((wfq(&h).scheduler().virtual_time() - 1500.0).abs() < 1e-9);
        // A rate of 0 (an outage) is not taken: V would stand still for ever.
        h.q.set_link_rate(Rate::from_bps(0));
        offer(&mut h, 1, 0, 1500, 3);
        h.advance(Dur::from_millis(1));
        h.dequeue();
        assert!((wfq(&h).scheduler().virtual_time() - 2000.0).abs() < 1e-9);
    }

    #[test]
    fn virtual_time_follows_the_fluid_gps_system() {
        let mut h = build("kind = \"wfq\"\nbuffer = \"droptail\"", &[]);
        // Two flows of weight 1 with one 1000-byte packet each: GPS serves both at
        // C/2, so V grows 500 per ms and both finish at V = 1000, t = 2 ms.
        offer(&mut h, 1, 0, 1000, 1);
        offer(&mut h, 2, 0, 1000, 2);
        h.advance(Dur::from_millis(1));
        h.dequeue();
        assert!((wfq(&h).scheduler().virtual_time() - 500.0).abs() < 1e-9);
        h.advance(Dur::from_millis(2));
        h.dequeue();
        // GPS emptied at 2 ms: V stopped at 1000.
        assert!((wfq(&h).scheduler().virtual_time() - 1000.0).abs() < 1e-9);
        // A flow alone advances V at the full rate: 1000 per ms.
        offer(&mut h, 3, 0, 3000, 3);
        h.advance(Dur::from_millis(1));
        h.dequeue();
        assert!((wfq(&h).scheduler().virtual_time() - 2000.0).abs() < 1e-9);
        // Everything left GPS, and no class state remains.
        h.advance(Dur::from_millis(5));
        assert_eq!(h.dequeue(), None);
        assert_eq!(inside(h.q.qdisc()).0.live().count(), 0);
    }

    #[test]
    fn a_class_that_wakes_up_gets_its_share_from_now_without_credit() {
        let mut h = build("kind = \"wfq\"", &[]);
        let mut seq = 0;
        // Flow 1 has the link to itself for 1000 packets.
        for _ in 0..1000 {
            while class_len(&h, 1) < 3 {
                seq += 1;
                offer(&mut h, 1, 0, 1000, seq);
            }
            h.dequeue();
            h.advance(Dur::from_millis(1));
        }
        // Flow 2 wakes up: from now on the two alternate; flow 2 gets no burst to
        // make up for the time it was idle (as a virtual clock would give it).
        let mut sent = [0u32; 2];
        for _ in 0..100 {
            for f in [1, 2] {
                while class_len(&h, f) < 3 {
                    seq += 1;
                    offer(&mut h, f, 0, 1000, seq);
                }
            }
            let p = h.dequeue().unwrap();
            sent[p.flow.0 as usize - 1] += 1;
            assert!(sent[0].abs_diff(sent[1]) <= 1, "{sent:?}");
            h.advance(Dur::from_millis(1));
        }
    }

    /// Random arrivals and departures into a buffer that never fills.
    fn departures(config: &str, seed: u64) -> Vec<u32> {
        let t: Vec<FlowClass> = (0..6)
            .map(|f| FlowClass::new(FlowId(f), 0, 1.0 + (f % 3) as f64))
            .collect();
        let mut h = build(config, &t);
        let mut r = rng::stream(seed, 1);
        let mut out = Vec::new();
        for seq in 0..20_000 {
            if r.gen_bool(0.55) {
                offer(&mut h, r.gen_range(0..6), 0, r.gen_range(40..1500), seq);
            } else if let Some(p) = h.dequeue() {
                out.push(p.tag);
            }
            h.advance(Dur::from_micros(r.gen_range(0..1500)));
        }
        assert_eq!(h.q.counts().total_drops(), 0);
        out.extend(h.drain_seqs());
        out
    }

    #[test]
    fn without_drops_head_tags_schedule_exactly_as_per_packet_tags() {
        for seed in 0..4 {
            let head = departures(
                "kind = \"wfq\"\nlimit = 100000\nbuffer = \"droptail\"",
                seed,
            );
            let every = departures(
                "kind = \"wfq\"\nlimit = 100000\nbuffer = \"dropfront\"\nlivelock_fix = false",
                seed,
            );
            assert_eq!(head, every, "seed {seed}");
        }
    }

    #[test]
    fn weights_far_apart_keep_virtual_time_exact() {
        // Weight sums are exact integers: when the 1e6 class leaves GPS, V grows at
        // C over exactly the 1e-6 class's weight, not over a rounding residue.
        let t = [
            FlowClass::new(FlowId(1), 0, 1e6),
            FlowClass::new(FlowId(2), 0, 1e-6),
        ];
        let mut h = build("kind = \"wfq\"", &t);
        offer(&mut h, 1, 0, 1000, 0);
        for seq in 1..=5 {
            offer(&mut h, 2, 0, 1000, seq);
        }
        // GPS finishes flow 1 after 1 ms; from then on flow 2 is alone in it, until
        // about 6 ms.
        h.advance(Dur::from_millis(2));
        h.dequeue();
        let v0 = wfq(&h).scheduler().virtual_time();
        h.advance(Dur::from_millis(1));
        h.dequeue();
        let v1 = wfq(&h).scheduler().virtual_time();
        let (classes, _) = inside(h.q.qdisc());
        let w2 = classes.weight(classes.find(2).unwrap());
        // 1 ms at 8 Mbps is 1000 bytes.
        let want = 1000.0 / w2;
        assert!(
            ((v1 - v0) / want - 1.0).abs() < 1e-12,
            "{} vs {want}",
            v1 - v0
        );
    }

    #[test]
    fn a_link_without_a_rate_is_an_error() {
        let spec: crate::QdiscSpec = toml::from_str("kind = \"wfq\"").unwrap();
        let e = spec.build(&LinkInfo::new(Rate::from_bps(0))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "rate = 0bps of the link must be positive: wfq's virtual time runs at it"
        );
    }
}
