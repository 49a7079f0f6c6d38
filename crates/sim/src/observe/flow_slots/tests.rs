//! The slot maps, and what they are for: a star of many hosts, all its links
//! monitored, keeps a row per flow a link carries, not per flow of the run, and
//! reports exactly what a row per flow does.

use super::*;
use crate::engine::Simulation;
use crate::results::RunResult;
use crate::scenario::Scenario;
use std::cell::Cell;

thread_local! {
    /// Every link keeps a row per flow (what the slot maps must agree with).
    pub(super) static FORCE_DENSE: Cell<bool> = const { Cell::new(false) };
}

#[test]
fn rows_follow_the_runs_of_flows_a_link_carries() {
    let mut c = Census::default();
    for f in [3, 3, 4, 5, 9, 12, 12, 13] {
        c.add(f);
    }
    assert_eq!((c.carried, c.runs), (6, 3));
    assert!(!c.dense(1000) && c.dense(10));
    let s = FlowSlots::Runs {
        runs: vec![
            Run {
                first: 3,
                end: 6,
                row: 0,
            },
            Run {
                first: 9,
                end: 10,
                row: 3,
            },
            Run {
                first: 12,
                end: 14,
                row: 4,
            },
        ]
        .into(),
        rows: 6,
    };
    let rows: Vec<usize> = [3, 4, 5, 9, 12, 13].iter().map(|&f| s.row(f)).collect();
    assert_eq!(rows, [0, 1, 2, 3, 4, 5]);
    assert_eq!(s.flows().collect::<Vec<_>>(), [3, 4, 5, 9, 12, 13]);
    let back: Vec<u32> = (0..6).map(|r| s.flow(r)).collect();
    assert_eq!(back, [3, 4, 5, 9, 12, 13]);
    let d = FlowSlots::Dense { flows: 4 };
    assert_eq!((d.row(2), d.rows()), (2, 4));
    assert_eq!(d.flows().collect::<Vec<_>>(), [0, 1, 2, 3]);
}
/// A star: hub `h` and `leaves` hosts `l0..`, each on its own link to the hub
/// (monitored, both directions), and per pair of hosts `2i -> 2i + 1` a group
/// of `count` flows; the first pair has a second group, of CBR.
fn star(leaves: usize, count: u32, duration: &str) -> Scenario {
    let mut t = format!(
        "name = \"star\"\nduration = \"{duration}\"\nwarmup = \"500ms\"\n\
         [monitor]\nflow_series = \"250ms\"\n[topology]\nkind = \"graph\"\nnodes = [\"h\""
    );
    for i in 0..leaves {
        t += &format!(", \"l{i}\"");
    }
    t += "]\nlinks = [\n";
    for i in 0..leaves {
        t += &format!("{{ from = \"l{i}\", to = \"h\", rate = \"10Mbps\", delay = \"1ms\" }},\n");
    }
    t += "]\n";
    for p in 0..leaves / 2 {
        t += &format!(
            "[[flows]]\nname = \"p{p}\"\nkind = \"tcp\"\ncount = {count}\n\
             from = \"l{}\"\nto = \"l{}\"\n",
            2 * p,
            2 * p + 1
        );
        if p == 0 {
            t += "[[flows]]\nname = \"u\"\nkind = \"cbr\"\nrate = \"3Mbps\"\n\
                  from = \"l0\"\nto = \"l1\"\n";
        }
    }
    Scenario::from_toml(&t, "star.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn json(r: &RunResult) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    v
}

#[test]
fn a_link_keeps_rows_for_the_flows_it_carries_and_reports_the_same() {
    let s = star(40, 2, "3s");
    let sim = Simulation::new(&s).unwrap();
    let flows = sim.flow_count();
    // Each flow's data crosses two link directions and its ACKs two more.
    let rows: usize = sim.obs.links.iter().map(|l| l.slots.rows()).sum();
    assert_eq!(rows, 4 * flows, "{} links", sim.obs.links.len());
    assert!(sim
        .obs
        .links
        .iter()
        .all(|l| matches!(l.slots, FlowSlots::Runs { .. })));
    let mut sim = sim;
    sim.run(&mut |_| {});
    let mid = json(&sim.report(0.0));
    let sparse = json(&sim.into_report(0.0));

    FORCE_DENSE.set(true);
    let mut dense = Simulation::new(&s).unwrap();
    FORCE_DENSE.set(false);
    let rows: usize = dense.obs.links.iter().map(|l| l.slots.rows()).sum();
    assert_eq!(rows, flows * dense.obs.links.len());
    dense.run(&mut |_| {});
    assert_eq!(json(&dense.report(0.0)), mid);
    assert_eq!(json(&dense.into_report(0.0)), sparse);
    let v = &sparse["link_flows"];
    assert!(v.as_array().is_some_and(|a| a.len() >= 2 * flows), "{v}");
    assert!(sparse["flow_series"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));
}

#[test]
fn a_hundred_thousand_flows_on_many_monitored_links_fit() {
    // 2,000 hosts in pairs, 100 flows a pair: dense tables on the 4,000 monitored
    // link directions were 4,000 x 100,000 rows (over 19 GB, and refused as
    // needing about 100 GiB); each direction carries 100 flows.
    let s = star(2000, 100, "1s");
    let flows = s.total_flows();
    let sim = Simulation::new(&s).unwrap_or_else(|e| panic!("{e}"));
    let rows: usize = sim.obs.links.iter().map(|l| l.slots.rows()).sum();
    assert_eq!(sim.obs.links.len(), 4000);
    assert_eq!(rows, 4 * flows);
    // What the memory check counted: the rows made, and their slot maps.
    let plan = crate::observe::Plan::new(&s, &sim.net, &sim.flows).unwrap();
    let t = plan.tables(&sim.net, true);
    assert_eq!(t.rows as usize, rows);
    assert_eq!(t.series_rows as usize, rows);
    assert_eq!(t.slot_bytes, 4000 * RUN_BYTES, "a run per direction");
    // What the memory estimate counts for them (`monitor_rows`), a second's
    // series of 250 ms included: under 1 GiB, where dense tables counted 80 GB.
    let m = crate::observe::monitor_rows(s.monitor(), 4000, t, flows as u64, 1.0);
    assert!(m < 1 << 30, "{m} bytes");
}
