//! A small driver for unit tests of a qdisc alone: scripted arrivals, a clock to
//! advance, and the drops and marks it saw. The test owns the packets, so it uses
//! `tag` as a sequence number to say which packet went where.

use crate::drop_reason::DropReason;
use crate::monitored::Monitored;
use crate::packet::{Ecn, FlowId, Packet};
use crate::qdisc::{LinkInfo, Qdisc, QdiscParams, VecSink, Verdict};
use crate::time::{Dur, Time};
use crate::units::Rate;
use crate::{rng, Rng};

/// The link unit tests build their qdiscs for unless they say otherwise: 10 Mbps.
pub const TEST_LINK: LinkInfo = LinkInfo::new(Rate::from_mbps(10));

/// The message `params` are rejected with when built for [`TEST_LINK`], as a
/// user reads it (`min_th = 200 must be below max_th = 100`); panics if accepted.
#[track_caller]
pub fn rejection<P: QdiscParams>(params: P) -> String {
    match params.build(&TEST_LINK) {
        Ok(_) => panic!("the parameters were accepted"),
        Err(e) => e.to_string(),
    }
}

/// Drives one qdisc through a scripted sequence of packets.
pub struct Harness<Q> {
    pub q: Monitored<Q>,
    pub now: Time,
    pub rng: Rng,
    pub sink: VecSink,
    /// Size of packets made by [`Harness::offer`].
    pub size: u32,
}

impl<Q: Qdisc> Harness<Q> {
    /// Builds the qdisc of `params` for [`TEST_LINK`]; panics on invalid ones.
    #[track_caller]
    pub fn build<P: QdiscParams<Qdisc = Q>>(params: P) -> Self {
        Self::build_for(params, &TEST_LINK)
    }

    /// Builds the qdisc of `params` for `link`; panics on invalid ones.
    #[track_caller]
    pub fn build_for<P: QdiscParams<Qdisc = Q>>(params: P, link: &LinkInfo) -> Self {
        match params.build(link) {
            Ok(q) => Self::new(q),
            Err(e) => panic!("invalid test parameters: {e}"),
        }
    }

    pub fn new(q: Q) -> Self {
        Self::with_seed(q, 1)
    }
    pub fn with_seed(q: Q, seed: u64) -> Self {
        Harness {
            q: Monitored::new(q),
            now: Time::ZERO,
            rng: rng::stream(seed, 0),
            sink: VecSink::default(),
            size: 1000,
        }
    }

    /// Offers a `size`-byte packet of `flow`, tagged `seq`.
    #[track_caller]
    pub fn offer(&mut self, flow: u32, seq: u32) -> Verdict {
        let mut p = Packet::new(FlowId(flow), self.size);
        p.tag = seq;
        self.offer_pkt(p)
    }

    /// Offers an ECN-capable packet.
    #[track_caller]
    pub fn offer_ect(&mut self, flow: u32, seq: u32) -> Verdict {
        let mut p = Packet::new(FlowId(flow), self.size);
        p.tag = seq;
        p.ecn = Ecn::Ect;
        self.offer_pkt(p)
    }

    #[track_caller]
    pub fn offer_pkt(&mut self, pkt: Packet) -> Verdict {
        self.q.enqueue(pkt, self.now, &mut self.rng, &mut self.sink)
    }

    pub fn dequeue(&mut self) -> Option<Packet> {
        self.q.dequeue(self.now, &mut self.rng, &mut self.sink)
    }

    pub fn advance(&mut self, d: Dur) {
        self.now += d;
    }

    /// Tags of the packets dropped for `reason`, in drop order.
    pub fn dropped_seqs(&self, reason: DropReason) -> Vec<u32> {
        self.sink
            .drops
            .iter()
            .filter(|(_, r)| *r == reason)
            .map(|(p, _)| p.tag)
            .collect()
    }

    /// Number of drops for `reason`.
    pub fn drops(&self, reason: DropReason) -> u64 {
        self.q.counts().drops[reason.index()]
    }

    /// Number of marks for `reason`.
    pub fn marks(&self, reason: DropReason) -> u64 {
        self.q.counts().marks[reason.index()]
    }

    /// Dequeues everything, returning the tags in departure order.
    pub fn drain_seqs(&mut self) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some(p) = self.dequeue() {
            out.push(p.tag);
        }
        out
    }
}

/// What [`aimd_through`] measured between its `from` and `to`.
pub struct AimdLoad {
    /// Mean queueing delay of the packets sent, seconds.
    pub delay_s: f64,
    /// Mean backlog in packets, sampled once a transmission time.
    pub backlog: f64,
    /// The link's use: the share of transmission times that sent a packet.
    pub utilization: f64,
}

/// 20 window-based senders (additive increase of one packet per RTT, halving at
/// most once per RTT on a loss, as Reno in congestion avoidance) share a 10 Mbps
/// link (a 1000-byte packet every 800 us) through `h`'s qdisc, with 40 ms of
/// propagation RTT; measured from `from` to `to`. The load under which an AQM's
/// controller must hold its target.
pub fn aimd_through<Q: Qdisc>(h: &mut Harness<Q>, from: Time, to: Time) -> AimdLoad {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    const FLOWS: usize = 20;
    let tx = Dur::from_micros(800);
    let rtt = Dur::from_millis(40);
    let mut cwnd = [2.0f64; FLOWS];
    let mut inflight = [0u32; FLOWS];
    let mut last_cut = [Time::ZERO; FLOWS];
    // (time, flow, lost): an ACK (or a loss signal) reaching a sender.
    let mut feedback: BinaryHeap<Reverse<(Time, usize, bool)>> = BinaryHeap::new();
    let (mut delay_sum, mut backlog_sum, mut samples, mut sent) = (0.0, 0.0, 0u64, 0u64);
    h.size = 1000;
    while h.now < to {
        let now = h.now;
        while let Some(&Reverse((t, f, lost))) = feedback.peek() {
            if t > now {
                break;
            }
            feedback.pop();
            inflight[f] -= 1;
            if lost {
                if t.saturating_since(last_cut[f]) > rtt {
                    cwnd[f] = (cwnd[f] / 2.0).max(1.0);
                    last_cut[f] = t;
                }
            } else {
                cwnd[f] += 1.0 / cwnd[f];
            }
        }
        if now >= from {
            backlog_sum += h.q.len() as f64;
            samples += 1;
        }
        for f in 0..FLOWS {
            while (inflight[f] as f64) < cwnd[f].floor() {
                inflight[f] += 1;
                if h.offer(f as u32, 0) == Verdict::Dropped {
                    feedback.push(Reverse((now + rtt, f, true)));
                }
            }
        }
        // The link sends one packet per transmission time.
        if let Some(p) = h.dequeue() {
            if now >= from {
                delay_sum += now.saturating_since(p.enqueued_at).as_secs_f64();
                sent += 1;
            }
            feedback.push(Reverse((now + tx + rtt, p.flow.index(), false)));
        }
        h.advance(tx);
    }
    AimdLoad {
        delay_s: delay_sum / sent as f64,
        backlog: backlog_sum / samples as f64,
        utilization: sent as f64 / samples as f64,
    }
}

/// Three flows of 200, 700 and 1500-byte packets kept backlogged (20 packets each,
/// as `queued` counts a flow's packets) through `h`'s qdisc for 30,000 departures:
/// a byte-fair scheduler (DRR in SFQ, FQ-CoDel) sends them equal bytes, so 7.5
/// small packets for each large one, and drops nothing.
#[track_caller]
pub fn assert_backlogged_flows_share_bytes<Q: Qdisc>(
    h: &mut Harness<Q>,
    flows: &[u32],
    queued: impl Fn(&Q, u32) -> usize,
) {
    assert_eq!(flows.len(), 3);
    let sizes = [200u32, 700, 1500];
    let (mut bytes, mut packets) = ([0u64; 3], [0u64; 3]);
    let mut seq = 0;
    for _ in 0..30_000 {
        for (i, &f) in flows.iter().enumerate() {
            while queued(h.q.qdisc(), f) < 20 {
                seq += 1;
                let mut p = Packet::new(FlowId(f), sizes[i]);
                p.tag = seq;
                h.offer_pkt(p);
            }
        }
        let p = h.dequeue().expect("backlogged");
        let i = flows
            .iter()
            .position(|&f| f == p.flow.0)
            .expect("one of the flows");
        bytes[i] += p.size as u64;
        packets[i] += 1;
    }
    let mean = bytes.iter().sum::<u64>() as f64 / 3.0;
    for b in bytes {
        assert!(
            (b as f64 - mean).abs() < 0.005 * mean,
            "bytes {bytes:?} packets {packets:?}"
        );
    }
    let ratio = packets[0] as f64 / packets[2] as f64;
    assert!((ratio - 7.5).abs() < 0.1, "packets {packets:?}");
    assert_eq!(h.q.counts().total_drops(), 0);
}
