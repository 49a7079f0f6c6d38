//! The data plane: one thread that reads packets from both TUN devices and
//! carries them through the scenario's links on a logical clock, and a writer
//! ([`writer`]) that writes each out at its due time.
//!
//! Per direction a packet crosses its flow's access link on the sending side, the
//! bottleneck, and its flow's access link on the receiving side. Access links are
//! FIFO serializers, one per direction: departure = max(previous departure, arrival) + size / rate,
//! then the propagation delay, computed the moment the packet is read. The
//! bottleneck is the simulator's own link runtime (`sim::runner::LinkRuntime`:
//! the scenario's qdisc with the same random stream, the link's model, its
//! delay): an arrival event enqueues, the transmitter dequeues when idle and
//! finishes when the runtime says, the far end is reached when it says. The
//! clock of all of it is the monotonic clock since the run began, in
//! nanoseconds: an event is processed at its logical time, never at the moment
//! the thread got to it, so lateness delays the packets but not the decisions.
//! Only the final write can be late; its lateness is recorded. A packet goes to
//! its writer when its transmission ends, ahead of its due time by the link's
//! delay and the far access link, so the kernel's TCP work inside the writes
//! (the receiving side's) is off this thread.
//!
//! The senders' device hands over what their TCP sent as it sent it, a TSO
//! super-packet per read, cut here into MTU packets before anything sees them
//! (`plane::io`, [`crate::gso`]): one read per up to 44 packets instead of one
//! each. The receivers' device goes a packet at a time.
//!
//! The thread sleeps in `ppoll` on both devices with a nanosecond timeout and a
//! timer slack of 1 ns, and reads a device only when `ppoll` says it is
//! readable: an idle device costs no `read`. Within [`SPIN_NS`] of the next event
//! it polls without sleeping (`AQMLAB_EMULATE_SPIN_US` overrides it, for
//! BENCHMARKS.md, which measures what spinning costs and buys), but only while
//! its budget lasts: working and spinning, it stays on a CPU at most 60% of the
//! time (`event_loop::Budget`), under the kernel's limit for real-time threads.

use crate::ipv4;
use crate::stats::{FlowCounters, Lateness};
use aqm::{DropReason, FlowId, Packet, Time, VecSink};
use sim::runner::{LinkCounters, LinkStats, ProbeEnd, QueuePool};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

mod event_loop;
mod flows;
mod io;
mod links;
mod writer;
pub use event_loop::run;
pub use flows::{FlowPath, ProbeFlow, UdpFlow};
pub use links::{Access, Bottleneck, Pipe, ACCESS_LIMIT};

/// Below this distance to the next event the thread spins rather than sleeps.
pub const SPIN_NS: u64 = 50_000;

/// [`SPIN_NS`], or `AQMLAB_EMULATE_SPIN_US` microseconds when set.
fn spin_ns() -> u64 {
    std::env::var("AQMLAB_EMULATE_SPIN_US")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(SPIN_NS, |us| us * 1000)
}
/// The first port of the flows' sender-side ports: flow `i` uses `PORT_BASE + i`.
pub const PORT_BASE: u16 = 10_000;
/// The receivers' TCP listening port and UDP port.
pub const TCP_PORT: u16 = 5001;
pub const UDP_PORT: u16 = 5002;
/// Packets read from one device before the thread looks at its events again.
const READ_BATCH: usize = 64;
const BUF: usize = 2048;

/// Forward (senders to receivers) and reverse.
pub const FWD: usize = 0;
pub const REV: usize = 1;

/// Everything the data plane needs.
pub struct Config {
    pub flows: Vec<FlowPath>,
    pub links: [Bottleneck; 2],
    /// The senders' device (opened with offloads: a `virtio_net_hdr` before
    /// each packet) and the receivers'.
    pub tun: [File; 2],
    pub epoch: Instant,
    pub warmup_ns: u64,
    pub end_ns: u64,
    pub queue_interval_ns: u64,
    pub stop: Arc<AtomicBool>,
    /// Keep a copy of the first this many CE-marked packets as written.
    pub capture_marked: usize,
    /// The programs' connections and the flows they take (`--app`).
    pub apps: Option<crate::apps::ConnMap>,
    /// Each direction's observer, the simulator's for a monitored link: it
    /// counts what the queue and the transmitter do, samples the queue and
    /// records sojourn times (`[monitor] delays`).
    pub stats: [LinkStats; 2],
}

/// What the data plane counted.
pub struct Outcome {
    /// Each direction's observer (queue samples, sojourn times, the largest
    /// backlog) and its counters over the measured interval.
    pub stats: [LinkStats; 2],
    pub links: [LinkCounters; 2],
    pub flows: Vec<FlowCounters>,
    /// Per flow, a probe flow's counts and RTTs.
    pub probes: Vec<Option<ProbeEnd>>,
    pub lateness: Lateness,
    /// Packets read that belonged to no flow (dropped).
    pub unclassified: u64,
    /// The programs' connections: how many took a flow, how many found none.
    pub app_connections: (usize, u64),
    /// Writes the kernel refused, reads that failed.
    pub write_errors: u64,
    pub read_errors: u64,
    /// Packets an access link had no room for (a source faster than it).
    pub access_drops: u64,
    /// Events due before the end that the plane had not reached, and packets
    /// due before it that a writer had not written, when the run's time was up
    /// (they fell behind; the run still ends on time).
    pub unhandled: u64,
    pub links_back: [Bottleneck; 2],
    /// Logical time the run reached, ns.
    pub end_ns: u64,
    /// Whether it stopped early (a signal).
    pub interrupted: bool,
    /// The first CE-marked packets, as written to the device.
    pub marked: Vec<Vec<u8>>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Sample,
    MeasureStart,
    Arrive(u8, u32),
    TxDone(u8),
    /// A qdisc holding packets for their time (a shaper) is asked again.
    Wake(u8),
    /// A probe's echo reaches the senders' end.
    Echo(u32),
    /// A program's packet is delivered: its bytes, whether it was new data.
    AppDelivered(u32, u16, bool),
    Udp(u32),
    Probe(u32),
}

struct Plane {
    flows: Vec<FlowPath>,
    links: [Bottleneck; 2],
    pool: QueuePool,
    sink: VecSink,
    events: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    bufs: Vec<Vec<u8>>,
    /// Each slot's flow, set when the packet is admitted.
    slot_flow: Vec<u32>,
    free: Vec<u32>,
    measuring: bool,
    /// When the measured interval begins, ns (probes count by their send time).
    warmup_ns: u64,
    stats: [LinkStats; 2],
    /// The observers' counters when the warm-up ended (none without one).
    at_warmup: Option<[LinkCounters; 2]>,
    flow_counts: Vec<FlowCounters>,
    /// Each device's writer: the senders' (0) and the receivers' (1).
    writers: Vec<writer::Writer>,
    /// The run's end: what is due after it is never written.
    end_ns: u64,
    unclassified: u64,
    write_errors: u64,
    read_errors: u64,
    access_drops: u64,
    udp_id: u16,
    capture_marked: usize,
    marked: Vec<Vec<u8>>,
    apps: Option<crate::apps::ConnMap>,
    /// The senders' device's read buffer (a whole super-packet).
    scratch: Vec<u8>,
}

impl Plane {
    fn push(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, ev)));
    }

    fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.bufs.push(vec![0; BUF]);
                self.slot_flow.push(0);
                (self.bufs.len() - 1) as u32
            }
        }
    }

    /// A packet of `len` bytes in slot `tag` enters direction `dir` at `t`.
    fn admit(&mut self, dir: usize, tag: u32, len: usize, t: u64) {
        self.bufs[tag as usize].truncate(len);
        let Some(h) = ipv4::parse(&self.bufs[tag as usize]) else {
            return self.discard(tag);
        };
        let port = if dir == FWD { h.src_port } else { h.dst_port };
        let flow = port.wrapping_sub(PORT_BASE) as usize;
        // Forward: a flow's own packets. Reverse: TCP's ACKs and probes' echoes.
        // Anything else between the namespaces is a program's (`--app`).
        let own = flow < self.flows.len()
            && self.flows[flow].app.is_none()
            && self.flows[flow].proto() == h.proto
            && match h.proto {
                ipv4::PROTO_UDP => dir == FWD,
                ipv4::PROTO_ICMP => (dir == REV) == ipv4::is_echo_reply(&self.bufs[tag as usize]),
                _ => true,
            };
        let flow = match (own, self.apps.as_mut()) {
            (true, _) => flow,
            (false, Some(apps)) => {
                match apps.flow(&h, dir, ipv4::tcp_flags(&self.bufs[tag as usize])) {
                    Some(f) => f as usize,
                    None => return self.discard(tag),
                }
            }
            (false, None) => return self.discard(tag),
        };
        if dir == FWD && self.measuring && self.flows[flow].app.is_some() {
            self.flow_counts[flow].app.sent += 1;
        }
        self.slot_flow[tag as usize] = flow as u32;
        let f = &mut self.flows[flow];
        if dir == FWD && f.syn_strip.any() {
            ipv4::strip_syn(&mut self.bufs[tag as usize], f.syn_strip);
        }
        match f.access.into[dir].send(t, u32::from(h.len)) {
            Some(at) => self.push(at, Ev::Arrive(dir as u8, tag)),
            None => {
                self.access_drops += 1;
                self.probe_lost(tag);
                self.release(tag);
            }
        }
    }

    fn discard(&mut self, tag: u32) {
        self.unclassified += 1;
        self.release(tag);
    }

    /// The packet in slot `tag` is dropped: if it is a probe or its echo, the
    /// probe is lost.
    fn probe_lost(&mut self, tag: u32) {
        let flow = self.slot_flow[tag as usize] as usize;
        let seq = ipv4::echo_seq(&self.bufs[tag as usize]);
        let measured_from = Time::from_nanos(self.warmup_ns);
        if let Some(p) = self.flows[flow].probe.as_mut() {
            if let Some(sent) = p.outstanding.remove(&seq) {
                p.end.lost(Time::from_nanos(sent), measured_from);
            }
        }
    }

    /// The echo in slot `tag` reaches the senders' end at `t`: its probe's RTT.
    fn echoed(&mut self, tag: u32, t: u64) {
        let flow = self.slot_flow[tag as usize] as usize;
        let seq = ipv4::echo_seq(&self.bufs[tag as usize]);
        let measured_from = Time::from_nanos(self.warmup_ns);
        if let Some(p) = self.flows[flow].probe.as_mut() {
            if let Some(sent) = p.outstanding.remove(&seq) {
                p.end
                    .echoed(Time::from_nanos(sent), Time::from_nanos(t), measured_from);
            }
        }
    }

    fn release(&mut self, tag: u32) {
        let b = &mut self.bufs[tag as usize];
        b.resize(BUF, 0);
        self.free.push(tag);
    }

    fn packet(&self, tag: u32) -> Packet {
        let b = &self.bufs[tag as usize];
        let h = ipv4::parse(b).expect("admitted packets parse");
        let flow = self.slot_flow[tag as usize];
        let mut p = Packet::new(FlowId(flow), u32::from(h.len));
        p.aggregate = self.flows[flow as usize].aggregate;
        p.ecn = h.tos.ecn;
        p.dscp = h.tos.dscp;
        p.tag = tag;
        p
    }

    /// Frees what the last qdisc call dropped and rewrites what it marked,
    /// counting both for their flows (the link's observer counted them for the
    /// link).
    fn drain(&mut self) {
        let sink = std::mem::take(&mut self.sink);
        for (p, reason) in &sink.drops {
            if self.measuring {
                self.flow_counts[p.flow.index()].drops[reason.index()] += 1;
            }
            self.probe_lost(p.tag);
            self.release(p.tag);
        }
        for (p, _) in &sink.marks {
            ipv4::mark_ce(&mut self.bufs[p.tag as usize]);
            if self.measuring {
                self.flow_counts[p.flow.index()].marks += 1;
            }
        }
        self.sink = sink;
        self.sink.drops.clear();
        self.sink.marks.clear();
    }

    fn arrive(&mut self, dir: usize, tag: u32, t: u64) {
        let pkt = self.packet(tag);
        if self.links[dir].lost(t) {
            // Lost on the link, before the queue: never an arrival of the queue's.
            self.stats[dir].on_link_loss(pkt.flow.index());
            if self.measuring {
                self.flow_counts[pkt.flow.index()].drops[DropReason::LinkLoss.index()] += 1;
            }
            self.probe_lost(tag);
            self.release(tag);
            return;
        }
        let now = Time::from_nanos(t);
        let link = &mut self.links[dir].link;
        let verdict = link.queue.enqueue(pkt, now, &mut self.sink, &mut self.pool);
        let len = link.queue.len();
        self.stats[dir].on_enqueue(now, &pkt, verdict, &self.sink, len);
        self.drain();
        if !self.links[dir].busy {
            self.start_next(dir, t);
        }
    }

    fn start_next(&mut self, dir: usize, t: u64) {
        let now = Time::from_nanos(t);
        let link = &mut self.links[dir].link;
        let pkt = link.queue.dequeue(now, &mut self.sink, &mut self.pool);
        let len = link.queue.len();
        self.stats[dir].on_dequeue(now, pkt.as_ref(), &self.sink, len);
        self.drain();
        let Some(pkt) = pkt else {
            if self.links[dir].busy {
                self.stats[dir].on_idle(t - self.links[dir].busy_since);
            }
            self.links[dir].busy = false;
            // A shaper (CAKE, paced fq) holding packets says when to ask again.
            let q = &self.links[dir].link.queue;
            if let Some(at) = q.wake_at().filter(|_| !q.is_empty()) {
                self.push(at.as_nanos().max(t), Ev::Wake(dir as u8));
            }
            return;
        };
        let done = self.links[dir].tx_end(t, pkt.size);
        let link = &mut self.links[dir];
        if !link.busy {
            link.busy_since = t;
        }
        link.busy = true;
        link.in_tx = Some(pkt);
        link.in_tx_span = (t, done);
        self.push(done, Ev::TxDone(dir as u8));
    }

    /// Direction `dir`'s counters as of `t`: the packet in transmission counts
    /// the bits that have left, the busy period its time so far.
    fn counters_at(&self, dir: usize, t: u64) -> LinkCounters {
        let link = &self.links[dir];
        let now = Time::from_nanos(t);
        let (start, done) = link.in_tx_span;
        let in_progress = link.in_tx.as_ref().map(|p| {
            let span = (Time::from_nanos(start), Time::from_nanos(done));
            (p, link.link.bits_sent(p.size, span, now))
        });
        let busy_since = link.busy.then(|| Time::from_nanos(link.busy_since));
        self.stats[dir].counters_now(now, in_progress, busy_since)
    }

    fn tx_done(&mut self, dir: usize, t: u64) {
        let pkt = self.links[dir]
            .in_tx
            .take()
            .expect("a packet was in transmission");
        self.stats[dir].on_tx_done(&pkt);
        let at = self.links[dir].arrival(t);
        let flow = pkt.flow.index();
        let due = self.flows[flow].access.out_of[dir].pass(at, pkt.size);
        // A probe's echo ends at the senders' end: nothing there listens for
        // it, and its RTT is the logical time it arrives.
        if dir == REV && self.flows[flow].probe.is_some() {
            self.push(due, Ev::Echo(pkt.tag));
        } else if due < self.end_ns {
            self.hand_over(dir, pkt.tag, due);
        } else {
            self.release(pkt.tag);
        }
        self.start_next(dir, t);
    }

    /// The packet in slot `tag` has crossed the bottleneck in direction `dir`
    /// and is due at its device at `due`: its writer takes it now.
    fn hand_over(&mut self, dir: usize, tag: u32, due: u64) {
        let flow = self.slot_flow[tag as usize] as usize;
        if dir == FWD && self.flows[flow].app.is_some() {
            self.app_delivery(flow, tag, due);
        }
        let buf = &self.bufs[tag as usize];
        if self.marked.len() < self.capture_marked && buf[1] & 0b11 == 0b11 {
            self.marked.push(buf.clone());
        }
        // Forward packets go to the receivers' device, reverse to the senders'.
        let out = if dir == FWD { 1 } else { 0 };
        let writer = &self.writers[out.min(self.writers.len() - 1)];
        let buf = std::mem::take(&mut self.bufs[tag as usize]);
        let spare = match writer.hand_over(due, out, buf) {
            Ok(spare) => spare,
            Err(()) => {
                self.write_errors += 1;
                None
            }
        };
        self.bufs[tag as usize] = spare.unwrap_or_else(|| vec![0; BUF]);
        self.release(tag);
    }

    /// A program's packet in slot `tag`, delivered forward past the bottleneck
    /// at `due`: new data or a segment delivered again, counted then.
    fn app_delivery(&mut self, flow: usize, tag: u32, due: u64) {
        let buf = &self.bufs[tag as usize];
        let new = match buf[9] {
            ipv4::PROTO_TCP => match ipv4::tcp_segment(buf) {
                Some((seq, len)) => {
                    let d = self.flows[flow].app.as_mut().expect("a program's flow");
                    let new = d.is_new(seq, len);
                    (new || len > 0).then_some(new)
                }
                None => None,
            },
            _ => Some(true),
        };
        if let Some(new) = new {
            let bytes = buf.len() as u16;
            self.push(due, Ev::AppDelivered(flow as u32, bytes, new));
        }
    }

    fn count_app_delivery(&mut self, flow: usize, bytes: u16, new: bool) {
        if !self.measuring {
            return;
        }
        let c = &mut self.flow_counts[flow].app;
        if new {
            c.delivered += 1;
            c.delivered_bytes += u64::from(bytes);
        } else {
            c.retransmits += 1;
        }
    }

    fn udp(&mut self, flow: u32, t: u64) {
        let Some(u) = self.flows[flow as usize].udp.as_mut() else {
            return;
        };
        if u.stop_ns.is_some_and(|s| t >= s) {
            return;
        }
        let wake = u.source.wake(Time::from_nanos(t), &u.cfg, &mut u.rng);
        let (size, tos) = (u.cfg.packet_size as usize, u.tos);
        if let Some(next) = wake.next {
            self.push(next.as_nanos(), Ev::Udp(flow));
        }
        if wake.send {
            let tag = self.alloc();
            self.udp_id = self.udp_id.wrapping_add(1);
            let len = ipv4::write_udp(
                &mut self.bufs[tag as usize],
                size.min(crate::netns::MTU as usize),
                crate::netns::SENDER_ADDR,
                PORT_BASE + flow as u16,
                crate::netns::RECEIVER_ADDR,
                UDP_PORT,
                tos,
                self.udp_id,
            );
            if self.measuring {
                self.flow_counts[flow as usize].udp_sent += 1;
            }
            self.admit(FWD, tag, len, t);
        }
    }

    /// Probe flow `flow` sends its next probe at `t`, as the engine's does: not
    /// at its stop or the run's end.
    fn probe(&mut self, flow: u32, t: u64, end_ns: u64) {
        let measured_from = Time::from_nanos(self.warmup_ns);
        let Some(p) = self.flows[flow as usize].probe.as_mut() else {
            return;
        };
        if p.stop_ns.is_some_and(|s| t >= s) || t >= end_ns {
            return;
        }
        let seq = p.end.send(Time::from_nanos(t), measured_from) as u16;
        p.outstanding.insert(seq, t);
        let (size, tos, next) = (p.size as usize, p.tos, t + p.interval_ns);
        self.push(next, Ev::Probe(flow));
        let tag = self.alloc();
        self.udp_id = self.udp_id.wrapping_add(1);
        let len = ipv4::write_echo_request(
            &mut self.bufs[tag as usize],
            size.min(crate::netns::MTU as usize),
            crate::netns::SENDER_ADDR,
            crate::netns::RECEIVER_ADDR,
            PORT_BASE + flow as u16,
            seq,
            tos,
            self.udp_id,
        );
        self.admit(FWD, tag, len, t);
    }

    fn dispatch(&mut self, ev: Ev, t: u64, queue_interval_ns: u64, end_ns: u64) {
        match ev {
            Ev::Arrive(d, tag) => self.arrive(d as usize, tag, t),
            Ev::TxDone(d) => self.tx_done(d as usize, t),
            Ev::Wake(d) => {
                if !self.links[d as usize].busy {
                    self.start_next(d as usize, t);
                }
            }
            Ev::Echo(tag) => {
                self.echoed(tag, t);
                self.release(tag);
            }
            Ev::AppDelivered(f, bytes, new) => self.count_app_delivery(f as usize, bytes, new),
            Ev::Udp(f) => self.udp(f, t),
            Ev::Probe(f) => self.probe(f, t, end_ns),
            Ev::MeasureStart => self.measure_start(t),
            Ev::Sample => {
                self.sample(t);
                if t + queue_interval_ns < end_ns {
                    self.push(t + queue_interval_ns, Ev::Sample);
                }
            }
        }
    }

    fn sample(&mut self, t: u64) {
        for dir in [FWD, REV] {
            let q = &self.links[dir].link.queue;
            let sample = (t as f64 * 1e-9, q.len() as u32, q.bytes());
            self.stats[dir].samples.push(sample);
        }
    }

    /// The warm-up ends at `t`: the observers' counters are read, to be
    /// subtracted at the end, as the simulator does; the rest starts afresh.
    fn measure_start(&mut self, t: u64) {
        let n = self.flows.len();
        self.measuring = true;
        self.at_warmup = Some([self.counters_at(FWD, t), self.counters_at(REV, t)]);
        self.flow_counts = vec![FlowCounters::default(); n];
        for s in &mut self.stats {
            if let Some(d) = &mut s.delays {
                d.clear();
            }
        }
    }

    /// Each direction's counters over the measured interval, at its end `t`.
    fn measured(&self, t: u64) -> [LinkCounters; 2] {
        [FWD, REV].map(|dir| {
            let now = self.counters_at(dir, t);
            match &self.at_warmup {
                Some(before) => now.since(&before[dir]),
                None => now,
            }
        })
    }
}
