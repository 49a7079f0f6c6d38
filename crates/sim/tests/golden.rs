//! Golden tests: small scenarios whose whole result (every table but the wall time)
//! is checked in under `tests/snapshots/` and compared exactly. A change to the
//! engine, a transport or a qdisc that moves any number shows up here as a diff;
//! the commit that accepts it (`cargo insta review`, or `INSTA_UPDATE=always`)
//! says why the result changed.

use sim::{run_scenario, Scenario};

fn golden(name: &str, text: &str) {
    let scenario =
        Scenario::from_toml(text, &format!("{name}.toml")).unwrap_or_else(|e| panic!("{e}"));
    let result = run_scenario(&scenario, &mut |_| {}).unwrap();
    let mut value = serde_json::to_value(&result).unwrap();
    value
        .as_object_mut()
        .unwrap()
        .remove("wall_seconds")
        .expect("results carry their wall time");
    insta::assert_json_snapshot!(name, value);
}

#[test]
fn droptail_dumbbell() {
    golden("droptail", include_str!("golden/droptail.toml"));
}

#[test]
fn red_with_ecn_web_and_onoff() {
    golden("red", include_str!("golden/red.toml"));
}

#[test]
fn choke_against_a_stepping_cbr() {
    golden("choke", include_str!("golden/choke.toml"));
}

#[test]
fn sfb_rate_limits() {
    golden("sfb", include_str!("golden/sfb.toml"));
}

#[test]
fn graph_with_per_link_qdiscs() {
    golden("graph", include_str!("golden/graph.toml"));
}
