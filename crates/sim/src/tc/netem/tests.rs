use super::*;

fn ok(line: &str) -> Netem {
    parse(line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn err(line: &str) -> String {
    parse(line).unwrap_err().to_string()
}

/// The examples of tc-netem(8).
#[test]
fn the_manual_pages_examples() {
    let n = ok("tc qdisc add dev eth0 root netem delay 100ms");
    assert_eq!(
        (n.delay, n.jitter, n.loss, n.limit),
        (Dur::from_millis(100), Dur::ZERO, None, 1000)
    );
    let n = ok("tc qdisc change dev eth0 root netem delay 100ms 10ms");
    assert_eq!(n.jitter, Dur::from_millis(10));
    assert!(
        n.reorder,
        "netem's queue is sorted by time: jitter reorders"
    );
    let n = ok("tc qdisc change dev eth0 root netem delay 100ms 20ms distribution normal");
    assert_eq!(n.distribution, Some(Distribution::Normal));
    let n = ok("tc qdisc change dev eth0 root netem loss 0.1%");
    assert_eq!(n.loss, Some(LossSpec::Bernoulli { p: 0.001 }));
    let n = ok("tc qdisc add dev eth0 root netem rate 5kbit");
    assert_eq!(n.rate, Some(Rate::from_bps(5000)));
    let n = ok("tc qdisc add dev eth0 root netem delay 20ms 5ms rate 10mbit limit 500");
    assert!(
        !n.reorder,
        "with a rate, each packet leaves after the one before"
    );
    assert_eq!(n.limit, 500);
    // The refusals the manual's other examples get, each naming what.
    assert!(err("tc qdisc change dev eth0 root netem duplicate 1%").contains("duplicate"));
    assert!(err("tc qdisc change dev eth0 root netem corrupt 0.1%").contains("corrupt"));
    assert!(
        err("tc qdisc change dev eth0 root netem delay 10ms reorder 25% 50%").contains("reorder")
    );
    assert!(
        err("tc qdisc change dev eth0 root netem delay 100ms 10ms 25%").contains("correlation")
    );
    assert!(err("tc qdisc add dev eth0 root netem slot 800us 1000us").contains("slot"));
}

#[test]
fn gemodel_takes_netems_defaults() {
    let n = ok("netem loss gemodel 1%");
    assert_eq!(n.loss, Some(LossSpec::gemodel(0.01, None, None, None)));
    let n = ok("tc qdisc add dev eth0 root netem loss gemodel 1% 10% 70% 0.1%");
    assert_eq!(
        n.loss,
        Some(LossSpec::GilbertElliott {
            p: 0.01,
            r: 0.1,
            loss_bad: 0.7,
            loss_good: 0.001
        })
    );
    let n = ok("netem loss random 2");
    assert_eq!(
        n.loss,
        Some(LossSpec::Bernoulli { p: 0.02 }),
        "a bare number is percent"
    );
}

/// Lines of Linux's tc-testing netem cases (tools/testing/selftests/tc-testing).
#[test]
fn tc_testing_cases() {
    for (line, good) in [
        ("qdisc add dev eth0 handle 1: root netem", true),
        ("qdisc add dev eth0 handle 1: root netem limit 200", true),
        ("qdisc add dev eth0 handle 1: root netem delay 100ms", true),
        (
            "qdisc add dev eth0 handle 1: root netem delay 100ms 10ms",
            true,
        ),
        (
            "qdisc add dev eth0 handle 1: root netem delay 100ms 10ms distribution normal",
            true,
        ),
        (
            "qdisc add dev eth0 handle 1: root netem delay 100ms 10ms distribution pareto",
            true,
        ),
        (
            "qdisc add dev eth0 handle 1: root netem delay 100ms 10ms distribution paretonormal",
            true,
        ),
        ("qdisc add dev eth0 handle 1: root netem loss 1%", true),
        (
            "qdisc add dev eth0 handle 1: root netem loss gemodel 1% 2% 3% 4%",
            true,
        ),
        (
            "qdisc add dev eth0 handle 1: root netem rate 20000kbit",
            true,
        ),
        (
            "qdisc add dev eth0 handle 1: root netem loss state 1 2 3 4 5",
            false,
        ),
        (
            "qdisc add dev eth0 handle 1: root netem duplicate 1%",
            false,
        ),
        (
            "qdisc add dev eth0 handle 1: root netem rate 20000kbit 20 1000 10",
            false,
        ),
        (
            "qdisc add dev eth0 handle 1: root netem slot 10 200 packets 2000 bytes 9000",
            false,
        ),
        (
            "qdisc add dev eth0 handle 1: root netem distribution normal",
            false,
        ),
        ("qdisc add dev eth0 handle 1: root netem loss 101%", false),
        (
            "qdisc add dev eth0 handle 1: root netem frobnicate 3",
            false,
        ),
    ] {
        assert_eq!(parse(line).is_ok(), good, "{line}: {:?}", parse(line));
    }
    assert!(err("netem frobnicate 3").contains("frobnicate"));
    assert!(err("netem loss").contains("loss"));
}

#[test]
fn the_toml_says_what_the_line_does() {
    let text =
        ok("tc qdisc add dev eth0 root netem delay 20ms 5ms distribution normal loss 1%").to_toml();
    assert!(
        text.contains(
            r#"delay = { mean = "20ms", jitter = "5ms", distribution = "normal", reorder = true }"#
        ),
        "{text}"
    );
    assert!(text.contains("loss = 0.01"), "{text}");
    assert!(text.parse::<toml::Table>().is_ok(), "{text}");
}

/// What `aqmlab tc` prints for a netem line, pasted into a link's table, makes
/// the link the line does when given as the link's `netem` key.
#[test]
fn the_printed_keys_make_the_link_the_line_does() {
    let scenario = |bottleneck: &str| {
        let text = format!(
            "name = \"n\"\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\n\
             access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n[topology.bottleneck]\n\
             {bottleneck}\n[[flows]]\nname = \"a\"\nkind = \"tcp\"\n"
        );
        let s = crate::Scenario::from_toml(&text, "n.toml").unwrap_or_else(|e| panic!("{e}"));
        s.links().unwrap()
    };
    for line in [
        "tc qdisc add dev eth0 root netem delay 20ms 5ms distribution normal loss 1% rate 10mbit",
        "tc qdisc add dev eth0 root netem delay 100ms 10ms rate 5kbit",
        "netem rate 2mbit loss gemodel 1% 10% 70% 0.1%",
        "netem rate 1gbit delay 3ms",
    ] {
        let printed = super::super::describe(line).unwrap();
        assert!(
            printed.contains("# netem's queue of 1000 packets"),
            "{printed}"
        );
        assert_eq!(
            scenario(&printed),
            scenario(&format!("netem = \"{line}\"")),
            "{line}"
        );
    }
    // A qdisc line prints its table as before.
    assert!(
        super::super::describe("tc qdisc add dev eth0 root fq_codel")
            .unwrap()
            .contains("kind = \"fq_codel\"")
    );
}
