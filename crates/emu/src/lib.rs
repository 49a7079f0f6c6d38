//! # emu: the scenario's qdiscs on real Linux TCP
//!
//! `aqmlab emulate` runs a dumbbell scenario on real packets: the senders in one
//! network namespace, the receivers in another, each namespace's only route
//! through a TUN device whose other end is this process. The data plane carries
//! every packet through the scenario's access links and bottleneck in user
//! space, with the bottleneck's qdisc built by the simulator's own code from
//! `crates/aqm`, so the same algorithm decides for real TCP. Probes are ICMP
//! echo requests the receivers' kernel answers. Results come back
//! as a [`sim::RunResult`]: the same tables as `aqmlab run`, with
//! [`sim::results::Emulation`] saying how well time was kept. docs/emulation.md
//! is the guide.
//!
//! ## Map
//! - [`apps`]: a user's programs through the emulated path (`--app GROUP --
//!   CMD`).
//! - [`check`]: what can be emulated, decided before anything starts.
//! - [`compare`]: a simulated and an emulated run side by side (`--compare`).
//! - [`gso`]: the senders' TSO super-packets cut into MTU packets, checksums
//!   completed.
//! - [`netns`]: the namespaces (alive only while this process holds them), the
//!   TUN devices, sysctls, privileges.
//! - [`plane`]: the data plane thread: links on a logical clock, the qdiscs,
//!   UDP sources, lateness.
//! - [`traffic`]: kernel TCP socket pairs and the UDP receiver.
//! - [`ipv4`]: header parsing, CE marking with the checksum fixed, UDP packets.
//! - [`stats`]: counters and the lateness histogram.
//! - `report`: counters to a `RunResult`.
#![cfg(target_os = "linux")]

pub mod apps;
pub mod calibrate;
pub mod check;
pub mod compare;
pub mod gso;
pub mod ipv4;
pub mod netns;
pub mod plane;
mod report;
pub mod stats;
mod tcp_info;
pub mod traffic;

use netns::{Netns, RECEIVER_ADDR, SENDER_ADDR};
use plane::{Access, Bottleneck, FlowPath, Pipe, ProbeFlow, UdpFlow};
use sim::runner::{build, Built, Delays, Endpoints, Flow, FlowSlots, Group, LinkStats, Network};
use sim::{RunResult, Scenario, ScenarioError};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use traffic::{TcpPlan, Traffic};

/// Why an emulation did not run or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// The scenario cannot be emulated (or is invalid).
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    /// The process may not create namespaces and devices.
    #[error(
        "aqmlab emulate needs CAP_NET_ADMIN (and CAP_SYS_ADMIN) to create network \
         namespaces and TUN devices: run it as root"
    )]
    NotPermitted,
    /// Creating or configuring a namespace, device or socket failed.
    #[error("setting up the emulation failed: {0}")]
    Setup(#[from] std::io::Error),
    /// A signal stopped the run; everything it made is gone.
    #[error("interrupted; the emulation's namespaces and devices are removed")]
    Interrupted,
    /// The kernel's traffic failed (a connection that could not be made).
    #[error("the emulated traffic failed: {0}")]
    Traffic(String),
    /// `--app` names what the scenario cannot carry.
    #[error("{0}")]
    Apps(String),
    /// A calibration could not be run or kept (`--calibrate`).
    #[error("--calibrate: {0}")]
    Calibration(String),
}

/// Sets `stop` on SIGINT and SIGTERM (the CLI's Ctrl-C): the run then ends at
/// once and everything it made goes with the process's descriptors.
pub fn stop_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    Ok(stop)
}

/// Sysctls of a namespace: SACK and ECN as the plan says; no metrics carried
/// from one connection to the next; ephemeral ports clear of the flows' ports.
fn sysctls(sack: bool, ecn: bool) -> std::io::Result<()> {
    netns::sysctl("net/ipv4/tcp_sack", if sack { "1" } else { "0" })?;
    // Programs' ephemeral ports stay above the flows' port block.
    netns::sysctl("net/ipv4/ip_local_port_range", "40000 60999")?;
    netns::sysctl("net/ipv4/tcp_ecn", if ecn { "1" } else { "2" })?;
    netns::sysctl("net/ipv4/tcp_no_metrics_save", "1")
}

/// What an emulation may keep besides its results.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Keep a copy of the first this many CE-marked packets as they were written
    /// (to check their headers).
    pub capture_marked: usize,
    /// A user's programs whose connections a flow group carries.
    pub apps: Option<apps::Apps>,
    /// The rate guard's limit; `None`: [`calibrate::Limit::current`].
    pub limit: Option<calibrate::Limit>,
}

/// An emulation's results and what [`Options`] asked to keep.
pub struct Emulated {
    pub result: RunResult,
    /// The first CE-marked packets, IPv4 headers first, as written.
    pub marked: Vec<Vec<u8>>,
    /// The senders' namespace's `TcpExt` counters over the measured interval
    /// (`TCPTimeouts`, `TCPRenoRecovery`, `TCPSackRecovery`, ...): all its
    /// flows together, as the kernel counts them.
    pub sender_tcp_ext: BTreeMap<String, u64>,
}

/// Emulates `s` in wall-clock time (its `duration` and `warmup`); `stop` ends
/// it early (an error). Needs CAP_NET_ADMIN.
pub fn emulate(s: &Scenario, stop: Arc<AtomicBool>) -> Result<RunResult, EmuError> {
    Ok(emulate_with(s, &Options::default(), stop)?.result)
}

/// [`emulate`] with [`Options`].
pub fn emulate_with(
    s: &Scenario,
    opts: &Options,
    stop: Arc<AtomicBool>,
) -> Result<Emulated, EmuError> {
    let started = Instant::now();
    let limit = opts.limit.clone().unwrap_or_else(calibrate::Limit::current);
    let mut plan = check::plan_within(s, &limit)?;
    let app_group = check::apps(s, opts.apps.as_ref(), &mut plan).map_err(EmuError::Apps)?;
    if !netns::privileged() {
        return Err(EmuError::NotPermitted);
    }
    netns::remove_stale();

    // The simulator builds the network, the qdiscs (with their random streams
    // and hash seeds), the flows' start times and UDP sources from the seed.
    let Built {
        mut net,
        groups,
        flows,
        ..
    } = build(s)?;
    let mut devices = Devices::new(&plan)?;
    let (tcp_plans, windows, paths) = flow_plans(&net, &groups, &flows, &plan, app_group);
    let maxseg = tcp_plans.iter().map(|p| p.maxseg).max().unwrap_or(1460);
    let mut traffic = Traffic::start_receivers(&devices.rcv, windows, maxseg)?;
    // A receivers' program (a server) starts first; the senders' one with the run.
    let receiver_app = apps::start_receiver(opts.apps.as_ref(), &devices.rcv)?;

    let (fwd, rev) = (net.monitored[0] as usize, net.monitored[1] as usize);
    let links = [
        Bottleneck::new(net.take_runtime(fwd)),
        Bottleneck::new(net.take_runtime(rev)),
    ];
    let kinds = [links[0].link.queue.kind(), links[1].link.queue.kind()];
    let epoch = Instant::now();
    let cfg = plane::Config {
        flows: paths,
        links,
        tun: devices.take_tuns(),
        epoch,
        warmup_ns: s.file.warmup.as_nanos(),
        end_ns: s.file.duration.as_nanos(),
        queue_interval_ns: s.monitor().queue_interval.as_nanos(),
        stop: stop.clone(),
        capture_marked: opts.capture_marked,
        apps: app_group.map(|g| apps::ConnMap::new(groups[g].first, groups[g].count)),
        stats: [fwd, rev].map(|l| observer(s, l, &groups, &flows)),
    };
    let plane = std::thread::Builder::new()
        .name("aqmlab-plane".into())
        .spawn(move || plane::run(cfg))?;
    traffic.start_senders(&devices.snd, tcp_plans, epoch)?;
    let sender_app = apps::start_sender(opts.apps.as_ref(), &devices.snd)?;
    let measured = measure(s, &traffic, &devices, epoch, &stop);
    let app_warnings = apps::finish([sender_app, receiver_app]);
    let mut outcome = plane
        .join()
        .map_err(|_| EmuError::Traffic("the data plane panicked".into()))??;
    let tun_drops = devices.tun_drops();
    let shared = traffic.finish();
    if outcome.interrupted || stop.load(Ordering::Relaxed) {
        return Err(EmuError::Interrupted);
    }
    let errors = shared.errors.lock().expect("not poisoned").clone();
    if !errors.is_empty() {
        return Err(EmuError::Traffic(errors.join("; ")));
    }
    let marked = std::mem::take(&mut outcome.marked);
    let mut warnings = plan.warnings;
    warnings.extend(shared.warnings.lock().expect("not poisoned").drain(..));
    warnings.extend(app_warnings);
    if let Some(g) = app_group {
        let (taken, refused) = outcome.app_connections;
        warnings.extend(apps::refused_warning(&groups[g], taken, refused));
    }
    warnings.extend(timeouts_warning());
    let mut result = report::build(report::Inputs {
        s,
        net: &net,
        groups: &groups,
        flows: &flows,
        kinds,
        outcome,
        at_warmup: measured.at_warmup,
        at_end: measured.at_end,
        app_group,
        shared: &shared,
        tun_drops,
        warnings,
        wall_seconds: started.elapsed().as_secs_f64(),
    });
    undercount_warning(&mut result, &measured.sender_tcp_ext);
    Ok(Emulated {
        result,
        marked,
        sender_tcp_ext: measured.sender_tcp_ext,
    })
}

/// The two namespaces, their sysctls set from the plan, and a TUN device in
/// each (senders' first), named after this process.
struct Devices {
    snd: Netns,
    rcv: Netns,
    names: [String; 2],
    tun: [Option<std::fs::File>; 2],
}

impl Devices {
    fn new(plan: &check::Plan) -> Result<Devices, EmuError> {
        let pid = std::process::id();
        let names = [format!("aq{pid}s"), format!("aq{pid}r")];
        let (snd, rcv) = (Netns::new()?, Netns::new()?);
        let (sack, ecn) = (plan.sack(), plan.ecn());
        let mut tun = [None, None];
        for (i, (ns, (here, peer))) in [
            (&snd, (SENDER_ADDR, RECEIVER_ADDR)),
            (&rcv, (RECEIVER_ADDR, SENDER_ADDR)),
        ]
        .into_iter()
        .enumerate()
        {
            let name = names[i].clone();
            tun[i] = Some(ns.run(move || {
                sysctls(sack, ecn)?;
                // The senders' device (only) hands over TSO super-packets.
                netns::tun(&name, here, peer, i == 0)
            })?);
        }
        Ok(Devices {
            snd,
            rcv,
            names,
            tun,
        })
    }

    /// Both devices, handed to the data plane (once).
    fn take_tuns(&mut self) -> [std::fs::File; 2] {
        [0, 1].map(|i| {
            self.tun[i]
                .take()
                .expect("a device per namespace, taken once")
        })
    }

    /// Packets the kernel dropped at either device's queue.
    fn tun_drops(&self) -> u64 {
        let (n0, n1) = (self.names[0].clone(), self.names[1].clone());
        self.snd.run(move || netns::tx_dropped(&n0)).unwrap_or(0)
            + self.rcv.run(move || netns::tx_dropped(&n1)).unwrap_or(0)
    }
}

/// A monitored link direction's observer, the simulator's: with sojourn times
/// per group when `[monitor] delays` asks.
fn observer(s: &Scenario, link: usize, groups: &[Group], flows: &[Flow]) -> LinkStats {
    let slots = FlowSlots::Dense {
        flows: flows.len() as u32,
    };
    let mut stats = LinkStats::new(link as u32, slots);
    if s.monitor().delays {
        let group_of: Arc<[u32]> = flows.iter().map(|f| f.group).collect();
        stats.delays = Some(Delays::new(group_of, groups.len()));
    }
    stats
}

/// What the run reads outside the data plane at the end of the warm-up and of
/// the run: the receivers' counters, and the senders' namespace's `TcpExt`
/// counters over the measured interval.
struct Measured {
    at_warmup: traffic::Snapshot,
    at_end: traffic::Snapshot,
    sender_tcp_ext: BTreeMap<String, u64>,
}

fn measure(
    s: &Scenario,
    traffic: &Traffic,
    devices: &Devices,
    epoch: Instant,
    stop: &AtomicBool,
) -> Measured {
    let wait_until = |t_ns: u64| {
        while (epoch.elapsed().as_nanos() as u64) < t_ns && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_until(s.file.warmup.as_nanos());
    let at_warmup = traffic.snapshot();
    let ext_warmup = devices.snd.run(netns::tcp_ext).unwrap_or_default();
    wait_until(s.file.duration.as_nanos());
    let at_end = traffic.snapshot();
    let ext_end = devices.snd.run(netns::tcp_ext).unwrap_or_default();
    let sender_tcp_ext = ext_end
        .into_iter()
        .map(|(k, v)| {
            let before = ext_warmup.get(&k).copied().unwrap_or(0);
            (k, v.saturating_sub(before))
        })
        .collect();
    Measured {
        at_warmup,
        at_end,
        sender_tcp_ext,
    }
}

/// Says so when this kernel's `TCP_INFO` cannot count timeouts.
fn timeouts_warning() -> Option<String> {
    (!traffic::counts_timeouts()).then(|| {
        "timeouts are not counted: this kernel's TCP_INFO has no tcpi_total_rto \
         (Linux 6.7 and later)"
            .into()
    })
}

/// Per flow: what its kernel socket is held to (its congestion control, the
/// packet size as `TCP_MAXSEG`, its start and stop; the receiver's window clamp)
/// and its path through the data plane (its access links, a UDP source).
fn flow_plans(
    net: &Network,
    groups: &[Group],
    flows: &[Flow],
    plan: &check::Plan,
    app_group: Option<usize>,
) -> (Vec<TcpPlan>, Vec<u32>, Vec<FlowPath>) {
    let mut tcp_plans = Vec::new();
    let mut windows = vec![0u32; flows.len()];
    let mut paths = Vec::with_capacity(flows.len());
    for (id, f) in flows.iter().enumerate() {
        let g = &groups[f.group as usize];
        // A program's flow: no socket or source of ours, only its path.
        let app = app_group == Some(f.group as usize);
        let pipe = |l: u32| {
            let p = net.pipe(l as usize);
            Pipe::new(p.rate, p.delay)
        };
        // The first and last links of the data's route and of the ACKs'.
        let ends = |route: &[u32]| (pipe(route[0]), pipe(route[route.len() - 1]));
        let (fwd_in, fwd_out) = ends(net.routes.route(f.fwd));
        let (rev_in, rev_out) = ends(net.routes.route(f.rev));
        let udp = match &f.endpoints {
            Endpoints::Udp(u) if !app => Some(UdpFlow {
                cfg: g.udp.clone().expect("a UDP group"),
                source: u.source.clone(),
                rng: u.rng.clone(),
                start_ns: f.start.as_nanos(),
                stop_ns: g.stop.map(|t| t.as_nanos()),
                tos: ipv4::Tos {
                    dscp: f.dscp,
                    ecn: f.ecn,
                },
            }),
            _ => None,
        };
        let probe = match &f.endpoints {
            Endpoints::Probe(_) => Some(ProbeFlow::new(
                g.probe.expect("a probe group has an interval").as_nanos(),
                f.start.as_nanos(),
                g.stop.map(|t| t.as_nanos()),
                f.packet_size,
                ipv4::Tos {
                    dscp: f.dscp,
                    ecn: f.ecn,
                },
            )),
            _ => None,
        };
        let tcp = g.udp.is_none() && probe.is_none();
        if tcp && !app {
            let maxseg = report::maxseg(g.tcp.packet_size);
            windows[id] = g
                .tcp
                .max_window
                .saturating_mul(report::payload(g.tcp.packet_size));
            let kernel = plan.tcp[f.group as usize].expect("a TCP group");
            tcp_plans.push(TcpPlan {
                flow: id,
                start_ns: f.start.as_nanos(),
                stop_ns: g.stop.map(|t| t.as_nanos()),
                congestion: kernel.congestion.to_string(),
                sack: kernel.sack,
                ecn: kernel.ecn,
                dscp: f.dscp,
                maxseg,
            });
        }
        paths.push(FlowPath {
            access: Access {
                into: [fwd_in, rev_in],
                out_of: [fwd_out, rev_out],
            },
            aggregate: f.aggregate,
            tcp,
            syn_strip: plan.syn_strip(f.group as usize),
            udp,
            probe,
            app: app.then(apps::Delivered::default),
        });
    }
    (tcp_plans, windows, paths)
}

/// Warns when the flows' fast recoveries, polled from `TCP_INFO`, fall short of
/// what the kernel counted for the senders' namespace (`TCPRenoRecovery` +
/// `TCPSackRecovery`): a busy machine delays the polls past short recoveries.
fn undercount_warning(r: &mut RunResult, ext: &BTreeMap<String, u64>) {
    let kernel = ["TCPRenoRecovery", "TCPSackRecovery"]
        .iter()
        .map(|k| ext.get(*k).copied().unwrap_or(0))
        .sum::<u64>();
    let polled: u64 = r.flows.iter().map(|f| f.fast_recoveries).sum();
    if kernel > polled + (kernel / 10).max(3) {
        if let Some(e) = r.emulation.as_mut() {
            e.warnings.push(format!(
                "fast_recoveries undercounts: the flows' polled entries into recovery \
                 add up to {polled}, the kernel counted {kernel} for all of them"
            ));
        }
    }
}
