//! The registry of built-in qdiscs: [`QdiscSpec`] (what a scenario says, tagged by
//! `kind`) and [`AnyQdisc`] (what the engine runs, dispatched statically as smoltcp's
//! `AnyController`). Adding a qdisc is one line in the `registry!` call below
//! (and its `pub mod` in `lib.rs`): its parameters' [`QdiscParams`] say how to
//! build it and which configurations the property tests run.
//!
//! Every qdisc but DropTail is boxed: an enum is as large as its largest variant,
//! and a dumbbell of a million flows has four million DropTail access links that
//! would otherwise each carry room for an SFB (BENCHMARKS.md, memory per flow).
//! DropTail stays inline because it is most links and the cheapest to run.

use crate::packet::Packet;
use crate::qdisc::{Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use serde::{Deserialize, Serialize};

/// How a registry entry builds its qdisc: its parameters' [`QdiscParams`], or the
/// `build` function the entry names when one parameter type serves two qdiscs
/// (`wfq` and `drr` share the fair-queueing family's `FqParams`).
macro_rules! build_of {
    ($params:ty, $p:expr, $link:expr) => {
        <$params as QdiscParams>::build($p, $link)
    };
    ($params:ty, $p:expr, $link:expr, $build:path) => {
        $build($p.clone(), $link)
    };
}

/// How a registry entry validates its parameters for a link, by the same rule.
macro_rules! validate_of {
    ($params:ty, $p:expr, $link:expr) => {
        <$params as QdiscParams>::validate_on($p, $link)
    };
    ($params:ty, $p:expr, $link:expr, $validate:path) => {
        $validate($p, $link)
    };
}

/// A registry entry's property-test configurations, by the same rule.
macro_rules! configs_of {
    ($params:ty) => {
        <$params as QdiscParams>::property_configs()
    };
    ($params:ty, $configs:path) => {
        $configs()
    };
}

macro_rules! registry {
    ($( $(#[$doc:meta])* $variant:ident = $kind:literal: $store:ty, $params:ty
        $(, build = $build:path, configs = $configs:path, validate = $validate:path)?; )*) => {
        /// A qdisc as a scenario names it: `kind` plus that qdisc's parameters.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        pub enum QdiscSpec {
            $( $(#[$doc])* #[serde(rename = $kind)] $variant($params), )*
        }

        /// Every built-in qdisc, for static dispatch on the hot path.
        #[derive(Debug, Clone)]
        pub enum AnyQdisc {
            $( $variant($store), )*
        }

        impl QdiscSpec {
            /// The `kind` names, in registry order.
            pub const KINDS: &'static [&'static str] = &[$($kind),*];

            /// Every kind's defaults followed by its own property-test
            /// configurations ([`QdiscParams::property_configs`]), in registry order.
            pub fn property_configs() -> Vec<QdiscSpec> {
                let mut all = Vec::new();
                $(
                    all.push(QdiscSpec::$variant(<$params>::default()));
                    all.extend(
                        configs_of!($params $(, $configs)?)
                            .into_iter()
                            .map(QdiscSpec::$variant),
                    );
                )*
                all
            }

            /// The keys `kind` accepts (its parameters' field names), or `None`
            /// for an unknown kind.
            pub fn keys(kind: &str) -> Option<&'static [&'static str]> {
                match kind {
                    $( $kind => Some(field_names::<$params>()), )*
                    _ => None,
                }
            }

            /// The most packets the qdisc holds (its `limit`; every qdisc has one,
            /// bounded by [`crate::qdisc::check::MAX_LIMIT`] when it validates).
            pub fn limit(&self) -> u32 {
                match self { $( QdiscSpec::$variant(p) => p.limit, )* }
            }

            /// The qdisc's tables sized by one of its keys on a link of `link`'s
            /// rate, at their largest ([`crate::table_bytes`]).
            pub fn table_bytes(&self, link: &LinkInfo) -> Option<crate::table_bytes::KeyedTable> {
                use crate::table_bytes::TableBytes;
                match self { $( QdiscSpec::$variant(p) => p.table_bytes(link), )* }
            }

            /// What must happen before the qdisc drops early, for the checks of
            /// a scenario that cannot do what it says ([`crate::early_drop`]).
            pub fn early_drop(&self) -> crate::early_drop::EarlyDrop {
                use crate::early_drop::EarlyDropRule;
                match self { $( QdiscSpec::$variant(p) => p.early_drop(), )* }
            }

            /// This spec's `kind`.
            pub fn kind(&self) -> &'static str {
                match self { $( QdiscSpec::$variant(_) => $kind, )* }
            }

            /// Every check [`QdiscSpec::build`] makes for a link of `link`'s rate,
            /// without building: when it passes, `build` on such a link succeeds
            /// (the flows a fair queue reads are checked where they are declared).
            pub fn validate(&self, link: &LinkInfo) -> Result<(), ParamError> {
                match self {
                    $( QdiscSpec::$variant(p) => validate_of!($params, p, link $(, $validate)?), )*
                }
            }

            /// Validates the parameters and builds the qdisc for a link.
            pub fn build(&self, link: &LinkInfo) -> Result<AnyQdisc, ParamError> {
                match self {
                    $( QdiscSpec::$variant(p) => Ok(AnyQdisc::$variant(<$store>::from(
                        build_of!($params, p, link $(, $build)?)?,
                    ))), )*
                }
            }
        }

        impl AnyQdisc {
            /// The `kind` this qdisc was built from.
            pub fn kind(&self) -> &'static str {
                match self { $( AnyQdisc::$variant(_) => $kind, )* }
            }
        }

        impl Qdisc for AnyQdisc {
            #[inline]
            fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
                match self { $( AnyQdisc::$variant(q) => q.enqueue(pkt, ctx), )* }
            }
            #[inline]
            fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
                match self { $( AnyQdisc::$variant(q) => q.dequeue(ctx), )* }
            }
            #[inline]
            fn len(&self) -> usize {
                match self { $( AnyQdisc::$variant(q) => q.len(), )* }
            }
            #[inline]
            fn bytes(&self) -> u64 {
                match self { $( AnyQdisc::$variant(q) => q.bytes(), )* }
            }
            fn limit(&self) -> Limit {
                match self { $( AnyQdisc::$variant(q) => q.limit(), )* }
            }
            #[inline]
            fn passes_through_when_empty(&self) -> bool {
                match self { $( AnyQdisc::$variant(q) => q.passes_through_when_empty(), )* }
            }
            fn diagnostic(&self) -> Option<String> {
                match self { $( AnyQdisc::$variant(q) => q.diagnostic(), )* }
            }
            fn set_link_rate(&mut self, rate: crate::units::Rate) {
                match self { $( AnyQdisc::$variant(q) => q.set_link_rate(rate), )* }
            }
            #[inline]
            fn wake_at(&self) -> Option<crate::time::Time> {
                match self { $( AnyQdisc::$variant(q) => q.wake_at(), )* }
            }
        }
    };
}

registry! {
    /// A FIFO with tail or front drop.
    DropTail = "droptail": crate::droptail::DropTail, crate::droptail::DropTailParams;
    /// Random Early Detection, with gentle (GRED), adaptive, byte mode and ECN.
    Red = "red": Box<crate::red::Red>, crate::red::RedParams;
    /// BLUE: one marking probability raised on overflow, lowered on idle.
    Blue = "blue": Box<crate::blue::Blue>, crate::blue::BlueParams;
    /// Stochastic Fair BLUE: Bloom-filter bins of BLUE, rate-limits pmin = 1 flows.
    Sfb = "sfb": Box<crate::sfb::Sfb>, crate::sfb::SfbParams;
    /// Stochastic Fair RED (SFB paper III-A): Bloom-filter bins of adaptive RED.
    Sfred = "sfred": Box<crate::sfred::Sfred>, crate::sfred::SfredParams;
    /// CHOKe: RED plus matched drops of the arrival and queued packets of its flow.
    Choke = "choke": Box<crate::choke::Choke>, crate::choke::ChokeParams;
    /// BREATHe: RED plus drops of flows in a heavy-hitter set of C / r_limit counters.
    Breathe = "breathe": Box<crate::breathe::Breathe>, crate::breathe::BreatheParams;
    /// Scalable Fair RED over a Most-Recently-Used List of flows.
    Mrul = "mrul": Box<crate::mrul::Mrul>, crate::mrul::MrulParams;
    /// LRU-RED (Smitha & Reddy 2001): RED plus an LRU cache of flows whose
    /// frequent visitors see a higher drop probability.
    LruRed = "lru_red": Box<crate::lru_red::LruRed>, crate::lru_red::LruRedParams;
    /// Nonlinear RED: a quadratic drop curve with 1.5 max_p.
    Nlred = "nlred": Box<crate::nlred::Nlred>, crate::nlred::NlredParams;
    /// Stochastic Fair Queueing: hashed per-bin queues served by DRR, optional RED per bin.
    Sfq = "sfq": Box<crate::sfq::Sfq>, crate::sfq::SfqParams;
    /// CoDel (RFC 8289): drops at dequeue once the sojourn stays above target.
    Codel = "codel": Box<crate::codel::Codel>, crate::codel::CodelParams;
    /// FQ-CoDel (RFC 8290): hashed flow queues served by DRR, CoDel in each.
    FqCodel = "fq_codel": Box<crate::fq_codel::FqCodel>, crate::fq_codel::FqCodelParams;
    /// PIE (RFC 8033): a PI controller of the drop probability on queueing delay.
    Pie = "pie": Box<crate::pie::Pie>, crate::pie::PieParams;
    /// REM (Athuraliya, Li, Low & Yin 2001): a price integrating rate and backlog
    /// mismatch, marking with probability 1 - phi^-price.
    Rem = "rem": Box<crate::rem::Rem>, crate::rem::RemParams;
    /// FRED (Lin & Morris 1997): RED with per-active-flow counts and strikes.
    Fred = "fred": Box<crate::fred::Fred>, crate::fred::FredParams;
    /// Weighted fair queueing (packet-by-packet GPS) per flow or per aggregate,
    /// with a buffer manager (DropTail, DropFront, LQD, ALQD, ALQD+).
    Wfq = "wfq": Box<crate::wfq::Wfq>, crate::fq::FqParams,
        build = crate::wfq::Wfq::new, configs = crate::wfq::property_configs,
        validate = crate::wfq::Wfq::validate;
    /// Deficit round robin per flow or per aggregate, with the same buffer managers.
    Drr = "drr": Box<crate::drr::Drr>, crate::fq::FqParams,
        build = crate::drr::Drr::new, configs = crate::drr::property_configs,
        validate = crate::drr::Drr::validate;
    /// AFD (Pan, Breslau, Prabhakar & Shenker 2003): drops by each flow's share of
    /// a shadow buffer of sampled arrivals against a fair share steered by the queue.
    Afd = "afd": Box<crate::afd::Afd>, crate::afd::AfdParams;
    /// DualPI2 (RFC 9332): an L4S queue and a classic queue coupled by one PI
    /// controller, p_C = p'^2 and p_L = k p', with a step in the L queue.
    DualPi2 = "dualpi2": Box<crate::dualpi2::DualPi2>, crate::dualpi2::DualPi2Params;
    /// CAKE (Høiland-Jørgensen, Täht & Morton 2018; Linux's sch_cake): set-
    /// associative flow queues with host isolation, DRR++, COBALT and a shaper.
    Cake = "cake": Box<crate::cake::Cake>, crate::cake::CakeParams;
    /// Linux's fq (sch_fq): a queue per flow served by DRR with an initial
    /// quantum for new flows, per-flow limits and pacing at `maxrate`.
    Fq = "fq": Box<crate::linux_fq::Fq>, crate::linux_fq::FqParams;
    /// Linux's HTB: a tree of classes with rate and ceil token buckets that
    /// borrow from their ancestors, leaves of any kind.
    Htb = "htb": Box<crate::htb::Htb>, crate::htb::HtbParams;
    /// Linux's prio: strict-priority bands chosen by TOS or by filter, leaves
    /// of any kind.
    Prio = "prio": Box<crate::prio::Prio>, crate::prio::PrioParams;
}

impl QdiscSpec {
    /// Whether the qdisc reads the flows routed over its link
    /// ([`LinkInfo::flows`]): the engine builds that table only for those
    /// (weights for fair queueing, hosts for CAKE, groups for a tree's
    /// filters, and whatever a tree's leaves read).
    pub fn uses_flow_table(&self) -> bool {
        match self {
            QdiscSpec::Htb(p) => crate::htb::uses_flow_table(p),
            QdiscSpec::Prio(p) => crate::prio::uses_flow_table(p),
            _ => matches!(
                self,
                QdiscSpec::Wfq(_) | QdiscSpec::Drr(_) | QdiscSpec::Cake(_)
            ),
        }
    }
}

/// The field names serde knows for `T`, read from what `T::deserialize` asks of a
/// deserializer (a struct's `FIELDS`), without parsing anything; empty when `T`
/// is not read as a struct.
pub fn field_names<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    struct Probe(&'static [&'static str]);
    impl<'de> de::Deserializer<'de> for &mut Probe {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = fields;
            Err(de::Error::custom("fields read"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            enum identifier ignored_any
        }
    }
    let mut probe = Probe(&[]);
    let _ = T::deserialize(&mut probe);
    probe.0
}

impl Default for QdiscSpec {
    fn default() -> Self {
        QdiscSpec::DropTail(Default::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_from_toml_with_defaults_and_reject_unknown_keys() {
        let spec: QdiscSpec =
            toml::from_str("kind = \"red\"\nmin_th = 100\nmax_th = 200\nlimit = 300").unwrap();
        match &spec {
            QdiscSpec::Red(p) => {
                assert_eq!((p.min_th, p.max_th, p.limit), (100.0, 200.0, 300));
                assert_eq!(p.w_q, 0.002);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(spec.kind(), "red");
        let e = toml::from_str::<QdiscSpec>("kind = \"red\"\nmin_thresh = 1").unwrap_err();
        assert!(e.to_string().contains("unknown field `min_thresh`"), "{e}");
        let e = toml::from_str::<QdiscSpec>("kind = \"fq_magic\"").unwrap_err();
        assert!(e.to_string().contains("unknown variant `fq_magic`"), "{e}");
    }

    #[test]
    fn every_kind_lists_its_keys_and_brings_property_configs_of_its_own() {
        let red = QdiscSpec::keys("red").unwrap();
        assert!(red.contains(&"min_th") && red.contains(&"byte_mode"));
        assert_eq!(QdiscSpec::keys("droptail"), Some(&["limit", "drop"][..]));
        assert_eq!(QdiscSpec::keys("fq_magic"), None);
        let configs = QdiscSpec::property_configs();
        for kind in QdiscSpec::KINDS {
            let own = configs.iter().filter(|c| c.kind() == *kind).count();
            assert!(own >= 2, "{kind}: only {own} property config(s)");
        }
    }

    #[test]
    fn every_kind_bounds_its_limit_and_validates_as_it_builds() {
        let link = LinkInfo::new(crate::units::Rate::from_mbps(10));
        for kind in QdiscSpec::KINDS {
            for limit in [0, crate::qdisc::check::MAX_LIMIT + 1, u32::MAX] {
                let text = format!("kind = \"{kind}\"\nlimit = {limit}");
                let spec: QdiscSpec = toml::from_str(&text).unwrap();
                let e = spec.validate(&link).unwrap_err();
                assert_eq!(e.key, "limit", "{kind}: {e}");
                assert!(spec.build(&link).is_err(), "{kind}");
            }
        }
        for spec in QdiscSpec::property_configs() {
            assert!(spec.validate(&link).is_ok(), "{spec:?}");
            assert_eq!(spec.build(&link).unwrap().kind(), spec.kind());
        }
        // A rule of the link: BREATHe's K = rate / rate_limit counters.
        let breathe: QdiscSpec =
            toml::from_str("kind = \"breathe\"\nrate_limit = \"1bps\"").unwrap();
        assert_eq!(breathe.validate(&link).unwrap_err().key, "rate_limit");
        assert!(breathe
            .validate(&LinkInfo::new(crate::units::Rate::from_bps(1000)))
            .is_ok());
    }

    #[test]
    fn every_kind_builds_with_its_defaults() {
        for kind in QdiscSpec::KINDS {
            let spec: QdiscSpec = toml::from_str(&format!("kind = \"{kind}\"")).unwrap();
            let q = spec
                .build(&LinkInfo::new(crate::units::Rate::from_mbps(10)))
                .unwrap();
            assert_eq!(q.kind(), *kind);
        }
    }
}
