//! What the emulator can honour of a scenario, decided before anything starts:
//! refusals name the key and its line; keys that only tune the simulator's TCP
//! model become warnings in the results.

use crate::calibrate::Limit;
use crate::ipv4::SynStrip;
use crate::plane::PORT_BASE;
use sim::runner::LinkRate;
use sim::scenario::{EcnSetting, FlowKind, KeyPath, TcpKeys, Topology, Traffic};
use sim::tcp::{TcpConfig, Variant};
use sim::{Scenario, ScenarioError};

/// Flows the port plan has room for.
pub const MAX_FLOWS: usize = (u16::MAX - PORT_BASE) as usize / 2;
/// The smallest TCP packet Linux will send at full size (its minimum MSS, 88
/// bytes, plus the IP and TCP headers and timestamps).
pub const MIN_TCP_PACKET: u32 = 140;

/// The shortest emulation: the senders connect and the data plane starts in
/// wall-clock time, which a run of nanoseconds does not leave them.
pub const MIN_DURATION: aqm::Dur = aqm::Dur::from_millis(100);

/// How the kernel runs one TCP group.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct KernelTcp {
    /// The `TCP_CONGESTION` name.
    pub congestion: &'static str,
    /// Whether the group's connections negotiate SACK.
    pub sack: bool,
    /// Whether they negotiate ECN (RFC 3168).
    pub ecn: bool,
}

/// How the kernel runs the scenario's TCP.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Per group: how the kernel runs it (TCP groups only).
    pub tcp: Vec<Option<KernelTcp>>,
    /// Keys the kernel does not take, each named.
    pub warnings: Vec<String>,
}

impl Plan {
    /// `net.ipv4.tcp_sack` in both namespaces: on when any group wants SACK.
    pub fn sack(&self) -> bool {
        self.tcp.iter().flatten().any(|t| t.sack)
    }

    /// `net.ipv4.tcp_ecn = 1` in both namespaces: when any group wants ECN.
    pub fn ecn(&self) -> bool {
        self.tcp.iter().flatten().any(|t| t.ecn)
    }

    /// What the data plane strips from the SYNs of group `g`'s connections:
    /// what the namespaces' sysctls would negotiate and the group does not want.
    /// A SYN without SACK-permitted sets a connection up without SACK, one
    /// without ECE and CWR without ECN, as a middlebox that strips them would.
    pub fn syn_strip(&self, g: usize) -> SynStrip {
        self.tcp[g].map_or(SynStrip::default(), |t| SynStrip {
            sack: self.sack() && !t.sack,
            ecn: self.ecn() && !t.ecn,
        })
    }
}

/// Linux's congestion control for a simulator variant, and whether it wants SACK:
/// Reno and NewReno are Linux `reno` without SACK (Linux recovers as NewReno
/// does), SACK is `reno` with SACK, CUBIC is `cubic` with SACK, BBR `bbr` (v1)
/// with SACK; `None` for what the kernel has no module for. A `match` without a
/// fallback, so a new variant must be decided here.
fn kernel_variant(v: Variant) -> Option<(&'static str, bool)> {
    Some(match v {
        Variant::Reno | Variant::NewReno => ("reno", false),
        Variant::Sack => ("reno", true),
        Variant::Cubic => ("cubic", true),
        Variant::Bbr => ("bbr", true),
        Variant::Bbr3 | Variant::Dctcp | Variant::Prague => return None,
    })
}

/// Checks `s` and says how the kernel will run it.
pub fn plan(s: &Scenario) -> Result<Plan, ScenarioError> {
    plan_within(s, &Limit::current())
}

/// [`plan`] with the rate guard's `limit`.
pub fn plan_within(s: &Scenario, limit: &Limit) -> Result<Plan, ScenarioError> {
    check_links(s, limit)?;
    check_size(s)?;
    let mut plan = Plan {
        tcp: Vec::new(),
        warnings: Vec::new(),
    };
    for i in 0..s.file.flows.len() {
        let kernel = plan_group(s, i, &mut plan.warnings)?;
        plan.tcp.push(kernel);
    }
    let m = s.monitor();
    for (key, set) in [
        ("flow_series", m.flow_series.is_some()),
        ("objects", m.objects),
        ("events", m.events),
    ] {
        if set {
            plan.warnings
                .push(format!("monitor.{key} is not recorded by the emulator"));
        }
    }
    Ok(plan)
}

/// The group `apps` names, if any (see [`app_group`]), taken out of the
/// kernel's plan: the programs choose their own TCP, so the group's settings
/// neither set the namespaces' sysctls nor strip their SYNs.
pub fn apps(
    s: &Scenario,
    apps: Option<&crate::apps::Apps>,
    plan: &mut Plan,
) -> Result<Option<usize>, String> {
    let Some(a) = apps else {
        return Ok(None);
    };
    let g = app_group(s, &a.group)?;
    plan.tcp[g] = None;
    Ok(Some(g))
}

/// The index of the flow group `--app` names, whose flows the programs'
/// connections take: a TCP or UDP group of the scenario.
pub fn app_group(s: &Scenario, name: &str) -> Result<usize, String> {
    let groups = &s.file.flows;
    let Some(i) = groups.iter().position(|g| g.get_ref().name == name) else {
        let names: Vec<String> = groups
            .iter()
            .map(|g| format!("\"{}\"", g.get_ref().name))
            .collect();
        return Err(format!(
            "--app {name}: the scenario has no flow group named \"{name}\" (its groups: {})",
            names.join(", ")
        ));
    };
    let kind = groups[i].get_ref().kind();
    if matches!(kind, FlowKind::Probe | FlowKind::Web) {
        return Err(format!(
            "--app {name}: the group is of kind \"{}\"; a program's connections take the \
             flows of a TCP or UDP group (kind = \"tcp\", \"cbr\", \"poisson\" or \"onoff\")",
            kind.name()
        ));
    }
    Ok(i)
}

/// A dumbbell whose access links are plain, and whose bottleneck stays within
/// the rate the emulator keeps time at in either direction (`limit`).
fn check_links(s: &Scenario, limit: &Limit) -> Result<(), ScenarioError> {
    if !matches!(s.file.topology.get_ref(), Topology::Dumbbell { .. }) {
        return Err(s.error_at(
            &KeyPath::top("topology").key("kind"),
            "topology.kind = \"graph\": aqmlab emulate runs dumbbells only; \
             simulate graphs with aqmlab run"
                .into(),
        ));
    }
    let mut links = s.links()?;
    let (access, acc_fwd, acc_rev) = links.swap_remove(1);
    if !(acc_fwd.is_plain() && acc_rev.is_plain()) {
        return Err(s.error_at(
            &access,
            format!(
                "{access}: aqmlab emulate models the bottleneck's trace, schedule, loss \
                 and jitter, not an access link's; simulate it with aqmlab run"
            ),
        ));
    }
    let Some(max_bps) = limit.rate_bps() else {
        return Ok(());
    };
    let (_, fwd, rev) = links.swap_remove(0);
    // The highest rate either direction reaches (every schedule step, a trace's
    // busiest window), not its first or mean one: time is kept at the peak.
    for (key, dir) in [("rate", &fwd), ("reverse_rate", &rev)] {
        let peak = dir.peak_rate();
        if peak.bps() > max_bps {
            let how = match dir.rate {
                LinkRate::Constant(_) => "",
                LinkRate::Schedule(_) => " at its highest step",
                LinkRate::Trace(_) => " in its busiest 100 ms",
            };
            return Err(s.error_at(
                &KeyPath::top("topology").key("bottleneck").key(key),
                format!(
                    "topology.bottleneck.{key} reaches {} bit/s{how}, above the {} Mbit/s \
                     {}",
                    peak.bps(),
                    max_bps / 1_000_000,
                    limit.explain()
                ),
            ));
        }
    }
    Ok(())
}

/// A run long enough to start, and no more flows than there are ports.
fn check_size(s: &Scenario) -> Result<(), ScenarioError> {
    let f = &s.file;
    if f.duration < MIN_DURATION {
        return Err(s.error_at(
            &KeyPath::top("duration"),
            format!(
                "duration = {}: an emulation runs in wall-clock time and needs at least \
                 {MIN_DURATION} to start its namespaces' traffic",
                f.duration
            ),
        ));
    }
    // The group whose flows pass the ports there are is the one to blame.
    let mut total = 0usize;
    for (i, g) in f.flows.iter().enumerate() {
        total += g.get_ref().count as usize;
        if total > MAX_FLOWS {
            return Err(s.error_at(
                &KeyPath::top("flows").index(i).key("count"),
                format!(
                    "flows[{i}].count = {}: {total} flows in all by this group; the emulator \
                     gives each a port and has room for {MAX_FLOWS}",
                    g.get_ref().count
                ),
            ));
        }
    }
    Ok(())
}

/// Checks flow group `i` and, for a TCP group, says how the kernel runs it;
/// keys the kernel does not take are named in `warnings`.
fn plan_group(
    s: &Scenario,
    i: usize,
    warnings: &mut Vec<String>,
) -> Result<Option<KernelTcp>, ScenarioError> {
    let spec = s.file.flows[i].get_ref();
    let at = KeyPath::top("flows").index(i);
    let kind = spec.kind();
    let size = spec.packet_size();
    if size > crate::netns::MTU {
        return Err(s.error_at(
            &at.key("packet_size"),
            format!(
                "flows[{i}].packet_size = {size} is above the devices' MTU of {}",
                crate::netns::MTU
            ),
        ));
    }
    if kind == FlowKind::Web {
        return Err(s.error_at(
            &at.key("kind"),
            format!(
                "flows[{i}].kind = \"web\": web objects are not emulated (bulk TCP \
                 and UDP are); simulate them with aqmlab run"
            ),
        ));
    }
    let Traffic::Tcp(tcp) = &spec.traffic else {
        // UDP and probe packets are the plane's own: any codepoint.
        return Ok(None);
    };
    if spec.ecn == Some(EcnSetting::Ect1) {
        return Err(s.error_at(
            &at.key("ecn"),
            format!(
                "flows[{i}].ecn = \"ect1\": Linux TCP sends ECT(0) (ECT(1) only for \
                 Prague, which is not emulated); simulate it with aqmlab run, or make \
                 the group UDP"
            ),
        ));
    }
    if size < MIN_TCP_PACKET {
        return Err(s.error_at(
            &at.key("packet_size"),
            format!(
                "flows[{i}].packet_size = {size}: Linux TCP sends packets of at least \
                 {MIN_TCP_PACKET} bytes"
            ),
        ));
    }
    let variant = tcp.variant.name();
    let Some((cc, sack)) = kernel_variant(tcp.variant) else {
        return Err(s.error_at(
            &at.key("variant"),
            format!(
                "flows[{i}].variant = \"{variant}\" is simulation-only: the emulator \
                 runs the kernel's reno, cubic and bbr; simulate it with aqmlab run"
            ),
        ));
    };
    warnings.extend(not_applied(i, tcp));
    Ok(Some(KernelTcp {
        congestion: cc,
        sack,
        ecn: spec.codepoint().is_ect(),
    }))
}

/// The TCP keys of group `i` written with a value other than Linux's: the kernel
/// runs the Linux profile whatever the group asks, so each is named.
fn not_applied(i: usize, tcp: &TcpKeys) -> Vec<String> {
    let linux = TcpConfig::linux(tcp.variant);
    let differs = |written: Option<bool>, linux: bool| written.is_some_and(|w| w != linux);
    let ignored = [
        (
            "initial_window",
            tcp.initial_window
                .is_some_and(|w| w != linux.initial_window),
        ),
        ("min_rto", tcp.min_rto != linux.min_rto),
        ("delayed_ack", differs(tcp.delayed_ack, linux.delayed_ack)),
        (
            "delack_timeout",
            tcp.delack_timeout
                .is_some_and(|d| d != linux.delack_timeout),
        ),
        (
            "limited_transmit",
            differs(tcp.limited_transmit, linux.limited_transmit),
        ),
        ("counting", tcp.counting.is_some()),
        ("hystart", differs(tcp.hystart, linux.hystart)),
        ("pacing", tcp.pacing.is_some()),
        ("prr", differs(tcp.prr, linux.prr)),
    ];
    ignored
        .into_iter()
        .filter(|&(_, set)| set)
        .map(|(key, _)| format!("flows[{i}].{key} is not applied: Linux TCP uses its own"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan of a dumbbell with one TCP group of `keys`.
    fn plan_of(keys: &str) -> Result<Plan, String> {
        let text = format!(
            "name = \"e\"\nduration = \"2s\"\n\n[topology]\nkind = \"dumbbell\"\n\
             access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n\
             bottleneck = {{ rate = \"10Mbps\", delay = \"5ms\" }}\n\n\
             [[flows]]\nname = \"a\"\nkind = \"tcp\"\n{keys}\n"
        );
        let s = Scenario::from_toml(&text, "s.toml").unwrap();
        plan(&s).map_err(|e| e.to_string())
    }

    #[test]
    fn simulation_only_variants_and_ect1_are_refused_by_key_and_line() {
        for v in ["dctcp", "prague", "bbr3"] {
            let e = plan_of(&format!("variant = \"{v}\"")).unwrap_err();
            assert!(e.starts_with("s.toml:12: flows[0].variant"), "{e}");
            assert!(e.contains("simulation-only"), "{e}");
        }
        let e = plan_of("ecn = \"ect1\"").unwrap_err();
        assert!(e.starts_with("s.toml:12: flows[0].ecn = \"ect1\""), "{e}");
        // ECT(0) is what the kernel sends: accepted, with ECN on.
        assert!(plan_of("ecn = \"ect0\"").unwrap().ecn());
    }

    /// Groups that differ in SACK and ECN are emulated side by side: the
    /// namespaces turn on what any group wants, and the SYNs of the groups that
    /// do not want it are stripped of it.
    #[test]
    fn groups_differing_in_sack_and_ecn_are_planned_with_stripped_syns() {
        let text = "name = \"e\"\nduration = \"2s\"\n[topology]\nkind = \"dumbbell\"\n\
                    access = { rate = \"100Mbps\", delay = \"1ms\" }\n\
                    bottleneck = { rate = \"10Mbps\", delay = \"5ms\" }\n\
                    [[flows]]\nname = \"a\"\nkind = \"tcp\"\nvariant = \"cubic\"\necn = true\n\
                    [[flows]]\nname = \"b\"\nkind = \"tcp\"\nvariant = \"newreno\"\n\
                    [[flows]]\nname = \"u\"\nkind = \"cbr\"\nrate = \"1Mbps\"\n\
                    [[flows]]\nname = \"c\"\nkind = \"tcp\"\nvariant = \"sack\"\n";
        let s = Scenario::from_toml(text, "s.toml").unwrap();
        let p = plan(&s).unwrap();
        assert!(p.sack() && p.ecn());
        let strip = |sack, ecn| SynStrip { sack, ecn };
        assert_eq!(p.syn_strip(0), strip(false, false));
        assert_eq!(p.syn_strip(1), strip(true, true));
        assert_eq!(p.syn_strip(2), strip(false, false), "UDP has no SYN");
        assert_eq!(p.syn_strip(3), strip(false, true));
        // One setting for every group: the sysctls alone, nothing stripped.
        let p = plan_of("variant = \"newreno\"").unwrap();
        assert!(!p.sack() && !p.ecn());
        assert!(!p.syn_strip(0).any());
    }

    #[test]
    fn a_probe_group_is_planned_beside_tcp_and_a_web_group_is_refused_at_its_kind() {
        let text = |kind: &str| {
            format!(
                "name = \"e\"\nduration = \"2s\"\n\n[topology]\nkind = \"dumbbell\"\n\
                 access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n\
                 bottleneck = {{ rate = \"10Mbps\", delay = \"5ms\" }}\n\n\
                 [[flows]]\nname = \"bulk\"\nkind = \"tcp\"\n\n\
                 [[flows]]\nname = \"ping\"\nkind = \"{kind}\"\n"
            )
        };
        let s = Scenario::from_toml(&text("probe"), "s.toml").unwrap();
        let p = plan(&s).unwrap();
        assert_eq!(p.tcp.len(), 2);
        assert!(p.tcp[1].is_none(), "a probe is no TCP group");
        let s = Scenario::from_toml(&(text("web") + "object_size = 10\n"), "s.toml").unwrap();
        let e = plan(&s).unwrap_err().to_string();
        assert!(e.starts_with("s.toml:15: flows[1].kind = \"web\""), "{e}");
    }

    /// The plan of a dumbbell whose bottleneck table (line 7 on) is `bottleneck`,
    /// read from a file in `dir` (so a trace beside it is found).
    fn plan_with_bottleneck(dir: &std::path::Path, bottleneck: &str) -> Result<Plan, String> {
        let text = format!(
            "name = \"e\"\nduration = \"2s\"\n[topology]\nkind = \"dumbbell\"\n\
             access = {{ rate = \"1Gbps\", delay = \"1ms\" }}\n[topology.bottleneck]\n\
             {bottleneck}\n[[flows]]\nname = \"a\"\nkind = \"tcp\"\n"
        );
        let file = dir.join("s.toml");
        std::fs::write(&file, text).unwrap();
        let s = Scenario::from_path(&file).map_err(|e| e.to_string())?;
        plan_within(&s, &Limit::BuiltIn).map_err(|e| e.to_string())
    }

    /// A duration too short to start the traffic, and more flows than ports,
    /// are refused at their keys' lines.
    #[test]
    fn a_duration_too_short_and_too_many_flows_are_refused_at_their_lines() {
        let text = |duration: &str, counts: &[u32]| {
            let mut t = format!(
                "name = \"e\"\nduration = \"{duration}\"\n[topology]\nkind = \"dumbbell\"\n\
                 access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n\
                 bottleneck = {{ rate = \"10Mbps\", delay = \"5ms\" }}\n"
            );
            for (i, c) in counts.iter().enumerate() {
                t.push_str(&format!(
                    "[[flows]]\nname = \"g{i}\"\nkind = \"cbr\"\nrate = \"1kbit\"\ncount = {c}\n"
                ));
            }
            Scenario::from_toml(&t, "s.toml").map(|s| plan(&s).map_err(|e| e.to_string()))
        };
        for d in ["1ns", "99ms", "0.05s"] {
            let e = text(d, &[1]).unwrap().unwrap_err();
            assert!(e.starts_with("s.toml:2: duration = "), "{d}: {e}");
        }
        text("100ms", &[1]).unwrap().unwrap();
        // Each group is 5 lines from line 7; the third passes the bound.
        let half = MAX_FLOWS as u32 / 2;
        let e = text("1s", &[half, 2, half]).unwrap().unwrap_err();
        assert!(e.starts_with("s.toml:21: flows[2].count = "), "{e}");
        text("1s", &[half, MAX_FLOWS as u32 - half])
            .unwrap()
            .unwrap();
    }

    /// The guard on the bottleneck's rate reads the highest rate it reaches: a
    /// schedule's every step, a trace's busiest window, the reverse direction.
    #[test]
    fn the_rate_guard_reads_the_highest_rate_either_direction_reaches() {
        let dir = std::env::temp_dir().join(format!("aqmlab-guard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let refused = |bottleneck: &str, line: usize, key: &str| {
            let e = plan_with_bottleneck(&dir, bottleneck).unwrap_err();
            assert!(
                e.contains(&format!("s.toml:{line}: topology.bottleneck.{key} reaches")),
                "{e}"
            );
            e
        };
        let e = refused(
            "delay = \"1ms\"\nrate = { schedule = [{ at = \"0s\", rate = \"10Mbps\" }, \
             { at = \"1s\", rate = \"10Gbps\" }] }",
            8,
            "rate",
        );
        assert!(e.contains("10000000000 bit/s at its highest step"), "{e}");
        refused(
            "rate = { schedule = [{ at = \"0s\", rate = \"5Mbit\" }, { at = \"500ms\", \
             rate = \"0.2Gbit\" }, { at = \"1s\", rate = \"1Mbit\" }] }\ndelay = \"1ms\"",
            7,
            "rate",
        );
        refused(
            "rate = \"10Mbps\"\ndelay = \"1ms\"\nreverse_rate = \"101Mbps\"",
            9,
            "reverse_rate",
        );
        // A trace of mean 1.2 Mbit/s with 1,000 opportunities in one millisecond.
        let mut trace = "3000\n".repeat(1000);
        trace.push_str("10000\n");
        std::fs::write(dir.join("burst.up"), trace).unwrap();
        let e = refused(
            "rate = { trace = \"burst.up\" }\ndelay = \"1ms\"",
            7,
            "rate",
        );
        assert!(e.contains("busiest 100 ms"), "{e}");
        // What stays under the bound is emulated.
        plan_with_bottleneck(
            &dir,
            "delay = \"1ms\"\nrate = { schedule = [{ at = \"0s\", rate = \"1Mbps\" }, \
             { at = \"1s\", rate = \"100Mbps\" }] }",
        )
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
