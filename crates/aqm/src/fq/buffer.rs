//! The buffer managers as one type: the `buffer = ...` key ([`BufferKind`]) and
//! [`Buffer`], the static dispatch over the managers, one file each
//! ([`super::droptail`], [`super::dropfront`], [`super::lqd`], [`super::alqd`],
//! [`super::alqd_plus`]). What a manager is, the interface they implement, is
//! [`super::manager`]; a manager names that, never this file.

use super::alqd::Alqd;
use super::alqd_plus::{AlqdPlus, AlqdPlusConfig};
use super::classes::{ClassId, Classes};
use super::dropfront::DropFront;
use super::droptail::DropTail;
use super::lqd::Lqd;
use super::manager::{Admit, BufferManager};
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
