//! Why a qdisc dropped (or marked) a packet.
//!
//! One `#[repr(u8)]` enum shared by every qdisc, as Linux's `enum
//! qdisc_drop_reason`, so counters are fixed arrays indexed by reason and a CHOKe
//! victim reports the same way as a tail drop.

use serde::Serialize;

/// The reason attached to every drop and every ECN mark.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum DropReason {
    /// The queue was full: the arrival was dropped at the tail.
    Overflow,
    /// The queue was full: the packet at the head was dropped to make room.
    FrontDrop,
    /// A probabilistic early drop (RED, BLUE, SFB, PIE, ...) below the forced region.
    Early,
    /// A forced drop: the average queue was above the hard threshold.
    Forced,
    /// CHOKe: the arrival matched a drop candidate's flow; both are dropped.
    ChokeMatch,
    /// The flow exceeded a rate limit (SFB's pmin = 1 penalty box).
    RateLimit,
    /// The flow is in the heavy-hitter set (BREATHe) or judged a fast flow (MRUL;
    /// AFD: above its fair share).
    HeavyHitter,
    /// The flow was judged unresponsive (Scalable Fair RED over MRUL), or as
    /// building the L queue (DualPI2's queue protection with `qp_sanction = "drop"`).
    Unresponsive,
    /// A queued packet was pushed out to admit the arrival (LQD, ALQD; FQ-CoDel's
    /// drops on a full queue, from the fattest flow's head: with `Overflow`, what
    /// Linux's fq_codel counts as `drop_overlimit`).
    PushOut,
    /// The packet waited too long in the queue (CoDel, FQ-CoDel).
    Sojourn,
    /// Lost on the link before its queue (the link's random loss, as netem's);
    /// never a qdisc's verdict.
    LinkLoss,
}

impl DropReason {
    /// How many reasons there are: the length of a counter array.
    pub const COUNT: usize = 11;
    /// Every reason, in `repr` order.
    pub const ALL: [DropReason; Self::COUNT] = [
        DropReason::Overflow,
        DropReason::FrontDrop,
        DropReason::Early,
        DropReason::Forced,
        DropReason::ChokeMatch,
        DropReason::RateLimit,
        DropReason::HeavyHitter,
        DropReason::Unresponsive,
        DropReason::PushOut,
        DropReason::Sojourn,
        DropReason::LinkLoss,
    ];

    pub const fn index(self) -> usize {
        self as usize
    }

    /// The snake_case name used in result tables and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::FrontDrop => "front_drop",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
            DropReason::ChokeMatch => "choke_match",
            DropReason::RateLimit => "rate_limit",
            DropReason::HeavyHitter => "heavy_hitter",
            DropReason::Unresponsive => "unresponsive",
            DropReason::PushOut => "push_out",
            DropReason::Sojourn => "sojourn",
            DropReason::LinkLoss => "link_loss",
        }
    }
}

/// A counter per drop reason.
pub type ReasonCounts = [u64; DropReason::COUNT];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_repr_order_and_names_are_unique() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
        }
        let mut names: Vec<_> = DropReason::ALL.iter().map(|r| r.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), DropReason::COUNT);
    }
}
