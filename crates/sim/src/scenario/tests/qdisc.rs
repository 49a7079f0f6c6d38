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

/// A tree script's refused line is reported at the file line it is written on,
/// whether the script opens on the key's line or the next; a one-line string
/// (whose `\n` escapes are lines the file does not have) at the key's line.
#[test]
fn a_tc_script_error_is_at_its_own_file_line() {
    let red = "kind = \"red\"\nlimit = 300\nmin_th = 100\nmax_th = 200\n";
    let key_line = EXAMPLE[..EXAMPLE.find(red).unwrap()].lines().count() + 1;
    let script = "tc qdisc add dev eth0 root handle 1: htb default 10\n\
                  tc class add dev eth0 parent 1: classid 1:10 htb rate 5mbit\n\
                  tc class add dev eth0 parent 1: classid 1:20 htb rate 5mbit bogus 1\n";
    let at = |written: String| {
        let text = EXAMPLE.replace(red, &written);
        let e = Scenario::from_toml(&text, "s.toml").unwrap_err();
        assert!(e.message.contains("tc script, line 3"), "{e}");
        e.line.unwrap()
    };
    // Opening quotes, then a newline TOML drops: script line 3 is key + 3.
    assert_eq!(at(format!("tc = '''\n{script}'''\n")), key_line + 3);
    assert_eq!(at(format!("tc = \"\"\"\n{script}\"\"\"\n")), key_line + 3);
    // The script starts on the key's line: key + 2.
    assert_eq!(at(format!("tc = '''{script}'''\n")), key_line + 2);
    let one_line = script.replace('\n', "\\n");
    assert_eq!(at(format!("tc = \"{one_line}\"\n")), key_line);
}
