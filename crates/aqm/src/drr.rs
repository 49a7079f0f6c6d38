//! DRR: deficit round robin per flow or per aggregate (`kind = "drr"`; Shreedhar &
//! Varghese, *Efficient fair queuing using deficit round robin*, SIGCOMM 1995), the
//! O(1) fair queueing Suter et al. and the design notes accept beside WFQ, over
//! the class table and buffer managers of [`crate::fq`]. Linux `net/sched/sch_drr.c`
//! is the reference for the round's mechanics.
//!
//! Backlogged classes form a ring. A class joining it goes to the end with a
//! deficit of its quantum, `quantum * w` bytes (rounded, at least 1). The class at
//! the front sends its head while the head fits in its deficit, paying its size;
//! when the head does not fit, the class gets another quantum and goes to the end.
//! A class that empties leaves the ring and forgets its deficit (Linux). So over
//! any interval in which two classes stay backlogged, the bytes each sends divided
//! by its weight differ by at most one quantum plus one largest packet per class.
//!
//! A head dropped by the buffer manager costs its class no deficit (it was not
//! sent); a class emptied by a drop leaves the ring. The ring is an intrusive
//! doubly-linked list over the class slots, so joining, leaving and turning are
//! O(1); choosing the next packet is O(1) amortised when `quantum * w_min` is at
//! least the largest packet (each turn then sends at least one packet).
//!
//! DRR has no virtual time, hence no DropFront livelock: `livelock_fix` is
//! rejected here. Defaults: `quantum = 1514` bytes (Linux: the device MTU plus the
//! Ethernet header).

use crate::fq::classes::{ClassId, Classes};
use crate::fq::{FairQueue, FqParams, Scheduler, SchedulerKind};
use crate::packet::Packet;
use crate::qdisc::{LinkInfo, ParamError};

/// `kind = "drr"`.
pub type Drr = FairQueue<DrrScheduler>;

/// The property tests' configurations of `drr` besides its defaults: every buffer
/// manager, per flow and per aggregate, with small quanta.
pub fn property_configs() -> Vec<FqParams> {
    crate::fq::property_configs(crate::fq::SchedulerKind::Drr)
}

const NIL: u32 = u32::MAX;

#[derive(Copy, Clone, Debug)]
struct DrrClass {
    /// Bytes the class may still send in its turn.
    deficit: i64,
    /// `quantum * weight`.
    quantum: i64,
    prev: u32,
    next: u32,
    in_ring: bool,
}

impl Default for DrrClass {
    fn default() -> Self {
        DrrClass {
            deficit: 0,
            quantum: 0,
            prev: NIL,
            next: NIL,
            in_ring: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct DrrScheduler {
    quantum: f64,
    cls: Vec<DrrClass>,
    head: u32,
    tail: u32,
}

impl DrrScheduler {
    /// Class `c`'s deficit, bytes.
    pub fn deficit(&self, c: ClassId) -> i64 {
        self.cls[c as usize].deficit
    }

    fn push_back(&mut self, c: u32) {
        let tail = self.tail;
        let s = &mut self.cls[c as usize];
        debug_assert!(!s.in_ring);
        s.in_ring = true;
        s.prev = tail;
        s.next = NIL;
        if tail == NIL {
            self.head = c;
        } else {
            self.cls[tail as usize].next = c;
        }
        self.tail = c;
    }

    fn unlink(&mut self, c: u32) {
        let s = self.cls[c as usize];
        if !s.in_ring {
            return;
        }
        if s.prev == NIL {
            self.head = s.next;
        } else {
            self.cls[s.prev as usize].next = s.next;
        }
        if s.next == NIL {
            self.tail = s.prev;
        } else {
            self.cls[s.next as usize].prev = s.prev;
        }
        let s = &mut self.cls[c as usize];
        s.in_ring = false;
        s.prev = NIL;
        s.next = NIL;
    }
}

impl Scheduler for DrrScheduler {
    const KIND: SchedulerKind = SchedulerKind::Drr;

    fn new(params: &FqParams, _link: &LinkInfo<'_>) -> Result<Self, ParamError> {
        Ok(DrrScheduler {
            quantum: params.quantum() as f64,
            cls: Vec::new(),
            head: NIL,
            tail: NIL,
        })
    }

    fn created(&mut self, c: ClassId, classes: &Classes) {
        let i = c as usize;
        if i >= self.cls.len() {
            self.cls.resize(i + 1, DrrClass::default());
        }
        self.cls[i] = DrrClass {
            quantum: ((self.quantum * classes.weight(c)).round() as i64).max(1),
            ..DrrClass::default()
        };
    }

    fn arrived(&mut self, c: ClassId, _pkt: &mut Packet, classes: &Classes) {
        if classes.len_of(c) == 0 {
            let s = &mut self.cls[c as usize];
            s.deficit = s.quantum;
            self.push_back(c);
        }
    }

    fn head_dropped(&mut self, c: ClassId, _head: &Packet, _replaced: bool, classes: &Classes) {
        if classes.len_of(c) == 0 {
            self.unlink(c);
        }
    }

    fn select(&mut self, classes: &Classes) -> Option<ClassId> {
        loop {
            let c = self.head;
            if c == NIL {
                return None;
            }
            let Some(pkt) = classes.head(c) else {
                debug_assert!(false, "class {c} in the ring is empty");
                self.unlink(c);
                continue;
            };
            let s = &mut self.cls[c as usize];
            if pkt.size as i64 <= s.deficit {
                return Some(c);
            }
            // The head does not fit: another quantum, and the turn passes on.
            s.deficit += s.quantum;
            if self.head != self.tail {
                self.unlink(c);
                self.push_back(c);
            }
        }
    }

    fn served(&mut self, c: ClassId, pkt: &Packet, classes: &Classes) {
        self.cls[c as usize].deficit -= pkt.size as i64;
        if classes.len_of(c) == 0 {
            self.unlink(c);
        }
    }

    fn idle(&self, _c: ClassId) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::any::AnyQdisc;
    use crate::fq::testkit::{backlogged, build, inside, offer, table};
    use crate::testing::Harness;

    fn drr(h: &Harness<AnyQdisc>) -> &super::Drr {
        match h.q.qdisc() {
            AnyQdisc::Drr(q) => q,
            _ => unreachable!(),
        }
    }

    #[test]
    fn backlogged_aggregates_share_in_proportion_to_weights_within_a_round() {
        let t = [table(&[1], 1), table(&[2], 2), table(&[3], 5)].concat();
        let mut h = build(
            "kind = \"drr\"\nclassify = \"aggregate\"\nquantum = 1000",
            &t,
        );
        let aggs = [(1, 1, 1.0), (2, 2, 2.0), (3, 5, 5.0)];
        // Within one quantum (per unit weight) plus a packet of each, always.
        let sent = backlogged(&mut h, &aggs, &[1000; 3], 3000, 8000, 1000.0);
        for (s, want) in sent.iter().zip([1_000_000u64, 2_000_000, 5_000_000]) {
            assert!(s.abs_diff(want) <= 5000, "sent {sent:?}");
        }
    }

    #[test]
    fn unequal_packet_sizes_share_bytes_and_small_quanta_still_converge() {
        let t = [table(&[1], 1), table(&[2], 2), table(&[3], 5)].concat();
        // A quantum of 300 bytes is below every packet but the smallest: classes
        // wait several turns for a large packet, and still get their share.
        let mut h = build(
            "kind = \"drr\"\nclassify = \"aggregate\"\nquantum = 300",
            &t,
        );
        let aggs = [(1, 1, 1.0), (2, 2, 2.0), (3, 5, 5.0)];
        let sent = backlogged(&mut h, &aggs, &[1500, 200, 700], 6000, 20_000, 300.0);
        let per_weight: Vec<f64> = sent
            .iter()
            .zip(&aggs)
            .map(|(&s, a)| s as f64 / a.2)
            .collect();
        for x in &per_weight {
            assert!((x / per_weight[0] - 1.0).abs() < 0.005, "{per_weight:?}");
        }
    }

    #[test]
    fn a_class_that_empties_leaves_the_ring_and_forgets_its_deficit() {
        let mut h = build("kind = \"drr\"\nquantum = 1500", &[]);
        offer(&mut h, 1, 0, 1000, 0);
        offer(&mut h, 2, 0, 1000, 1);
        offer(&mut h, 2, 0, 1000, 2);
        assert_eq!(h.dequeue().unwrap().tag, 0);
        // Flow 1 emptied with 500 bytes of deficit left; its slot is given back.
        assert_eq!(inside(h.q.qdisc()).0.find(1), None);
        offer(&mut h, 1, 0, 1000, 3);
        let c = inside(h.q.qdisc()).0.find(1).unwrap();
        assert_eq!(drr(&h).scheduler().deficit(c), 1500, "a fresh quantum");
        assert_eq!(h.drain_seqs(), vec![1, 3, 2]);
        assert_eq!(inside(h.q.qdisc()).0.live().count(), 0);
    }
}
