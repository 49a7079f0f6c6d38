//! The data plane: one thread that reads packets from both TUN devices, carries
//! them through the scenario's links on a logical clock, and writes each out at
//! its due time.
//!
//! Per direction a packet crosses its flow's access link on the sending side, the
//! bottleneck, and its flow's access link on the receiving side. Access links are
//! FIFO serializers: departure = max(previous departure, arrival) + size / rate,
//! then the propagation delay, computed the moment the packet is read. The
//! bottleneck is the scenario's qdisc (`sim::link::Queue`, built by the
//! simulator's own code with the same random stream): an arrival event enqueues,
//! the transmitter dequeues when idle and finishes `size / rate` later. The
//! clock of all of it is the monotonic clock since the run began, in
//! nanoseconds: an event is processed at its logical time, never at the moment
//! the thread got to it, so lateness delays the packets but not the decisions.
//! Only the final write can be late; its lateness is recorded.
//!
//! The thread sleeps in `ppoll` on both devices with a nanosecond timeout and a
//! timer slack of 1 ns, and reads a device only when `ppoll` says it is
//! readable: an idle device costs no `read`. Within [`SPIN_NS`] of the next event
//! it polls without sleeping (`AQMLAB_EMULATE_SPIN_US` overrides it, for
//! BENCHMARKS.md, which measures what spinning costs and buys).

use crate::ipv4;
use crate::stats::{FlowCounters, Lateness, LinkCounters};
use aqm::{DropReason, Ecn, FlowId, Packet, Rng, Time, VecSink};
use sim::link::QueuePool;
use sim::udp::{UdpConfig, UdpSource};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

mod links;
pub use links::{Bottleneck, Pipe};

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

/// A UDP source the data plane runs: packets made here, on the scenario's
/// schedule, enter the forward path as if read from the senders' device.
pub struct UdpFlow {
    pub cfg: UdpConfig,
    pub source: UdpSource,
    pub rng: Rng,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub ect: bool,
}

/// One flow's path: its access links (sender side, receiver side) and its
/// aggregate.
pub struct FlowPath {
    pub sender_access: Pipe,
    pub receiver_access: Pipe,
    pub aggregate: u32,
    pub tcp: bool,
    pub udp: Option<UdpFlow>,
}

/// Everything the data plane needs.
pub struct Config {
    pub flows: Vec<FlowPath>,
    pub links: [Bottleneck; 2],
    /// The senders' and the receivers' devices.
    pub tun: [File; 2],
    pub epoch: Instant,
    pub warmup_ns: u64,
    pub end_ns: u64,
    pub queue_interval_ns: u64,
    pub stop: Arc<AtomicBool>,
    /// Keep a copy of the first this many CE-marked packets as written.
    pub capture_marked: usize,
}

/// What the data plane counted.
pub struct Outcome {
    pub links: [LinkCounters; 2],
    /// Queue samples per direction: (t_s, packets, bytes).
    pub samples: [Vec<(f64, u32, u64)>; 2],
    pub flows: Vec<FlowCounters>,
    pub lateness: Lateness,
    /// Packets read that belonged to no flow (dropped).
    pub unclassified: u64,
    /// Writes the kernel refused, reads that failed.
    pub write_errors: u64,
    pub read_errors: u64,
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
    Deliver(u8, u32),
    Udp(u32),
}

struct Plane {
    flows: Vec<FlowPath>,
    links: [Bottleneck; 2],
    pool: QueuePool,
    sink: VecSink,
    events: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    bufs: Vec<Vec<u8>>,
    enq_at: Vec<u64>,
    /// Each slot's flow, set when the packet is admitted.
    slot_flow: Vec<u32>,
    free: Vec<u32>,
    measuring: bool,
    /// When measuring began, ns: sojourns are counted from here.
    measure_from: u64,
    counts: [LinkCounters; 2],
    samples: [Vec<(f64, u32, u64)>; 2],
    flow_counts: Vec<FlowCounters>,
    lateness: Lateness,
    unclassified: u64,
    write_errors: u64,
    read_errors: u64,
    udp_id: u16,
    capture_marked: usize,
    marked: Vec<Vec<u8>>,
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
                self.enq_at.push(0);
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
        let ok = flow < self.flows.len()
            && (self.flows[flow].tcp == (h.proto == ipv4::PROTO_TCP))
            && (dir == FWD || h.proto == ipv4::PROTO_TCP);
        if !ok {
            return self.discard(tag);
        }
        self.slot_flow[tag as usize] = flow as u32;
        let f = &mut self.flows[flow];
        let pipe = if dir == FWD {
            &mut f.sender_access
        } else {
            &mut f.receiver_access
        };
        let at = pipe.pass(t, u32::from(h.len));
        self.push(at, Ev::Arrive(dir as u8, tag));
    }

    fn discard(&mut self, tag: u32) {
        self.unclassified += 1;
        self.release(tag);
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
        p.ecn = Ecn::from_bits(h.ecn);
        p.tag = tag;
        p
    }

    /// Counts what the last qdisc call dropped and marked; frees dropped packets,
    /// rewrites marked ones.
    fn drain(&mut self, dir: usize, t: u64) {
        let sink = std::mem::take(&mut self.sink);
        for (p, reason) in &sink.drops {
            if self.measuring {
                self.counts[dir].drop(*reason);
                self.flow_counts[p.flow.index()].drops[reason.index()] += 1;
                self.add_sojourn(dir, p, t);
            }
            self.release(p.tag);
        }
        for (p, reason) in &sink.marks {
            ipv4::mark_ce(&mut self.bufs[p.tag as usize]);
            if self.measuring {
                self.counts[dir].mark(*reason);
                self.flow_counts[p.flow.index()].marks += 1;
            }
        }
        self.sink = sink;
        self.sink.drops.clear();
        self.sink.marks.clear();
    }

    /// A packet that was in the queue (not the arrival being refused) leaves it.
    fn add_sojourn(&mut self, dir: usize, p: &Packet, t: u64) {
        let since = self.enq_at[p.tag as usize];
        if since == u64::MAX {
            return; // dropped on arrival: never queued
        }
        let area = u128::from(t.saturating_sub(since.max(self.measure_from)));
        self.counts[dir].queue_area += area;
        self.counts[dir].flow_area[p.flow.index()] += area;
    }

    fn arrive(&mut self, dir: usize, tag: u32, t: u64) {
        let pkt = self.packet(tag);
        if self.links[dir].lost(t) {
            // Lost on the link, before the queue: never an arrival of the queue's.
            self.enq_at[tag as usize] = u64::MAX;
            self.sink.drops.push((pkt, DropReason::LinkLoss));
            self.drain(dir, t);
            return;
        }
        if self.measuring {
            self.counts[dir].arrivals += 1;
        }
        self.enq_at[tag as usize] = t;
        let link = &mut self.links[dir];
        link.queue
            .enqueue(pkt, Time::from_nanos(t), &mut self.sink, &mut self.pool);
        // An arrival dropped at once never waited.
        for (p, _) in &self.sink.drops {
            if p.tag == tag {
                self.enq_at[tag as usize] = u64::MAX;
            }
        }
        self.drain(dir, t);
        let len = self.links[dir].queue.len() as u32;
        if self.measuring {
            let c = &mut self.counts[dir];
            c.max_queue = c.max_queue.max(len);
        }
        if !self.links[dir].busy {
            self.start_next(dir, t);
        }
    }

    fn start_next(&mut self, dir: usize, t: u64) {
        let link = &mut self.links[dir];
        let pkt = link
            .queue
            .dequeue(Time::from_nanos(t), &mut self.sink, &mut self.pool);
        self.drain(dir, t);
        let Some(pkt) = pkt else {
            self.links[dir].busy = false;
            return;
        };
        let tx = self.links[dir].tx_ns(t, pkt.size);
        if self.measuring {
            self.add_sojourn(dir, &pkt, t);
            let c = &mut self.counts[dir];
            c.tx_packets += 1;
            c.tx_bits += u64::from(pkt.size) * 8;
            c.busy_ns += tx;
            c.flow_bits[pkt.flow.index()] += u64::from(pkt.size) * 8;
            c.flow_packets[pkt.flow.index()] += 1;
        }
        let link = &mut self.links[dir];
        link.busy = true;
        link.in_tx = Some(pkt);
        self.push(t + tx, Ev::TxDone(dir as u8));
    }

    fn tx_done(&mut self, dir: usize, t: u64) {
        let pkt = self.links[dir]
            .in_tx
            .take()
            .expect("a packet was in transmission");
        let at = self.links[dir].arrival(t);
        let f = &mut self.flows[pkt.flow.index()];
        let pipe = if dir == FWD {
            &mut f.receiver_access
        } else {
            &mut f.sender_access
        };
        let due = pipe.pass(at, pkt.size);
        self.push(due, Ev::Deliver(dir as u8, pkt.tag));
        self.start_next(dir, t);
    }

    fn deliver(&mut self, dir: usize, tag: u32, t: u64, tun: &mut [File; 2], epoch: Instant) {
        // Forward packets go to the receivers' device, reverse to the senders'.
        let out = if dir == FWD { 1 } else { 0 };
        let buf = &self.bufs[tag as usize];
        if self.marked.len() < self.capture_marked && buf[1] & 0b11 == 0b11 {
            self.marked.push(buf.clone());
        }
        if tun[out].write(&self.bufs[tag as usize]).is_err() {
            self.write_errors += 1;
        }
        let now = epoch.elapsed().as_nanos() as u64;
        if self.measuring {
            self.lateness.add(now.saturating_sub(t));
        }
        self.release(tag);
    }

    fn udp(&mut self, flow: u32, t: u64) {
        let Some(u) = self.flows[flow as usize].udp.as_mut() else {
            return;
        };
        if u.stop_ns.is_some_and(|s| t >= s) {
            return;
        }
        let wake = u.source.wake(Time::from_nanos(t), &u.cfg, &mut u.rng);
        let (size, ect) = (u.cfg.packet_size as usize, u.ect);
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
                ect,
                self.udp_id,
            );
            if self.measuring {
                self.flow_counts[flow as usize].udp_sent += 1;
            }
            self.admit(FWD, tag, len, t);
        }
    }

    fn sample(&mut self, t: u64) {
        for dir in [FWD, REV] {
            let q = &self.links[dir].queue;
            self.samples[dir].push((t as f64 * 1e-9, q.len() as u32, q.bytes()));
        }
    }

    fn measure_start(&mut self, t: u64) {
        let n = self.flows.len();
        self.measuring = true;
        self.measure_from = t;
        self.counts = [LinkCounters::new(n), LinkCounters::new(n)];
        self.flow_counts = vec![FlowCounters::default(); n];
        self.lateness = Lateness::default();
    }
}

/// Runs the data plane until `cfg.end_ns` (or the stop flag).
pub fn run(cfg: Config) -> Outcome {
    let Config {
        flows,
        links,
        mut tun,
        epoch,
        warmup_ns,
        end_ns,
        queue_interval_ns,
        stop,
        capture_marked,
    } = cfg;
    // SAFETY: prctl on the calling thread; asks for timers as exact as the
    // hardware allows.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
    realtime();
    let n = flows.len();
    let mut p = Plane {
        flows,
        links,
        pool: QueuePool::default(),
        sink: VecSink::default(),
        events: BinaryHeap::new(),
        seq: 0,
        bufs: Vec::new(),
        enq_at: Vec::new(),
        slot_flow: Vec::new(),
        free: Vec::new(),
        measuring: warmup_ns == 0,
        measure_from: 0,
        counts: [LinkCounters::new(n), LinkCounters::new(n)],
        samples: [Vec::new(), Vec::new()],
        flow_counts: vec![FlowCounters::default(); n],
        lateness: Lateness::default(),
        unclassified: 0,
        write_errors: 0,
        read_errors: 0,
        udp_id: 0,
        capture_marked,
        marked: Vec::new(),
    };
    for _ in 0..1024 {
        let t = p.alloc();
        p.free.push(t);
    }
    if warmup_ns > 0 {
        p.push(warmup_ns, Ev::MeasureStart);
    }
    if queue_interval_ns > 0 {
        p.push(0, Ev::Sample);
    }
    for i in 0..n {
        if let Some(u) = &p.flows[i].udp {
            let s = u.start_ns;
            p.push(s, Ev::Udp(i as u32));
        }
    }
    let mut interrupted = false;
    let spin = spin_ns();
    // Which devices the last poll found readable.
    let mut readable = [true, true];
    loop {
        let now = epoch.elapsed().as_nanos() as u64;
        if now >= end_ns {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        for (dir, dev) in [(FWD, 0), (REV, 1)] {
            if !readable[dev] {
                continue;
            }
            for _ in 0..READ_BATCH {
                let tag = p.alloc();
                match tun[dev].read(&mut p.bufs[tag as usize]) {
                    Ok(len) => p.admit(dir, tag, len, now),
                    Err(e) => {
                        p.free.push(tag);
                        if e.kind() != ErrorKind::WouldBlock {
                            p.read_errors += 1;
                        }
                        break;
                    }
                }
            }
        }
        while let Some(&Reverse((t, _, ev))) = p.events.peek() {
            if t > now.max(epoch.elapsed().as_nanos() as u64) {
                break;
            }
            p.events.pop();
            match ev {
                Ev::Arrive(d, tag) => p.arrive(d as usize, tag, t),
                Ev::TxDone(d) => p.tx_done(d as usize, t),
                Ev::Deliver(d, tag) => p.deliver(d as usize, tag, t, &mut tun, epoch),
                Ev::Udp(f) => p.udp(f, t),
                Ev::MeasureStart => p.measure_start(t),
                Ev::Sample => {
                    p.sample(t);
                    if t + queue_interval_ns < end_ns {
                        p.push(t + queue_interval_ns, Ev::Sample);
                    }
                }
            }
        }
        let next = p.events.peek().map_or(end_ns, |r| r.0 .0).min(end_ns);
        let now = epoch.elapsed().as_nanos() as u64;
        // Sleep until a device is readable or the next event is near; within
        // the spin margin, only ask.
        let sleep = if next > now + spin {
            next - now - spin / 2
        } else {
            0
        };
        readable = wait(&tun, sleep);
    }
    Outcome {
        links: p.counts,
        samples: p.samples,
        flows: p.flow_counts,
        lateness: p.lateness,
        unclassified: p.unclassified,
        write_errors: p.write_errors,
        read_errors: p.read_errors,
        links_back: p.links,
        end_ns: (epoch.elapsed().as_nanos() as u64).min(end_ns),
        interrupted,
        marked: p.marked,
    }
}

/// Runs the calling thread under SCHED_FIFO at a low real-time priority, so that
/// a busy machine (compilers, other runs) delays the data plane as little as it
/// can. Best effort: without the right it stays a normal thread. The thread
/// sleeps whenever nothing is due within [`SPIN_NS`], and the kernel's real-time
/// throttling leaves other threads their share.
fn realtime() {
    let p = libc::sched_param { sched_priority: 10 };
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a valid param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) };
}

/// Sleeps until either device is readable or `ns` have passed (0: does not
/// sleep); returns which are readable.
fn wait(tun: &[File; 2], ns: u64) -> [bool; 2] {
    let mut fds = [
        libc::pollfd {
            fd: tun[0].as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: tun[1].as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: two valid pollfds and a timespec on the stack.
    let n = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
    if n < 0 {
        // Interrupted: look at both.
        return [true, true];
    }
    fds.map(|f| f.revents & (libc::POLLIN | libc::POLLERR) != 0)
}
