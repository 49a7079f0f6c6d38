//! Flow groups to flows: each group's transport configuration, and per flow its
//! endpoints, start time and timers.

use crate::event::{Event, EventQueue, TimerKind, MAX_FLOWS, TIMER_KINDS};
use crate::flow::{Endpoints, Flow, FlowDrops, TimerSlot, UdpEnd};
use crate::net::Group;
use crate::scenario::{FlowSpec, Scenario, ScenarioError, OWN_AGGREGATE};
use crate::tcp::{TcpReceiver, TcpSender};
use crate::udp::{Pattern, UdpSource};
use aqm::{rng, Dur, Rate, Time};
use rand::Rng as _;

/// Stream numbers for `rng::stream`: each flow draws from its own.
pub(crate) const STREAM_FLOW: u64 = 2 << 32;

/// How many flows the scenario has in all; an error if the engine cannot name them.
pub fn count(s: &Scenario) -> Result<usize, ScenarioError> {
    let total: usize = s
        .file
        .flows
        .iter()
        .map(|g| g.get_ref().count as usize)
        .sum();
    if total > MAX_FLOWS {
        return Err(s.error(format!(
            "{total} flows in all; at most {MAX_FLOWS} fit the event queue"
        )));
    }
    Ok(total)
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

/// The configuration a group's flows share.
fn group(spec: &FlowSpec, warmup_end: Time, end: Time) -> Group {
    let kind = spec.kind();
    let tcp = spec.tcp_config();
    let udp = spec.udp_config();
    let probe = spec.probe_interval();
    let demand_bps = match &udp {
        None if probe.is_some() => 0.0,
        None => f64::INFINITY,
        Some(u) => {
            let m = mean_rate(u.rate, &u.schedule, warmup_end, end);
            match u.pattern {
                Pattern::OnOff { on, off, .. } => m * on.as_secs_f64() / (on + off).as_secs_f64(),
                _ => m,
            }
        }
    };
    Group {
        name: spec.name.clone(),
        kind,
        tcp,
        udp,
        probe,
        weight: spec.weight,
        host: spec.host.clone(),
        receiver_host: spec.receiver_host.clone(),
        dscp: spec.dscp.map_or(0, u8::from),
        stop: spec.stop.map(|d| Time::ZERO + d),
        demand_bps,
        first: 0,
        count: spec.count,
    }
}

/// The groups and flows of `s`; each flow's start (and stop) timer is put on
/// `events`. `flow_routes[i]` is where flow `i`'s data and ACK routes start.
pub fn build(
    s: &Scenario,
    flow_routes: &[(u32, u32)],
    events: &mut EventQueue,
) -> (Vec<Group>, Vec<Flow>) {
    let f = &s.file;
    let warmup_end = Time::ZERO + f.warmup;
    let end = Time::ZERO + f.duration;
    let mut groups = Vec::with_capacity(f.flows.len());
    let mut flows = Vec::with_capacity(flow_routes.len());
    for (gi, g) in f.flows.iter().enumerate() {
        let spec: &FlowSpec = g.get_ref();
        let mut group = group(spec, warmup_end, end);
        group.first = flows.len() as u32;
        for _ in 0..group.count {
            let id = flows.len();
            let (fwd, rev) = flow_routes[id];
            let mut frng = rng::stream(f.seed, STREAM_FLOW + id as u64);
            let spread = spec.start_spread;
            let jitter = if spread.is_zero() {
                Dur::ZERO
            } else {
                Dur::from_nanos(frng.gen_range(0..spread.as_nanos()))
            };
            let start = Time::ZERO + spec.start + jitter;
            let endpoints = match &group.udp {
                None if group.probe.is_some() => Endpoints::Probe(Box::default()),
                None => {
                    let mut sender = Box::new(TcpSender::new(&group.tcp));
                    // BBR's random PROBE_BW phases, from the flow's own stream.
                    sender.seed(frng.gen(), &group.tcp);
                    Endpoints::Tcp {
                        sender,
                        receiver: TcpReceiver::default(),
                    }
                }
                Some(u) => Endpoints::Udp(Box::new(UdpEnd {
                    source: UdpSource::new(u),
                    received: 0,
                    rng: frng,
                })),
            };
            let mut timers = [TimerSlot::default(); TIMER_KINDS];
            timers[TimerKind::Send as usize] = TimerSlot::armed(start);
            events.push(start, Event::Timer(id as u32, TimerKind::Send));
            let stop = group.stop;
            if let Some(t) = stop {
                timers[TimerKind::Stop as usize] = TimerSlot::armed(t);
                events.push(t, Event::Timer(id as u32, TimerKind::Stop));
            }
            flows.push(Flow {
                group: gi as u32,
                kind: group.kind,
                aggregate: spec.aggregate.unwrap_or(OWN_AGGREGATE + id as u32),
                packet_size: spec.packet_size(),
                ecn: spec.codepoint(),
                dscp: group.dscp,
                fwd,
                rev,
                start,
                started: false,
                endpoints,
                timers,
                drops: FlowDrops::default(),
                marks: 0,
            });
        }
        groups.push(group);
    }
    (groups, flows)
}
