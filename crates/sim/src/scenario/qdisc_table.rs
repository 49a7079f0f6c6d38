//! A qdisc table in a scenario: the qdisc's own keys (`kind = "red"`, ...), or
//! `tc = "tc qdisc add dev eth0 root ..."` alone, read by [`crate::tc`] into the
//! same spec. Used for `[qdisc]`, `reverse_qdisc` and a graph link's qdiscs.

use crate::tc;
use aqm::QdiscSpec;
use serde::{de, Deserialize, Deserializer};
use toml::{Spanned, Value};

struct Table(QdiscSpec);

impl<'de> Deserialize<'de> for Table {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if let Value::Table(t) = &v {
            if let Some(line) = t.get("tc") {
                if let Some(other) = t.keys().find(|k| *k != "tc") {
                    return Err(de::Error::custom(format!(
                        "tc = \"...\" says the whole qdisc; `{other}` cannot stand beside it"
                    )));
                }
                let Value::String(line) = line else {
                    return Err(de::Error::custom(
                        "tc must be a string: the tc command line",
                    ));
                };
                return tc::parse_any(line)
                    .and_then(|q| q.spec())
                    .map(Table)
                    .map_err(de::Error::custom);
            }
        }
        QdiscSpec::deserialize(v)
            .map(Table)
            .map_err(|e| de::Error::custom(e.message()))
    }
}

pub fn spanned<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Spanned<QdiscSpec>>, D::Error> {
    let v: Option<Spanned<Table>> = Option::deserialize(d)?;
    Ok(v.map(|s| Spanned::new(s.span(), s.into_inner().0)))
}

pub fn plain<'de, D: Deserializer<'de>>(d: D) -> Result<Option<QdiscSpec>, D::Error> {
    Ok(Option::<Table>::deserialize(d)?.map(|t| t.0))
}
