//! Values a key may not take: negative rates, Pareto shapes, TCP packet sizes,
//! windows, and names that would escape a folder or reach a terminal.

use super::*;

#[test]
fn negative_rates_are_errors_with_a_line() {
    let e = err(&EXAMPLE.replace("rate = \"2Mbps\"", "rate = \"-2Mbps\""));
    assert!(e.contains("must not be negative"), "{e}");
    assert!(e.starts_with("s.toml:"), "{e}");
}

#[test]
fn a_pareto_shape_must_be_finite_and_above_one() {
    let onoff =
        "kind = \"onoff\"\nrate = \"2Mbps\"\non = \"1s\"\noff = \"1s\"\ndistribution = \"pareto\"";
    for shape in ["inf", "nan", "1.0", "1e6"] {
        let text = EXAMPLE.replace(
            "kind = \"cbr\"\nrate = \"2Mbps\"",
            &format!("{onoff}\nshape = {shape}"),
        );
        let e = err(&text);
        assert!(e.contains("needs 1 < shape <= 1000"), "{shape}: {e}");
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        assert!(
            text.lines().nth(line - 1).unwrap().starts_with("shape"),
            "{e}"
        );
    }
}

#[test]
fn a_tcp_packet_must_have_room_for_data_after_its_headers() {
    // 40 bytes is IPv4 + TCP headers alone: no payload, sequence numbers that
    // never advance (a capture tshark calls inconsistent).
    let tcp = |size: u32| {
        EXAMPLE.replace(
            "packet_size = 1000\nmax",
            &format!("packet_size = {size}\nmax"),
        )
    };
    let e = err(&tcp(40));
    assert!(
        e.contains("packet_size = 40 must be between 41 and 65535 bytes"),
        "{e}"
    );
    assert!(e.contains("headers are 40 bytes"), "{e}");
    let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
    assert_eq!(tcp(40).lines().nth(line - 1), Some("packet_size = 40"));
    Scenario::from_toml(&tcp(41), "s.toml").unwrap();
    // A UDP datagram of 40 bytes still has room (its headers are 28).
    let udp = EXAMPLE.replace(
        "count = 1\npacket_size = 1000",
        "count = 1\npacket_size = 40",
    );
    assert_ne!(udp, EXAMPLE);
    Scenario::from_toml(&udp, "s.toml").unwrap();
}

#[test]
fn names_that_would_escape_a_folder_or_reach_a_terminal_are_refused() {
    // A node's name becomes a pcap file name under --out; `../x` once wrote
    // outside it.
    for (node, rule) in [
        ("../x", "must not contain / or \\"),
        ("a\\\\b", "must not contain / or \\"),
        ("x->y", "must not contain ->"),
        ("", "must not be empty"),
        ("a\\u001b[31m", "control character U+001B"),
    ] {
        let text = GRAPH.replacen("\"d\"]", &format!("\"d\", \"{node}\"]"), 1);
        let e = err(&text);
        assert!(e.contains("topology.nodes[4] = "), "{node}: {e}");
        assert!(e.contains(rule), "{node}: {e}");
        assert!(e.starts_with("s.toml:6:"), "{e}");
    }
    // A group's or the scenario's name is printed in the text report.
    let text = DUMBBELL.replace("name = \"udp\"", "name = \"udp\\u001b]0;owned\\u0007\"");
    let e = err(&text);
    assert!(
        e.contains(
            "flows[1].name = \"udp\\u{1b}]0;owned\\u{7}\" contains the control character U+001B"
        ),
        "{e}"
    );
    assert!(e.starts_with("s.toml:29:"), "{e}");
    let e = err(&DUMBBELL.replace("name = \"d\"", "name = \"d\\r\""));
    assert!(
        e.starts_with("s.toml:1: name = \"d\\r\" contains the control character U+000D"),
        "{e}"
    );
    // Names that are merely unusual stay allowed.
    Scenario::from_toml(&GRAPH.replace("\"d\"", "\"d .é\""), "s.toml").unwrap();
}

#[test]
fn windows_are_bounded_and_shape_is_for_pareto_only() {
    let d = DUMBBELL;
    names_key_and_line(
        d,
        "packet_size = 1000",
        "max_window = 1000000000",
        "max_window = 1000000000 must be from 1 to",
    );
    names_key_and_line(
        d,
        "packet_size = 1000",
        "initial_window = 4294967295",
        "initial_window",
    );
    let onoff = d.replace(
        "kind = \"cbr\"\nrate = \"2Mbps\"\n",
        "kind = \"onoff\"\nrate = \"2Mbps\"\non = \"1ms\"\noff = \"1ms\"\nshape = 2.0\n",
    );
    names_key_and_line(
        &onoff,
        "shape",
        "shape = -5",
        "shape applies to distribution = \"pareto\" only",
    );
}
