//! Observing a run from outside the forwarding path, as ns-3's trace sources do:
//! the engine forwards packets and calls a hook here only where an observer is
//! attached (a monitored link, an enabled series), so an absent observer costs
//! nothing but a branch.
//!
//! - [`link_stats`]: per monitored link direction: the queue's counters (the one
//!   place they are kept), transmissions, busy time, the time-weighted backlog, and
//!   each flow's share of them; queue-length samples.
//! - [`flow_series`]: each flow's packets, bytes, drops and marks across a monitored
//!   link per interval (`[monitor] flow_series`).
//! - [`delays`]: sojourn-time histograms at monitored queues (`[monitor] delays`).
//! - [`tcp_trace`]: cwnd, ssthresh, RTT and flight per TCP flow per interval.
//! - [`objects`]: web object transfer times. [`event_log`]: every drop and mark.
//! - [`pcap`]: a capture of one link direction.
//!
//! Totals count the measured interval: a snapshot taken when the warm-up ends is
//! subtracted from them. Series and logs cover the whole run, stamped with times.

pub mod delays;
pub mod event_log;
pub mod flow_series;
pub mod flow_slots;
pub mod link_stats;
pub mod objects;
pub mod packed;
pub mod pcap;
pub mod tcp_trace;

use crate::event::Tick;
use crate::flow::{Flow, FlowCounters};
use crate::link::{Link, Links};
use crate::net::{Group, Network};
use crate::scenario::{Scenario, ScenarioError};
use aqm::{Dur, Time};
use delays::Delays;
use event_log::EventLog;
use flow_series::SeriesAcc;
use flow_slots::Census;
use link_stats::{LinkCounters, LinkFlowCounters, LinkStats};
use objects::Objects;
use packed::Packed;
use pcap::PcapTap;
use std::sync::Arc;
use tcp_trace::TcpTrace;

/// The monitored links' per-flow tables, as the memory estimate counts them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Tables {
    /// Rows over every monitored link direction (a row per flow it keeps).
    pub rows: u64,
    /// Rows of the links whose per-flow series is on.
    pub series_rows: u64,
    /// Bytes of the links' slot maps ([`flow_slots`]).
    pub slot_bytes: u64,
}

/// Bytes the observers `m` asks for hold at most over a run of `secs` seconds
/// with `monitored` monitored link directions whose per-flow tables are
/// `tables`, and `flows` flows (series are counted as if every flow a link
/// keeps were active in every interval).
pub fn monitor_rows(
    m: &crate::scenario::Monitor,
    monitored: u64,
    tables: Tables,
    flows: u64,
    secs: f64,
) -> u64 {
    let ticks = |d: Option<Dur>| d.map_or(0.0, |d| secs / d.as_secs_f64().max(1e-9)) as u64;
    let queue = ticks(Some(m.queue_interval).filter(|d| !d.is_zero()));
    // Per row: its counters and queue occupancy (48 bytes), the counters again at
    // the warm-up and in the report (2 x 32), its row of results (88).
    let per_row = 48 + 2 * 32 + 88;
    // Per row of a link with a series: its running interval (24 bytes), and a
    // row of 40 per interval.
    let series = if m.flow_series.is_some() {
        tables
            .series_rows
            .saturating_mul(ticks(m.flow_series).saturating_mul(40).saturating_add(24))
    } else {
        0
    };
    let tcp = ticks(m.tcp_trace).saturating_mul(flows).saturating_mul(48);
    let events = if m.events {
        m.max_events.min(1 << 22) * 32
    } else {
        0
    };
    monitored
        .saturating_mul(queue.saturating_mul(16))
        .saturating_add(tables.rows.saturating_mul(per_row))
        .saturating_add(tables.slot_bytes)
        .saturating_add(series)
        .saturating_add(tcp)
        .saturating_add(events)
}

/// The row (in `m`'s [`FlowSlots`](flow_slots::FlowSlots)) of the flow of the
/// packet the link `m` observes is sending at `now`, and its bits sent so far.
pub fn in_progress(m: &LinkStats, links: Links<'_>, now: Time) -> Option<(usize, u64)> {
    m.in_progress(links, now)
        .map(|(p, bits)| (m.slots.row(p.flow.index()), bits))
}

/// Counters frozen when the warm-up ends, packed (see [`packed`]): read once, in
/// order, by the report.
struct Snapshot {
    flows: Packed<FlowCounters>,
    /// Each monitored link's counters without its per-flow table, and the table.
    links: Vec<(LinkCounters, Packed<LinkFlowCounters>)>,
}

/// Every observer of a run.
pub struct Observers {
    /// One per monitored link direction, in report order (`Link::monitor` indexes it).
    pub links: Vec<LinkStats>,
    pub queue_interval: Dur,
    pub series_interval: Option<Dur>,
    pub tcp_interval: Option<Dur>,
    pub tcp: Option<TcpTrace>,
    pub objects: Option<Objects>,
    pub events: Option<EventLog>,
    pub pcap: Option<PcapTap>,
    /// Why the pcap tap stopped writing, told again when the capture is finished.
    pub pcap_error: Option<std::io::Error>,
    snapshot: Option<Snapshot>,
}

/// What the monitored links will keep per flow, read off the routes before any
/// table is made, so that the memory check can count it (`setup::memory`).
pub struct Plan {
    census: Vec<Census>,
    /// The links `[monitor] links` selects for series and delays (all if `None`).
    selected: Option<Vec<u32>>,
    flows: u32,
}

impl Plan {
    /// The plan for `s`'s observers on `net`, whose `flows` are built.
    pub fn new(s: &Scenario, net: &Network, flows: &[Flow]) -> Result<Plan, ScenarioError> {
        let selected = s.monitor().selected_links(s, net)?;
        let census = flow_slots::census(&net.routes, flows, &net.monitored, net.links.len());
        Ok(Plan {
            census,
            selected,
            flows: flows.len() as u32,
        })
    }

    fn is_selected(&self, l: u32) -> bool {
        self.selected.as_ref().is_none_or(|sel| sel.contains(&l))
    }

    /// The tables the plan makes, with `series` whether per-flow series are on.
    pub fn tables(&self, net: &Network, series: bool) -> Tables {
        let mut t = Tables::default();
        for (c, &l) in self.census.iter().zip(&net.monitored) {
            let rows = c.rows(self.flows);
            t.rows += rows;
            t.slot_bytes += c.slot_bytes(self.flows);
            if series && self.is_selected(l) {
                t.series_rows += rows;
            }
        }
        t
    }
}

impl Observers {
    /// The observers `s`'s `[monitor]` table asks for, on the monitored links of
    /// `net`, as `plan` (made from the same `net` and `flows`) laid them out.
    pub fn new(
        s: &Scenario,
        net: &Network,
        groups: &[Group],
        flows: &[Flow],
        plan: Plan,
    ) -> Observers {
        let m = s.monitor();
        let group_of: Option<Arc<[u32]>> = m.delays.then(|| {
            let mut v = vec![0u32; flows.len()];
            for (gi, g) in groups.iter().enumerate() {
                v[g.first as usize..(g.first + g.count) as usize].fill(gi as u32);
            }
            v.into()
        });
        let slots = flow_slots::slots(
            &net.routes,
            flows,
            &net.monitored,
            net.links.len(),
            &plan.census,
        );
        let links = net
            .monitored
            .iter()
            .zip(slots)
            .map(|(&l, slots)| {
                let rows = slots.rows();
                let mut stats = LinkStats::new(l, slots);
                if plan.is_selected(l) {
                    if m.flow_series.is_some() {
                        stats.series = Some(SeriesAcc::new(rows));
                    }
                    if let Some(group_of) = &group_of {
                        stats.delays = Some(Delays::new(group_of.clone(), groups.len()));
                    }
                }
                stats
            })
            .collect();
        Observers {
            links,
            queue_interval: m.queue_interval,
            series_interval: m.flow_series,
            tcp_interval: m.tcp_trace,
            tcp: m.tcp_trace.map(|_| TcpTrace::default()),
            objects: m.objects.then(Objects::default),
            events: m.events.then(|| EventLog::new(m.max_events)),
            pcap: None,
            pcap_error: None,
            snapshot: None,
        }
    }

    /// The first tick of each periodic observer that is on.
    pub fn first_ticks(&self) -> Vec<(Tick, Time)> {
        let mut ticks = Vec::new();
        if !self.queue_interval.is_zero() {
            ticks.push((Tick::Queue, Time::ZERO));
        }
        if let Some(i) = self.series_interval {
            ticks.push((Tick::Series, Time::ZERO + i));
        }
        if let Some(i) = self.tcp_interval {
            ticks.push((Tick::Tcp, Time::ZERO + i));
        }
        ticks
    }

    /// The period of a tick.
    pub fn interval(&self, tick: Tick) -> Dur {
        match tick {
            Tick::Queue => self.queue_interval,
            Tick::Series => self.series_interval.expect("series on"),
            Tick::Tcp => self.tcp_interval.expect("tcp trace on"),
        }
    }

    /// Samples every monitored queue's length.
    pub fn sample_queues(&mut self, now: Time, links: &[Link]) {
        let t = now.as_secs_f64();
        for m in &mut self.links {
            let q = &links[m.link as usize].qdisc;
            m.samples.push((t, q.len() as u32, q.bytes()));
        }
    }

    /// Ends an interval of every per-flow series.
    pub fn close_series(&mut self, now: Time, links: Links<'_>) {
        for m in &mut self.links {
            let partial = in_progress(m, links, now);
            if let Some(s) = &mut m.series {
                s.close_interval(now, partial);
            }
        }
    }

    /// Samples every TCP sender.
    pub fn sample_tcp(&mut self, now: Time, flows: &[Flow], groups: &[Group]) {
        let Some(trace) = &mut self.tcp else { return };
        for (i, f) in flows.iter().enumerate() {
            if let Some(s) = f.tcp_sender() {
                let cfg = &groups[f.group as usize].tcp;
                trace.samples.push(s.sample(now, i as u32, cfg));
            }
        }
    }

    /// The warm-up ends at `now`: freeze the counters, clear the distributions.
    pub fn end_warmup(&mut self, now: Time, links: Links<'_>, flows: &[Flow]) {
        let links = self
            .links
            .iter()
            .map(|m| {
                let mut c = m.counters_at(now, links);
                let per_flow = std::mem::take(&mut c.per_flow).into_iter().collect();
                (c, per_flow)
            })
            .collect();
        self.snapshot = Some(Snapshot {
            flows: flows.iter().map(Flow::counters).collect(),
            links,
        });
        for m in &mut self.links {
            if let Some(d) = &mut m.delays {
                d.clear();
            }
        }
    }

    fn link_counters(&self, now: Time, links: Links<'_>) -> Vec<LinkCounters> {
        self.links
            .iter()
            .map(|m| m.counters_at(now, links))
            .collect()
    }

    /// The counters of the measured interval so far, per monitored link.
    pub fn measured_links(&self, now: Time, links: Links<'_>) -> Vec<LinkCounters> {
        self.measured(self.link_counters(now, links))
    }

    /// [`Observers::measured_links`] for the last reading: the counters are moved
    /// out of the observers, which are left without them.
    pub fn take_measured_links(&mut self, now: Time, links: Links<'_>) -> Vec<LinkCounters> {
        let l = self
            .links
            .iter_mut()
            .map(|m| m.take_counters_at(now, links))
            .collect();
        self.measured(l)
    }

    /// `l`, each monitored link's counters now, less the warm-up's.
    fn measured(&self, mut l: Vec<LinkCounters>) -> Vec<LinkCounters> {
        if let Some(s) = &self.snapshot {
            for (c, (b, b_flows)) in l.iter_mut().zip(&s.links) {
                // The per-flow table in place: a second one beside it was 64 bytes a
                // flow at the report's peak.
                let mut per_flow = std::mem::take(&mut c.per_flow);
                debug_assert_eq!(per_flow.len(), b_flows.len());
                for (x, y) in per_flow.iter_mut().zip(b_flows.iter()) {
                    *x = x.since(&y);
                }
                *c = c.since(b);
                c.per_flow = per_flow;
            }
        }
        l
    }

    /// The counters of each of `flows` over the measured interval so far, in
    /// order, one at a time as the report reads them (a table of them was 144
    /// bytes a flow at its peak).
    pub fn measured_flows<'a>(
        &'a self,
        flows: &'a [Flow],
    ) -> impl Iterator<Item = FlowCounters> + 'a {
        let mut warmup = self.snapshot.as_ref().map(|s| {
            debug_assert_eq!(s.flows.len(), flows.len());
            s.flows.iter()
        });
        flows.iter().map(move |f| {
            let c = f.counters();
            match &mut warmup {
                Some(w) => c.since(&w.next().expect("a snapshot of every flow")),
                None => c,
            }
        })
    }
}
