//! DropTail for a fair queue (`buffer = "droptail"`): when the shared buffer is
//! full the arrival is dropped (`overflow`), whatever its class holds.
//!
//! The global baseline Suter et al. (INFOCOM 1998) and Sun & Shin (003, II) start
//! from: the scheduler isolates bandwidth but not buffer, so a class that keeps the
//! buffer full shuts the others out of it, which is why per-flow FQ alone "provides
//! few advantages over FIFO queueing" (003, II).

use super::classes::{ClassId, Classes};
use super::manager::{Admit, BufferManager};
use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::qdisc::Ctx;

#[derive(Debug, Clone, Default)]
pub struct DropTail;

impl BufferManager for DropTail {
    #[inline]
    fn admit(&mut self, classes: &Classes, _k: ClassId, _pkt: &Packet, _: &mut Ctx<'_>) -> Admit {
        if classes.is_full() {
            Admit::DropArrival(DropReason::Overflow)
        } else {
            Admit::Accept
        }
    }
}
