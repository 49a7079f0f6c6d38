//! DropFront for a fair queue (`buffer = "dropfront"`): when the shared buffer is
//! full, the packet at the front of the arrival's own queue is dropped
//! (`front_drop`) and the arrival queued; an arrival whose queue is empty is
//! dropped itself (`overflow`: its queue holds nothing else to give up).
//!
//! Dropping from the front tells a TCP sender of congestion a whole queueing delay
//! sooner than dropping the arrival (Lakshman, Neidhardt & Ott, INFOCOM 1996; ref. 9
//! of Sun & Shin). Under WFQ it can shut an unresponsive class out entirely (Sun &
//! Shin, 003 III): that is a matter of the scheduler's tags, so the `livelock_fix`
//! key selects how `wfq` tags its queues (see `wfq.rs`); this manager only picks
//! the victim.
//!
//! "The front of the queue" in a buffer shared by per-class queues is read as the
//! front of the queue the arrival joins: the paper's example (a flow with N packets
//! in its reserved space, whose head is dropped when its next packet arrives) is
//! that queue's front.

use super::buffer::{head_of, Admit, BufferManager};
use super::classes::{ClassId, Classes};
use crate::packet::Packet;
use crate::qdisc::Ctx;

#[derive(Debug, Clone, Default)]
pub struct DropFront;

impl BufferManager for DropFront {
    #[inline]
    fn admit(&mut self, classes: &Classes, k: ClassId, _pkt: &Packet, _: &mut Ctx<'_>) -> Admit {
        if classes.is_full() {
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
    use crate::fq::testkit::{build, inside, offer};
    use crate::time::Dur;

    /// Five flows of weight 1 on a link that sends one 1000-byte packet per ms.
    /// Flows 1-4 are greedy: two packets each, topped up whenever one is sent.
    /// Flow 0 is unresponsive at 0.4 packets per ms: twice its weighted share R =
    /// C/5, and more than C / (sum of the others' weights) = C/4, the condition for
    /// its tags to outrun theirs. The buffer (40) fills with flow 0's packets, so
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
