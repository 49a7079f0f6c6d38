//! A fat tree built and routed: ECMP spreads flows evenly over the core uplinks,
//! the same seed gives the same paths, `shortest` piles them on one, and a
//! group's `path` is followed.

use crate::net::Network;
use crate::scenario::Scenario;

/// A k = 8 fat tree (128 hosts, 16 core switches), `count` flows from each host
/// to the host 64 away (in the pod 4 pods on: every flow crosses the core).
fn fat_tree(routing: &str, seed: u64, count: u32) -> String {
    let mut text = format!(
        "name = \"ft\"\nduration = \"1s\"\nseed = {seed}\n[topology]\nkind = \"fat_tree\"\n\
         k = 8\nrate = \"10Gbps\"\ndelay = \"1us\"\nrouting = \"{routing}\"\n"
    );
    for h in 0..128 {
        text += &format!(
            "[[flows]]\nname = \"f{h}\"\nkind = \"tcp\"\nfrom = \"h{h}\"\nto = \"h{}\"\ncount = {count}\n",
            (h + 64) % 128
        );
    }
    text
}

fn build(text: &str) -> Network {
    let s = Scenario::from_toml(text, "ft.toml").unwrap_or_else(|e| panic!("{e}"));
    Network::build(&s, s.total_flows()).unwrap()
}

/// Every flow's data route, as node names.
fn paths(net: &Network) -> Vec<Vec<String>> {
    net.flow_routes
        .iter()
        .map(|&(fwd, _)| {
            let route = net.routes.route(fwd);
            let mut names = vec![net
                .nodes
                .name(net.links[route[0] as usize].from)
                .into_owned()];
            names.extend(
                route
                    .iter()
                    .map(|&l| net.nodes.name(net.links[l as usize].to).into_owned()),
            );
            names
        })
        .collect()
}

/// Data routes per aggregation-to-core link direction.
fn per_uplink(net: &Network) -> Vec<usize> {
    let mut count = std::collections::HashMap::new();
    for p in paths(net) {
        assert_eq!(p.len(), 7, "host, edge, agg, core, agg, edge, host: {p:?}");
        *count.entry((p[2].clone(), p[3].clone())).or_insert(0) += 1;
    }
    let mut all: Vec<usize> = count.into_values().collect();
    all.resize(128, 0);
    all
}

#[test]
fn ecmp_spreads_flows_evenly_over_the_core_uplinks() {
    let net = build(&fat_tree("ecmp", 1, 32));
    let loads = per_uplink(&net);
    // 4,096 flows over 128 uplinks: 32 each on average, a binomial's standard
    // deviation under 6; every uplink carries some, none more than 4 of them off.
    let (min, max) = (*loads.iter().min().unwrap(), *loads.iter().max().unwrap());
    assert!(min >= 32 - 4 * 6 && max <= 32 + 4 * 6, "{min}..{max}");
    // Spread as independent uniform choices spread them: the loads' standard
    // deviation near the binomial's (a hash correlated across switches, one
    // keyed alike at every hop, would pile flows up and widen it).
    let var = loads
        .iter()
        .map(|&c| (c as f64 - 32.0).powi(2))
        .sum::<f64>()
        / 128.0;
    let binomial = (4096.0_f64 * (1.0 / 128.0) * (127.0 / 128.0)).sqrt();
    let ratio = var.sqrt() / binomial;
    assert!((0.7..1.3).contains(&ratio), "{ratio}");
    // The ACKs are hashed too, on their own.
    let acks: std::collections::HashSet<_> = net
        .flow_routes
        .iter()
        .map(|&(_, rev)| net.routes.route(rev)[2])
        .collect();
    assert_eq!(acks.len(), 128, "every uplink carries ACKs");
}

#[test]
fn shortest_puts_a_pods_flows_on_one_uplink_per_edge() {
    let loads = per_uplink(&build(&fat_tree("shortest", 1, 32)));
    // One path per group, ties to the lower link: the first aggregation switch
    // and its first core switch carry them all.
    assert_eq!(loads.iter().filter(|&&c| c > 0).count(), 8, "{loads:?}");
}

#[test]
fn the_same_seed_gives_the_same_paths_and_another_seed_others() {
    let one = paths(&build(&fat_tree("ecmp", 1, 4)));
    assert_eq!(one, paths(&build(&fat_tree("ecmp", 1, 4))));
    let two = paths(&build(&fat_tree("ecmp", 2, 4)));
    let same = one.iter().zip(&two).filter(|(a, b)| a == b).count();
    // Each route is one of 16: about a sixteenth alike by chance.
    assert!(same < one.len() / 4, "{same} of {} alike", one.len());
}

#[test]
fn a_groups_path_is_followed_both_ways() {
    let text = fat_tree("ecmp", 1, 1).replacen(
        "to = \"h64\"\n",
        "to = \"h64\"\npath = [\"h0\", \"e0\", \"a3\", \"c13\", \"a19\", \"e16\", \"h64\"]\n",
        1,
    );
    let net = build(&text);
    assert_eq!(
        paths(&net)[0],
        ["h0", "e0", "a3", "c13", "a19", "e16", "h64"]
    );
    let rev = net.routes.route(net.flow_routes[0].1);
    let back: Vec<_> = rev
        .iter()
        .map(|&l| net.nodes.name(net.links[l as usize].to).into_owned())
        .collect();
    assert_eq!(back, ["e16", "a19", "c13", "a3", "e0", "h0"]);
}

/// A run over ECMP routes is the same run under the same seed, to the last
/// number, and another under another seed.
#[test]
fn an_ecmp_run_is_identical_under_the_same_seed() {
    let run = |seed: u64| {
        let text = fat_tree("ecmp", seed, 1)
            .replace("duration = \"1s\"", "duration = \"5ms\"")
            .replace(
                "kind = \"tcp\"\n",
                "kind = \"tcp\"\nstart_spread = \"1ms\"\n",
            );
        let s = Scenario::from_toml(&text, "ft.toml").unwrap();
        let mut v = serde_json::to_value(crate::run_scenario(&s, &mut |_| {}).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("wall_seconds");
        v
    };
    let one = run(1);
    assert!(one["events"].as_u64().unwrap() > 10_000, "the flows ran");
    assert_eq!(one, run(1));
    assert_ne!(one["flows"], run(2)["flows"]);
}
