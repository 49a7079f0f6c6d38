//! What the kernel's TCP reports: timeouts and fast recoveries per flow, and
//! BBR, which only the emulator runs.
mod common;

/// Eight Linux Reno flows (no SACK) and a CBR flow at twice the link under
/// FQ-CoDel: the TCP flows both time out and recover fast, many times.
const RECOVERING: &str = r#"
name = "recovering"
duration = "7s"
warmup = "2s"
qdisc = { kind = "fq_codel" }
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "5ms" }
[[flows]]
name = "tcp"
kind = "tcp"
count = 8
max_window = 200
[[flows]]
name = "udp"
kind = "cbr"
rate = "20Mbps"
"#;

/// The per-flow `timeouts` add up to what the kernel counted for the senders'
/// whole namespace (`TcpExt` `TCPTimeouts`) over the measured interval, give
/// or take the events between a flow's last `TCP_INFO` sample and the
/// namespace's reading at either end. `fast_recoveries`, polled, never
/// count more than the kernel's `TCPRenoRecovery` + `TCPSackRecovery`, find
/// most of them, and a warning says when they fall short.
#[test]
fn timeouts_and_fast_recoveries_are_the_kernels() {
    require_emulation!();
    let e = common::emulate_counted(RECOVERING);
    let r = &e.result;
    if !emu::traffic::counts_timeouts() {
        eprintln!("skipped: this kernel's TCP_INFO has no tcpi_total_rto");
        return;
    }
    let ext = |k: &str| e.sender_tcp_ext.get(k).copied().unwrap_or(0);
    let timeouts: u64 = r.flows.iter().map(|f| f.timeouts).sum();
    let recoveries: u64 = r.flows.iter().map(|f| f.fast_recoveries).sum();
    let kernel_timeouts = ext("TCPTimeouts");
    let kernel_recoveries = ext("TCPRenoRecovery") + ext("TCPSackRecovery");
    eprintln!(
        "timeouts {timeouts} (kernel {kernel_timeouts}), fast recoveries \
         {recoveries} (kernel {kernel_recoveries})"
    );
    assert!(kernel_timeouts > 0 && kernel_recoveries > 0);
    let close = |a: u64, b: u64| a.abs_diff(b) <= (b / 10).max(3);
    assert!(close(timeouts, kernel_timeouts));
    assert!(recoveries <= kernel_recoveries + 3);
    assert!(recoveries * 2 >= kernel_recoveries);
    let warned = r
        .emulation
        .as_ref()
        .unwrap()
        .warnings
        .iter()
        .any(|w| w.contains("fast_recoveries undercounts"));
    assert_eq!(warned, !close(recoveries, kernel_recoveries));
    for f in r.flows.iter().filter(|f| f.kind == "tcp") {
        assert!(f.timeouts + f.fast_recoveries > 0, "flow {}", f.id);
    }
}

const BBR: &str = r#"
name = "bbr"
duration = "5s"
warmup = "2s"
qdisc = { kind = "droptail", limit = 50 }
flows = [{ name = "bulk", kind = "tcp", count = 2, variant = "bbr", start_spread = "0s" }]
[monitor]
tcp_trace = "100ms"
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
"#;

/// `variant = "bbr"` runs Linux's BBR when emulated and the simulator's model
/// of it (sim's `tcp::bbr`) when simulated: both fill the link, and both
/// traces carry BBR's estimates (the kernel's through `TCP_CC_INFO`).
#[test]
fn bbr_is_emulated_and_simulated() {
    let sim = sim::run_scenario(&common::scenario(BBR), &mut |_| {}).expect("simulates bbr");
    assert!(
        sim.links[0].utilization > 0.9,
        "{}",
        sim.links[0].utilization
    );
    bbr_estimates_are_the_paths(&sim);
    require_emulation!();
    let r = common::emulate(BBR);
    let link = &r.links[0];
    assert!(link.utilization > 0.9, "utilization {}", link.utilization);
    assert!(r.flows.iter().all(|f| f.goodput_bps > 1e6));
    bbr_estimates_are_the_paths(&r);
}

/// Once past start-up, each flow's bandwidth estimate is some of the 10 Mbit/s
/// link and no more than all of it (with BBR's probing gain), and its minimum
/// RTT is the path's 24 ms plus at most a full queue.
fn bbr_estimates_are_the_paths(r: &sim::RunResult) {
    let link_pps = 10e6 / 8.0 / 1000.0; // 1000-byte packets, the default
    let late: Vec<_> = r.tcp_trace.iter().filter(|s| s.t_s >= 2.0).collect();
    assert!(!late.is_empty());
    for s in late {
        let bw = s.bbr_bw_pps.expect("a BBR flow's bandwidth estimate");
        let min_rtt = s.bbr_min_rtt_s.expect("a BBR flow's minimum RTT");
        assert!(bw > 0.05 * link_pps && bw < 1.3 * link_pps, "{s:?}");
        assert!((0.023..0.1).contains(&min_rtt), "{s:?}");
        assert!(s.pacing_rate_pps.is_some(), "{s:?}");
    }
}
