//! RED over one FIFO: the state every single-queue RED-based qdisc keeps (RED,
//! NLRED, CHOKe, BREATHe, SFRED over MRUL): the average of the queue with its idle
//! clock, RED's `count`, and the limited queue; the end of every such enqueue
//! (RED's action, then the admit tail) and the dequeue that starts the idle clock
//! when it finds the queue empty (the link goes idle, ns-2's `idle_` flag), and
//! ns-2's `qlen > 1` rule on the queue's length ([`RedQueue::gate`]).
//!
//! `red_queue_methods!(field)` writes `Qdisc::dequeue`, `len`, `bytes`, `limit`
//! and `set_link_rate` for a qdisc whose queue is the `RedQueue` in `field`.

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::fifo::{LimitedQueue, PacketFifo, PacketStore};
use crate::parts::red::{RedAction, RedAverage, RedCount, RedRegion};
use crate::parts::red_params::RedBlock;
use crate::qdisc::{Ctx, Limit, LinkInfo, Verdict};
use crate::time::Time;

#[derive(Debug, Clone)]
pub struct RedQueue<S = PacketFifo> {
    pub average: RedAverage,
    pub count: RedCount,
    pub queue: LimitedQueue<S>,
    wait: bool,
    ecn: bool,
    qlen_gate: bool,
}

impl<S: PacketStore + Default> RedQueue<S> {
    /// An empty queue of `red.limit` packets; nothing is allocated yet.
    pub fn new(red: &RedBlock, link: &LinkInfo) -> Self {
        Self::with_store(red, link, S::default())
    }
}

impl<S: PacketStore> RedQueue<S> {
    /// A queue over `store` (empty).
    pub fn with_store(red: &RedBlock, link: &LinkInfo, store: S) -> Self {
        RedQueue {
            average: RedAverage::new(red.w_q, link, red.mean_pkt_size),
            count: RedCount::default(),
            queue: LimitedQueue::with_store(store, red.limit),
            wait: red.wait,
            ecn: red.ecn,
            qlen_gate: red.qlen_gate,
        }
    }

    /// Folds the packets an arrival finds queued at `now` into the average.
    #[inline(always)]
    pub fn average_now(&mut self, now: Time) -> f64 {
        self.average.update(self.queue.len() as f64, now)
    }

    /// `region` under ns-2's `qlen > 1` rule (when `qlen_gate` is on): `Below`
    /// while at most one packet is queued ahead of the arrival.
    #[inline(always)]
    pub fn gate(&self, region: RedRegion) -> RedRegion {
        region.gated(self.qlen_gate, self.queue.len() as u64)
    }

    /// RED's action for an arrival in `region` (an early drop may be a CE mark),
    /// then the admit tail.
    #[inline(always)]
    pub fn admit(&mut self, region: RedRegion, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let red = (self.wait, self.ecn);
        act_and_admit(&mut self.count, &mut self.queue, region, pkt, red, ctx)
    }

    /// The head packet, or `None` and the idle clock started.
    #[inline(always)]
    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        self.average.dequeued(self.queue.pop_front(), now)
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.queue.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.queue.bytes()
    }
    #[inline]
    pub fn limit(&self) -> Limit {
        self.queue.limit()
    }
}

/// Carries out RED's `action` on an arrival and admits what is left: an early
/// drop becomes a CE mark for an ECN-capable packet when `ecn` is on (ns-2; Linux
/// too) and is reported as `early_reason` otherwise; a forced drop stays a drop
/// (ns-2; Linux marks there too unless `harddrop`); a packet to queue goes
/// through the admit tail. (Written out, with no closure or `Option<Packet>`:
/// measured, the packet then moves least on the common path.)
#[inline(always)]
pub fn apply_and_admit<S: PacketStore>(
    action: RedAction,
    pkt: Packet,
    (ecn, early_reason): (bool, DropReason),
    queue: &mut LimitedQueue<S>,
    ctx: &mut Ctx<'_>,
) -> Verdict {
    match action {
        RedAction::Pass => queue.admit(pkt, ctx),
        RedAction::Early => match ctx.mark_or_drop(pkt, ecn, early_reason) {
            Some(marked) => queue.admit(marked, ctx),
            None => Verdict::Dropped,
        },
        RedAction::Forced => {
            ctx.drop(pkt, DropReason::Forced);
            Verdict::Dropped
        }
    }
}

/// RED's decision for an arrival in `region` with `count` and `(wait, ecn)`, and
/// [`apply_and_admit`]: the end of every RED-based enqueue.
#[inline(always)]
pub fn act_and_admit<S: PacketStore>(
    count: &mut RedCount,
    queue: &mut LimitedQueue<S>,
    region: RedRegion,
    pkt: Packet,
    (wait, ecn): (bool, bool),
    ctx: &mut Ctx<'_>,
) -> Verdict {
    let action = count.decide(region, wait, ctx);
    apply_and_admit(action, pkt, (ecn, DropReason::Early), queue, ctx)
}

/// `Qdisc::dequeue`, `len`, `bytes` and `limit` for a qdisc whose queue is the
/// [`RedQueue`] in field `$field`: `red_queue_methods!(fifo);` inside `impl Qdisc`.
macro_rules! red_queue_methods {
    ($field:ident) => {
        fn dequeue(&mut self, ctx: &mut $crate::qdisc::Ctx<'_>) -> Option<$crate::packet::Packet> {
            self.$field.dequeue(ctx.now)
        }
        $crate::parts::fifo::backlog_of!($field);
        fn set_link_rate(&mut self, rate: $crate::units::Rate) {
            self.$field.average.set_link_rate(rate);
        }
    };
}
pub(crate) use red_queue_methods;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::qdisc::VecSink;
    use crate::testing::Harness;
    use crate::AnyQdisc;

    #[test]
    fn an_early_action_marks_ect_packets_and_a_forced_one_drops_them() {
        let (mut rng, mut sink) = (crate::rng::stream(1, 0), VecSink::default());
        let mut ctx = Ctx::new(Time::ZERO, &mut rng, &mut sink);
        let mut ect = Packet::new(FlowId(1), 100);
        ect.ecn = crate::packet::Ecn::Ect;
        let mut queue: LimitedQueue = LimitedQueue::new(10);
        let mut run = |action: RedAction, ecn: bool, ctx: &mut Ctx<'_>| {
            apply_and_admit(action, ect, (ecn, DropReason::Early), &mut queue, ctx)
        };
        assert_eq!(run(RedAction::Early, true, &mut ctx), Verdict::Queued);
        assert_eq!(run(RedAction::Forced, true, &mut ctx), Verdict::Dropped);
        assert_eq!(run(RedAction::Early, false, &mut ctx), Verdict::Dropped);
        assert_eq!(run(RedAction::Pass, false, &mut ctx), Verdict::Queued);
        let admitted: Vec<_> = std::iter::from_fn(|| queue.pop_front().map(|p| p.ecn)).collect();
        assert_eq!(admitted, [crate::packet::Ecn::Ce, crate::packet::Ecn::Ect]);
        assert_eq!(sink.marks.len(), 1);
        let reasons: Vec<_> = sink.drops.iter().map(|d| d.1).collect();
        assert_eq!(reasons, [DropReason::Forced, DropReason::Early]);
    }

    /// The verdicts of arrivals that each find `ahead[i]` packets queued (the
    /// queue is served down to that first), flows from `flow(seq)`.
    fn arrivals_finding(
        h: &mut Harness<AnyQdisc>,
        ahead: &[usize],
        flow: impl Fn(u32) -> u32,
    ) -> Vec<Verdict> {
        let mut verdicts = vec![];
        for (i, &n) in ahead.iter().enumerate() {
            while h.q.len() > n {
                h.dequeue();
            }
            assert_eq!(h.q.len(), n, "arrival {i}");
            let seq = 10_000 + i as u32;
            verdicts.push(h.offer(flow(seq), seq));
        }
        verdicts
    }

    #[test]
    fn no_red_based_qdisc_drops_by_the_average_while_one_packet_is_queued() {
        // ns-2's `qlen > 1`: the average far above max_th, an arrival that finds at
        // most one packet queued is still let through (with `qlen_gate`, the
        // default); one that finds two is not. Without the rule (Linux) every such
        // arrival is dropped. CHOKe gets a new flow per packet, so that its matching
        // drops do not drain the queue; the others one flow, so that SFQ's and
        // SFRED's bins hold the whole queue.
        use crate::QdiscSpec;
        let kinds = [
            ("red", ""),
            ("red", "gentle = true\nadaptive = true"),
            ("nlred", ""),
            ("choke", ""),
            ("breathe", ""),
            ("sfred", ""),
            ("sfq", "red = true"),
            ("lru_red", ""),
            ("mrul", ""),
        ];
        for (kind, extra) in kinds {
            let flow = |seq: u32| if kind == "choke" { seq } else { 1 };
            for gate in [true, false] {
                let spec: QdiscSpec = toml::from_str(&format!(
                    "kind = \"{kind}\"\nlimit = 100\nmin_th = 2\nmax_th = 4\nw_q = 0.05\n\
                     qlen_gate = {gate}\n{extra}"
                ))
                .unwrap();
                let mut h = Harness::new(spec.build(&crate::testing::TEST_LINK).unwrap());
                // A queue held long enough for the average to pass max_th by far.
                for seq in 0..300 {
                    h.offer(flow(seq), seq);
                }
                let held = h.q.len();
                assert!(held >= 8, "{kind} {extra}: held {held}");
                let got = arrivals_finding(&mut h, &[1, 1, 0], flow);
                let want = if gate {
                    Verdict::Queued
                } else {
                    Verdict::Dropped
                };
                assert_eq!(got, [want; 3], "{kind} {extra} qlen_gate = {gate}");
                if gate {
                    let more = arrivals_finding(&mut h, &[1, 2], flow);
                    let want = [Verdict::Queued, Verdict::Dropped];
                    assert_eq!(more, want, "{kind} {extra}: one, then two queued");
                }
            }
        }
    }
}
