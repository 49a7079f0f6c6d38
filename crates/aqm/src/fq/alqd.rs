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

use super::classes::{ClassId, Classes};
use super::manager::{head_of, Admit, BufferManager};
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

#[cfg(test)]
mod tests {
    use crate::any::AnyQdisc;
    use crate::fq::buffer::Buffer;
    use crate::fq::testkit::{build, inside, offer, table};
    use crate::rng;
    use crate::testing::Harness;
    use rand::Rng as _;

    /// (largest len / weight, the registered class's len / weight).
    fn longest_and_registered(h: &Harness<AnyQdisc>) -> (f64, Option<f64>) {
        let (c, b) = inside(h.q.qdisc());
        let Buffer::Alqd(m) = b else { unreachable!() };
        let most = c.live().map(|id| c.normalized(id)).fold(0.0, f64::max);
        (most, m.registered().map(|id| c.normalized(id)))
    }

    #[test]
    fn under_arrivals_alone_the_register_names_a_longest_queue() {
        let t = [table(&[1], 1), table(&[2], 2), table(&[3], 3)].concat();
        let mut h = build(
            "kind = \"wfq\"\nclassify = \"aggregate\"\nlimit = 100000\nbuffer = \"alqd\"",
            &t,
        );
        let mut r = rng::stream(5, 0);
        for seq in 0..5_000 {
            let agg = r.gen_range(1..=3);
            offer(&mut h, agg * 100, agg, 1000, seq);
            let (most, reg) = longest_and_registered(&h);
            assert_eq!(reg, Some(most));
        }
    }

    /// With departures the register can name a queue that has shrunk; whenever it
    /// names a longest queue, ALQD drops exactly where LQD would.
    #[test]
    fn alqd_drops_where_lqd_would_whenever_its_register_is_current() {
        let t = [
            table(&[1], 1),
            table(&[2], 2),
            table(&[3], 3),
            table(&[4], 1),
        ]
        .concat();
        let mut h = build(
            "kind = \"drr\"\nclassify = \"aggregate\"\nlimit = 20\nbuffer = \"alqd\"",
            &t,
        );
        let mut r = rng::stream(6, 0);
        let (mut current, mut stale) = (0, 0);
        for seq in 0..40_000u32 {
            if r.gen_bool(0.4) {
                h.dequeue();
                continue;
            }
            let agg = r.gen_range(1..=4);
            let (most, reg) = longest_and_registered(&h);
            let full = h.q.len() == 20;
            let drops_before = h.sink.drops.len();
            offer(&mut h, agg * 100, agg, 1000, seq);
            if !full {
                continue;
            }
            if reg != Some(most) {
                stale += 1;
                continue;
            }
            current += 1;
            // The victim's queue had the largest length over weight, counting the
            // arrival in its own queue (its length now, plus the packet it lost,
            // minus the arrival if it is the same queue).
            let victim = h.sink.drops[drops_before].0.aggregate;
            let (c, _) = inside(h.q.qdisc());
            let w = c.weight_of_key(victim);
            let with_arrival = c.find(victim).map_or(0, |id| c.len_of(id)) + 1;
            let own_after = c.find(agg).map_or(0, |id| c.len_of(id));
            let own = own_after as f64 / c.weight_of_key(agg);
            assert!(
                with_arrival as f64 / w >= most.max(own) - 1e-12,
                "victim {victim} ({with_arrival}/{w}) but longest {most}"
            );
        }
        assert!(
            current > 1_000 && stale > 100,
            "current {current}, stale {stale}"
        );
    }
}
