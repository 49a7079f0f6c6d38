use super::*;
use aqm::QdiscSpec;

const HOME: &str = "
# a home router's uplink
tc qdisc add dev eth0 root handle 1: htb default 20
tc class add dev eth0 parent 1: classid 1:1 htb rate 20mbit
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 2mbit ceil 20mbit prio 0
tc class add dev eth0 parent 1:1 classid 1:20 htb rate 18mbit ceil 20mbit burst 15k prio 1
tc qdisc add dev eth0 parent 1:10 handle 10: pfifo limit 50
tc qdisc add dev eth0 parent 1:20 handle 20: prio bands 3
tc qdisc add dev eth0 parent 20:3 fq_codel
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc flowid 1:10
tc filter add dev eth0 parent 1: group voip flowid 1:10
tc filter add dev eth0 parent 20: u32 match ip tos 0x20 0xe0 flowid 20:3
";

fn err(script: &str) -> String {
    parse_script(script).unwrap_err().to_string()
}

#[test]
fn a_script_becomes_the_nested_table_of_its_tree() {
    let q = parse_script(HOME).unwrap();
    let QdiscSpec::Htb(h) = q.spec().unwrap() else {
        panic!("an htb root");
    };
    assert_eq!(
        (h.handle.as_str(), h.default.as_deref()),
        ("1:", Some("1:20"))
    );
    let ids: Vec<&str> = h.class.iter().map(|c| c.classid.as_str()).collect();
    assert_eq!(ids, ["1:1", "1:10", "1:20"]);
    let voice = &h.class[1];
    assert_eq!(voice.parent.as_deref(), Some("1:1"));
    assert_eq!(voice.rate.bps(), 2_000_000);
    assert_eq!(voice.prio, 0);
    // Both filters to 1:10 take their packets: EF and the voip group.
    let f = voice.filter.as_ref().unwrap();
    assert_eq!(f.dscp, [aqm::Dscp(46)]);
    assert_eq!(f.groups, ["voip"]);
    assert!(matches!(voice.qdisc.as_deref(), Some(QdiscSpec::DropTail(d)) if d.limit == 50));
    // tc's sizes: 15k is 15 x 1024 bytes.
    assert_eq!(h.class[2].burst, Some(15 * 1024));
    // The nested prio: its band 3 has the leaf and a filter matching the
    // TOS byte's top three bits 001 (CS1 and the AF1x codepoints).
    let Some(QdiscSpec::Prio(p)) = h.class[2].qdisc.as_deref() else {
        panic!("a prio leaf");
    };
    assert_eq!(p.handle, "20:");
    let band3 = p.class.iter().find(|c| c.classid == "20:3").unwrap();
    assert!(matches!(
        band3.qdisc.as_deref(),
        Some(QdiscSpec::FqCodel(_))
    ));
    let dscps: Vec<u8> = band3
        .filter
        .as_ref()
        .unwrap()
        .dscp
        .iter()
        .map(|d| d.0)
        .collect();
    assert_eq!(dscps, (8..16).collect::<Vec<u8>>());
    // The printed table reads back as the same tree, each line a comment.
    let toml = q.to_toml();
    assert_eq!(toml.lines().filter(|l| l.starts_with("# tc ")).count(), 10);
    let table: toml::Table = toml::from_str(&toml).unwrap();
    let again = QdiscSpec::deserialize(table["qdisc"].clone()).unwrap();
    assert_eq!(again, QdiscSpec::Htb(h));
}

#[test]
fn lines_join_and_split_as_in_a_shell() {
    let one = "tc qdisc add dev eth0 root handle 1: prio; \
               tc qdisc add dev eth0 parent 1:1 \\\n codel";
    let QdiscSpec::Prio(p) = parse_any(one).unwrap().spec().unwrap() else {
        panic!("a prio root");
    };
    assert!(matches!(
        p.class[0].qdisc.as_deref(),
        Some(QdiscSpec::Codel(_))
    ));
    // One htb line alone is a tree with no classes: everything goes direct.
    assert!(is_script("tc qdisc add dev eth0 root handle 1: htb"));
    assert!(!is_script("tc qdisc add dev eth0 root fq_codel"));
}

#[test]
fn bad_trees_are_refused_naming_the_line_and_the_option() {
    let root = "tc qdisc add dev eth0 root handle 1: htb default 10\n";
    let cases = [
        (
            format!("{root}tc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit foo 3"),
            "tc script, line 2: htb has no option `foo`",
        ),
        (
            format!("{root}tc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit bogus"),
            "tc script, line 2: htb has no option `bogus`",
        ),
        (
            format!("{root}tc class add dev eth0 parent 1:5 classid 1:10 htb rate 1mbit"),
            "tc script, line 2: class 1:10: parent 1:5 does not exist",
        ),
        (
            format!(
                "{root}tc class add dev eth0 parent 1: classid 1:1 htb rate 2mbit\n\
                 tc qdisc add dev eth0 parent 1:1 sfq\n\
                 tc class add dev eth0 parent 1:1 classid 1:10 htb rate 1mbit"
            ),
            "tc script, line 4: class 1:10: its parent 1:1 has a leaf qdisc (line 3)",
        ),
        (
            "tc qdisc add dev eth0 root handle 1: htb default 30\n\
             tc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit"
                .to_string(),
            "default = 1:30 names no leaf class",
        ),
        (
            format!("{root}tc class add dev eth0 parent 1: classid 1:10 htb ceil 1mbit"),
            "tc script, line 2: htb needs `rate`",
        ),
        (
            format!("{root}tc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit overhead 8"),
            "tc script, line 2: option `overhead` is not modelled",
        ),
        (
            format!("{root}tc qdisc add dev eth0 parent 1:7 fq_codel"),
            "tc script, line 2: parent 1:7 is no class of the tree",
        ),
        (
            format!(
                "{root}tc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit\n\
                 tc filter add dev eth0 parent 1: u32 match ip src 10.0.0.1/32 flowid 1:10"
            ),
            "tc script, line 3: option `match ip src` is not modelled",
        ),
        (
            format!(
                "{root}tc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit\n\
                 tc filter add dev eth0 parent 1: u32 match ip tos 0x10 0xff flowid 1:10"
            ),
            "a mask over the ECN bits is not read",
        ),
        (
            format!(
                "{root}tc class add dev eth0 parent 1: classid 1:1 htb rate 2mbit\n\
                 tc class add dev eth0 parent 1:1 classid 1:10 htb rate 1mbit\n\
                 tc filter add dev eth0 parent 1: group web flowid 1:1"
            ),
            "tc script, line 4: flowid 1:1 is no leaf class of the tree",
        ),
        (
            format!("{root}tc qdisc add dev eth0 root handle 2: prio"),
            "tc script, line 2: a second `root` qdisc",
        ),
        (
            format!("{root}tc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit\nls -l"),
            "tc script, line 3: each line of a tree is `tc qdisc`, `tc class` or `tc filter`",
        ),
        (
            "tc qdisc add dev eth0 root handle 1: prio bands 2 priomap 0 1".to_string(),
            "priomap `0 1`: needs 16 band numbers",
        ),
    ];
    for (script, want) in cases {
        let got = err(&script);
        assert!(
            got.contains(want),
            "{script}\n  got:  {got}\n  want: {want}"
        );
    }
}
