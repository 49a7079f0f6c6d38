//! LQD, Longest Queue Drop (`buffer = "lqd"`; Suter, Lakshman, Stiliadis &
//! Choudhury, *Design considerations for supporting TCP with per-flow queueing*,
//! INFOCOM 1998, ref. 1 of Sun & Shin): when the shared buffer is full, a packet
//! is taken from the longest queue, so a class can hold more than its share of the
//! buffer only while nobody else needs it.
//!
//! - **Longest relative to the share**: Sun & Shin weight the fair share,
//!   `share_k = w_k B / sum w`; the longest queue relative to it is the one with the
//!   largest `len_k / w_k`, whichever classes the sum runs over (it is a common
//!   factor). The arrival counts in its own queue, as in Suter et al.'s "the
//!   arriving packet is admitted and a packet is dropped from the longest queue";
//!   ties go to the arrival's own queue.
//! - **From the front**: the head of that queue goes (`front_drop` if it is the
//!   arrival's own queue, `push_out` otherwise), as Lakshman et al.'s drop from
//!   front, which Suter et al. pair with LQD and Sun & Shin's ALQD+ inherits ("the
//!   first packet from the longest queue"). When the own queue is the longest and
//!   empty (a class of tiny weight), the arrival itself is dropped (`overflow`).
//! - **Cost**: a max-heap of `len / w` over the classes holding packets, re-keyed on
//!   every queue operation: O(log n) per packet in the number of backlogged
//!   classes. Linux's `sfq` keeps unit-weight depths in buckets for O(1); weights
//!   make the keys real numbers, hence the heap.

use super::buffer::{head_of, Admit, BufferManager};
use super::classes::{ClassId, Classes};
use super::heap::IndexedHeap;
use crate::packet::Packet;
use crate::qdisc::Ctx;

#[derive(Debug, Clone, Default)]
pub struct Lqd {
    /// Backlogged classes keyed by `-len / w`: the top is a longest queue.
    longest: IndexedHeap,
}

impl Lqd {
    /// A longest class (relative to its weight), if any holds packets.
    pub fn longest(&self) -> Option<ClassId> {
        self.longest.peek().map(|(c, _)| c)
    }
}

impl BufferManager for Lqd {
    #[inline]
    fn admit(&mut self, classes: &Classes, k: ClassId, _pkt: &Packet, _: &mut Ctx<'_>) -> Admit {
        if !classes.is_full() {
            return Admit::Accept;
        }
        let own = (classes.len_of(k) + 1) as f64 / classes.weight(k);
        let victim = match self.longest.peek() {
            Some((top, neg)) if top != k && -neg > own => top,
            _ => k,
        };
        head_of(classes, victim, k)
    }

    #[inline]
    fn changed(&mut self, classes: &Classes, c: ClassId) {
        if classes.len_of(c) == 0 {
            self.longest.remove(c);
        } else {
            self.longest.set(c, -classes.normalized(c));
        }
    }

    fn released(&mut self, c: ClassId) {
        self.longest.remove(c);
    }
}
