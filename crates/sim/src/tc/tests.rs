//! Command lines and expected settings from the Linux kernel's tc-testing
//! suite (`tools/testing/selftests/tc-testing/tc-tests/qdiscs/*.json`, the
//! test id in each comment), read through aqmlab's keys.
use super::*;

#[track_caller]
fn keys(line: &str) -> toml::Table {
    let q = parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    q.keys.into_iter().collect()
}

#[track_caller]
fn err(line: &str) -> String {
    parse(line).expect_err(line).to_string()
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

const DEV: &str = "$TC qdisc add dev $DUMMY handle 1: root";

#[test]
fn choke_lines_of_tc_testing() {
    // 8937: "limit 1000p min 83p max 250p" from limit alone.
    let k = keys(&format!("{DEV} choke limit 1000 bandwidth 10000"));
    assert_eq!(k["kind"], s("choke"));
    assert_eq!(k["limit"], Value::Integer(1000));
    assert_eq!(k["min_th"], Value::Float(83.0));
    assert_eq!(k["max_th"], Value::Float(250.0));
    assert_eq!(k["ecn"], Value::Boolean(false));
    assert_eq!(
        k["qlen_gate"],
        Value::Boolean(false),
        "Linux has no qlen > 1 rule"
    );
    // 48c0, 38c1, 234a, 4380.
    let k = keys(&format!("{DEV} choke limit 1000 bandwidth 10000 min 100"));
    assert_eq!(
        (&k["min_th"], &k["max_th"]),
        (&Value::Float(100.0), &Value::Float(250.0))
    );
    let k = keys(&format!("{DEV} choke limit 1000 bandwidth 10000 max 900"));
    assert_eq!(
        (&k["min_th"], &k["max_th"]),
        (&Value::Float(300.0), &Value::Float(900.0))
    );
    assert_eq!(
        keys(&format!("{DEV} choke limit 1000 bandwidth 10000 ecn"))["ecn"],
        Value::Boolean(true)
    );
    keys(&format!("{DEV} choke limit 1000 bandwidth 10000 burst 100"));
    // 4398, 0301: replace and change configure the same way.
    let k = keys(
        "$TC qdisc replace dev $DUMMY handle 1: root choke limit 1000 bandwidth 10000 min 100",
    );
    assert_eq!(k["min_th"], Value::Float(100.0));
    keys("$TC qdisc change dev $DUMMY handle 1: root choke limit 1000 bandwidth 10000 min 100");
    // q_choke.c requires limit and bandwidth.
    assert!(err(&format!("{DEV} choke limit 1000")).contains("choke needs `bandwidth`"));
}

#[test]
fn red_lines_of_tc_testing() {
    // 8b6e: "limit 1Mb min 100Kb max 300Kb" with avpkt 1500.
    let k = keys(&format!("{DEV} red limit 1M avpkt 1500 min 100K max 300K"));
    assert_eq!(k["limit"], Value::Integer(1_048_576 / 1500));
    assert_eq!(k["min_th"], Value::Float(102_400.0 / 1500.0));
    assert_eq!(k["max_th"], Value::Float(307_200.0 / 1500.0));
    assert_eq!(k["mean_pkt_size"], Value::Integer(1500));
    assert_eq!(k["max_p"], Value::Float(0.02));
    assert_eq!(k["adaptive"], Value::Boolean(false));
    // burst = (2 min + max) / (3 avpkt) = 113 packets; tc_red_eval_ewma gives
    // the first Wlog whose burst allowance covers 113 + 1 - 68.3 = 45.7
    // packets: (1 - (1 - W)^113) / W >= 45.7 first at W = 2^-6.
    assert_eq!(k["w_q"], Value::Float(1.0 / 64.0));
    // 342e, 2d4b, 650f, 5f15.
    let with = |flags: &str| {
        keys(&format!(
            "{DEV} red {flags} limit 1M avpkt 1500 min 100K max 300K"
        ))
    };
    assert_eq!(with("adaptive")["adaptive"], Value::Boolean(true));
    assert_eq!(with("ecn")["ecn"], Value::Boolean(true));
    let k = with("ecn adaptive");
    assert_eq!(
        (&k["ecn"], &k["adaptive"]),
        (&Value::Boolean(true), &Value::Boolean(true))
    );
    let q = parse(&format!(
        "{DEV} red ecn harddrop limit 1M avpkt 1500 min 100K max 300K"
    ))
    .unwrap();
    assert!(
        q.notes.iter().all(|n| !n.contains("harddrop")),
        "{:?}",
        q.notes
    );
    assert!(parse(&format!(
        "{DEV} red ecn limit 1M avpkt 1500 min 100K max 300K"
    ))
    .unwrap()
    .notes
    .iter()
    .any(|n| n.contains("harddrop")));
    // d091: tc refuses nodrop without ecn; aqmlab refuses nodrop (53e8, af8e
    // accept it with ecn in Linux), saying why.
    for flags in ["nodrop", "ecn nodrop", "ecn harddrop nodrop"] {
        let e = err(&format!(
            "{DEV} red {flags} limit 1M avpkt 1500 min 100K max 300K"
        ));
        assert!(e.contains("option `nodrop` is not modelled"), "{e}");
    }
    assert!(err(&format!("{DEV} red limit 1M min 100K")).contains("red needs `avpkt`"));
    assert!(err(&format!("{DEV} red avpkt 1000")).contains("red needs `limit`"));
}

#[test]
fn sfb_lines_of_tc_testing() {
    // 3294: "rehash 600s db 60s" by default.
    let k = keys(&format!("{DEV} sfb"));
    assert_eq!(k["rehash_period"], s("600s"));
    assert_eq!(k["warmup"], s("60s"));
    assert_eq!(k["hash"], s("double_buffered"));
    assert_eq!(
        (&k["levels"], &k["bins"]),
        (&Value::Integer(8), &Value::Integer(16))
    );
    assert_eq!(k["bin_size"], Value::Integer(20));
    assert_eq!(k["limit"], Value::Integer(1000));
    // 430a, 3410: plain numbers are milliseconds. A rehash shorter than the
    // 60 s db is accepted as Linux does: the next set then warms all the time.
    assert_eq!(
        keys(&format!("{DEV} sfb rehash 60"))["rehash_period"],
        s("60ms")
    );
    assert_eq!(
        keys(&format!("{DEV} sfb rehash 60 db 10"))["rehash_period"],
        s("60ms")
    );
    assert_eq!(keys(&format!("{DEV} sfb db 10"))["warmup"], s("10ms"));
    // 49a0, 1241, 3249, 30a9, 239a, 9301, 2a01.
    assert_eq!(
        keys(&format!("{DEV} sfb limit 100"))["limit"],
        Value::Integer(100)
    );
    assert_eq!(
        keys(&format!("{DEV} sfb max 100"))["bin_size"],
        Value::Integer(80)
    );
    assert_eq!(
        keys(&format!("{DEV} sfb target 100"))["bin_size"],
        Value::Integer(100)
    );
    assert_eq!(
        keys(&format!("{DEV} sfb increment 0.1"))["increment"],
        Value::Float(0.1)
    );
    assert_eq!(
        keys(&format!("{DEV} sfb decrement 0.1"))["decrement"],
        Value::Float(0.1)
    );
    assert_eq!(
        keys(&format!("{DEV} sfb penalty_rate 4000"))["rate_limit"],
        s("32Mbps")
    );
    assert_eq!(
        keys(&format!("{DEV} sfb penalty_burst 64"))["rate_limit_burst"],
        Value::Integer(64_000)
    );
    // 3209: change.
    keys("$TC qdisc change dev $DUMMY handle 1: root sfb rehash 100 db 50");
    // The line.
    let k = keys("tc qdisc add dev eth0 root sfb limit 1000 max 25 target 20 increment 0.0005 decrement 0.00005 penalty_rate 10 penalty_burst 20");
    assert_eq!(k["rate_limit"], s("80kbit"));
    assert_eq!(k["rate_limit_burst"], Value::Integer(20_000));
    assert!(err(&format!("{DEV} sfb increment 2")).contains("between 0 and 1"));
}

#[test]
fn fq_codel_lines_of_tc_testing() {
    // 4957: "limit 10240p flows 1024 ... target 5ms interval 100ms
    // memory_limit 32Mb ecn drop_batch 64".
    let k = keys(&format!("{DEV} fq_codel"));
    assert_eq!(k["limit"], Value::Integer(10240));
    assert_eq!(k["flows"], Value::Integer(1024));
    assert_eq!(k["target"], s("5ms"));
    assert_eq!(k["interval"], s("100ms"));
    assert_eq!(k["memory_limit"], Value::Integer(32 << 20));
    assert_eq!(k["ecn"], Value::Boolean(true));
    assert_eq!(k["drop_batch_size"], Value::Integer(64));
    // 7621, 6871, 5636 (2000 us), 630a, 4324, b190, 5381 (1.02 s), c9d2, 523b.
    assert_eq!(
        keys(&format!("{DEV} fq_codel limit 1000"))["limit"],
        Value::Integer(1000)
    );
    assert_eq!(
        keys(&format!("{DEV} fq_codel memory_limit 100000"))["memory_limit"],
        Value::Integer(100_000)
    );
    assert_eq!(
        keys(&format!("{DEV} fq_codel target 2000"))["target"],
        s("2ms")
    );
    // 630a: an interval equal to the target, accepted as Linux does.
    assert_eq!(
        keys(&format!("{DEV} fq_codel interval 5000"))["interval"],
        s("5ms")
    );
    // A target above the interval is refused (Linux takes it): the likely
    // swap of the two.
    let e = err(&format!("{DEV} fq_codel interval 4000"));
    assert!(
        e.contains("target = 5ms must not exceed interval = 4ms"),
        "{e}"
    );
    assert_eq!(
        keys(&format!("{DEV} fq_codel interval 6000"))["interval"],
        s("6ms")
    );
    assert_eq!(
        keys(&format!("{DEV} fq_codel quantum 9000"))["quantum"],
        Value::Integer(9000)
    );
    assert_eq!(
        keys(&format!("{DEV} fq_codel noecn"))["ecn"],
        Value::Boolean(false)
    );
    assert_eq!(
        keys(&format!("{DEV} fq_codel ce_threshold 1024000"))["ce_threshold"],
        s("1024ms")
    );
    assert_eq!(
        keys(&format!("{DEV} fq_codel drop_batch 100"))["drop_batch_size"],
        Value::Integer(100)
    );
    let k = keys(&format!(
        "{DEV} fq_codel limit 1000 flows 256 drop_batch 100"
    ));
    assert_eq!(
        (&k["limit"], &k["flows"]),
        (&Value::Integer(1000), &Value::Integer(256))
    );
    assert!(err(&format!("{DEV} fq_codel fast")).contains("fq_codel has no option `fast`"));
}

#[test]
fn codel_pie_sfq_and_fifo_defaults_and_units() {
    let k = keys(&format!("{DEV} codel"));
    assert_eq!(
        (&k["limit"], &k["target"], &k["interval"]),
        (&Value::Integer(1000), &s("5ms"), &s("100ms"))
    );
    let k = keys(&format!(
        "{DEV} codel limit 2000 target 3ms interval 40ms ecn ce_threshold 1ms"
    ));
    assert_eq!(
        (
            &k["limit"],
            &k["target"],
            &k["interval"],
            &k["ce_threshold"]
        ),
        (&Value::Integer(2000), &s("3ms"), &s("40ms"), &s("1ms"))
    );
    // tc's time units: "us", "usec", "s", and microseconds when bare.
    assert_eq!(
        keys(&format!("{DEV} codel target 500us"))["target"],
        s("500us")
    );
    assert_eq!(
        keys(&format!("{DEV} codel interval 1s"))["interval"],
        s("1s")
    );
    let k = keys(&format!("{DEV} pie"));
    assert_eq!((&k["target"], &k["tupdate"]), (&s("15ms"), &s("15ms")));
    assert_eq!(
        (&k["alpha"], &k["beta"]),
        (&Value::Float(0.125), &Value::Float(1.25))
    );
    let k = keys(&format!("{DEV} pie limit 512 target 20ms tupdate 30ms alpha 4 beta 32 ecn bytemode dq_rate_estimator"));
    assert_eq!(
        (&k["alpha"], &k["beta"]),
        (&Value::Float(0.25), &Value::Float(2.0))
    );
    assert_eq!(k["dq_rate_estimator"], Value::Boolean(true));
    assert!(err(&format!("{DEV} pie alpha 33")).contains("between 0 and 32"));
    let k = keys(&format!("{DEV} sfq"));
    assert_eq!(
        (&k["limit"], &k["depth"], &k["divisor"], &k["quantum"]),
        (
            &Value::Integer(127),
            &Value::Integer(127),
            &Value::Integer(1024),
            &Value::Integer(1514)
        )
    );
    let k = keys(&format!("{DEV} sfq perturb 10 quantum 3k headdrop"));
    assert_eq!(
        (&k["perturb_period"], &k["quantum"], &k["headdrop"]),
        (&s("10s"), &Value::Integer(3072), &Value::Boolean(true))
    );
    assert!(err(&format!("{DEV} sfq limit 1")).contains("at least 2"));
    // Found by fuzzing: a perturb period past Dur's range overflowed.
    assert!(err(&format!("{DEV} sfq perturb 114444444444444")).contains("below 2^32"));
    assert!(err(&format!("{DEV} sfq perturb 4000000000")).contains("below 2^31 seconds"));
    assert!(err(&format!("{DEV} sfb rehash 99999999999")).contains("below 2^32"));
    let k = keys(&format!(
        "{DEV} sfq limit 300 redflowlimit 100000 min 8000 max 60000 probability 0.2 ecn"
    ));
    assert_eq!(
        (&k["red"], &k["min_th"], &k["max_th"]),
        (
            &Value::Boolean(true),
            &Value::Float(8.0),
            &Value::Float(60.0)
        )
    );
    assert!(err(&format!("{DEV} sfq min 8000")).contains("sfq needs `redflowlimit`"));
    assert_eq!(
        keys(&format!("{DEV} pfifo limit 50"))["limit"],
        Value::Integer(50)
    );
    assert_eq!(keys(&format!("{DEV} pfifo"))["limit"], Value::Integer(1000));
    // bfifo: bytes, k = 1024.
    assert_eq!(
        keys(&format!("{DEV} bfifo limit 100k"))["limit"],
        Value::Integer(102)
    );
}

#[test]
fn rates_sizes_and_times_read_as_tc_reads_them() {
    // kbps is kilobytes per second in tc, kbit kilobits.
    assert_eq!(parse_rate("8kbps"), Ok(Rate::from_bps(64_000)));
    assert_eq!(parse_rate("8kbit"), Ok(Rate::from_bps(8_000)));
    assert_eq!(parse_rate("10Mbit"), Ok(Rate::from_mbps(10)));
    assert_eq!(parse_rate("1mbps"), Ok(Rate::from_mbps(8)));
    assert_eq!(parse_rate("10000"), Ok(Rate::from_bps(10_000)));
    assert_eq!(parse_rate("10furlongs"), Err(RateRefused::Syntax));
    assert_eq!(parse_size("1M"), Some(1 << 20));
    assert_eq!(parse_size("2kb"), Some(2048));
    assert_eq!(parse_size("1kbit"), Some(128));
    assert_eq!(parse_size("-1"), None);
    assert_eq!(parse_time("5ms"), Some(Dur::from_millis(5)));
    assert_eq!(parse_time("2000"), Some(Dur::from_millis(2)));
    assert_eq!(parse_time("1.5s"), Some(Dur::from_millis(1500)));
    assert_eq!(parse_time("3h"), None);
}

#[test]
fn bad_lines_are_errors_that_name_what_is_wrong() {
    assert!(err("tc qdisc add dev eth0 root netem delay 10ms")
        .contains("qdisc `netem` is not one aqmlab reads"));
    assert!(err("tc qdisc del dev eth0 root").contains("only `qdisc add`"));
    assert!(err("tc filter add dev eth0").contains("expected `tc qdisc add"));
    assert!(
        err("tc qdisc add dev eth0 root codel target").contains("option `target` needs a value")
    );
    assert!(err("tc qdisc add dev eth0 root codel target soon").contains("target `soon`"));
    // tc sends no limit of 0; the kernel keeps its 1000.
    assert_eq!(
        keys("tc qdisc add dev eth0 root codel limit 0")["limit"],
        Value::Integer(1000)
    );
    // The kernel's checks apply: SFQ's divisor must be a power of two.
    let e = err("tc qdisc add dev eth0 root sfq divisor 1000");
    assert!(e.contains("must be a power of two"), "{e}");
    assert!(err("tc qdisc add dev eth0 ingress").contains("`ingress` is not modelled"));
    // A line may start at the kind.
    assert_eq!(keys("codel target 2ms")["target"], s("2ms"));
}

#[test]
fn every_line_prints_a_table_that_parses_back_to_the_same_spec() {
    for line in [
            // Found by fuzzing: a NUL in the device name broke the echoed comment.
            "tc qdisc add dev eth0_\0\0\0 root sfb limit 1000",
            "tc  qdisc add\tdev eth0 root\n codel",
            "tc qdisc add dev eth0 root sfb limit 1000 max 25 target 20",
            "tc qdisc add dev eth0 root red limit 400000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.02 bandwidth 10Mbit ecn",
            "tc qdisc add dev eth0 root fq_codel",
            "tc qdisc add dev eth0 root pie",
            "tc qdisc add dev eth0 root bfifo limit 64kb",
        ] {
            let q = parse(line).unwrap();
            let text = q.to_toml();
            let table: toml::Table = toml::from_str(&text).unwrap();
            let back = QdiscSpec::deserialize(table["qdisc"].clone()).unwrap();
            assert_eq!(back, q.spec().unwrap(), "{text}");
            assert!(text.starts_with("# tc qdisc add dev eth0"), "{text}");
        }
}

#[test]
fn dualpi2_lines() {
    // tc-dualpi2(8)'s defaults, from the kind alone.
    let k = keys(&format!("{DEV} dualpi2"));
    assert_eq!(k["kind"], s("dualpi2"));
    assert_eq!(k["limit"], Value::Integer(10_000));
    assert_eq!((&k["target"], &k["tupdate"]), (&s("15ms"), &s("16ms")));
    assert_eq!(
        (&k["alpha"], &k["beta"]),
        (&Value::Float(0.16), &Value::Float(3.2))
    );
    assert_eq!(k["step_thresh"], s("1ms"));
    assert_eq!(k["coupling_factor"], Value::Integer(2));
    assert_eq!(k["classic_protection"], Value::Integer(10));
    // The options, one at a time.
    assert_eq!(
        keys(&format!("{DEV} dualpi2 limit 1000"))["limit"],
        Value::Integer(1000)
    );
    assert_eq!(
        keys(&format!("{DEV} dualpi2 target 10ms"))["target"],
        s("10ms")
    );
    assert_eq!(
        keys(&format!("{DEV} dualpi2 step_thresh 2ms"))["step_thresh"],
        s("2ms")
    );
    let k = keys(&format!("{DEV} dualpi2 step_thresh 30packets"));
    assert_eq!(k["step_thresh_packets"], Value::Integer(30));
    assert!(!k.contains_key("step_thresh"), "{k:?}");
    // The last spelling given is the one that holds.
    let k = keys(&format!("{DEV} dualpi2 step_thresh 30p step_thresh 2ms"));
    assert_eq!(k["step_thresh"], s("2ms"));
    assert!(!k.contains_key("step_thresh_packets"), "{k:?}");
    assert_eq!(
        keys(&format!("{DEV} dualpi2 any_ect"))["any_ect"],
        Value::Boolean(true)
    );
    assert_eq!(
        keys(&format!("{DEV} dualpi2 overflow"))["drop_on_overload"],
        Value::Boolean(false)
    );
    assert_eq!(
        keys(&format!("{DEV} dualpi2 drop_enqueue"))["drop_enqueue"],
        Value::Boolean(true)
    );
    assert_eq!(
        keys(&format!("{DEV} dualpi2 classic_protection 20%"))["classic_protection"],
        Value::Integer(20)
    );
    // tc keeps alpha and beta in whole 1/256 Hz.
    assert_eq!(
        keys(&format!("{DEV} dualpi2 alpha 0.3"))["alpha"],
        Value::Float(76.0 / 256.0)
    );
    // max_rtt configures the controller as tc does: typical_rtt = max_rtt / 6,
    // target = typical_rtt, tupdate = min(typical, max / 3), alpha = 0.1 tupdate /
    // max_rtt^2, beta = 0.3 / max_rtt.
    let k = keys(&format!("{DEV} dualpi2 max_rtt 100ms"));
    assert_eq!(k["target"], s("16666us"));
    assert_eq!(k["tupdate"], s("16666us"));
    assert_eq!(k["beta"], Value::Float((3.0 * 256.0f64).trunc() / 256.0));
    assert!(err(&format!("{DEV} dualpi2 memlimit 1000")).contains("memlimit"));
    assert!(err(&format!("{DEV} dualpi2 frob")).contains("frob"));
    assert!(err(&format!("{DEV} dualpi2 classic_protection 120")).contains("classic_protection"));
    assert!(err(&format!("{DEV} dualpi2 max_rtt 10ms typical_rtt 20ms")).contains("typical_rtt"));
    // The table builds a qdisc.
    parse(&format!("{DEV} dualpi2 step_thresh 5p coupling_factor 3"))
        .unwrap()
        .spec()
        .unwrap();
}

#[test]
fn cake_lines_read_as_tc_cake_reads_them() {
    let k = keys("tc qdisc add dev eth0 root cake bandwidth 20mbit besteffort flows");
    assert_eq!(k["kind"], s("cake"));
    assert_eq!(k["bandwidth"], s("20Mbps"));
    assert_eq!(k["isolation"], s("flows"));
    let spec = parse("tc qdisc add dev eth0 root cake")
        .unwrap()
        .spec()
        .unwrap();
    assert_eq!(
        spec,
        QdiscSpec::Cake(Default::default()),
        "tc's defaults are the kind's"
    );
    // RTT presets set interval and target; `rtt TIME` sets target = rtt / 20.
    let k = keys("tc qdisc add dev eth0 root cake satellite");
    assert_eq!((&k["rtt"], &k["target"]), (&s("1s"), &s("50ms")));
    let k = keys("tc qdisc add dev eth0 root cake rtt 50ms");
    assert_eq!((&k["rtt"], &k["target"]), (&s("50ms"), &s("2500us")));
    let k = keys("tc qdisc add dev eth0 root cake datacentre");
    assert_eq!((&k["rtt"], &k["target"]), (&s("100us"), &s("5us")));
    // Overhead keywords and presets; ether-vlan adds 4 to what came before.
    let k = keys("tc qdisc add dev eth0 root cake bandwidth 50mbit ethernet ether-vlan");
    assert_eq!(k["overhead"], Value::Integer(42));
    assert_eq!(
        (&k["mpu"], &k["framing"]),
        (&Value::Integer(84), &s("none"))
    );
    let k = keys("tc qdisc add dev eth0 root cake docsis ingress dual-dsthost");
    assert_eq!(k["overhead"], Value::Integer(18));
    assert_eq!(k["mpu"], Value::Integer(64));
    assert_eq!(k["ingress"], Value::Boolean(true));
    assert_eq!(k["isolation"], s("dual-dsthost"));
    let k = keys("tc qdisc add dev eth0 root cake pppoe-vcmux");
    assert_eq!(
        (&k["overhead"], &k["framing"]),
        (&Value::Integer(32), &s("atm"))
    );
    let k = keys("tc qdisc add dev eth0 root cake overhead -14 mpu 60 ptm memlimit 1mb");
    assert_eq!(k["overhead"], Value::Integer(-14));
    assert_eq!(
        (&k["framing"], &k["memlimit"]),
        (&s("ptm"), &Value::Integer(1 << 20))
    );
    let k = keys("tc qdisc add dev eth0 root cake bandwidth 10mbit unlimited");
    assert!(!k.contains_key("bandwidth"));
    let q = parse("tc qdisc add dev eth0 root cake nat wash").unwrap();
    assert_eq!(q.notes.len(), 1, "{:?}", q.notes);
    assert_eq!(
        keys("tc qdisc add dev eth0 root cake wash")["wash"],
        Value::Boolean(true)
    );
    // The tin modes, tc-cake(8)'s keywords, read into `diffserv`; the last wins.
    for mode in [
        "besteffort",
        "precedence",
        "diffserv3",
        "diffserv4",
        "diffserv8",
    ] {
        let k = keys(&format!(
            "tc qdisc add dev eth0 root cake bandwidth 20mbit {mode}"
        ));
        assert_eq!(k["diffserv"], s(mode), "{mode}");
        parse(&format!("tc qdisc add dev eth0 root cake {mode}"))
            .unwrap()
            .spec()
            .unwrap();
    }
    let k = keys("tc qdisc add dev eth0 root cake diffserv8 diffserv4");
    assert_eq!(k["diffserv"], s("diffserv4"));
}

#[test]
fn cake_refuses_what_tc_refuses_and_what_aqmlab_does_not_model_by_name() {
    let e = err("tc qdisc add dev eth0 root cake overhead 300");
    assert!(
        e.contains("overhead `300`") && e.contains("-64 to 256"),
        "{e}"
    );
    let e = err("tc qdisc add dev eth0 root cake overhead -65");
    assert!(e.contains("overhead `-65`"), "{e}");
    let e = err("tc qdisc add dev eth0 root cake mpu 257");
    assert!(e.contains("mpu `257`"), "{e}");
    let e = err("tc qdisc add dev eth0 root cake rtt soon");
    assert!(e.contains("rtt `soon`"), "{e}");
    let e = err("tc qdisc add dev eth0 root cake rtt 0");
    assert!(e.contains("rtt"), "{e}");
    let e = err("tc qdisc add dev eth0 root cake bandwidth 20mbit turbo");
    assert_eq!(e, "tc line: cake has no option `turbo`");
    assert_eq!(
        err("tc qdisc add dev eth0 root cake diffserv5"),
        "tc line: cake has no option `diffserv5`"
    );
    for o in ["autorate-ingress", "ack-filter", "fwmark 0xff"] {
        let e = err(&format!("tc qdisc add dev eth0 root cake {o}"));
        let word = o.split(' ').next().unwrap();
        assert!(e.contains(&format!("`{word}` is not modelled")), "{e}");
    }
}

#[test]
fn fq_lines_read_as_tc_fq_reads_them() {
    let spec = parse("tc qdisc add dev eth0 root fq")
        .unwrap()
        .spec()
        .unwrap();
    assert_eq!(
        spec,
        QdiscSpec::Fq(Default::default()),
        "tc's defaults are the kind's"
    );
    let k = keys(
        "tc qdisc add dev eth0 root fq limit 2000 flow_limit 50 quantum 1514 \
         initial_quantum 3028 maxrate 10mbit refill_delay 20ms nopacing ce_threshold 4ms",
    );
    assert_eq!(k["limit"], Value::Integer(2000));
    assert_eq!(k["flow_limit"], Value::Integer(50));
    assert_eq!(k["quantum"], Value::Integer(1514));
    assert_eq!(k["initial_quantum"], Value::Integer(3028));
    assert_eq!(k["maxrate"], s("10Mbps"));
    assert_eq!(k["refill_delay"], s("20ms"));
    assert_eq!(k["pacing"], Value::Boolean(false));
    assert_eq!(k["ce_threshold"], s("4ms"));
    let q = parse("tc qdisc add dev eth0 root fq buckets 4096 horizon 2s horizon_drop").unwrap();
    assert_eq!(q.notes.len(), 3, "{:?}", q.notes);
    assert_eq!(
        err("tc qdisc add dev eth0 root fq quantum 1514 turbo"),
        "tc line: fq has no option `turbo`"
    );
    assert!(
        err("tc qdisc add dev eth0 root fq weights 1 2 3").contains("`weights` is not modelled")
    );
    assert!(err("tc qdisc add dev eth0 root fq flow_limit 0").contains("flow_limit"));
}
