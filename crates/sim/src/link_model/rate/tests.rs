use super::*;

fn ms(v: u64) -> Time {
    Time::from_nanos(v * 1_000_000)
}

#[test]
fn traces_read_as_mahimahi_writes_them() {
    let t = DeliveryTrace::parse("1\n1\n3\n\n4\n").unwrap();
    assert_eq!(t.len(), 4);
    assert_eq!(t.period(), Dur::from_millis(4));
    // Opportunities repeat with the last timestamp as period.
    let times: Vec<Time> = (0..8).map(|k| t.at(k)).collect();
    assert_eq!(
        times,
        [ms(1), ms(1), ms(3), ms(4), ms(5), ms(5), ms(7), ms(8)]
    );
    assert_eq!(t.first_from(ms(2)), 2);
    assert_eq!(t.first_from(ms(4)), 3);
    assert_eq!(t.first_from(Time::from_nanos(4_000_001)), 4);
    assert_eq!(t.mean_rate(), Rate::from_bps(4 * 1500 * 8 * 1000 / 4));
}

#[test]
fn bad_traces_name_their_line() {
    let e = DeliveryTrace::parse("1\n5\n3\n").unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    let e = DeliveryTrace::parse("1\nten\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().contains("not a whole number"), "{e}");
    assert!(DeliveryTrace::parse("\n\n").is_err());
    assert_eq!(DeliveryTrace::parse("0\n0\n").unwrap_err().line, 2);
}

/// A trace path may name any file: an error names the line and what kind of
/// wrong it is, never the line's text, and no control byte reaches a terminal.
#[test]
fn a_bad_line_is_never_quoted() {
    let secrets = [
        "root:$6$pepper$saltedhash:19000:0:99999:7:::",
        "PATH=/usr/bin\0HOME=/root\0SECRET_TOKEN=hunter2\0",
        "\x1b]0;owned\x07\x1b[2J",
        "12ab",
        "7 # a comment",
    ];
    for secret in secrets {
        let e = DeliveryTrace::parse(&format!("1\n2\n{secret}\n9\n")).unwrap_err();
        let shown = e.to_string();
        assert_eq!(e.line, 3, "{shown}");
        assert!(shown.contains("line 3"), "{shown}");
        for word in secret.split(|c: char| !c.is_ascii_alphanumeric()) {
            assert!(
                word.len() < 3 || !shown.contains(word),
                "{shown} quotes {word:?}"
            );
        }
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
    }
    // Numbers that are not whole milliseconds are told apart, still unquoted.
    let e = DeliveryTrace::parse("1\n-5\n").unwrap_err().to_string();
    assert!(e.contains("negative") && !e.contains("-5"), "{e}");
    let e = DeliveryTrace::parse("1\n2.5\n").unwrap_err().to_string();
    assert!(e.contains("fraction") && !e.contains("2.5"), "{e}");
    let e = DeliveryTrace::parse("1\n99999999999999999999999\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("too large") && !e.contains("9999"), "{e}");
}

/// A trace is a link's rate: one whose mean rounds to 0 bit/s, or whose period
/// does not fit in nanoseconds, is refused at its last line.
#[test]
fn a_trace_too_sparse_to_send_is_refused() {
    for text in [
        "1\n1000000000000\n",
        "5\n5\n5\n50000000\n",
        "\n12000001\n\n",
    ] {
        let e = DeliveryTrace::parse(text).unwrap_err();
        assert_eq!(e.line, text.trim_end().lines().count(), "{text:?}: {e}");
        assert!(e.to_string().contains("below 1 bit/s"), "{e}");
    }
    let e = DeliveryTrace::parse("1\n18446744073709551\n").unwrap_err();
    assert!(e.to_string().contains("beyond the last timestamp"), "{e}");
    // The sparsest that still sends: 1,500 bytes every 12,000 s is 1 bit/s.
    let t = DeliveryTrace::parse("12000000\n").unwrap();
    assert_eq!(t.mean_rate(), Rate::from_bps(1));
}

/// A backlogged link sends exactly its opportunities' bytes in every second.
#[test]
fn a_backlogged_trace_link_sends_exactly_its_opportunities() {
    // A varying trace: 1 to 9 opportunities a millisecond, period 1 s.
    let text: String = (1..=1000u64)
        .flat_map(|m| std::iter::repeat_n(m, (1 + (m * 7919) % 9) as usize))
        .map(|m| format!("{m}\n"))
        .collect();
    let trace = Arc::new(DeliveryTrace::parse(&text).unwrap());
    for size in [1500u64, 1000, 40, 9000] {
        let mut tx = Transmitter::new(LinkRate::Trace(trace.clone()));
        let mut t = Time::ZERO;
        let mut sent_by_second = [0u64; 3];
        loop {
            let done = tx.finish(t, size);
            let second = (done.as_nanos() / 1_000_000_000) as usize;
            if second >= 3 {
                break;
            }
            sent_by_second[second] += size;
            t = done; // backlogged: the next starts when this one has left
        }
        for (s, &sent) in sent_by_second.iter().enumerate() {
            let from = Time::from_secs(s as u64);
            let per_second = trace.count(from, from + Dur::from_secs(1)) * OPPORTUNITY_BYTES;
            // Exact up to the one packet that straddles a second's end.
            assert!(
                sent.abs_diff(per_second) <= size,
                "size {size}, second {s}: {sent} vs {per_second}"
            );
        }
        let total: u64 = sent_by_second.iter().sum();
        let want = trace.count(Time::ZERO, Time::from_secs(3)) * OPPORTUNITY_BYTES;
        assert!(
            total.abs_diff(want) <= size,
            "size {size}: {total} vs {want}"
        );
    }
}

#[test]
fn an_idle_link_loses_the_opportunities_no_packet_waited_for() {
    let trace = Arc::new(DeliveryTrace::parse("1\n2\n3\n4\n").unwrap());
    let mut tx = Transmitter::new(LinkRate::Trace(trace));
    assert_eq!(tx.finish(ms(0), 1000), ms(1));
    // 500 bytes left at 1 ms, but the next packet comes at 2.5 ms: they are gone.
    assert_eq!(tx.finish(Time::from_nanos(2_500_000), 1000), ms(3));
    // Backlogged: the next packet uses what 3 ms left, then 4 ms.
    assert_eq!(tx.finish(ms(3), 400), ms(3));
    assert_eq!(tx.finish(ms(3), 200), ms(4));
}

#[test]
fn a_schedule_integrates_the_rate_under_a_packet() {
    let s = RateSchedule::new(vec![
        (Time::ZERO, Rate::from_mbps(10)),
        (ms(10), Rate::from_mbps(2)),
        (ms(20), Rate::from_bps(0)),
        (ms(30), Rate::from_mbps(1)),
    ])
    .unwrap();
    // 1000 bytes at 10 Mbit/s: 0.8 ms.
    assert_eq!(s.finish(Time::ZERO, 1000), Time::from_nanos(800_000));
    // Starts 0.4 ms before the step: half at 10 Mbit/s, the other 4000 bits at 2.
    assert_eq!(
        s.finish(Time::from_nanos(9_600_000), 1000),
        Time::from_nanos(12_000_000)
    );
    // Across the outage: 1 ms of 2 Mbit/s (2000 bits), then 6000 bits at 1 Mbit/s after 30 ms.
    assert_eq!(s.finish(ms(19), 1000), ms(36));
    assert_eq!(s.rate_at(ms(25)), Rate::from_bps(0));
    let stuck = RateSchedule::new(vec![
        (Time::ZERO, Rate::from_mbps(1)),
        (ms(1), Rate::from_bps(0)),
    ])
    .unwrap();
    assert_eq!(stuck.finish(ms(1), 1), Time::MAX);
    assert!(RateSchedule::new(vec![(ms(1), Rate::from_mbps(1))]).is_err());
    assert!(RateSchedule::new(vec![
        (Time::ZERO, Rate::from_mbps(1)),
        (Time::ZERO, Rate::from_mbps(2))
    ])
    .is_err());
}

#[test]
fn a_constant_rate_is_the_links_rate_as_before() {
    let r = Rate::from_mbps(10);
    let mut tx = Transmitter::new(LinkRate::Constant(r));
    assert_eq!(tx.finish(ms(5), 1234), ms(5) + r.tx_time(1234));
    let steady = RateSchedule::new(vec![(Time::ZERO, r)]).unwrap();
    for bytes in [1u64, 40, 1000, 1500, 65535] {
        assert_eq!(
            steady.finish(ms(3), bytes),
            ms(3) + r.tx_time(bytes),
            "{bytes}"
        );
    }
}

#[test]
fn a_traces_rate_is_measured_over_the_last_window() {
    // 10 opportunities a millisecond for 100 ms, then 1.
    let text: String = (1..=200u64)
        .flat_map(|m| std::iter::repeat_n(m, if m <= 100 { 10 } else { 1 }))
        .map(|m| format!("{m}\n"))
        .collect();
    let tx = Transmitter::new(LinkRate::Trace(Arc::new(
        DeliveryTrace::parse(&text).unwrap(),
    )));
    // [1 ms, 101 ms) holds the milliseconds 1 to 100; [101 ms, 201 ms) 101 to 200.
    assert_eq!(tx.rate_at(ms(101)), Rate::from_bps(10 * 1500 * 8 * 1000));
    assert_eq!(tx.rate_at(ms(201)), Rate::from_bps(1500 * 8 * 1000));
}

/// A trace's peak is its busiest window, which a mean hides: 100 opportunities
/// in one millisecond of a 10 s period.
#[test]
fn a_traces_peak_is_its_busiest_window() {
    let mut text = "5000\n".repeat(100);
    text.push_str("10000\n");
    let t = DeliveryTrace::parse(&text).unwrap();
    let window = Dur::from_millis(100);
    assert_eq!(t.mean_rate(), Rate::from_bps(101 * 12_000 / 10));
    assert_eq!(t.peak_rate(window), Rate::from_bps(100 * 12_000 * 10));
    // An even trace peaks at its mean.
    let even = DeliveryTrace::parse("1\n2\n3\n4\n").unwrap();
    assert_eq!(even.peak_rate(window), even.mean_rate());
}
