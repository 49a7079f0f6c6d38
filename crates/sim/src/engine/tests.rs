//! The two shortcuts of `forward`. Cut-through saves one `Arrive` per packet that
//! it hands on; an observed link that sends ahead saves the `TxDone` of each packet
//! nothing waits behind. Neither changes what a link, an observer or an endpoint
//! sees. With one flow no two events fall on the same nanosecond by chance, so a
//! one-flow run must deliver every packet at the same instant, and report the
//! same, with and without each, even where the next link is busy and the packet
//! has to take the normal path.

use super::ahead::NO_CUT;
use super::Simulation;
use crate::event::Event;
use crate::header::Kind;
use crate::scenario::Scenario;
use aqm::Time;
use proptest::prelude::*;

/// What a run did, for comparing runs.
#[derive(Default)]
pub struct Probe {
    /// Every packet delivered: (uid, flow, kind, when).
    pub deliveries: Vec<(u64, u32, Kind, Time)>,
    /// `TxDone` and `Arrive` events run.
    pub tx_done: u64,
    pub arrive: u64,
    /// The uids of packets handed on by cut-through.
    pub cut: Vec<u64>,
    /// How many of those would have reached the link they skip by the run's end:
    /// each saves an `Arrive`.
    pub saved: u64,
    /// Packets sent by the normal path to a link that cuts through, which would
    /// have been busy.
    pub awaited: u64,
}

impl Probe {
    pub fn on_cut(&mut self, uid: u64, handed_on: bool, by_end: bool) {
        if handed_on {
            self.cut.push(uid);
            self.saved += u64::from(by_end);
        } else {
            self.awaited += 1;
        }
    }

    pub fn count(&mut self, ev: Event) {
        match ev {
            Event::TxDone(_) => self.tx_done += 1,
            Event::Arrive(_) => self.arrive += 1,
            _ => {}
        }
    }
}

fn sim(text: &str) -> Simulation {
    let s = Scenario::from_toml(text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(&s).unwrap()
}

/// Runs `text` with and without cut-through, in `stops` pieces.
fn both(text: &str, stops: u64) -> (Simulation, Simulation) {
    let mut runs = [sim(text), sim(text)];
    runs[1].no_cut_through();
    for r in &mut runs {
        let end = r.end().as_nanos();
        for k in 1..=stops {
            r.run_until(Time::from_nanos(end / stops * k + 1_234 * k), &mut |_| {});
        }
        r.run(&mut |_| {});
    }
    let [cut, plain] = runs;
    (cut, plain)
}

fn dumbbell(flows: u32, access: &str, bottleneck: &str, extra: &str) -> String {
    format!(
        r#"
name = "cut"
duration = "20s"
warmup = "2s"
[topology]
kind = "dumbbell"
access = {{ rate = "{access}", delay = "1ms" }}
bottleneck = {{ rate = "{bottleneck}", delay = "10ms" }}
[qdisc]
kind = "droptail"
limit = 40
[[flows]]
name = "tcp"
kind = "tcp"
count = {flows}
start_spread = "1s"
{extra}
"#
    )
}

/// Same deliveries, same report, fewer events: exactly one fewer per packet cut
/// through.
#[track_caller]
fn assert_same_but_fewer_events(cut: &Simulation, plain: &Simulation) {
    assert!(cut.probe.deliveries.len() > 1000);
    assert!(
        cut.probe.deliveries == plain.probe.deliveries,
        "a packet was delivered at another instant"
    );
    let report = |s: &Simulation| {
        let mut r = s.report(0.0);
        r.events = 0;
        r
    };
    assert!(report(cut) == report(plain), "the results differ");
    assert!(plain.probe.cut.is_empty() && plain.probe.awaited == 0);
    assert!(cut.probe.saved > 0);
    assert_eq!(cut.probe.tx_done, plain.probe.tx_done);
    assert_eq!(plain.probe.arrive - cut.probe.arrive, cut.probe.saved);
    assert_eq!(plain.events() - cut.events(), cut.probe.saved);
}

/// Every packet delivered was handed on once on its way, and the others handed
/// on are still in the network.
#[track_caller]
fn assert_every_delivery_was_cut_once(s: &Simulation) {
    let mut cut = s.probe.cut.clone();
    cut.sort_unstable();
    assert!(
        cut.windows(2).all(|w| w[0] != w[1]),
        "a packet handed on twice"
    );
    let mut delivered: Vec<u64> = s.probe.deliveries.iter().map(|d| d.0).collect();
    delivered.sort_unstable();
    let mut rest = Vec::new();
    let mut d = delivered.iter().peekable();
    for uid in cut {
        if d.peek() == Some(&&uid) {
            d.next();
        } else {
            rest.push(uid);
        }
    }
    assert_eq!(d.count(), 0, "a packet delivered was not handed on");
    assert!(rest.len() <= s.packets_in_network(), "{}", rest.len());
}

#[test]
fn one_flow_is_delivered_at_the_same_instants_with_and_without_cut_through() {
    let text = dumbbell(1, "1Gbps", "10Mbps", "");
    let (cut, plain) = both(&text, 1);
    assert_same_but_fewer_events(&cut, &plain);
    // The access links are never busy when a packet reaches them: every data
    // packet delivered skipped the right router, every ACK the left one (both
    // bottleneck directions are monitored, so nothing else cuts through), and
    // those lost at the bottleneck never got that far.
    assert_every_delivery_was_cut_once(&cut);
    assert_eq!(cut.probe.awaited, 0);
}

/// Access links slower than the bottleneck: the receiver's access link is busy
/// when most data packets reach it, so they take the normal path and queue there,
/// and the packets behind them must follow them; all in the same order and at the
/// same instants as without cut-through. Run in pieces, to cover resuming.
#[test]
fn a_busy_next_link_takes_the_normal_path_and_changes_nothing() {
    let text = dumbbell(1, "6Mbps", "10Mbps", "");
    for stops in [1, 37] {
        let (cut, plain) = both(&text, stops);
        assert_same_but_fewer_events(&cut, &plain);
        let (handed_on, awaited) = (cut.probe.cut.len(), cut.probe.awaited);
        assert!(handed_on > 500 && awaited > 500, "{handed_on} {awaited}");
    }
}

/// A chain a -> b -> c -> d -> e whose link `i` has `rate[i]` and the extra keys
/// `extra[i]`, unmonitored unless they say otherwise, with a TCP flow a -> e.
fn chain(rate: [&str; 4], extra: [&str; 4]) -> String {
    let mut text = String::from(
        "name = \"chain\"\nduration = \"10s\"\n[topology]\nkind = \"graph\"\n\
         nodes = [\"a\", \"b\", \"c\", \"d\", \"e\"]\n",
    );
    let nodes = ["a", "b", "c", "d", "e"];
    for i in 0..4 {
        let (from, to, rate, extra) = (nodes[i], nodes[i + 1], rate[i], extra[i]);
        let monitor = if extra.contains("monitor") {
            ""
        } else {
            "monitor = false\n"
        };
        text += &format!(
            "[[topology.links]]\nfrom = \"{from}\"\nto = \"{to}\"\nrate = \"{rate}\"\n\
             delay = \"1ms\"\n{monitor}{extra}\n"
        );
    }
    text + "[[flows]]\nname = \"x\"\nkind = \"tcp\"\nfrom = \"a\"\nto = \"e\"\n"
}

/// A chain of links each fed by the one before: a packet is handed on across
/// several links at once, some slower than the one before it (busy, so the normal
/// path), and a link whose qdisc is not a FIFO in the middle.
#[test]
fn a_chain_of_single_input_links_is_crossed_in_one_go() {
    let rates = ["20Mbps", "10Mbps", "8Mbps", "100Mbps"];
    let (cut, plain) = both(&chain(rates, [""; 4]), 3);
    assert_same_but_fewer_events(&cut, &plain);
    let (handed_on, awaited) = (cut.probe.cut.len(), cut.probe.awaited);
    assert!(handed_on > 1000 && awaited > 100, "{handed_on} {awaited}");
    let red = chain(rates, ["", "", "qdisc = { kind = \"red\" }", ""]);
    let (cut, plain) = both(&red, 3);
    assert_same_but_fewer_events(&cut, &plain);
}

/// In a dumbbell of several flows a data packet and its ACK cost 5 events, not 7:
/// the `Arrive` at the right router (data) and at the left router (ACK) are gone.
/// The data: `Arrive` left, the bottleneck's `TxDone`, `Arrive` at the receiver;
/// the ACK: `Arrive` right and `Arrive` at the sender (the reverse bottleneck,
/// observed, sends ahead each ACK that finds it idle: all but a few).
#[test]
fn a_dumbbell_packet_and_its_ack_cost_two_events_fewer() {
    let text = dumbbell(3, "1Gbps", "10Mbps", "max_window = 8");
    let (cut, plain) = both(&text, 1);
    let packets =
        |s: &Simulation, kind| s.probe.deliveries.iter().filter(|d| d.2 == kind).count() as u64;
    let (data, acks) = (packets(&cut, Kind::Data), packets(&cut, Kind::Ack));
    assert!(data > 10_000 && acks > 10_000);
    assert_every_delivery_was_cut_once(&cut);
    assert_eq!(cut.probe.awaited, 0);
    let per_pair = |s: &Simulation| (s.probe.tx_done + s.probe.arrive) as f64 / data as f64;
    let (before, after) = (per_pair(&plain), per_pair(&cut));
    assert!((before - after - 2.0).abs() < 0.01, "{before} {after}");
    assert!((4.9..5.01).contains(&after), "{after}");
}

/// Only a link fed by exactly one link, unobserved and sending ahead, cuts through:
/// never a monitored bottleneck, a first hop (fed by a host), a monitored link,
/// a captured one or one whose qdisc is not a plain FIFO.
#[test]
fn only_an_unobserved_fifo_fed_by_one_link_cuts_through() {
    let cuts = |s: &Simulation| {
        (0..s.net.links.len())
            .filter(|&l| s.cut[l] != NO_CUT)
            .map(|l| s.link_name(l))
            .collect::<Vec<_>>()
    };
    let mut s = sim(&dumbbell(2, "1Gbps", "10Mbps", ""));
    assert_eq!(cuts(&s), ["left->s0", "right->r0", "left->s1", "right->r1"]);
    let path = std::env::temp_dir().join(format!("aqmlab-cut-{}.pcap", std::process::id()));
    let r1 = s.find_link("right->r1").unwrap();
    s.capture(r1, &path).unwrap();
    assert_eq!(cuts(&s), ["left->s0", "right->r0", "left->s1"]);
    s.finish_capture().unwrap();
    std::fs::remove_file(&path).ok();

    let rates = ["1Mbps"; 4];
    let s = sim(&chain(rates, [""; 4]));
    let all = ["b->a", "b->c", "c->b", "c->d", "d->c", "d->e"];
    assert_eq!(cuts(&s), all);
    let red = "qdisc = { kind = \"red\" }";
    let s = sim(&chain(rates, ["", red, "monitor = true", ""]));
    assert_eq!(cuts(&s), ["b->a", "c->b", "d->e"]);
}

/// Runs `text` with observed links sending ahead and without, in `stops` pieces;
/// at every stop the two reports must be equal (a stop can fall inside a
/// transmission sent ahead, or after a deferred end no event has told yet).
fn both_observed(text: &str, stops: u64) -> (Simulation, Simulation) {
    let mut runs = [sim(text), sim(text)];
    runs[1].no_observed_send_ahead();
    let end = runs[0].end().as_nanos();
    let report = |s: &Simulation| {
        let mut r = s.report(0.0);
        r.events = 0;
        r
    };
    for k in 1..=stops {
        for r in &mut runs {
            r.run_until(Time::from_nanos(end / stops * k + 1_234 * k), &mut |_| {});
        }
        assert!(
            report(&runs[0]) == report(&runs[1]),
            "the results differ at stop {k}"
        );
    }
    for r in &mut runs {
        r.run(&mut |_| {});
    }
    let [ahead, plain] = runs;
    (ahead, plain)
}

/// `text` with every `[monitor]` observer on.
fn all_observers(text: &str) -> String {
    format!(
        "{text}\n[monitor]\nflow_series = \"100ms\"\ndelays = true\nqueue_interval = \"10ms\"\n"
    )
}

/// Runs `text` (every observer on) with and without observed links sending ahead:
/// the same deliveries, the same report at every stop and at the end; returns the
/// two counts of `TxDone` events. Only those: a packet sent ahead reaches
/// `put_on_wire` as its transmission starts, not as it ends, so a link it may cut
/// through to is judged from an earlier state, when a packet still awaited there
/// may send it by the normal path (one `Arrive` more; nothing else differs).
#[track_caller]
fn observed_send_ahead_runs(text: &str, stops: u64) -> (u64, u64) {
    let (ahead, plain) = both_observed(&all_observers(text), stops);
    // Equal rates and 1 ms delays put arrivals on a grid, where a data packet
    // and an ACK reach their two ends at one nanosecond; sending ahead may swap
    // the two, which neither end can tell (but the uids of the packets they make
    // next follow that order). So deliveries are compared as sets per instant,
    // without uids (the saved cases of equal 4 Mbit/s links found this).
    let by_time = |s: &Simulation| {
        let mut d: Vec<_> = s
            .probe
            .deliveries
            .iter()
            .map(|&(_, flow, kind, at)| (at, flow, kind as u8))
            .collect();
        d.sort_unstable();
        d
    };
    assert!(
        by_time(&ahead) == by_time(&plain),
        "a packet was delivered at another instant"
    );
    let tx_done = (ahead.probe.tx_done, plain.probe.tx_done);
    let mut r = ahead.into_report(0.0);
    let mut p = plain.into_report(0.0);
    assert!(!r.flow_series.is_empty() && !r.delays.is_empty());
    (r.events, p.events) = (0, 0);
    assert!(r == p, "the results differ");
    tx_done
}

/// Same deliveries, same report, fewer `TxDone`s.
#[track_caller]
fn assert_observed_send_ahead_changes_nothing(text: &str) {
    for stops in [1, 37] {
        let (ahead, plain) = observed_send_ahead_runs(text, stops);
        assert!(ahead < plain, "{ahead} {plain}");
    }
}

/// Both bottleneck directions are observed; the reverse one sends every ACK
/// ahead, the forward one whenever its queue is empty.
#[test]
fn an_observed_bottleneck_that_sends_ahead_reports_the_same() {
    assert_observed_send_ahead_changes_nothing(&dumbbell(1, "1Gbps", "10Mbps", ""));
    assert_observed_send_ahead_changes_nothing(&dumbbell(1, "6Mbps", "10Mbps", ""));
}

/// Every link of a chain observed, some slower than the one before (a backlog,
/// then idle again), one a RED (it never sends ahead).
#[test]
fn observed_links_of_a_chain_that_send_ahead_report_the_same() {
    let rates = ["20Mbps", "10Mbps", "8Mbps", "100Mbps"];
    let m = "monitor = true";
    assert_observed_send_ahead_changes_nothing(&chain(rates, [m; 4]));
    let red = "monitor = true\nqdisc = { kind = \"red\" }";
    assert_observed_send_ahead_changes_nothing(&chain(rates, [m, red, m, m]));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any chain of four links, each observed or not, of any rate, a DropTail of any
    /// limit or a RED, crossed by TCP and maybe a CBR, stopped anywhere: observed
    /// links that send ahead report what they would without.
    #[test]
    fn observed_links_that_send_ahead_report_the_same_anywhere(
        rates in prop::collection::vec(prop::sample::select(&["1Mbps", "4Mbps", "10Mbps", "40Mbps"][..]), 4),
        observed in prop::collection::vec(any::<bool>(), 4),
        limits in prop::collection::vec(1u32..60, 4),
        red in 0usize..6,
        cbr in prop::option::of(prop::sample::select(&["500kbit", "3Mbps"][..])),
        stops in 1u64..40,
    ) {
        let extra: Vec<String> = (0..4)
            .map(|i| {
                let qdisc = if i == red {
                    "qdisc = { kind = \"red\" }".to_string()
                } else {
                    format!("qdisc = {{ kind = \"droptail\", limit = {} }}", limits[i])
                };
                let monitor = if observed[i] { "monitor = true\n" } else { "" };
                format!("{monitor}{qdisc}")
            })
            .collect();
        let rate: [&str; 4] = std::array::from_fn(|i| rates[i]);
        let mut text = chain(rate, std::array::from_fn(|i| extra[i].as_str()));
        text = text.replace("duration = \"10s\"", "duration = \"4s\"\nwarmup = \"1s\"");
        if let Some(rate) = cbr {
            text += &format!(
                "[[flows]]\nname = \"u\"\nkind = \"cbr\"\nrate = \"{rate}\"\nfrom = \"a\"\nto = \"e\"\n"
            );
        }
        // The results and deliveries are asserted identical inside; the count
        // of `TxDone`s is not a property (see the next test).
        if observed.iter().any(|&o| o) {
            observed_send_ahead_runs(&text, stops);
        }
    }
}

/// Sending ahead saves an observed link's `TxDone`, but the links after it then
/// judge cut-through from an earlier state and take the normal path more often:
/// on a chain of equal links with one-packet queues and a CBR, that costs more
/// events than it saves. Results stay identical; only the event count differs
/// (the case proptest found, kept so that a change of it is seen).
#[test]
fn sending_ahead_before_one_packet_queues_changes_events_not_results() {
    let extra = [
        "qdisc = { kind = \"droptail\", limit = 3 }",
        "qdisc = { kind = \"droptail\", limit = 1 }",
        "monitor = true\nqdisc = { kind = \"droptail\", limit = 1 }",
        "qdisc = { kind = \"droptail\", limit = 1 }",
    ];
    let mut text = chain(["4Mbps"; 4], extra);
    text = text.replace("duration = \"10s\"", "duration = \"4s\"\nwarmup = \"1s\"");
    text += "[[flows]]\nname = \"u\"\nkind = \"cbr\"\nrate = \"3Mbps\"\nfrom = \"a\"\nto = \"e\"\n";
    let (ahead, plain) = observed_send_ahead_runs(&text, 1);
    eprintln!("TxDone events: {ahead} sending ahead, {plain} without");
}

/// A shaper that holds packets (CAKE's `bandwidth` below the link's rate) is
/// asked again when it says (`Qdisc::wake_at`): the bottleneck carries the
/// shaped rate, not the link's, and never stalls with packets queued.
#[test]
fn a_shaped_cake_sends_at_its_bandwidth_not_the_links() {
    let text = dumbbell(4, "1gbit", "100mbit", "").replace(
        "kind = \"droptail\"\nlimit = 40",
        "kind = \"cake\"\nbandwidth = \"20mbit\"",
    );
    let mut s = sim(&text);
    s.run(&mut |_| {});
    let r = s.report(0.0);
    let link = r
        .links
        .iter()
        .find(|l| l.qdisc == "cake")
        .expect("the bottleneck");
    let got = link.throughput_bps;
    assert!(
        (got - 20e6).abs() < 0.05 * 20e6,
        "{got} bit/s through a 20 Mbit/s shaper"
    );
}

/// A queue sample at `t` is the queue after every event of `t`: on a trace
/// link whose opportunities fall on the sampling instants, the packet that
/// leaves at the sample's instant is not counted, as the link's counts do not.
#[test]
fn a_queue_sample_reads_the_queue_after_its_instants_departures() {
    let trace = std::env::temp_dir().join(format!("aqmlab-tick-{}.up", std::process::id()));
    std::fs::write(&trace, "10\n").unwrap(); // one 1,500-byte opportunity every 10 ms
    let mut s = sim(&format!(
        r#"
name = "tick"
duration = "1s"
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = {{ trace = {trace:?} }}, delay = "5ms" }}
[qdisc]
kind = "droptail"
limit = 1000
[monitor]
queue_interval = "10ms"
[[flows]]
name = "cbr"
kind = "cbr"
rate = "5Mbps"
packet_size = 1500
start_spread = "0s"
stop = "300ms"
"#
    ));
    let _ = std::fs::remove_file(&trace);
    let monitored = s.obs.links[0].link as usize;
    let mut checked = 0;
    for k in 1..100u64 {
        let t = Time::from_nanos(k * 10_000_000);
        s.run_until(t, &mut |_| {});
        let sample = *s.obs.links[0].samples.last().unwrap();
        assert_eq!(sample.0, t.as_secs_f64(), "a sample at every tick");
        let queued = s.net.links[monitored].qdisc.len() as u32;
        assert_eq!(sample.1, queued, "at {t}");
        checked += u32::from(queued > 0);
    }
    // The queue grew while the source sent and drained one packet a tick after.
    assert!(checked > 50, "{checked}");
}
