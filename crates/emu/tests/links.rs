//! The bottleneck's link model in the emulator: the same schedule and loss the
//! simulator runs, on the emulator's logical clock. (Jitter runs through the
//! same model; Linux's TCP under it varied too much from run to run for a test
//! of its own: 115 and 1,121 retransmissions in two runs of one scenario.)
mod common;

fn scenario(bottleneck: &str, flows: &str) -> String {
    format!(
        r#"
name = "emu-links"
duration = "8s"
warmup = "2s"
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
[topology.bottleneck]
{bottleneck}
[qdisc]
kind = "droptail"
limit = 200
{flows}
"#
    )
}

const CBR: &str = r#"
[[flows]]
name = "udp"
kind = "cbr"
rate = "4Mbps"
packet_size = 1000
"#;

/// Bernoulli loss before the queue: the CBR flow's losses are `link_loss`, the
/// queue's none, at the configured rate within 4 binomial standard deviations.
#[test]
fn link_loss_takes_its_share_before_the_queue() {
    require_emulation!();
    let r = common::emulate(&scenario(
        "rate = \"10Mbps\"\ndelay = \"5ms\"\nloss = 0.05",
        CBR,
    ));
    let link = &r.links[0];
    let lost = link.drops["link_loss"];
    let n = (lost + link.arrivals) as f64;
    let sd = (n * 0.05 * 0.95).sqrt();
    eprintln!("lost {lost} of {n}");
    assert!(
        (lost as f64 - 0.05 * n).abs() < 4.0 * sd,
        "lost {lost} of {n}"
    );
    assert_eq!(link.drops_total, lost, "the queue dropped nothing");
    assert_eq!(r.flows[0].drops["link_loss"], lost);
}

/// A schedule: TCP's throughput follows the rate, 10 Mbit/s to 3 s, then 2.
#[test]
fn tcp_follows_a_rate_schedule() {
    require_emulation!();
    let tcp = "[[flows]]\nname = \"tcp\"\nkind = \"tcp\"\ncount = 4\nvariant = \"sack\"\n";
    let r = common::emulate(&scenario(
        "rate = { schedule = [{ at = \"0s\", rate = \"10Mbps\" }, { at = \"3s\", rate = \"2Mbps\" }] }\ndelay = \"5ms\"",
        tcp,
    ));
    // Measured from 2 s to 8 s: 1 s at 10 Mbit/s, 5 at 2: 3.33 Mbit/s at most.
    let bps = r.links[0].throughput_bps;
    eprintln!("throughput {bps}");
    assert!(bps > 0.9 * 20e6 / 6.0 && bps <= 1.01 * 20e6 / 6.0, "{bps}");
}
