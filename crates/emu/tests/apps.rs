//! Your own programs through the emulated path (`aqmlab emulate --app GROUP
//! --receiver-cmd LINE -- CMD`): a Python server in the receivers' namespace and
//! a client in the senders' that sends without pause cross the scenario's
//! FQ-CoDel beside the scenario's own CUBIC flow; the client's connection is
//! reported as the first flow of the named group and gets its fair share.
mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const SCENARIO: &str = r#"
name = "apps"
duration = "6s"
warmup = "2s"
qdisc = { kind = "fq_codel" }
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
[[flows]]
name = "bulk"
kind = "tcp"
variant = "cubic"
[[flows]]
name = "app"
kind = "tcp"
count = 2
"#;

/// The server: it says it listens by creating `READY` (the namespaces share the
/// file system), so that the client's first connection is the one that counts:
/// a connection refused before the server listened would take a flow too.
const SERVER: &str = "python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"198.19.0.1\", 6000))
s.listen()
open(\"READY\", \"w\").close()
while True:
    c, _ = s.accept()
    while c.recv(1 << 16):
        pass
'";

const CLIENT: &str = "
import os, socket, time
while not os.path.exists(\"READY\"):
    time.sleep(0.02)
c = socket.create_connection((\"198.19.0.1\", 6000))
data = b\"x\" * 65536
while True:
    c.sendall(data)
";

fn apps(group: &str) -> emu::apps::Apps {
    // A readiness file of this run's own.
    let ready =
        std::env::temp_dir().join(format!("aqmlab-apps-ready-{}-{group}", std::process::id()));
    let _ = std::fs::remove_file(&ready);
    let ready = ready.to_str().expect("a UTF-8 temporary path");
    emu::apps::Apps {
        group: group.into(),
        sender: vec![
            "python3".into(),
            "-c".into(),
            CLIENT.replace("READY", ready).into(),
        ],
        receiver: Some(SERVER.replace("READY", ready)),
    }
}

fn emulate(group: &str) -> Result<sim::RunResult, emu::EmuError> {
    let opts = emu::Options {
        apps: Some(apps(group)),
        ..common::options()
    };
    let s = common::scenario(SCENARIO);
    emu::emulate_with(&s, &opts, Arc::new(AtomicBool::new(false))).map(|e| e.result)
}

#[test]
fn a_programs_connection_crosses_the_qdisc_as_a_flow_of_its_group() {
    require_emulation!();
    let r = emulate("app").unwrap();
    for f in &r.flows {
        eprintln!(
            "flow {} ({}): goodput {:.0} sent {} delivered {} drops {}",
            f.id, f.group, f.goodput_bps, f.sent, f.delivered, f.drops_total
        );
    }
    let warnings = &r.emulation.as_ref().unwrap().warnings;
    eprintln!("{warnings:?}");
    let (bulk, client, unused) = (&r.flows[0], &r.flows[1], &r.flows[2]);
    assert_eq!(
        (client.group.as_str(), unused.group.as_str()),
        ("app", "app")
    );
    // One connection took the group's first flow; the second stayed free.
    assert!(
        client.delivered > 100 && client.sent >= client.delivered,
        "{client:?}"
    );
    assert_eq!((unused.sent, unused.delivered), (0, 0));
    // FQ-CoDel splits the link between the two connections.
    let share = client.goodput_bps / (client.goodput_bps + bulk.goodput_bps);
    assert!((0.35..0.65).contains(&share), "the program's share {share}");
    assert!(r.links[0].utilization > 0.9, "{}", r.links[0].utilization);
    // Both programs run until the end and are stopped, and the run says so.
    for who in ["senders'", "receivers'"] {
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with(&format!("the {who} command was still running"))),
            "{warnings:?}"
        );
    }
}

#[test]
fn app_names_a_tcp_or_udp_group_of_the_scenario() {
    let e = emulate("nope").unwrap_err().to_string();
    assert!(
        e.starts_with("--app nope: the scenario has no flow group named \"nope\""),
        "{e}"
    );
    assert!(e.contains("\"bulk\", \"app\""), "{e}");
}

/// iperf3, as the distribution ships it, through CHOKe beside an unresponsive
/// CBR flow: its server in the receivers' namespace, its client with two
/// streams in the senders'. Its control connection and both streams take the
/// group's flows; both ends finish on their own, so the run has nothing to say
/// of them.
#[test]
fn iperf3_runs_through_choke_and_finishes_cleanly() {
    require_emulation!();
    if std::process::Command::new("iperf3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: iperf3 is not installed");
        return;
    }
    let text = r#"
name = "iperf3"
duration = "6s"
warmup = "1s"
qdisc = { kind = "choke", limit = 200, min_th = 20, max_th = 60 }
[topology]
kind = "dumbbell"
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
[[flows]]
name = "cbr"
kind = "cbr"
rate = "4Mbps"
[[flows]]
name = "iperf"
kind = "tcp"
count = 3
"#;
    let opts = emu::Options {
        apps: Some(emu::apps::Apps {
            group: "iperf".into(),
            sender: ["iperf3", "-c", "198.19.0.1", "-t", "5", "-P", "2"]
                .map(Into::into)
                .to_vec(),
            receiver: Some("iperf3 -s -1".into()),
        }),
        ..common::options()
    };
    let s = common::scenario(text);
    let r = emu::emulate_with(&s, &opts, Arc::new(AtomicBool::new(false)))
        .unwrap()
        .result;
    let warnings = &r.emulation.as_ref().unwrap().warnings;
    eprintln!("{warnings:?}");
    let streams: Vec<_> = r
        .flows
        .iter()
        .filter(|f| f.group == "iperf" && f.goodput_bps > 3e5)
        .collect();
    for f in &r.flows {
        eprintln!("flow {} ({}): goodput {:.0}", f.id, f.group, f.goodput_bps);
    }
    // The control connection carries a few hundred bytes; the streams the data.
    assert_eq!(streams.len(), 2, "two streams carry the data");
    assert!(
        !warnings.iter().any(|w| w.contains("command")),
        "both ends finished cleanly: {warnings:?}"
    );
}
