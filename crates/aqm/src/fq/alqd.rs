//! ALQD, Approximated Longest Queue Drop (`buffer = "alqd"`; Suter, Lakshman,
//! Stiliadis & Choudhury, INFOCOM 1998, as summarised by Sun & Shin, 003 IV): LQD
//! with the search for the longest queue replaced by a register updated on every
//! queue operation ([`LongestRegister`]), so a drop costs O(1) whatever the number
//! of queues.
//!
//! When the buffer is full, the head of the registered queue is dropped
//! (`push_out`), or the head of the arrival's own queue (`front_drop`) when it,
//! counting the arrival, is at least as long as the registered one. Lengths are
//! relative to the weights (Sun & Shin's weighted fair share). Like LQD it drops
//! from the front: Sun & Shin's ALQD+ flowchart drops "as in ALQD, the first packet
//! from the longest queue".

use super::buffer::{head_of, Admit, BufferManager};
use super::classes::{ClassId, Classes};
use super::register::LongestRegister;
use crate::packet::Packet;
use crate::qdisc::Ctx;

#[derive(Debug, Clone, Default)]
pub struct Alqd {
    register: LongestRegister,
}

impl Alqd {
    /// The class the register names.
    pub fn registered(&self) -> Option<ClassId> {
        self.register.get()
    }
}

impl BufferManager for Alqd {
    #[inline]
    fn admit(&mut self, classes: &Classes, k: ClassId, _pkt: &Packet, _: &mut Ctx<'_>) -> Admit {
        if !classes.is_full() {
            return Admit::Accept;
        }
        head_of(classes, self.register.victim(classes, k), k)
    }
    #[inline]
    fn changed(&mut self, classes: &Classes, c: ClassId) {
        self.register.touched(classes, c);
    }
    fn released(&mut self, c: ClassId) {
        self.register.released(c);
    }
}
