//! Running: the event loop and its handlers, nothing else. [`crate::setup`] makes a
//! [`Simulation`] over a [`crate::net::Network`]; [`crate::observe`] watches it;
//! [`crate::report`] reads it out.
//!
//! - this file: the state, the loop, the periodic ticks and the warm-up;
//! - `forward`: links: enqueue, transmit, propagate, forward, deliver;
//! - `ahead`: the speed shortcuts (send-ahead, the deferred `TxDone`,
//!   cut-through), their state and invariants;
//! - `endpoints`: transports: sending, receiving, timers.
//!
//! Events at one instant run in the order they were scheduled (see `event.rs`),
//! which is what makes a run deterministic.

mod ahead;
mod endpoints;
mod forward;
#[cfg(test)]
mod tests;
mod varying;

use crate::event::{Event, EventQueue, Tick};
use crate::flow::{Endpoints, Flow};
use crate::header::HeaderSlab;
use crate::link::QueuePool;
use crate::net::{Group, Network};
use crate::observe::{pcap::PcapTap, Observers};
use crate::scenario::Scenario;
use crate::tcp::{Actions, Reduction, TcpSender};
use crate::wire::WireSlab;
use aqm::{Time, VecSink};
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

/// Prefetch the next event's state from this many link directions on (a dumbbell of
/// 4,096 flows, about 5 MB of per-flow state). Below it the state stays in cache
/// and the prefetch only costs the queue's look-ahead: 32 to 2,000 flows ran 3-8%
/// faster without it, 5,000 flows the same, 10,000 and 20,000 flows 2-5% slower
/// (BENCHMARKS.md, "The event queue").
const PREFETCH_FROM_LINKS: usize = 16_384;

pub struct Simulation {
    name: String,
    seed: u64,
    now: Time,
    end: Time,
    warmup_end: Time,
    events: EventQueue,
    pub(crate) net: Network,
    pub(crate) flows: Vec<Flow>,
    pub(crate) groups: Vec<Group>,
    headers: HeaderSlab,
    pub(crate) wires: WireSlab,
    /// The access links' DropTails not in use (`link::Queue`).
    queues: QueuePool,
    sink: VecSink,
    actions: Actions,
    next_uid: u64,
    event_count: u64,
    /// Whether to prefetch the next event's link or flow: only when the per-flow
    /// state outgrows the caches (`PREFETCH_FROM_LINKS`).
    prefetch_next: bool,
    pub(crate) obs: Observers,
    /// (flow, seq) of data packets to lose on first transmission (tests).
    faults: Vec<(u32, u32)>,
    /// Per link direction: `ahead::NO_CUT`, or, for a link that cuts through,
    /// how many packets are on their way to it by the normal path (`ahead`).
    cut: Vec<u32>,
    /// What tests count (`engine::tests`).
    #[cfg(test)]
    probe: tests::Probe,
}

impl Simulation {
    /// Puts the built parts together (see [`Simulation::new`]).
    pub(crate) fn assemble(
        s: &Scenario,
        mut net: Network,
        groups: Vec<Group>,
        flows: Vec<Flow>,
        obs: Observers,
        events: EventQueue,
    ) -> Simulation {
        for (k, m) in obs.links.iter().enumerate() {
            net.links[m.link as usize].set_monitor(k as u32);
        }
        let cut = ahead::plan(&mut net);

        let f = &s.file;
        let prefetch_next = net.links.len() >= PREFETCH_FROM_LINKS;
        Simulation {
            name: f.name.clone(),
            seed: f.seed,
            now: Time::ZERO,
            end: Time::ZERO + f.duration,
            warmup_end: Time::ZERO + f.warmup,
            events,
            net,
            flows,
            groups,
            headers: HeaderSlab::default(),
            wires: WireSlab::default(),
            queues: QueuePool::default(),
            sink: VecSink::default(),
            actions: Actions::default(),
            next_uid: 0,
            event_count: 0,
            prefetch_next,
            obs,
            faults: Vec::new(),
            cut,
            #[cfg(test)]
            probe: tests::Probe::default(),
        }
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }
    /// When the run ends.
    pub fn end(&self) -> Time {
        self.end
    }
    /// When the warm-up ends and measurement starts.
    pub fn warmup(&self) -> Time {
        self.warmup_end
    }
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.event_count
    }
    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The name of link direction `l`: `from->to`. Built on demand rather than
    /// stored: a million-flow dumbbell has four million link directions.
    pub fn link_name(&self, l: usize) -> String {
        self.net.link_name(l)
    }

    /// Names of the link directions, `from->to`, in index order.
    pub fn link_names(&self) -> impl Iterator<Item = String> + '_ {
        (0..self.net.links.len()).map(|l| self.link_name(l))
    }

    /// Finds a link direction by name (`a->b`; `bottleneck` is `left->right`).
    pub fn find_link(&self, name: &str) -> Option<usize> {
        let name = match name {
            "bottleneck" => "left->right",
            other => other,
        };
        let (from, to) = name.split_once("->")?;
        let nodes = &self.net.nodes;
        self.net
            .links
            .iter()
            .position(|l| nodes.name(l.from) == from && nodes.name(l.to) == to)
    }

    /// Writes a pcap of link direction `link` to `path` as the run goes (call it
    /// before running: the tap records at the end of each transmission, so the
    /// link stops sending ahead).
    pub fn capture(&mut self, link: usize, path: &Path) -> std::io::Result<()> {
        self.obs.pcap = Some(PcapTap::create(path, link)?);
        self.no_shortcuts_on(link);
        Ok(())
    }

    /// Finishes the pcap, if any; an error if it stopped writing on the way (its
    /// unfinished file is gone: there is no capture).
    pub fn finish_capture(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.obs.pcap_error.take() {
            return Err(std::io::Error::new(
                e.kind(),
                format!("the capture stopped writing: {e}"),
            ));
        }
        match self.obs.pcap.take() {
            Some(tap) => tap.finish(),
            None => Ok(()),
        }
    }

    /// Loses the first transmission of data packet `seq` of `flow` (for tests of
    /// loss recovery).
    pub fn inject_loss(&mut self, flow: u32, seq: u32) {
        self.faults.push((flow, seq));
    }

    /// Records every congestion-window reduction of a TCP flow.
    pub fn trace_tcp(&mut self, flow: u32) {
        if let Endpoints::Tcp { sender, .. } = &mut self.flows[flow as usize].endpoints {
            sender.trace = Some(Box::default());
        }
    }

    /// The reductions recorded by [`Simulation::trace_tcp`].
    pub fn tcp_trace(&self, flow: u32) -> &[Reduction] {
        self.tcp_sender(flow)
            .and_then(|s| s.trace.as_deref().map(Vec::as_slice))
            .unwrap_or(&[])
    }

    /// A TCP flow's sender, for inspection.
    pub fn tcp_sender(&self, flow: u32) -> Option<&TcpSender> {
        self.flows[flow as usize].tcp_sender()
    }

    /// Packets still in the network (queued, on a wire, or being sent).
    pub fn packets_in_network(&self) -> usize {
        self.headers.live()
    }

    /// Runs until `until` (or the scenario's end), calling `progress` now and then.
    pub fn run_until(&mut self, until: Time, progress: &mut dyn FnMut(Time)) {
        let until = until.min(self.end);
        while let Some(t) = self.events.peek_time() {
            if t > until {
                break;
            }
            if self.events.renumber_due() {
                self.renumber_deferred();
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.event_count += 1;
            if self.prefetch_next {
                if let Some(next) = self.events.peek_hint() {
                    self.prefetch_for(next);
                }
            }
            #[cfg(test)]
            self.probe.count(ev);
            match ev {
                Event::TxDone(l) => self.on_tx_done(l as usize),
                Event::Arrive(l) => self.on_arrive(l as usize),
                Event::Jittered(node) => self.on_jittered(node),
                Event::Wake(l) => self.on_wake(l as usize),
                Event::Timer(f, k) => self.on_timer(f as usize, k),
                Event::Tick(tick) => self.on_tick(tick),
                Event::MeasureStart => {
                    self.settle_observed(false);
                    let links = self.net.view(&self.wires);
                    self.obs.end_warmup(self.now, links, &self.flows)
                }
            }
            if self.event_count & 0xffff == 0 {
                progress(self.now);
            }
        }
        self.now = until;
        // Every event up to `until` has run: so have the deferred ends up to it.
        self.settle_observed(true);
        progress(self.now);
    }

    /// Runs to the end.
    pub fn run(&mut self, progress: &mut dyn FnMut(Time)) {
        self.run_until(self.end, progress);
    }

    /// Asks the CPU to start loading what `ev` will touch first (its link or its
    /// flow) while the current event runs. With tens of thousands of flows these are
    /// cache misses; the load overlaps with useful work instead of stalling it.
    #[inline]
    fn prefetch_for(&self, ev: Event) {
        match ev {
            Event::TxDone(l) | Event::Arrive(l) | Event::Wake(l) => {
                prefetch(&self.net.links[l as usize])
            }
            Event::Timer(f, _) => prefetch(&self.flows[f as usize]),
            Event::Tick(_) | Event::MeasureStart | Event::Jittered(_) => {}
        }
    }

    /// Observations at `t` read the state after every other event of `t` (a
    /// trace link's opportunities fall on whole milliseconds, as ticks do): a
    /// sample never counts a packet that leaves at its own instant, so samples
    /// agree with the link's counts. The ticks due now are taken together and,
    /// while other events of this instant wait, put back behind them; a tick put
    /// back is not counted as an event.
    fn on_tick(&mut self, tick: Tick) {
        let now = self.now;
        let mut due = [tick; 3];
        let mut n = 1;
        while let Some((t, Event::Tick(next))) = self.events.peek() {
            if t != now || n == due.len() {
                break;
            }
            self.events.pop();
            due[n] = next;
            n += 1;
        }
        if self.events.peek_time() == Some(now) {
            for &k in &due[..n] {
                self.events.push(now, Event::Tick(k));
            }
            self.event_count -= 1;
            return;
        }
        self.event_count += n as u64 - 1;
        for &k in &due[..n] {
            self.observe(k);
        }
    }

    fn observe(&mut self, tick: Tick) {
        let now = self.now;
        match tick {
            Tick::Queue => self.obs.sample_queues(now, &self.net.links),
            Tick::Series => {
                self.settle_observed(false);
                self.obs.close_series(now, self.net.view(&self.wires))
            }
            Tick::Tcp => self.obs.sample_tcp(now, &self.flows, &self.groups),
        }
        self.events
            .push(now + self.obs.interval(tick), Event::Tick(tick));
    }
}
