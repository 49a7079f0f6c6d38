//! Probes through the emulator: ICMP echo requests the data plane sends, the
//! receivers' kernel answers, and whose RTTs it takes. On an idle path a probe's
//! RTT is the path's, as simulated; beside bulk TCP it is the queue's delay
//! behind a FIFO and close to the path's under FQ-CoDel, which serves a sparse
//! flow first: latency under load as Flent measures it.
mod common;

use sim::results::{FlowResult, ProbeStats};

/// Two CUBIC flows (none with `bulk = 0`) and a probe every 20 ms on a 10
/// Mbit/s, 10 ms path, under `qdisc`.
fn scenario(qdisc: &str, bulk: u32) -> String {
    let tcp = if bulk > 0 {
        format!("[[flows]]\nname = \"bulk\"\nkind = \"tcp\"\nvariant = \"cubic\"\ncount = {bulk}\n")
    } else {
        String::new()
    };
    format!(
        r#"
name = "probes"
duration = "5s"
warmup = "2s"
qdisc = {qdisc}
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}
[[flows]]
name = "ping"
kind = "probe"
interval = "20ms"
packet_size = 64
{tcp}"#
    )
}

fn probe_row(flows: &[FlowResult]) -> &ProbeStats {
    let f = flows.iter().find(|f| f.group == "ping").unwrap();
    f.probe.as_ref().expect("a probe row")
}

#[test]
fn an_idle_path_gives_the_simulated_rtt() {
    require_emulation!();
    let text = scenario("{ kind = \"droptail\", limit = 100 }", 0);
    let simulated = common::simulate(&text);
    let emulated = common::emulate(&text);
    let (s, e) = (probe_row(&simulated.flows), probe_row(&emulated.flows));
    eprintln!("simulated {s:?}\nemulated {e:?}\n{:?}", emulated.emulation);
    // 3 s of probes every 20 ms: 150 sent, all echoed on an idle path.
    assert_eq!(e.sent, s.sent);
    assert!((149..=150).contains(&e.sent), "{}", e.sent);
    assert_eq!(e.lost, 0);
    assert!(e.echoed + 1 >= e.sent, "{} of {}", e.echoed, e.sent);
    // The kernel's echo and the plane's reading of it add microseconds.
    let (sp50, ep50) = (s.rtt_p50_s.unwrap(), e.rtt_p50_s.unwrap());
    assert!(ep50 >= sp50 - 1e-6, "{ep50} against {sp50}");
    assert!(ep50 < sp50 + 1e-3, "{ep50} against {sp50}");
    let row = emulated.groups.get("ping").unwrap();
    assert_eq!(
        row.probe.as_ref().unwrap().sent,
        e.sent,
        "the group pools its flows"
    );
}

#[test]
fn behind_a_fifo_probes_wait_in_the_queue_and_fq_codel_serves_them_first() {
    require_emulation!();
    let fifo = common::emulate(&scenario("{ kind = \"droptail\", limit = 200 }", 2));
    let fq = common::emulate(&scenario("{ kind = \"fq_codel\" }", 2));
    let base = fifo
        .flows
        .iter()
        .find(|f| f.group == "ping")
        .unwrap()
        .base_rtt_s;
    let (f, q) = (probe_row(&fifo.flows), probe_row(&fq.flows));
    eprintln!("base {base}\nfifo {f:?}\nfq_codel {q:?}");
    // Two CUBIC flows keep a 200-packet FIFO (240 ms at 10 Mbit/s) well filled.
    assert!(f.rtt_p50_s.unwrap() > base + 0.05, "{f:?}");
    // FQ-CoDel: the probe is a new flow each time; it waits for at most the
    // packet in transmission and a quantum of a bulk flow (a few ms).
    assert!(q.rtt_p50_s.unwrap() < base + 0.005, "{q:?}");
    assert!(q.rtt_p99_s.unwrap() < f.rtt_p50_s.unwrap(), "{q:?}");
    for p in [f, q] {
        assert!(p.echoed + p.lost <= p.sent);
        assert!(p.echoed >= p.sent * 9 / 10, "{p:?}");
    }
    // Probes are left out of the TCP fairness and the fair shares.
    let ping = fq.flows.iter().find(|f| f.group == "ping").unwrap();
    assert_eq!(ping.fair_share_bps, 0.0);
}
