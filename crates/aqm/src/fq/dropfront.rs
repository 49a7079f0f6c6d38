//! DropFront for a fair queue (`buffer = "dropfront"`): a class may hold its
//! weighted share of the buffer, `share_k = w_k B / sum w` over the classes holding
//! packets (section V's share, the "reserved buffer space" N of section III); an
//! arrival to a class that already holds it, or to a full buffer, drops the packet
//! at the front of that class's queue (`front_drop`) and is queued. An arrival to a
//! full buffer whose queue is empty is dropped itself (`overflow`).
//!
//! Dropping from the front tells a TCP sender of congestion a whole queueing delay
//! sooner than dropping the arrival (Lakshman, Neidhardt & Ott, INFOCOM 1996; ref. 9
//! of Sun & Shin). Under WFQ it can shut an unresponsive class out entirely (Sun &
//! Shin, 003 III): that is a matter of the scheduler's tags, so the `livelock_fix`
//! key selects how `wfq` tags its queues (see `wfq.rs`); this manager only picks
//! the victim.
//!
//! Why the reservation: section III's flow has "reserved buffer space N" and drops
//! its own front when its next packet finds N of its packets queued. Without it (a
//! front drop only at a full buffer, our first reading) nothing ever takes a packet
//! from a class's queue for another class's arrival, so an unresponsive flow fills
//! the buffer and keeps it: in the paper's network (`aqmlab repro aggfq-livelock`)
//! an 800 kbit/s CBR flow of weight 10 took 2.4 times its WFQ share from 100 TCP
//! flows whose queues it kept empty, fix or no fix. The share is over the classes
//! holding packets (as LQD's and ALQD+'s), so a class alone may fill the buffer;
//! when others arrive its arrivals stop adding to it and departures bring it down.

use super::classes::{ClassId, Classes};
use super::manager::{head_of, Admit, BufferManager};
use crate::packet::Packet;
use crate::qdisc::Ctx;

#[derive(Debug, Clone, Default)]
pub struct DropFront;

impl BufferManager for DropFront {
    #[inline]
    fn admit(&mut self, classes: &Classes, k: ClassId, _pkt: &Packet, _: &mut Ctx<'_>) -> Admit {
        let len = classes.len_of(k);
        if classes.is_full() || (len > 0 && len as f64 >= classes.share(k)) {
            head_of(classes, k, k)
        } else {
            Admit::Accept
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::any::AnyQdisc;
    use crate::drop_reason::DropReason;
    use crate::fq::testkit::{build, class_len, inside, offer};
    use crate::time::Dur;

    /// Five flows of weight 1 on a link that sends one 1000-byte packet per ms.
    /// Flows 1-4 are greedy: two packets each, topped up whenever one is sent.
    /// Flow 0 is unresponsive at 0.4 packets per ms: twice its weighted share R =
    /// C/5, and more than C / (sum of the others' weights) = C/4, the condition for
    /// its tags to outrun theirs. Flow 0 fills its share of the buffer (40 / 5), so
    /// every one of its arrivals drops its own head. Returns flow 0's share of the
    /// departures in the second half of `ms` ms.
    fn unresponsive_share(config: &str, ms: u32) -> f64 {
        let mut h = build(config, &[]);
        let mut seq = 0;
        for f in 1..=4 {
            for _ in 0..2 {
                seq += 1;
                offer(&mut h, f, 0, 1000, seq);
            }
        }
        let mut late = [0u32; 2];
        for t in 0..ms {
            if let Some(p) = h.dequeue() {
                if t >= ms / 2 {
                    late[(p.flow.0 == 0) as usize] += 1;
                }
                if p.flow.0 != 0 {
                    seq += 1;
                    offer(&mut h, p.flow.0, 0, 1000, seq);
                }
            }
            if 2 * (t + 1) / 5 > 2 * t / 5 {
                seq += 1;
                offer(&mut h, 0, 0, 1000, seq);
            }
            h.advance(Dur::from_millis(1));
        }
        assert!(h.drops(DropReason::FrontDrop) > 1000);
        let greedy_drops = h.sink.drops.iter().filter(|(p, _)| p.flow.0 != 0).count();
        assert_eq!(greedy_drops, 0, "only flow 0 fills the buffer");
        late[1] as f64 / (late[0] + late[1]) as f64
    }

    #[test]
    fn without_the_fix_wfq_starves_an_over_rate_unresponsive_flow_to_zero() {
        let share = unresponsive_share(
            "kind = \"wfq\"\nlimit = 40\nbuffer = \"dropfront\"\nlivelock_fix = false",
            20_000,
        );
        assert_eq!(share, 0.0);
    }

    #[test]
    fn with_the_fix_it_gets_its_weighted_share() {
        let config = "kind = \"wfq\"\nlimit = 40\nbuffer = \"dropfront\"";
        for c in [config.to_string(), format!("{config}\nlivelock_fix = true")] {
            let share = unresponsive_share(&c, 20_000);
            assert!((share - 0.2).abs() < 0.005, "share {share}");
        }
    }

    #[test]
    fn drr_has_no_livelock_to_fix() {
        let share = unresponsive_share(
            "kind = \"drr\"\nlimit = 40\nbuffer = \"dropfront\"\nquantum = 1000",
            20_000,
        );
        assert!((share - 0.2).abs() < 0.005, "share {share}");
    }

    #[test]
    fn a_front_drop_moves_the_head_tag_only_without_the_fix() {
        for fix in [true, false] {
            let mut h = build(
                &format!("kind = \"wfq\"\nlimit = 3\nbuffer = \"dropfront\"\nlivelock_fix = {fix}"),
                &[],
            );
            for seq in 0..3 {
                offer(&mut h, 1, 0, 1000, seq);
            }
            let head_finish = |h: &crate::testing::Harness<AnyQdisc>| {
                let AnyQdisc::Wfq(q) = h.q.qdisc() else {
                    unreachable!()
                };
                let c = inside(h.q.qdisc()).0.find(1).unwrap();
                q.scheduler().head_finish(c).unwrap()
            };
            assert_eq!(head_finish(&h), 1000.0);
            // A fourth arrival to the full buffer drops the head (tag 0).
            offer(&mut h, 1, 0, 1000, 3);
            assert_eq!(h.dropped_seqs(DropReason::FrontDrop), vec![0]);
            // The fix keeps the queue's start (0): the new head finishes at 1000.
            // Without it the new head carries its own arrival tag, 2000.
            assert_eq!(head_finish(&h), if fix { 1000.0 } else { 2000.0 });
            assert_eq!(h.drain_seqs(), vec![1, 2, 3]);
        }
    }

    #[test]
    fn a_class_at_its_weighted_share_drops_its_own_front_though_the_buffer_has_room() {
        // Flow 2 (weight 4) holds a packet, so flow 1's share is 10 x 1/5 = 2.
        let class = |flow, weight| crate::qdisc::FlowClass::new(crate::FlowId(flow), flow, weight);
        let flows = [class(1, 1.0), class(2, 4.0)];
        for kind in ["wfq", "drr"] {
            let mut h = build(
                &format!("kind = \"{kind}\"\nlimit = 10\nbuffer = \"dropfront\""),
                &flows,
            );
            offer(&mut h, 2, 2, 1000, 0);
            for seq in 1..=4 {
                offer(&mut h, 1, 1, 1000, seq);
            }
            assert_eq!(h.dropped_seqs(DropReason::FrontDrop), vec![1, 2], "{kind}");
            assert_eq!(class_len(&h, 1), 2);
            assert_eq!(h.q.len(), 3);
        }
    }

    #[test]
    fn a_class_alone_may_fill_the_buffer_but_not_keep_it() {
        let mut h = build("kind = \"wfq\"\nlimit = 10\nbuffer = \"dropfront\"", &[]);
        for seq in 0..10 {
            offer(&mut h, 1, 0, 1000, seq);
        }
        assert_eq!(h.drops(DropReason::FrontDrop), 0);
        assert_eq!(h.dequeue().unwrap().flow.0, 1);
        assert_eq!(h.dequeue().unwrap().flow.0, 1);
        // A newcomer that finds room gets in; while it holds packets the incumbent
        // is above its share (5), so its arrivals replace its own head instead of
        // taking the room that departures free.
        offer(&mut h, 2, 0, 1000, 100);
        offer(&mut h, 2, 0, 1000, 101);
        assert_eq!(class_len(&h, 2), 2);
        h.dequeue();
        assert!(class_len(&h, 2) >= 1 && h.q.len() == 9);
        offer(&mut h, 1, 0, 1000, 10);
        assert_eq!(h.drops(DropReason::FrontDrop), 1);
        offer(&mut h, 2, 0, 1000, 102);
        assert_eq!(
            h.drops(DropReason::FrontDrop) + h.drops(DropReason::Overflow),
            1
        );
        assert_eq!(h.q.len(), 10);
    }

    #[test]
    fn an_arrival_whose_queue_is_empty_is_dropped_when_the_buffer_is_full() {
        let mut h = build("kind = \"drr\"\nlimit = 2\nbuffer = \"dropfront\"", &[]);
        offer(&mut h, 1, 0, 1000, 0);
        offer(&mut h, 1, 0, 1000, 1);
        offer(&mut h, 2, 0, 1000, 2);
        assert_eq!(h.dropped_seqs(DropReason::Overflow), vec![2]);
        offer(&mut h, 1, 0, 1000, 3);
        assert_eq!(h.dropped_seqs(DropReason::FrontDrop), vec![0]);
    }
}
