//! The interface between a fair-queueing scheduler and its buffer manager.
//!
//! The scheduler (`wfq`, `drr`) decides who sends; the buffer manager decides who
//! is dropped. On every arrival the scheduler asks [`BufferManager::admit`], which
//! answers with an [`Admit`]: queue the arrival, drop it, or drop the head of some
//! class (the arrival's own or another) and then queue it. The scheduler carries
//! the decision out (it must fix its own state when a head leaves without being
//! sent: WFQ's tags, DRR's active list) and reports every change of a class's
//! length back through [`BufferManager::changed`], so managers that index queue
//! lengths (LQD's heap, ALQD's register) see every queue operation.
//!
//! The managers ([`super::droptail`], [`super::dropfront`], [`super::lqd`],
//! [`super::alqd`], [`super::alqd_plus`]) implement this and name nothing of
//! [`super::buffer`], which dispatches over them: the arrows run buffer ->
//! managers -> this interface, never back (`crates/sim/tests/arrows.rs`).

use super::classes::{ClassId, Classes};
use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::qdisc::Ctx;
use crate::time::Time;

/// A buffer manager's answer to an arrival.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Queue the arrival; nothing is dropped.
    Accept,
    /// Drop the arrival for this reason.
    DropArrival(DropReason),
    /// Drop the head packet of `victim` for `reason`, then queue the arrival.
    DropHead { victim: ClassId, reason: DropReason },
}

/// The full-buffer answer "take a packet from `victim`'s head" for an arrival to
/// class `k`: the head is a `front_drop` when `victim` is the arrival's own queue
/// and a `push_out` otherwise; when the own queue is empty its only packet is the
/// arrival, dropped as `overflow`.
#[inline]
pub fn head_of(classes: &Classes, victim: ClassId, k: ClassId) -> Admit {
    if victim != k {
        Admit::DropHead {
            victim,
            reason: DropReason::PushOut,
        }
    } else if classes.len_of(k) > 0 {
        Admit::DropHead {
            victim,
            reason: DropReason::FrontDrop,
        }
    } else {
        Admit::DropArrival(DropReason::Overflow)
    }
}

/// What a buffer manager does. Every hook but `admit` defaults to nothing.
pub trait BufferManager {
    /// Decides the fate of `pkt`, arriving for class `k` (which exists, perhaps
    /// empty). Called before the arrival is counted in any length.
    fn admit(&mut self, classes: &Classes, k: ClassId, pkt: &Packet, ctx: &mut Ctx<'_>) -> Admit;
    /// Class `c`'s length just changed (an enqueue, a dequeue or a drop).
    fn changed(&mut self, _classes: &Classes, _c: ClassId) {}
    /// Class `c` just emptied because the link sent its last packet.
    fn emptied(&mut self, _c: ClassId, _now: Time) {}
    /// Class `c` was just created, perhaps in a reused slot.
    fn created(&mut self, _c: ClassId, _now: Time) {}
    /// Class `c` is being given back; nothing may name it afterwards.
    fn released(&mut self, _c: ClassId) {}
    /// Does the manager still need class `c`, now empty, to be kept?
    fn keeps(&self, _c: ClassId) -> bool {
        false
    }
}
