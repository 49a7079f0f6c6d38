//! The simulation: builds a network and its flows from a [`Scenario`], runs the
//! event loop, and reports.
//!
//! Routing is static and shortest-path (fewest hops, ties to the lower link index),
//! computed once per flow as the list of link directions its data and its ACKs
//! cross, so forwarding a packet is an array lookup.

use crate::event::{Event, EventQueue, TimerKind, MAX_FLOWS, MAX_LINKS};
use crate::flow::{Endpoints, Flow, FlowCounters, TimerSlot};
use crate::header::{Header, HeaderSlab, Kind, SackBlocks, FLAG_CWR, FLAG_ECE};
use crate::link::{Link, LinkCounters};
use crate::pcap::{Addresses, PcapTap};
use crate::scenario::{FlowKind, FlowSpec, Scenario, ScenarioError, Topology};
use crate::tcp::{Actions, Reduction, Seg, TcpConfig, TcpReceiver, TcpSender, TimerCmd};
use crate::udp::{Distribution, Pattern, UdpConfig, UdpSource};
use crate::wire::WireSlab;
use aqm::{
    rng, DropReason, Dur, Ecn, FlowId, LinkInfo, Packet, QdiscSpec, Rate, Time, VecSink, Verdict,
};
use rand::Rng as _;
use std::collections::VecDeque;
use std::path::Path;

/// Prefetches the cache lines of `x` (a hint: no effect on results).
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (x as *const T).cast::<i8>();
        for offset in (0..std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch is a hint; it never faults, even on an invalid
            // address, and x86_64 always has SSE.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Ends a route in `Simulation::routes`: the packet has arrived.
const ROUTE_END: u32 = u32::MAX;

/// Stream numbers for `rng::stream`: each component draws from its own.
const STREAM_LINK: u64 = 1 << 32;
const STREAM_FLOW: u64 = 2 << 32;

/// A group of flows and the configuration they share.
pub struct Group {
    pub name: String,
    pub kind: FlowKind,
    pub tcp: TcpConfig,
    pub udp: Option<UdpConfig>,
    /// Mean offered rate over the measured interval (infinite for TCP).
    pub demand_bps: f64,
}

/// What a monitored link did for one flow.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LinkFlowCounters {
    /// Packets and bytes of the flow the link sent.
    pub packets: u64,
    pub bytes: u64,
    /// The integral over time of the flow's packets in the queue, in packet-ns:
    /// divided by the measured time it is the flow's mean queue occupancy, the
    /// quantity of the CHOKe paper's Fig. 6.
    pub queue_area: u128,
}

/// A monitored link direction's extra records.
struct Monitor {
    link: usize,
    per_flow: Vec<LinkFlowCounters>,
    /// Per flow: packets in the queue now, and since when that count holds (the
    /// part of `queue_area` not yet added).
    queued: Vec<(u32, Time)>,
    samples: Vec<(f64, u32, u64)>,
}

impl Monitor {
    /// `flow` has `delta` more packets in the queue from `now` on.
    #[inline]
    fn occupancy_change(&mut self, flow: usize, now: Time, delta: i32) {
        let (count, since) = &mut self.queued[flow];
        self.per_flow[flow].queue_area +=
            u128::from(*count) * u128::from(now.saturating_since(*since).as_nanos());
        *count = count
            .checked_add_signed(delta)
            .expect("a flow's queued packets never go below zero");
        *since = now;
    }

    /// The counters as of `now`, the occupancy integral brought up to date.
    fn per_flow_at(&self, now: Time) -> Vec<LinkFlowCounters> {
        let mut out = self.per_flow.clone();
        for (c, &(count, since)) in out.iter_mut().zip(&self.queued) {
            c.queue_area += u128::from(count) * u128::from(now.saturating_since(since).as_nanos());
        }
        out
    }
}

/// Per node, how BFS reached it: (previous node, link direction used).
type BfsTree = Vec<Option<(u32, u32)>>;

/// Counters over the measured interval: per flow, per monitored link, per monitored
/// link and flow.
pub(crate) type Measured = (
    Vec<FlowCounters>,
    Vec<LinkCounters>,
    Vec<Vec<LinkFlowCounters>>,
);

/// Counters frozen when the warm-up ends.
struct Snapshot {
    flows: Vec<FlowCounters>,
    links: Vec<LinkCounters>,
    per_flow: Vec<Vec<LinkFlowCounters>>,
}

pub struct Simulation {
    pub(crate) name: String,
    pub(crate) seed: u64,
    now: Time,
    end: Time,
    warmup_end: Time,
    events: EventQueue,
    pub(crate) nodes: Vec<String>,
    pub(crate) links: Vec<Link>,
    pub(crate) flows: Vec<Flow>,
    pub(crate) groups: Vec<Group>,
    flow_nodes: Vec<(u32, u32)>,
    /// Every route, flat: link directions, each route ending in `ROUTE_END`. A
    /// packet's header holds its position here, so forwarding reads neither the flow
    /// nor a per-flow allocation (at 10,000 flows those were the costliest cache
    /// misses of the run).
    routes: Vec<u32>,
    headers: HeaderSlab,
    wires: WireSlab,
    sink: VecSink,
    actions: Actions,
    next_uid: u64,
    pub(crate) event_count: u64,
    monitors: Vec<Monitor>,
    sample_interval: Dur,
    snapshot: Option<Snapshot>,
    /// (flow, seq) of data packets to lose on first transmission (tests).
    faults: Vec<(u32, u32)>,
    pcap: Option<PcapTap>,
}

fn build_qdisc(
    s: &Scenario,
    spec: &QdiscSpec,
    rate: Rate,
    span: Option<std::ops::Range<usize>>,
    table: &str,
) -> Result<aqm::AnyQdisc, ScenarioError> {
    spec.build(&LinkInfo::new(rate))
        .map_err(|e| s.error_in(span, Some(e.key), format!("{table}.{e}")))
}

/// Mean of a piecewise-constant rate over [from, to).
fn mean_rate(initial: Rate, schedule: &[(Time, Rate)], from: Time, to: Time) -> f64 {
    let span = to.saturating_since(from).as_secs_f64();
    if span <= 0.0 {
        return initial.as_f64();
    }
    let mut rate = initial.as_f64();
    let mut t = from;
    let mut area = 0.0;
    for &(at, r) in schedule {
        if at <= from {
            rate = r.as_f64();
            continue;
        }
        if at >= to {
            break;
        }
        area += rate * at.saturating_since(t).as_secs_f64();
        t = at;
        rate = r.as_f64();
    }
    area += rate * to.saturating_since(t).as_secs_f64();
    area / span
}

impl Simulation {
    /// Builds the network and flows a scenario describes.
    pub fn new(s: &Scenario) -> Result<Simulation, ScenarioError> {
        let f = &s.file;
        let seed = f.seed;
        let droptail = QdiscSpec::default();
        let mut nodes: Vec<String> = Vec::new();
        let mut links: Vec<Link> = Vec::new();
        let mut monitored: Vec<usize> = Vec::new();
        let add_link = |links: &mut Vec<Link>,
                        from: u32,
                        to: u32,
                        rate: Rate,
                        delay: Dur,
                        q: aqm::AnyQdisc| {
            let i = links.len();
            links.push(Link::new(
                from,
                to,
                rate,
                delay,
                q,
                rng::stream(seed, STREAM_LINK + i as u64),
            ));
            i as u32
        };
        let qspan = f.qdisc.as_ref().map(|q| q.span());
        let topo_span = Some(f.topology.span());
        // Every route, flat, each ending in ROUTE_END; per flow, where its data and
        // its ACK routes start; and the (src, dst) nodes.
        let mut routes: Vec<u32> = Vec::new();
        let mut route_starts: Vec<(u32, u32)> = Vec::new();
        let push_route = |routes: &mut Vec<u32>, path: &[u32]| {
            let at = routes.len() as u32;
            routes.extend_from_slice(path);
            routes.push(ROUTE_END);
            at
        };
        let mut ends: Vec<(u32, u32)> = Vec::new();
        let total_flows: usize = f
            .flows
            .iter()
            .map(|g| g.get_ref().count.unwrap_or(1) as usize)
            .sum();
        if total_flows > MAX_FLOWS {
            return Err(s.error(format!(
                "{total_flows} flows in all; at most {MAX_FLOWS} fit the event queue"
            )));
        }
        match f.topology.get_ref() {
            Topology::Dumbbell {
                access,
                bottleneck,
                reverse_qdisc,
            } => {
                nodes.push("left".into());
                nodes.push("right".into());
                let fwd_q = match &f.qdisc {
                    Some(q) => {
                        build_qdisc(s, q.get_ref(), bottleneck.rate, qspan.clone(), "qdisc")?
                    }
                    None => build_qdisc(s, &droptail, bottleneck.rate, None, "qdisc")?,
                };
                let rev_q = build_qdisc(
                    s,
                    reverse_qdisc.as_ref().unwrap_or(&droptail),
                    bottleneck.rate,
                    topo_span.clone(),
                    "topology.reverse_qdisc",
                )?;
                let lr = add_link(&mut links, 0, 1, bottleneck.rate, bottleneck.delay, fwd_q);
                let rl = add_link(&mut links, 1, 0, bottleneck.rate, bottleneck.delay, rev_q);
                monitored.push(lr as usize);
                monitored.push(rl as usize);
                // Four access link directions and two nodes per flow, reserved up
                // front: growing by doubling would hold twice the memory at the end.
                links.reserve_exact(4 * total_flows);
                nodes.reserve_exact(2 * total_flows);
                routes.reserve_exact(8 * total_flows);
                route_starts.reserve_exact(total_flows);
                ends.reserve_exact(total_flows);
                let mut i = 0u32;
                for g in &f.flows {
                    let spec = g.get_ref();
                    let rate = spec.access_rate.unwrap_or(access.rate);
                    let delay = spec.access_delay.unwrap_or(access.delay);
                    for _ in 0..spec.count.unwrap_or(1) {
                        let sn = nodes.len() as u32;
                        nodes.push(format!("s{i}"));
                        let rn = nodes.len() as u32;
                        nodes.push(format!("r{i}"));
                        let q = || build_qdisc(s, &droptail, rate, None, "access");
                        let s_l = add_link(&mut links, sn, 0, rate, delay, q()?);
                        let l_s = add_link(&mut links, 0, sn, rate, delay, q()?);
                        let r_r = add_link(&mut links, 1, rn, rate, delay, q()?);
                        let r_rr = add_link(&mut links, rn, 1, rate, delay, q()?);
                        let fwd = push_route(&mut routes, &[s_l, lr, r_r]);
                        let rev = push_route(&mut routes, &[r_rr, rl, l_s]);
                        route_starts.push((fwd, rev));
                        ends.push((sn, rn));
                        i += 1;
                    }
                }
            }
            Topology::Graph {
                nodes: names,
                links: specs,
            } => {
                nodes = names.clone();
                let index = |n: &str| nodes.iter().position(|x| x == n).expect("validated") as u32;
                let mut adj: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nodes.len()];
                for (k, l) in specs.iter().enumerate() {
                    let (a, b) = (index(&l.from), index(&l.to));
                    let fq = match (&l.qdisc, &f.qdisc) {
                        (Some(q), _) => build_qdisc(
                            s,
                            q,
                            l.rate,
                            topo_span.clone(),
                            &format!("topology.links[{k}].qdisc"),
                        )?,
                        (None, Some(q)) => {
                            build_qdisc(s, q.get_ref(), l.rate, qspan.clone(), "qdisc")?
                        }
                        (None, None) => build_qdisc(s, &droptail, l.rate, None, "qdisc")?,
                    };
                    let rq = build_qdisc(
                        s,
                        l.reverse_qdisc.as_ref().unwrap_or(&droptail),
                        l.rate,
                        topo_span.clone(),
                        &format!("topology.links[{k}].reverse_qdisc"),
                    )?;
                    let ab = add_link(&mut links, a, b, l.rate, l.delay, fq);
                    let ba = add_link(&mut links, b, a, l.rate, l.delay, rq);
                    adj[a as usize].push((b, ab));
                    adj[b as usize].push((a, ba));
                    if l.monitor {
                        monitored.push(ab as usize);
                        monitored.push(ba as usize);
                    }
                }
                let mut bfs_cache: Vec<Option<BfsTree>> = vec![None; nodes.len()];
                let path =
                    |cache: &mut Vec<Option<BfsTree>>, from: u32, to: u32| -> Option<Vec<u32>> {
                        let prev = cache[from as usize].get_or_insert_with(|| {
                            // BFS; `prev[n]` = (previous node, link used to reach n).
                            let mut prev = vec![None; adj.len()];
                            let mut seen = vec![false; adj.len()];
                            seen[from as usize] = true;
                            let mut q = VecDeque::from([from]);
                            while let Some(n) = q.pop_front() {
                                for &(m, l) in &adj[n as usize] {
                                    if !seen[m as usize] {
                                        seen[m as usize] = true;
                                        prev[m as usize] = Some((n, l));
                                        q.push_back(m);
                                    }
                                }
                            }
                            prev
                        });
                        let mut p = Vec::new();
                        let mut n = to;
                        while n != from {
                            let (m, l) = prev[n as usize]?;
                            p.push(l);
                            n = m;
                        }
                        p.reverse();
                        Some(p)
                    };
                for g in &f.flows {
                    let spec = g.get_ref();
                    let (a, b) = (
                        index(spec.from.as_deref().unwrap()),
                        index(spec.to.as_deref().unwrap()),
                    );
                    let no_route = || {
                        s.error_in(
                            Some(g.span()),
                            Some("to"),
                            format!(
                                "flows ({}): no route from \"{}\" to \"{}\"",
                                spec.name, nodes[a as usize], nodes[b as usize]
                            ),
                        )
                    };
                    let fwd = path(&mut bfs_cache, a, b).ok_or_else(no_route)?;
                    let rev = path(&mut bfs_cache, b, a).ok_or_else(no_route)?;
                    // The group's flows share one copy of its two routes.
                    let fwd = push_route(&mut routes, &fwd);
                    let rev = push_route(&mut routes, &rev);
                    for _ in 0..spec.count.unwrap_or(1) {
                        route_starts.push((fwd, rev));
                        ends.push((a, b));
                    }
                }
            }
        }
        debug_assert_eq!(route_starts.len(), total_flows);
        if links.len() > MAX_LINKS {
            return Err(s.error(format!(
                "{} link directions in all; at most {MAX_LINKS} fit the event queue",
                links.len()
            )));
        }

        let warmup_end = Time::ZERO + f.warmup;
        let end = Time::ZERO + f.duration;
        let mut groups = Vec::new();
        let mut flows = Vec::with_capacity(total_flows);
        let mut events = EventQueue::new();
        for (gi, g) in f.flows.iter().enumerate() {
            let spec: &FlowSpec = g.get_ref();
            let kind = spec.kind.expect("validated");
            let packet_size = spec.packet_size.unwrap_or(1000);
            let defaults = TcpConfig::default();
            let tcp = TcpConfig {
                variant: spec.variant.unwrap_or(defaults.variant),
                packet_size,
                max_window: spec.max_window.unwrap_or(defaults.max_window),
                initial_window: spec.initial_window.unwrap_or(defaults.initial_window),
                min_rto: spec.min_rto.unwrap_or(defaults.min_rto),
                delayed_ack: spec.delayed_ack.unwrap_or(false),
                ecn: spec.ecn.unwrap_or(false),
                counting: spec.counting.unwrap_or_default(),
                object_size: spec.object_size,
                think: spec.think.unwrap_or(Dur::ZERO),
                ..defaults
            };
            let schedule: Vec<(Time, Rate)> = spec
                .schedule
                .iter()
                .flatten()
                .map(|st| (Time::ZERO + st.at, st.rate))
                .collect();
            let udp = (!kind.is_tcp()).then(|| UdpConfig {
                pattern: match kind {
                    FlowKind::Poisson => Pattern::Poisson,
                    FlowKind::Onoff => Pattern::OnOff {
                        on: spec.on.unwrap(),
                        off: spec.off.unwrap(),
                        dist: spec.distribution.unwrap_or(Distribution::Exponential),
                        shape: spec.shape.unwrap_or(1.5),
                    },
                    _ => Pattern::Cbr,
                },
                packet_size,
                rate: spec.rate.unwrap_or_default(),
                schedule: schedule.clone(),
            });
            let demand_bps = match &udp {
                None => f64::INFINITY,
                Some(u) => {
                    let m = mean_rate(u.rate, &u.schedule, warmup_end, end);
                    match u.pattern {
                        Pattern::OnOff { on, off, .. } => {
                            m * on.as_secs_f64() / (on + off).as_secs_f64()
                        }
                        _ => m,
                    }
                }
            };
            for _ in 0..spec.count.unwrap_or(1) {
                let id = flows.len();
                let (fwd, rev) = route_starts[id];
                let mut frng = rng::stream(seed, STREAM_FLOW + id as u64);
                let spread = spec.start_spread.unwrap_or(Dur::from_secs(1));
                let jitter = if spread.is_zero() {
                    Dur::ZERO
                } else {
                    Dur::from_nanos(frng.gen_range(0..spread.as_nanos()))
                };
                let start = Time::ZERO + spec.start.unwrap_or(Dur::ZERO) + jitter;
                let endpoints = match &udp {
                    None => Endpoints::Tcp {
                        sender: Box::new(TcpSender::new(&tcp)),
                        receiver: TcpReceiver::default(),
                    },
                    Some(u) => Endpoints::Udp {
                        source: UdpSource::new(u),
                        received: 0,
                    },
                };
                let mut timers = [TimerSlot::default(); crate::event::TIMER_KINDS];
                timers[TimerKind::Send as usize] = TimerSlot {
                    deadline: Some(start),
                    pending: Some(start),
                };
                events.push(start, Event::Timer(id as u32, TimerKind::Send));
                let stop = spec.stop.map(|d| Time::ZERO + d);
                if let Some(t) = stop {
                    timers[TimerKind::Stop as usize] = TimerSlot {
                        deadline: Some(t),
                        pending: Some(t),
                    };
                    events.push(t, Event::Timer(id as u32, TimerKind::Stop));
                }
                flows.push(Flow {
                    group: gi as u32,
                    kind,
                    aggregate: spec.aggregate.unwrap_or(gi as u32),
                    packet_size,
                    ecn_capable: tcp.ecn,
                    fwd,
                    rev,
                    start,
                    stop,
                    started: false,
                    endpoints,
                    timers,
                    drops: [0; DropReason::COUNT],
                    marks: 0,
                    rng: frng,
                });
            }
            groups.push(Group {
                name: spec.name.clone(),
                kind,
                tcp,
                udp,
                demand_bps,
            });
        }
        let monitors: Vec<Monitor> = monitored
            .iter()
            .map(|&l| Monitor {
                link: l,
                per_flow: vec![LinkFlowCounters::default(); flows.len()],
                queued: vec![(0, Time::ZERO); flows.len()],
                samples: Vec::new(),
            })
            .collect();
        for (k, m) in monitors.iter().enumerate() {
            links[m.link].monitor = Some(k);
        }
        let sample_interval = f.monitor.queue_interval;
        if !sample_interval.is_zero() {
            events.push(Time::ZERO, Event::Sample);
        }
        if warmup_end > Time::ZERO {
            events.push(warmup_end, Event::MeasureStart);
        }
        Ok(Simulation {
            name: f.name.clone(),
            seed,
            now: Time::ZERO,
            end,
            warmup_end,
            events,
            nodes,
            links,
            flows,
            groups,
            flow_nodes: ends,
            wires: WireSlab::default(),
            routes,
            headers: HeaderSlab::default(),
            sink: VecSink::default(),
            actions: Actions::default(),
            next_uid: 0,
            event_count: 0,
            monitors,
            sample_interval,
            snapshot: None,
            faults: Vec::new(),
            pcap: None,
        })
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }
    /// When the run ends.
    pub fn end(&self) -> Time {
        self.end
    }
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    /// The name of link direction `l`: `from->to`. Built on demand rather than
    /// stored: a million-flow dumbbell has four million link directions.
    pub fn link_name(&self, l: usize) -> String {
        let link = &self.links[l];
        format!(
            "{}->{}",
            self.nodes[link.from as usize], self.nodes[link.to as usize]
        )
    }

    /// Names of the link directions, `from->to`, in index order.
    pub fn link_names(&self) -> impl Iterator<Item = String> + '_ {
        (0..self.links.len()).map(|l| self.link_name(l))
    }

    /// Finds a link direction by name (`a->b`; `bottleneck` is `left->right`).
    pub fn find_link(&self, name: &str) -> Option<usize> {
        let name = match name {
            "bottleneck" => "left->right",
            other => other,
        };
        let (from, to) = name.split_once("->")?;
        self.links
            .iter()
            .position(|l| self.nodes[l.from as usize] == from && self.nodes[l.to as usize] == to)
    }

    /// Writes a pcap of link direction `link` to `path` as the run goes.
    pub fn capture(&mut self, link: usize, path: &Path) -> std::io::Result<()> {
        self.pcap = Some(PcapTap::create(path, link)?);
        Ok(())
    }

    /// Loses the first transmission of data packet `seq` of `flow` (for tests of
    /// loss recovery).
    pub fn inject_loss(&mut self, flow: u32, seq: u32) {
        self.faults.push((flow, seq));
    }

    /// Records every congestion-window reduction of a TCP flow.
    pub fn trace_tcp(&mut self, flow: u32) {
        if let Endpoints::Tcp { sender, .. } = &mut self.flows[flow as usize].endpoints {
            sender.trace = Some(Vec::new());
        }
    }

    /// The reductions recorded by [`Simulation::trace_tcp`].
    pub fn tcp_trace(&self, flow: u32) -> &[Reduction] {
        match &self.flows[flow as usize].endpoints {
            Endpoints::Tcp { sender, .. } => sender.trace.as_deref().unwrap_or(&[]),
            Endpoints::Udp { .. } => &[],
        }
    }

    /// A TCP flow's sender, for inspection.
    pub fn tcp_sender(&self, flow: u32) -> Option<&TcpSender> {
        match &self.flows[flow as usize].endpoints {
            Endpoints::Tcp { sender, .. } => Some(sender),
            Endpoints::Udp { .. } => None,
        }
    }

    /// Runs until `until` (or the scenario's end), calling `progress` now and then.
    pub fn run_until(&mut self, until: Time, progress: &mut dyn FnMut(Time)) {
        let until = until.min(self.end);
        while let Some(t) = self.events.peek_time() {
            if t > until {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.event_count += 1;
            if let Some((_, next)) = self.events.peek() {
                self.prefetch_for(next);
            }
            match ev {
                Event::TxDone(l) => self.on_tx_done(l as usize),
                Event::Arrive(l) => self.on_arrive(l as usize),
                Event::Timer(f, k) => self.on_timer(f as usize, k),
                Event::Sample => self.on_sample(),
                Event::MeasureStart => self.take_snapshot(),
            }
            if self.event_count & 0xffff == 0 {
                progress(self.now);
            }
        }
        self.now = until;
        progress(self.now);
    }

    /// Asks the CPU to start loading what `ev` will touch first (its link or its
    /// flow) while the current event runs. With tens of thousands of flows these are
    /// cache misses; the load overlaps with useful work instead of stalling it.
    #[inline]
    fn prefetch_for(&self, ev: Event) {
        match ev {
            Event::TxDone(l) | Event::Arrive(l) => prefetch(&self.links[l as usize]),
            Event::Timer(f, _) => prefetch(&self.flows[f as usize]),
            Event::Sample | Event::MeasureStart => {}
        }
    }

    /// Runs to the end.
    pub fn run(&mut self, progress: &mut dyn FnMut(Time)) {
        self.run_until(self.end, progress);
    }

    fn take_snapshot(&mut self) {
        let now = self.now;
        self.snapshot = Some(Snapshot {
            flows: self.flows.iter().map(Flow::counters).collect(),
            links: self.monitored_link_counters(now),
            per_flow: self.monitors.iter().map(|m| m.per_flow_at(now)).collect(),
        });
    }

    fn on_sample(&mut self) {
        let t = self.now.as_secs_f64();
        for m in &mut self.monitors {
            let q = &self.links[m.link].qdisc;
            m.samples.push((t, q.len() as u32, q.bytes()));
        }
        self.events
            .push(self.now + self.sample_interval, Event::Sample);
    }

    // ---- links -------------------------------------------------------------

    fn enqueue_on(&mut self, l: usize, pkt: Packet) {
        let now = self.now;
        let link = &mut self.links[l];
        if !link.is_busy() && link.qdisc.passes_through() {
            // Straight to the idle transmitter: the same counts, occupancy and
            // timing as queueing and dequeueing it at this instant.
            let pkt = link.qdisc.pass_through(pkt, now);
            link.max_queue = link.max_queue.max(1);
            let done = link.begin_tx(pkt, now);
            self.events.push(done, Event::TxDone(l as u32));
            return;
        }
        link.before_queue_change(now);
        let verdict = link.qdisc.enqueue(pkt, now, &mut link.rng, &mut self.sink);
        link.after_queue_change();
        if let Some(m) = link.monitor {
            // The arrival joins the queue unless dropped; every other drop is a
            // packet that was queued (a CHOKe victim, a push-out).
            if matches!(verdict, Verdict::Queued) {
                let flow = self.headers.get(pkt.tag).flow as usize;
                self.monitors[m].occupancy_change(flow, now, 1);
            }
            self.count_victims(m, Some(pkt.tag));
        }
        self.settle_sink();
        if !self.links[l].is_busy() {
            self.start_next(l);
        }
    }

    /// The transmitter of `l` is free: send the next packet or go idle.
    fn start_next(&mut self, l: usize) {
        let now = self.now;
        let link = &mut self.links[l];
        link.before_queue_change(now);
        let next = link.qdisc.dequeue(now, &mut link.rng, &mut self.sink);
        link.after_queue_change();
        if let Some(m) = link.monitor {
            if let Some(pkt) = &next {
                let flow = self.headers.get(pkt.tag).flow as usize;
                self.monitors[m].occupancy_change(flow, now, -1);
            }
            self.count_victims(m, None);
        }
        let link = &mut self.links[l];
        match next {
            Some(pkt) => {
                let done = link.begin_tx(pkt, now);
                self.events.push(done, Event::TxDone(l as u32));
            }
            None => link.go_idle(now),
        }
        self.settle_sink();
    }

    fn on_tx_done(&mut self, l: usize) {
        let now = self.now;
        let (pkt, schedule) = self.links[l].end_tx(now, &mut self.wires);
        if schedule {
            self.events
                .push(now + self.links[l].delay, Event::Arrive(l as u32));
        }
        let h = *self.headers.get(pkt.tag);
        if let Some(m) = self.links[l].monitor {
            let e = &mut self.monitors[m].per_flow[h.flow as usize];
            e.packets += 1;
            e.bytes += pkt.size as u64;
        }
        if let Some(tap) = &mut self.pcap {
            if tap.link == l {
                let (src_node, dst_node) = self.flow_nodes[h.flow as usize];
                let f = &self.flows[h.flow as usize];
                let payload = if f.kind.is_tcp() {
                    f.packet_size.saturating_sub(40).max(1)
                } else {
                    1
                };
                let addr = Addresses {
                    src_node,
                    dst_node,
                    port: 1024 + (h.flow % 60_000) as u16,
                };
                if let Err(e) = tap.record(now, &pkt, &h, addr, payload) {
                    eprintln!("pcap: stopped writing: {e}");
                    self.pcap = None;
                }
            }
        }
        self.start_next(l);
    }

    fn on_arrive(&mut self, l: usize) {
        let wire = &mut self.links[l].wire;
        let (t, pkt) = self
            .wires
            .pop_front(wire)
            .expect("Arrive with an empty wire");
        debug_assert_eq!(t, self.now);
        if let Some(next) = self.wires.front_arrival(wire) {
            self.events.push(next, Event::Arrive(l as u32));
        }
        self.forward(pkt);
    }

    /// Sends `pkt` over the next link of its path, or delivers it.
    fn forward(&mut self, pkt: Packet) {
        let h = self.headers.get_mut(pkt.tag);
        let l = self.routes[h.route_at as usize];
        if l == ROUTE_END {
            self.deliver(pkt);
        } else {
            h.route_at += 1;
            self.enqueue_on(l as usize, pkt);
        }
    }

    /// The link directions a flow's data crosses.
    pub(crate) fn data_route(&self, flow: usize) -> &[u32] {
        let rest = &self.routes[self.flows[flow].fwd as usize..];
        let len = rest
            .iter()
            .position(|&l| l == ROUTE_END)
            .expect("routes end");
        &rest[..len]
    }

    /// Takes the queued packets the last qdisc call dropped (all its drops but
    /// `arrival`) out of monitor `m`'s per-flow occupancy.
    fn count_victims(&mut self, m: usize, arrival: Option<u32>) {
        let now = self.now;
        for (pkt, _) in &self.sink.drops {
            if Some(pkt.tag) != arrival {
                let flow = self.headers.get(pkt.tag).flow as usize;
                self.monitors[m].occupancy_change(flow, now, -1);
            }
        }
    }

    /// Accounts for what the last qdisc call dropped or marked.
    fn settle_sink(&mut self) {
        if !self.sink.drops.is_empty() {
            for (pkt, reason) in self.sink.drops.drain(..) {
                let flow = self.headers.get(pkt.tag).flow as usize;
                self.flows[flow].drops[reason.index()] += 1;
                self.headers.free(pkt.tag);
            }
        }
        if !self.sink.marks.is_empty() {
            for (pkt, _) in self.sink.marks.drain(..) {
                let flow = self.headers.get(pkt.tag).flow as usize;
                self.flows[flow].marks += 1;
            }
        }
    }

    // ---- endpoints -----------------------------------------------------------

    fn send(&mut self, flow: usize, kind: Kind, seq: u32, ack: u32, sack: SackBlocks, flags: u8) {
        if kind == Kind::Data && !self.faults.is_empty() {
            if let Some(i) = self
                .faults
                .iter()
                .position(|&(f, s)| f as usize == flow && s == seq)
            {
                self.faults.swap_remove(i);
                return;
            }
        }
        let f = &self.flows[flow];
        let size = if kind == Kind::Ack {
            self.groups[f.group as usize].tcp.ack_size
        } else {
            f.packet_size
        };
        let uid = self.next_uid;
        self.next_uid += 1;
        let tag = self.headers.alloc(Header {
            uid,
            flow: flow as u32,
            route_at: if kind == Kind::Ack { f.rev } else { f.fwd },
            kind,
            flags,
            seq,
            ack,
            sack,
            sent_at: self.now,
        });
        let mut pkt = Packet::new(FlowId(flow as u32), size);
        pkt.aggregate = f.aggregate;
        pkt.tag = tag;
        if matches!(kind, Kind::Data | Kind::Udp) && f.ecn_capable {
            pkt.ecn = Ecn::Ect;
        }
        self.forward(pkt);
    }

    fn deliver(&mut self, pkt: Packet) {
        let h = *self.headers.get(pkt.tag);
        self.headers.free(pkt.tag);
        let fi = h.flow as usize;
        let now = self.now;
        let mut act = std::mem::take(&mut self.actions);
        act.clear();
        let flow = &mut self.flows[fi];
        let cfg = &self.groups[flow.group as usize].tcp;
        match (&mut flow.endpoints, h.kind) {
            (Endpoints::Tcp { receiver, .. }, Kind::Data) => {
                receiver.on_data(
                    now,
                    h.seq,
                    pkt.ecn == Ecn::Ce,
                    h.flags & FLAG_CWR != 0,
                    cfg,
                    &mut act,
                );
            }
            (Endpoints::Tcp { sender, .. }, Kind::Ack) => {
                sender.on_ack(
                    now,
                    h.ack,
                    h.sack.as_slice(),
                    h.flags & FLAG_ECE != 0,
                    cfg,
                    &mut act,
                );
            }
            (Endpoints::Udp { received, .. }, Kind::Udp) => *received += 1,
            _ => unreachable!("a packet reached an endpoint of the wrong transport"),
        }
        self.apply(fi, &act);
        self.actions = act;
    }

    /// Carries out what a TCP endpoint asked for.
    fn apply(&mut self, fi: usize, act: &Actions) {
        for seg in &act.segs {
            match *seg {
                Seg::Data { seq, cwr } => self.send(
                    fi,
                    Kind::Data,
                    seq,
                    0,
                    SackBlocks::default(),
                    if cwr { FLAG_CWR } else { 0 },
                ),
                Seg::Ack { ack, sack, ece } => {
                    self.send(fi, Kind::Ack, 0, ack, sack, if ece { FLAG_ECE } else { 0 })
                }
            }
        }
        for (k, cmd) in act.timers.iter().enumerate() {
            if let Some(cmd) = cmd {
                self.set_timer(fi, k, *cmd);
            }
        }
    }

    fn set_timer(&mut self, fi: usize, k: usize, cmd: TimerCmd) {
        let slot = &mut self.flows[fi].timers[k];
        match cmd {
            TimerCmd::Cancel => slot.deadline = None,
            TimerCmd::Arm(at) => {
                slot.deadline = Some(at);
                if slot.pending.is_none_or(|p| p > at) {
                    slot.pending = Some(at);
                    let kind = match k {
                        0 => TimerKind::Send,
                        1 => TimerKind::Rto,
                        2 => TimerKind::DelAck,
                        _ => TimerKind::Stop,
                    };
                    self.events.push(at, Event::Timer(fi as u32, kind));
                }
            }
        }
    }

    fn on_timer(&mut self, fi: usize, kind: TimerKind) {
        let now = self.now;
        let slot = &mut self.flows[fi].timers[kind as usize];
        if slot.pending != Some(now) {
            return; // superseded by an earlier arming
        }
        slot.pending = None;
        match slot.deadline {
            Some(d) if d <= now => slot.deadline = None,
            Some(d) => {
                slot.pending = Some(d);
                self.events.push(d, Event::Timer(fi as u32, kind));
                return;
            }
            None => return,
        }
        let mut act = std::mem::take(&mut self.actions);
        act.clear();
        let flow = &mut self.flows[fi];
        let group = &self.groups[flow.group as usize];
        let cfg = &group.tcp;
        let mut udp_send = false;
        match (&mut flow.endpoints, kind) {
            (Endpoints::Tcp { sender, .. }, TimerKind::Send) => {
                if flow.started {
                    sender.on_send_timer(now, cfg, &mut act);
                } else {
                    flow.started = true;
                    sender.start(now, cfg, &mut act);
                }
            }
            (Endpoints::Tcp { sender, .. }, TimerKind::Rto) => sender.on_rto(now, cfg, &mut act),
            (Endpoints::Tcp { receiver, .. }, TimerKind::DelAck) => {
                receiver.on_delack_timer(&mut act)
            }
            (Endpoints::Tcp { sender, .. }, TimerKind::Stop) => sender.stop(),
            (Endpoints::Udp { source, .. }, TimerKind::Send) => {
                if flow.stop.is_none_or(|s| now < s) {
                    let w = source.wake(
                        now,
                        group.udp.as_ref().expect("UDP flow has a UDP config"),
                        &mut flow.rng,
                    );
                    udp_send = w.send;
                    if let Some(next) = w.next {
                        act.timers[TimerKind::Send as usize] = Some(TimerCmd::Arm(next));
                    }
                }
            }
            (Endpoints::Udp { .. }, _) => {}
        }
        if udp_send {
            self.send(fi, Kind::Udp, 0, 0, SackBlocks::default(), 0);
        }
        self.apply(fi, &act);
        self.actions = act;
    }

    // ---- results -------------------------------------------------------------

    /// Finishes the pcap, if any.
    pub fn finish_capture(&mut self) -> std::io::Result<()> {
        match self.pcap.take() {
            Some(tap) => tap.finish(),
            None => Ok(()),
        }
    }

    pub(crate) fn measured(&self) -> Measured {
        let now = self.now;
        let mut flows: Vec<FlowCounters> = self.flows.iter().map(Flow::counters).collect();
        let mut links = self.monitored_link_counters(now);
        let mut per_flow: Vec<Vec<LinkFlowCounters>> =
            self.monitors.iter().map(|m| m.per_flow_at(now)).collect();
        if let Some(s) = &self.snapshot {
            for (c, b) in flows.iter_mut().zip(&s.flows) {
                c.sent -= b.sent;
                c.delivered -= b.delivered;
                for (x, y) in c.drops.iter_mut().zip(&b.drops) {
                    *x -= y;
                }
                c.marks -= b.marks;
                c.retransmits -= b.retransmits;
                c.timeouts -= b.timeouts;
                c.fast_recoveries -= b.fast_recoveries;
                c.rtt_sum_s -= b.rtt_sum_s;
                c.rtt_samples -= b.rtt_samples;
            }
            for (c, b) in links.iter_mut().zip(&s.links) {
                c.tx_packets -= b.tx_packets;
                c.tx_bytes -= b.tx_bytes;
                c.busy_ns -= b.busy_ns;
                c.queue_area -= b.queue_area;
                let (q, bq) = (&mut c.queue, &b.queue);
                q.received -= bq.received;
                q.queued -= bq.queued;
                q.dequeued -= bq.dequeued;
                q.dequeued_bytes -= bq.dequeued_bytes;
                q.arrivals_dropped -= bq.arrivals_dropped;
                q.victims -= bq.victims;
                for (x, y) in q.drops.iter_mut().zip(&bq.drops) {
                    *x -= y;
                }
                for (x, y) in q.marks.iter_mut().zip(&bq.marks) {
                    *x -= y;
                }
            }
            for (c, b) in per_flow.iter_mut().zip(&s.per_flow) {
                for (x, y) in c.iter_mut().zip(b) {
                    x.packets -= y.packets;
                    x.bytes -= y.bytes;
                    x.queue_area -= y.queue_area;
                }
            }
        }
        (flows, links, per_flow)
    }

    /// The counters of the monitored link directions, in monitor order: only those
    /// are reported, and a large dumbbell has millions of the others.
    fn monitored_link_counters(&self, now: Time) -> Vec<LinkCounters> {
        self.monitors
            .iter()
            .map(|m| self.links[m.link].counters(now))
            .collect()
    }

    pub(crate) fn measured_seconds(&self) -> f64 {
        self.now.saturating_since(self.warmup_end).as_secs_f64()
    }

    pub(crate) fn monitor_links(&self) -> impl Iterator<Item = (usize, &[(f64, u32, u64)])> {
        self.monitors.iter().map(|m| (m.link, m.samples.as_slice()))
    }

    pub(crate) fn warmup(&self) -> Time {
        self.warmup_end
    }

    /// Packets still in the network (queued, on a wire, or being sent).
    pub fn packets_in_network(&self) -> usize {
        self.headers.live()
    }
}
