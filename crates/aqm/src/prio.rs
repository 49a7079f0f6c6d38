//! prio (Linux's sch_prio): `bands` queues served in strict priority, band 0
//! first. A packet's band is its class's when a filter takes it, else
//! `priomap` of the priority a router gives its TOS (ip_forward sets
//! `skb->priority = rt_tos2priority(tos)`). Each band is a qdisc of any kind;
//! a band no class names is a pfifo of 1000 packets (Linux: pfifo of the
//! device's txqueuelen).

use crate::any::QdiscSpec;
use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::params::qdisc_params;
use crate::parts::tree::{
    self, build_leaf, dscp_priority, leaf_link, leaf_spec, parse_class, parse_handle,
    validate_leaf, CompiledFilter, Filter, FlowGroups,
};
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::Time;
use crate::units::Rate;
use crate::AnyQdisc;
use serde::{Deserialize, Serialize};

/// Linux's `TCQ_PRIO_BANDS`.
pub const MAX_BANDS: u32 = 16;
/// Linux's `TCQ_MIN_PRIO_BANDS`.
pub const MIN_BANDS: u32 = 2;
/// The default leaf's limit: a device's default txqueuelen.
const BAND_LIMIT: u32 = 1000;

qdisc_params! {
    /// prio parameters.
    pub struct PrioParams {
        /// The qdisc's handle `M:`; band n is class `M:n`.
        handle: String = "1:".into(),
        /// How many bands, 2..=16 (Linux's default 3).
        bands: u32 = 3,
        /// The band of each of the 16 priorities (Linux's `prio2band` default).
        priomap: Vec<u8> = vec![1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1],
        /// The most packets the whole qdisc holds (aqmlab's, not Linux's: the
        /// registry needs every kind's bound; an arrival past it is dropped).
        limit: u32 = 10_000,
        /// Bands given a qdisc or a filter, in the order filters are tried.
        class: Vec<PrioClass> = Vec::new(),
    }
}

/// A band given its qdisc or a filter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrioClass {
    /// `M:n` for band n - 1 (`1:1` is band 0, served first).
    pub classid: String,
    /// The band's qdisc; absent: pfifo of 1000 packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<Box<QdiscSpec>>,
    /// Which packets the band takes, before the priomap is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Filter>,
}

impl PrioParams {
    /// Each class's band, with the checks of its id.
    fn bands_of(&self) -> Result<Vec<usize>, ParamError> {
        let major = parse_handle(&self.handle)?;
        let mut bands = Vec::with_capacity(self.class.len());
        for c in &self.class {
            let id = parse_class(&c.classid, major)?;
            let minor = id & 0xffff;
            if minor > self.bands {
                return Err(ParamError::new(
                    "classid",
                    &c.classid,
                    format!("must name a band, minor 1..={:x}", self.bands),
                ));
            }
            let band = minor as usize - 1;
            if bands.contains(&band) {
                return Err(ParamError::new("classid", &c.classid, "is given twice"));
            }
            bands.push(band);
        }
        Ok(bands)
    }
}

impl QdiscParams for PrioParams {
    type Qdisc = Prio;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        if !(MIN_BANDS..=MAX_BANDS).contains(&self.bands) {
            return Err(ParamError::new(
                "bands",
                self.bands,
                "must be 2..=16 (Linux's TCQ_MIN_PRIO_BANDS, TCQ_PRIO_BANDS)",
            ));
        }
        if self.priomap.len() != 16 {
            return Err(ParamError::new(
                "priomap",
                format!("{:?}", self.priomap),
                "must give a band for each of the 16 priorities",
            ));
        }
        if let Some(b) = self.priomap.iter().find(|&&b| b as u32 >= self.bands) {
            return Err(ParamError::new(
                "priomap",
                b,
                format!("must name a band below bands = {}", self.bands),
            ));
        }
        self.bands_of()?;
        for c in &self.class {
            if let Some(f) = &c.filter {
                f.validate(&c.classid)?;
            }
        }
        Ok(())
    }

    fn validate_on(&self, link: &LinkInfo) -> Result<(), ParamError> {
        self.validate()?;
        for c in &self.class {
            // The group names are checked where the caller knows them (a
            // scenario's link); a tc line alone does not.
            if let Some(f) = c.filter.as_ref().filter(|_| !link.groups.is_empty()) {
                f.compile(&c.classid, link.groups)?;
            }
            if let Some(q) = &c.qdisc {
                validate_leaf(q, link.rate, &c.classid)?;
            }
        }
        Ok(())
    }

    fn build(&self, link: &LinkInfo) -> Result<Prio, ParamError> {
        self.validate_on(link)?;
        let bands = self.bands_of()?;
        let major = parse_handle(&self.handle)?;
        let mut leaves = Vec::with_capacity(self.bands as usize);
        for band in 0..self.bands as usize {
            let class = bands
                .iter()
                .position(|&b| b == band)
                .map(|i| &self.class[i]);
            let name = class.map_or_else(String::new, |c| c.classid.clone());
            let spec = leaf_spec(class.and_then(|c| c.qdisc.as_deref()), BAND_LIMIT);
            let id = major << 16 | (band as u32 + 1);
            leaves.push(build_leaf(&spec, &leaf_link(link, link.rate, id), &name)?);
        }
        let mut filters = Vec::new();
        for (c, &band) in self.class.iter().zip(&bands) {
            if let Some(f) = &c.filter {
                filters.push((band, f.compile(&c.classid, link.groups)?));
            }
        }
        let mut priomap = [0u8; 16];
        priomap.copy_from_slice(&self.priomap);
        Ok(Prio {
            leaves,
            filters,
            priomap,
            groups: FlowGroups::new(link),
            limit: self.limit,
            len: 0,
            bytes: 0,
            wake: None,
        })
    }

    fn property_configs() -> Vec<Self> {
        examples::property_configs()
    }
}

/// Linux's prio over leaves of any kind.
#[derive(Clone, Debug)]
pub struct Prio {
    leaves: Vec<AnyQdisc>,
    /// Bands with a filter, in the order written.
    filters: Vec<(usize, CompiledFilter)>,
    priomap: [u8; 16],
    groups: FlowGroups,
    limit: u32,
    len: usize,
    bytes: u64,
    wake: Option<Time>,
}

impl Prio {
    /// `prio_classify`: a filter's band, else the priomap's for the TOS.
    fn classify(&self, pkt: &Packet) -> usize {
        if !self.filters.is_empty() {
            let group = self.groups.of(pkt);
            if let Some(&(band, _)) = self
                .filters
                .iter()
                .find(|(_, f)| f.matches(group, pkt.dscp))
            {
                return band;
            }
        }
        self.priomap[dscp_priority(pkt.dscp) as usize] as usize
    }

    /// Runs `op` on band `b`, keeping the counts.
    fn on_band<R>(&mut self, b: usize, op: impl FnOnce(&mut AnyQdisc) -> R) -> R {
        let q = &mut self.leaves[b];
        let (len, bytes) = (q.len(), q.bytes());
        let r = op(q);
        self.len = self.len - len + q.len();
        self.bytes = self.bytes - bytes + q.bytes();
        r
    }
}

impl Qdisc for Prio {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        if self.len >= self.limit as usize {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        let band = self.classify(&pkt);
        self.on_band(band, |q| q.enqueue(pkt, ctx))
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.wake = None;
        for b in 0..self.leaves.len() {
            if self.leaves[b].is_empty() {
                continue;
            }
            if let Some(pkt) = self.on_band(b, |q| q.dequeue(ctx)) {
                return Some(pkt);
            }
        }
        // Every band empty or holding its packets (a shaper in a band).
        self.wake = self
            .leaves
            .iter()
            .filter(|q| !q.is_empty())
            .filter_map(|q| q.wake_at())
            .min();
        None
    }

    fn len(&self) -> usize {
        self.len
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The qdisc's own bound, as HTB's: the bands' limits need not share a unit.
    fn limit(&self) -> Limit {
        Limit::Packets(self.limit)
    }

    fn wake_at(&self) -> Option<Time> {
        self.wake
    }

    /// Every band feeds the link directly: each follows its rate.
    fn set_link_rate(&mut self, rate: Rate) {
        for q in &mut self.leaves {
            q.set_link_rate(rate);
        }
    }
}

impl crate::table_bytes::TableBytes for PrioParams {
    /// The bands' keyed tables, added up.
    fn table_bytes(&self, link: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
        let bands = (self.class.iter()).filter_map(|c| Some((c.qdisc.as_deref()?, link.rate)));
        tree::leaves_table_bytes(bands, link, "the bands' qdiscs")
    }
}

/// Whether the qdisc reads the flow table: a filter by group, or a band that does.
pub(crate) fn uses_flow_table(p: &PrioParams) -> bool {
    tree::reads_flow_table(
        p.class
            .iter()
            .map(|c| (c.filter.as_ref(), c.qdisc.as_deref())),
    )
}

mod examples;
#[cfg(test)]
mod tests;
