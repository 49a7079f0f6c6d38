//! What the class-based qdiscs (HTB, prio) share: `tc`'s class ids, the
//! filters that send a packet to a class, and their leaves, each a qdisc of any
//! kind built for the class.

use crate::any::{AnyQdisc, QdiscSpec};
use crate::droptail::DropTailParams;
use crate::packet::{Dscp, Packet};
use crate::qdisc::{LinkInfo, ParamError};
use crate::rng::mix64;
use crate::table_bytes::KeyedTable;
use crate::units::Rate;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A `tc` handle or class id, `major:minor` in hexadecimal as `tc` reads them
/// (`1:10` is minor 0x10), packed as Linux packs them: major in the high 16 bits.
pub type ClassId = u32;

/// Parses `M:N` (a class) or `M:` (a qdisc handle, minor 0); both in hex.
pub fn parse_classid(text: &str) -> Option<ClassId> {
    let (major, minor) = text.trim().split_once(':')?;
    let major = u16::from_str_radix(major, 16).ok()?;
    let minor = if minor.is_empty() {
        0
    } else {
        u16::from_str_radix(minor, 16).ok()?
    };
    Some((major as u32) << 16 | minor as u32)
}

/// `major:minor` as `tc` prints it.
pub fn classid_text(id: ClassId) -> String {
    format!("{:x}:{:x}", id >> 16, id & 0xffff)
}

/// The major of a qdisc `handle` (`"1:"`), or the error naming it.
pub fn parse_handle(handle: &str) -> Result<u32, ParamError> {
    match parse_classid(handle) {
        Some(id) if id & 0xffff == 0 && id != 0 => Ok(id >> 16),
        _ => Err(ParamError::new(
            "handle",
            handle,
            "must be a qdisc handle `M:` (M in hex, not 0)",
        )),
    }
}

/// A class's `classid`, checked against the qdisc's major.
pub fn parse_class(text: &str, major: u32) -> Result<ClassId, ParamError> {
    match parse_classid(text) {
        Some(id) if id >> 16 == major && id & 0xffff != 0 => Ok(id),
        _ => Err(ParamError::new(
            "classid",
            text,
            format!("must be `{major:x}:N` with N a nonzero hex minor (the qdisc's handle is {major:x}:)"),
        )),
    }
}

/// Which packets a class takes: those of the flow groups it names and those
/// whose DSCP it lists (either criterion, as two `tc filter` lines to one class
/// are); a filter that gives neither takes every packet (as `u32 match u32 0 0`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Filter {
    /// The packet's flow is in one of these flow groups (the scenario's names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// The packet's DSCP is one of these (numbers 0..=63 or names: "EF", "AF41").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dscp: Vec<Dscp>,
}

impl Filter {
    /// Checks of the filter alone; `class` names the class in the error.
    pub fn validate(&self, class: &str) -> Result<(), ParamError> {
        if let Some(d) = self.dscp.iter().find(|d| d.0 > 63) {
            return Err(ParamError::new(
                "dscp",
                d.0,
                format!("(class {class}) must be a DSCP, 0..=63"),
            ));
        }
        if self.groups.iter().any(|g| g.is_empty()) {
            return Err(ParamError::new(
                "groups",
                "\"\"",
                format!("(class {class}) must name flow groups, not be empty"),
            ));
        }
        Ok(())
    }

    /// The filter for a link whose scenario names `groups`: a group it names
    /// that the scenario lacks is an error. Built before the groups are
    /// announced (the engine builds every qdisc, then rebuilds those that read
    /// the flow table), it matches by DSCP only.
    pub fn compile(&self, class: &str, groups: &[String]) -> Result<CompiledFilter, ParamError> {
        self.validate(class)?;
        let mut indices = Vec::with_capacity(self.groups.len());
        for name in &self.groups {
            match groups.iter().position(|g| g == name) {
                Some(i) => indices.push(i as u32),
                None if groups.is_empty() => {}
                None => {
                    return Err(ParamError::new(
                        "groups",
                        name,
                        format!("(class {class}) names no flow group of the scenario"),
                    ))
                }
            }
        }
        let dscp = self.dscp.iter().fold(0, |m, d| m | 1 << d.0);
        Ok(CompiledFilter {
            groups: indices,
            dscp,
            any: self.groups.is_empty() && self.dscp.is_empty(),
        })
    }
}

/// A filter as a link runs it: group indices and a DSCP bit mask (both empty:
/// any packet).
#[derive(Clone, Debug)]
pub struct CompiledFilter {
    groups: Vec<u32>,
    dscp: u64,
    /// The filter names neither: it takes every packet.
    any: bool,
}

impl CompiledFilter {
    /// Does a packet of a flow in `group` (`None`: not announced) match?
    #[inline]
    pub fn matches(&self, group: Option<u32>, dscp: u8) -> bool {
        if self.any {
            return true;
        }
        group.is_some_and(|g| self.groups.contains(&g)) || self.dscp & (1u64 << (dscp & 63)) != 0
    }
}

/// Each announced flow's group, for classifying by group without a scan.
#[derive(Clone, Debug, Default)]
pub struct FlowGroups(HashMap<u32, u32>);

impl FlowGroups {
    pub fn new(link: &LinkInfo) -> Self {
        FlowGroups(link.flows.iter().map(|f| (f.flow.0, f.group)).collect())
    }
    /// The group of `pkt`'s flow, if the link announced it.
    #[inline]
    pub fn of(&self, pkt: &Packet) -> Option<u32> {
        self.0.get(&pkt.flow.0).copied()
    }
}

/// A class's leaf: its qdisc, or Linux's default leaf (pfifo of `default_limit`).
pub fn leaf_spec(qdisc: Option<&QdiscSpec>, default_limit: u32) -> QdiscSpec {
    match qdisc {
        Some(q) => q.clone(),
        None => QdiscSpec::DropTail(DropTailParams {
            limit: default_limit,
            ..Default::default()
        }),
    }
}

/// The link a class's leaf is built for: `rate`, the parent's seed mixed with
/// the class id (so two leaves hash differently), the same flows and groups.
pub fn leaf_link<'a>(link: &LinkInfo<'a>, rate: Rate, id: ClassId) -> LinkInfo<'a> {
    LinkInfo {
        rate,
        seed: mix64(link.seed ^ (id as u64) << 8),
        flows: link.flows,
        groups: link.groups,
    }
}

/// Builds a leaf, its errors naming the class.
pub fn build_leaf(spec: &QdiscSpec, link: &LinkInfo, class: &str) -> Result<AnyQdisc, ParamError> {
    spec.build(link).map_err(|e| leaf_error(spec, class, e))
}

/// Validates a leaf for a link of `rate`, its errors naming the class.
pub fn validate_leaf(spec: &QdiscSpec, rate: Rate, class: &str) -> Result<(), ParamError> {
    spec.validate(&LinkInfo::new(rate))
        .map_err(|e| leaf_error(spec, class, e))
}

fn leaf_error(spec: &QdiscSpec, class: &str, e: ParamError) -> ParamError {
    ParamError::new("qdisc", spec.kind(), format!("(class {class}): {e}"))
}

/// A tree's keyed tables: its leaves' (each qdisc with the rate its class
/// gives it), added up; `what` names them in the report ("the bands' qdiscs").
pub fn leaves_table_bytes<'a>(
    leaves: impl Iterator<Item = (&'a QdiscSpec, Rate)>,
    link: &LinkInfo,
    what: &str,
) -> Option<KeyedTable> {
    let bytes: u64 = leaves
        .filter_map(|(q, rate)| q.table_bytes(&LinkInfo { rate, ..*link }))
        .map(|t| t.bytes)
        .sum();
    (bytes > 0).then(|| KeyedTable {
        key: "class",
        value: what.into(),
        bytes,
    })
}

/// Whether a tree reads the flow table: a class's filter by group, or a leaf
/// that reads it.
pub fn reads_flow_table<'a>(
    classes: impl IntoIterator<Item = (Option<&'a Filter>, Option<&'a QdiscSpec>)>,
) -> bool {
    classes.into_iter().any(|(filter, qdisc)| {
        filter.is_some_and(|f| !f.groups.is_empty()) || qdisc.is_some_and(|q| q.uses_flow_table())
    })
}

/// Linux's `ip_tos2prio` (include/net/route.h, net/ipv4/route.c): the priority
/// a router gives a packet by its TOS (`rt_tos2priority`, set by ip_forward).
pub const IP_TOS2PRIO: [u8; 16] = [0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4];

/// `rt_tos2priority(dscp << 2)`: `ip_tos2prio[IPTOS_TOS(tos) >> 1]` with
/// `IPTOS_TOS_MASK = 0x1e`, so only the DSCP's low three bits count.
#[inline]
pub const fn dscp_priority(dscp: u8) -> u8 {
    let tos = (dscp & 63) << 2;
    IP_TOS2PRIO[((tos & 0x1e) >> 1) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classids_parse_in_hex_as_tc_reads_them() {
        assert_eq!(parse_classid("1:10"), Some(0x1_0010));
        assert_eq!(parse_classid("1:"), Some(0x1_0000));
        assert_eq!(parse_classid("a:ff"), Some(0xa_00ff));
        assert_eq!(parse_classid("1"), None);
        assert_eq!(parse_classid("1:x"), None);
        assert_eq!(classid_text(0x1_0010), "1:10");
        assert_eq!(parse_handle("1:").unwrap(), 1);
        assert!(parse_handle("1:2").is_err());
        assert!(parse_class("2:1", 1).is_err());
        assert!(parse_class("1:0", 1).is_err());
    }

    #[test]
    fn a_filter_takes_its_groups_packets_and_its_dscps() {
        let groups = ["bulk".to_string(), "voip".to_string()];
        let f = Filter {
            groups: vec!["voip".into()],
            dscp: vec![Dscp(46)],
        }
        .compile("1:1", &groups)
        .unwrap();
        assert!(f.matches(Some(1), 46));
        assert!(f.matches(Some(0), 46), "EF from another group");
        assert!(f.matches(Some(1), 0), "the voip group at best effort");
        assert!(f.matches(None, 46));
        assert!(!f.matches(Some(0), 0));
        assert!(!f.matches(None, 10));
        let any = Filter::default().compile("1:1", &groups).unwrap();
        assert!(any.matches(None, 7));
        // Built before the groups are announced, a filter by group takes
        // nothing (the engine rebuilds it once they are).
        let unannounced = Filter {
            groups: vec!["voip".into()],
            dscp: vec![],
        }
        .compile("1:1", &[])
        .unwrap();
        assert!(!unannounced.matches(Some(0), 0));
        assert!(!unannounced.matches(None, 46));
        let e = Filter {
            groups: vec!["video".into()],
            dscp: vec![],
        }
        .compile("1:1", &groups)
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "groups = video (class 1:1) names no flow group of the scenario"
        );
    }
}
