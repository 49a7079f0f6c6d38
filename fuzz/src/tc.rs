//! Target `tc`: any bytes are a tc command line; `sim::tc::parse` must answer with
//! an error that says something, or a qdisc whose printed `[qdisc]` table reads
//! back as the same spec and builds. Never a panic.

use aqm::{LinkInfo, QdiscSpec, Rate};
use serde::Deserialize;

pub fn run(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    match sim::tc::parse(&line) {
        Err(e) => assert!(!e.to_string().trim().is_empty(), "an empty error: {e:?}"),
        Ok(q) => {
            let spec = q.spec().expect("parse checked the spec");
            spec.build(&LinkInfo::new(Rate::from_mbps(10)))
                .expect("parse checked the build");
            let text = q.to_toml();
            let table: toml::Table = toml::from_str(&text)
                .unwrap_or_else(|e| panic!("the printed table does not parse: {e}\n{text}"));
            let back = QdiscSpec::deserialize(table["qdisc"].clone())
                .unwrap_or_else(|e| panic!("the printed table is no spec: {e}\n{text}"));
            assert_eq!(back, spec, "{text}");
        }
    }
}
