//! What must happen before a qdisc drops or marks early, for the checks of a
//! scenario that parses yet cannot do what it says (`sim`'s
//! `scenario/no_ops.rs`): a RED average that a `limit` not above `min_th` keeps
//! from ever crossing it, or periods no shorter than the run.
//!
//! Every parameter type answers, with no default, and the registry dispatches on
//! it ([`QdiscSpec::early_drop`]): a new qdisc does not compile until it is
//! decided, in its own file, so a RED-family qdisc cannot escape the check by
//! being missing from a list kept elsewhere.
//!
//! [`QdiscSpec::early_drop`]: crate::QdiscSpec::early_drop

use crate::parts::red_params::RedBlock;
use crate::time::Dur;

/// What must happen before a qdisc first drops or marks early.
#[derive(Clone, Debug, PartialEq)]
pub enum EarlyDrop {
    /// RED's average queue, in packets and bounded by `limit`, must exceed
    /// `min_th`: with `limit` not above `min_th` the qdisc is a DropTail.
    AboveMinTh(RedBlock),
    /// These periods (key, value) must pass before it acts at all.
    After(Vec<(&'static str, Dur)>),
    /// Nothing that its keys alone could put out of reach.
    Unchecked,
}

/// A qdisc's parameters say what must happen before it drops early.
pub trait EarlyDropRule {
    /// What must happen before the qdisc these parameters build drops early.
    fn early_drop(&self) -> EarlyDrop;
}

/// Parameters with no [`EarlyDrop::AboveMinTh`] or [`EarlyDrop::After`] rule.
macro_rules! unchecked {
    ($($t:ty),* $(,)?) => {$(
        impl EarlyDropRule for $t {
            fn early_drop(&self) -> EarlyDrop {
                EarlyDrop::Unchecked
            }
        }
    )*};
}

// No early drop, or one driven by loss and idle events or by each flow's share
// rather than by an average a short buffer keeps low.
unchecked!(
    crate::droptail::DropTailParams,
    crate::blue::BlueParams,
    crate::sfb::SfbParams,
    crate::fq::FqParams,
    crate::afd::AfdParams,
    crate::dualpi2::DualPi2Params,
    crate::cake::CakeParams,
    crate::linux_fq::FqParams,
);

// FRED has RED's thresholds but has never been checked against its `limit`. With
// `limit` below `min_th` it is a DropTail too (its per-flow cap, `maxq = min_th`,
// never binds, so no flow gets a strike), but refusing it would change which
// scenarios run: a change of behaviour of its own, not part of this move.
unchecked!(crate::fred::FredParams);

// A tree drops only in its leaves (and its direct queue), each its own kind;
// what they wait for is theirs, not checked through the tree.
unchecked!(crate::htb::HtbParams, crate::prio::PrioParams);
