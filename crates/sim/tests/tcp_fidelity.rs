//! TCP's loss recovery as ns-2 (the seed papers' simulator) and the RFCs have it,
//! asserted on whole runs: NewReno's retransmission timer during fast recovery,
//! Reno's one fast retransmit per window, and the flow keys that choose them.

use aqm::{Dur, Time};
use sim::{Scenario, Simulation};

#[track_caller]
fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(text, "test.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// Two NewReno flows over 100 Mbit/s, 40 ms round trip and a DropTail of 500
/// packets (one BDP): slow start overshoots the buffer and loses a large share of
/// one window. `keys` go into the flow group.
fn overshoot(keys: &str) -> String {
    format!(
        r#"
name = "overshoot"
duration = "200s"
warmup = "1ms"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps", delay = "1ms" }}
bottleneck = {{ rate = "100Mbps", delay = "18ms" }}
[qdisc]
kind = "droptail"
limit = 500
[[flows]]
name = "tcp"
kind = "tcp"
count = 2
max_window = 4000
start_spread = "1s"
{keys}
"#
    )
}

/// When both flows are first out of the fast recovery slow start's overshoot
/// put them in, stepping 50 ms (`None`: not by `limit`).
fn first_recovery_ends(keys: &str, limit: Time) -> Option<f64> {
    let mut sim = Simulation::new(&scenario(&overshoot(keys))).unwrap();
    let mut t = Time::ZERO;
    let mut entered = false;
    while t < limit {
        t += Dur::from_millis(50);
        sim.run_until(t, &mut |_| {});
        let recovering = (0..2).any(|f| sim.tcp_sender(f).unwrap().in_recovery());
        if recovering {
            entered = true;
        } else if entered {
            return Some(t.as_secs_f64());
        }
    }
    None
}

#[test]
fn impatient_newreno_recovers_from_slow_start_overshoot_in_seconds_not_a_minute() {
    // ns-2.35 beside aqmlab on this network: about 2 s with the impatient timer
    // (RFC 6582 step 5, ns-2's default since 2003), about 60 s with the
    // slow-but-steady one, which repairs one lost packet per round trip and
    // restarts the timer on each, so it never expires.
    let impatient = first_recovery_ends("", Time::from_secs(20)).expect("recovers");
    assert!(impatient < 5.0, "impatient: {impatient} s");
    let steady = first_recovery_ends("newreno_timer = \"slow_but_steady\"", Time::from_secs(120))
        .expect("recovers in the end");
    assert!(steady > 30.0, "slow-but-steady: {steady} s");
}

/// One Reno flow over 10 Mbit/s, 20 ms round trip, a buffer that never overflows;
/// `keys` go into the flow group.
fn one_reno(keys: &str) -> String {
    format!(
        r#"
name = "reno"
duration = "10s"
warmup = "1ms"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "8ms" }}
[qdisc]
kind = "droptail"
limit = 1000
[[flows]]
name = "tcp"
kind = "tcp"
variant = "reno"
max_window = 1000
start_spread = "0s"
{keys}
"#
    )
}

#[test]
fn reno_does_not_fast_retransmit_twice_in_one_window_unless_told_to() {
    // Packets 40 and 45 of one window are lost. Reno repairs 40 by fast
    // retransmit and leaves recovery on the ACK of 45 (partial). The duplicate
    // ACKs for 45 that follow acknowledge nothing sent after the loss, so ns-2's
    // `bugFix_` (and here `reno_bugfix`, on by default) waits for the timeout;
    // without it Reno halves its window a second time for the same window.
    let mut seen = vec![];
    for keys in ["", "reno_bugfix = false"] {
        let mut sim = Simulation::new(&scenario(&one_reno(keys))).unwrap();
        sim.inject_loss(0, 40);
        sim.inject_loss(0, 45);
        sim.run_until(Time::from_secs(3), &mut |_| {});
        let st = sim.tcp_sender(0).unwrap().stats;
        seen.push((keys, st.fast_recoveries, st.timeouts));
    }
    assert_eq!(seen, [("", 1, 1), ("reno_bugfix = false", 2, 0)]);
}

#[test]
fn the_recovery_keys_name_their_variant_and_line() {
    let e = |text: String| {
        Scenario::from_toml(&text, "t.toml")
            .unwrap_err()
            .to_string()
    };
    let msg = e(one_reno("newreno_timer = \"impatient\""));
    assert!(
        msg.contains("newreno_timer applies to variant = \"newreno\" only"),
        "{msg}"
    );
    assert!(msg.starts_with("t.toml:18:"), "{msg}");
    let msg = e(overshoot("reno_bugfix = true"));
    assert!(
        msg.contains("reno_bugfix applies to variant = \"reno\" only"),
        "{msg}"
    );
    let msg = e(overshoot("newreno_timer = \"eager\""));
    assert!(msg.contains("newreno_timer"), "{msg}");
    assert!(msg.contains("impatient"), "{msg}");
}

#[test]
fn prr_is_refused_without_sack_recovery() {
    let msg = Scenario::from_toml(&one_reno("prr = true"), "t.toml")
        .unwrap_err()
        .to_string();
    assert!(msg.starts_with("t.toml:18:"), "{msg}");
    assert!(msg.contains("prr applies to SACK recovery"), "{msg}");
}

/// `profile = "linux"` brings Linux's defaults in one key (IW 10 here), and a
/// key the group writes overrides its profile's value.
#[test]
fn the_linux_profile_sets_its_defaults_and_a_written_key_overrides_them() {
    let first_window = |keys: &str| {
        let mut sim = Simulation::new(&scenario(&one_reno(keys))).unwrap();
        sim.run_until(Time::ZERO + Dur::from_millis(1), &mut |_| {});
        sim.tcp_sender(0).unwrap().outstanding()
    };
    assert_eq!(first_window(""), 1, "ns-2's initial window");
    assert_eq!(first_window("profile = \"linux\""), 10, "Linux's");
    assert_eq!(first_window("profile = \"linux\"\ninitial_window = 4"), 4);
}

#[test]
fn a_key_that_contradicts_the_profile_or_an_unknown_profile_names_its_line() {
    let e = |keys: &str| {
        Scenario::from_toml(&overshoot(keys), "t.toml")
            .unwrap_err()
            .to_string()
    };
    let msg = e("profile = \"linux\"\ncounting = \"byte\"");
    assert!(msg.starts_with("t.toml:19:"), "{msg}");
    assert!(
        msg.contains("counting applies to profile = \"ns2\" only"),
        "{msg}"
    );
    let msg = e("profile = \"bsd\"");
    assert!(msg.starts_with("t.toml:18:"), "{msg}");
    assert!(msg.contains("profile") && msg.contains("linux"), "{msg}");
}

/// One CUBIC flow over a path that reorders (the bottleneck's delay jittered
/// by 2 ms, packets free to overtake) and never drops (a buffer far above the
/// window). The Linux profile learns that the path reorders (an original
/// delivered below a SACKed segment; DSACKs for the retransmissions): RACK's
/// window widens, the few recoveries before it did are all undone, and the
/// flow keeps the link. The `ns2` profile has neither: three duplicate ACKs
/// cut its window again and again.
#[test]
fn the_linux_profile_learns_a_reordering_path_and_undoes_what_it_cut() {
    let run = |profile: &str| {
        let text = format!(
            r#"
name = "reordering"
duration = "20s"
warmup = "1ms"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps", delay = "1ms" }}
bottleneck = {{ rate = "20Mbps", delay = {{ mean = "18ms", jitter = "2ms", reorder = true }} }}
[qdisc]
kind = "droptail"
limit = 100000
[[flows]]
name = "tcp"
kind = "tcp"
variant = "cubic"
profile = "{profile}"
packet_size = 1000
max_window = 300
"#
        );
        let mut sim = Simulation::new(&scenario(&text)).unwrap();
        sim.run(&mut |_| {});
        let s = sim.tcp_sender(0).unwrap();
        let reductions = s.stats.fast_recoveries + s.stats.timeouts;
        (reductions, u64::from(s.undos()), s.stats.sent)
    };
    // 20 Mbit/s for 20 s in 1000-byte packets.
    let link = 50_000;
    let (reductions, undos, sent) = run("linux");
    assert!(
        reductions > 0,
        "the path reorders before the window has widened"
    );
    assert_eq!(undos, reductions, "every reduction is undone");
    assert!(
        sent * 10 >= link * 9,
        "{sent} packets sent of the link's {link}"
    );
    let (ns2_reductions, ns2_undos, ns2_sent) = run("ns2");
    assert_eq!(ns2_undos, 0);
    assert!(ns2_reductions > 10 * reductions);
    assert!(ns2_sent * 2 < sent, "{ns2_sent} against {sent}");
}
