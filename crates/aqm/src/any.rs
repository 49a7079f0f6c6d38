//! The registry of built-in qdiscs: [`QdiscSpec`] (what a scenario says, tagged by
//! `kind`) and [`AnyQdisc`] (what the engine runs, dispatched statically as smoltcp's
//! `AnyController`). Adding a qdisc is one line in the `registry!` call below.
//!
//! Every qdisc but DropTail is boxed: an enum is as large as its largest variant,
//! and a dumbbell of a million flows has four million DropTail access links that
//! would otherwise each carry room for an SFB (BENCHMARKS.md, memory per flow).
//! DropTail stays inline because it is most links and the cheapest to run.

use crate::blue::{Blue, BlueParams};
use crate::breathe::{Breathe, BreatheParams};
use crate::choke::{Choke, ChokeParams};
use crate::codel::{Codel, CodelParams};
use crate::droptail::{DropTail, DropTailParams};
use crate::drr::Drr;
use crate::fq::FqParams;
use crate::fq_codel::{FqCodel, FqCodelParams};
use crate::fred::{Fred, FredParams};
use crate::mrul::{Mrul, MrulParams};
use crate::nlred::{Nlred, NlredParams};
use crate::packet::Packet;
use crate::pie::{Pie, PieParams};
use crate::qdisc::{Ctx, Limit, LinkInfo, ParamError, Qdisc, Verdict};
use crate::red::{Red, RedParams};
use crate::sfb::{Sfb, SfbParams};
use crate::sfq::{Sfq, SfqParams};
use crate::sfred::{Sfred, SfredParams};
use crate::wfq::Wfq;
use serde::{Deserialize, Serialize};

macro_rules! registry {
    ($( $(#[$doc:meta])* $variant:ident = $kind:literal: $store:ty, $params:ty, |$p:ident, $link:ident| $build:expr; )*) => {
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

            /// This spec's `kind`.
            pub fn kind(&self) -> &'static str {
                match self { $( QdiscSpec::$variant(_) => $kind, )* }
            }

            /// Validates the parameters and builds the qdisc for a link.
            pub fn build(&self, link: &LinkInfo) -> Result<AnyQdisc, ParamError> {
                match self {
                    $( QdiscSpec::$variant($p) => {
                        let $link = link;
                        let _ = $link;
                        Ok(AnyQdisc::$variant(<$store>::from($build?)))
                    } )*
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
        }
    };
}

registry! {
    /// A FIFO with tail or front drop.
    DropTail = "droptail": DropTail, DropTailParams, |p, _link| DropTail::new(p.clone());
    /// Random Early Detection, with gentle (GRED), adaptive, byte mode and ECN.
    Red = "red": Box<Red>, RedParams, |p, link| Red::new(p.clone(), link);
    /// BLUE: one marking probability raised on overflow, lowered on idle.
    Blue = "blue": Box<Blue>, BlueParams, |p, _link| Blue::new(p.clone());
    /// Stochastic Fair BLUE: Bloom-filter bins of BLUE, rate-limits pmin = 1 flows.
    Sfb = "sfb": Box<Sfb>, SfbParams, |p, _link| Sfb::new(p.clone());
    /// Stochastic Fair RED (SFB paper III-A): Bloom-filter bins of adaptive RED.
    Sfred = "sfred": Box<Sfred>, SfredParams, |p, link| Sfred::new(p.clone(), link);
    /// CHOKe: RED plus matched drops of the arrival and queued packets of its flow.
    Choke = "choke": Box<Choke>, ChokeParams, |p, link| Choke::new(p.clone(), link);
    /// BREATHe: RED plus drops of flows in a heavy-hitter set of C / r_limit counters.
    Breathe = "breathe": Box<Breathe>, BreatheParams, |p, link| Breathe::new(p.clone(), link);
    /// Scalable Fair RED over a Most-Recently-Used List of flows.
    Mrul = "mrul": Box<Mrul>, MrulParams, |p, link| Mrul::new(p.clone(), link);
    /// Nonlinear RED: a quadratic drop curve with 1.5 max_p.
    Nlred = "nlred": Box<Nlred>, NlredParams, |p, link| Nlred::new(p.clone(), link);
    /// Stochastic Fair Queueing: hashed per-bin queues served by DRR, optional RED per bin.
    Sfq = "sfq": Box<Sfq>, SfqParams, |p, link| Sfq::new(p.clone(), link);
    /// CoDel (RFC 8289): drops at dequeue once the sojourn stays above target.
    Codel = "codel": Box<Codel>, CodelParams, |p, _link| Codel::new(p.clone());
    /// FQ-CoDel (RFC 8290): hashed flow queues served by DRR, CoDel in each.
    FqCodel = "fq_codel": Box<FqCodel>, FqCodelParams, |p, _link| FqCodel::new(p.clone());
    /// PIE (RFC 8033): a PI controller of the drop probability on queueing delay.
    Pie = "pie": Box<Pie>, PieParams, |p, _link| Pie::new(p.clone());
    /// FRED (Lin & Morris 1997): RED with per-active-flow counts and strikes.
    Fred = "fred": Box<Fred>, FredParams, |p, link| Fred::new(p.clone(), link);
    /// Weighted fair queueing (packet-by-packet GPS) per flow or per aggregate,
    /// with a buffer manager (DropTail, DropFront, LQD, ALQD, ALQD+).
    Wfq = "wfq": Box<Wfq>, FqParams, |p, link| Wfq::new(p.clone(), link);
    /// Deficit round robin per flow or per aggregate, with the same buffer managers.
    Drr = "drr": Box<Drr>, FqParams, |p, link| Drr::new(p.clone(), link);
}

impl QdiscSpec {
    /// Whether the qdisc reads the flows routed over its link
    /// ([`LinkInfo::flows`]): the engine builds that table only for those.
    pub fn uses_flow_table(&self) -> bool {
        matches!(self, QdiscSpec::Wfq(_) | QdiscSpec::Drr(_))
    }
}

impl Default for QdiscSpec {
    fn default() -> Self {
        QdiscSpec::DropTail(DropTailParams::default())
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
