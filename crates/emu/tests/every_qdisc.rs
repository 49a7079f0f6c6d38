//! Every qdisc kind of the registry runs emulated: its defaults on the
//! bottleneck, real TCP and a CBR flow through it for a second.
mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[test]
fn every_qdisc_kind_forwards_real_tcp() {
    require_emulation!();
    for kind in aqm::QdiscSpec::KINDS {
        let json = serde_json::json!({
            "name": format!("every-{kind}"),
            "duration": "1500ms",
            "warmup": "500ms",
            "qdisc": { "kind": kind },
            "topology": {
                "kind": "dumbbell",
                "access": { "rate": "100Mbps", "delay": "1ms" },
                "bottleneck": { "rate": "10Mbps", "delay": "5ms" },
            },
            "flows": [
                { "name": "tcp", "kind": "tcp", "count": 2, "variant": "cubic",
                  "start_spread": "0s" },
                { "name": "udp", "kind": "cbr", "rate": "3Mbps" },
            ],
        });
        let s = sim::Scenario::from_json(&json.to_string()).unwrap();
        let r = emu::emulate(&s, Arc::new(AtomicBool::new(false)))
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        let link = &r.links[0];
        eprintln!(
            "{kind:>10}: util {:.3} tcp {:.2} Mb/s udp {:.2} Mb/s drops {} marks {}",
            link.utilization,
            r.groups["tcp"].goodput_bps / 1e6,
            r.groups["udp"].goodput_bps / 1e6,
            link.drops_total,
            link.marks_total
        );
        assert_eq!(link.qdisc, *kind);
        assert!(
            r.flows.iter().all(|f| f.delivered > 0),
            "{kind}: a flow delivered nothing"
        );
        assert!(
            link.utilization > 0.5,
            "{kind}: utilization {}",
            link.utilization
        );
    }
}
