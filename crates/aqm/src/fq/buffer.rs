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
//! The managers are one file each ([`super::droptail`], [`super::dropfront`],
//! [`super::lqd`], [`super::alqd`], [`super::alqd_plus`]) and are dispatched
//! statically through [`Buffer`].

use super::alqd::Alqd;
use super::alqd_plus::{AlqdPlus, AlqdPlusConfig};
use super::classes::{ClassId, Classes};
use super::dropfront::DropFront;
use super::droptail::DropTail;
use super::lqd::Lqd;
use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::qdisc::Ctx;
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// The `buffer = ...` key.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferKind {
    /// Drop the arrival when the buffer is full.
    Droptail,
    /// Drop the head of the arrival's own queue when the buffer is full.
    Dropfront,
    /// Drop the head of the longest queue relative to its weight (Suter et al.).
    #[default]
    Lqd,
    /// LQD with a register of the longest queue instead of a search (Suter et al.).
    Alqd,
    /// ALQD with early drops, packet match and BLUE in rounds (Sun & Shin, IV).
    AlqdPlus,
}

impl BufferKind {
    pub const fn name(self) -> &'static str {
        match self {
            BufferKind::Droptail => "droptail",
            BufferKind::Dropfront => "dropfront",
            BufferKind::Lqd => "lqd",
            BufferKind::Alqd => "alqd",
            BufferKind::AlqdPlus => "alqd_plus",
        }
    }
}

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

/// Every buffer manager, for static dispatch.
#[derive(Debug, Clone)]
pub enum Buffer {
    DropTail(DropTail),
    DropFront(DropFront),
    Lqd(Lqd),
    Alqd(Alqd),
    AlqdPlus(AlqdPlus),
}

impl Buffer {
    pub fn new(kind: BufferKind, alqd_plus: AlqdPlusConfig) -> Self {
        match kind {
            BufferKind::Droptail => Buffer::DropTail(DropTail),
            BufferKind::Dropfront => Buffer::DropFront(DropFront),
            BufferKind::Lqd => Buffer::Lqd(Lqd::default()),
            BufferKind::Alqd => Buffer::Alqd(Alqd::default()),
            BufferKind::AlqdPlus => Buffer::AlqdPlus(AlqdPlus::new(alqd_plus)),
        }
    }

    pub fn kind(&self) -> BufferKind {
        match self {
            Buffer::DropTail(_) => BufferKind::Droptail,
            Buffer::DropFront(_) => BufferKind::Dropfront,
            Buffer::Lqd(_) => BufferKind::Lqd,
            Buffer::Alqd(_) => BufferKind::Alqd,
            Buffer::AlqdPlus(_) => BufferKind::AlqdPlus,
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $m:ident => $e:expr) => {
        match $self {
            Buffer::DropTail($m) => $e,
            Buffer::DropFront($m) => $e,
            Buffer::Lqd($m) => $e,
            Buffer::Alqd($m) => $e,
            Buffer::AlqdPlus($m) => $e,
        }
    };
}

impl BufferManager for Buffer {
    #[inline]
    fn admit(&mut self, classes: &Classes, k: ClassId, pkt: &Packet, ctx: &mut Ctx<'_>) -> Admit {
        dispatch!(self, m => m.admit(classes, k, pkt, ctx))
    }
    #[inline]
    fn changed(&mut self, classes: &Classes, c: ClassId) {
        dispatch!(self, m => m.changed(classes, c))
    }
    #[inline]
    fn emptied(&mut self, c: ClassId, now: Time) {
        dispatch!(self, m => m.emptied(c, now))
    }
    #[inline]
    fn created(&mut self, c: ClassId, now: Time) {
        dispatch!(self, m => m.created(c, now))
    }
    #[inline]
    fn released(&mut self, c: ClassId) {
        dispatch!(self, m => m.released(c))
    }
    #[inline]
    fn keeps(&self, c: ClassId) -> bool {
        dispatch!(self, m => m.keeps(c))
    }
}
