//! prio's property-test configurations: bands whose qdiscs are of other kinds,
//! a tree among them, so they name them (the runtime reaches leaves only
//! through the registry).

use super::{PrioClass, PrioParams};
use crate::any::QdiscSpec;
use crate::packet::Dscp;
use crate::parts::tree::Filter;
use crate::units::Rate;

pub(super) fn property_configs() -> Vec<PrioParams> {
    let sfq = QdiscSpec::Sfq(crate::sfq::SfqParams {
        limit: 6,
        divisor: 16,
        ..Default::default()
    });
    let htb = QdiscSpec::Htb(crate::htb::HtbParams {
        default: Some("1:1".into()),
        class: vec![crate::htb::HtbClass::new("1:1", Rate::from_kbps(500))],
        ..Default::default()
    });
    let codel = QdiscSpec::Codel(crate::codel::CodelParams {
        limit: 5,
        ..Default::default()
    });
    vec![
        // DSCP 0 is priority 0, band 1 by the default priomap: an SFQ.
        PrioParams {
            limit: 9,
            class: vec![PrioClass {
                classid: "1:2".into(),
                qdisc: Some(Box::new(sfq)),
                filter: None,
            }],
            ..Default::default()
        },
        // A filter to the last band, an HTB shaping there; CoDel in band 0.
        PrioParams {
            bands: 4,
            priomap: vec![0; 16],
            class: vec![
                PrioClass {
                    classid: "1:4".into(),
                    qdisc: Some(Box::new(htb)),
                    filter: Some(Filter {
                        groups: vec![],
                        dscp: vec![Dscp(0)],
                    }),
                },
                PrioClass {
                    classid: "1:1".into(),
                    qdisc: Some(Box::new(codel)),
                    filter: None,
                },
            ],
            ..Default::default()
        },
    ]
}
