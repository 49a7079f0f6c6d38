//! A `[qdisc]` table: written as a `tc` line, and keys of another kind refused.

use super::*;

#[test]
fn a_qdisc_table_may_be_a_tc_line() {
    let red = "kind = \"red\"\nlimit = 300\nmin_th = 100\nmax_th = 200\n";
    assert!(EXAMPLE.contains(red));
    let line = "tc qdisc add dev eth0 root fq_codel limit 1000 target 2ms noecn";
    let text = EXAMPLE.replace(red, &format!("tc = \"{line}\"\n"));
    let s = Scenario::from_toml(&text, "s.toml").unwrap();
    let got = s.file.qdisc.unwrap().into_inner();
    assert_eq!(got, crate::tc::parse(line).unwrap().spec().unwrap());
    assert_eq!(got.kind(), "fq_codel");
    // The line's errors, and keys beside it, are errors at their line.
    let text = EXAMPLE.replace(red, "tc = \"tc qdisc add dev eth0 root codel fast\"\n");
    let e = err(&text);
    assert!(e.contains("codel has no option `fast`"), "{e}");
    assert!(e.starts_with("s.toml:"), "{e}");
    let text = EXAMPLE.replace(red, "tc = \"codel\"\nlimit = 5\n");
    let e = err(&text);
    assert!(e.contains("`limit` cannot stand beside it"), "{e}");
}

#[test]
fn keys_of_another_kind_are_rejected() {
    let e = err(&EXAMPLE.replace("rate = \"2Mbps\"", "rate = \"2Mbps\"\nvariant = \"reno\""));
    assert!(
        e.contains(
            "flows[1]: variant does not apply to kind = \"cbr\" (its own keys: rate, schedule)"
        ),
        "{e}"
    );
}
