//! DropTail: a FIFO of at most `limit` packets, dropping at the tail or the front.
//!
//! The baseline every seed paper compares against. With `drop = "front"` a full
//! queue drops its head packet to admit the arrival (the DropFront of Sun & Shin,
//! 003 section 3; Linux's `bfifo`/`pfifo_head_drop`), which signals congestion to the
//! sender a full queue-delay earlier than a tail drop.

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::fifo::{backlog_of, LimitedQueue};
use crate::parts::params::qdisc_params;
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use serde::{Deserialize, Serialize};

/// Which packet a full queue gives up.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropSide {
    /// Drop the arrival.
    #[default]
    Tail,
    /// Drop the packet at the head and queue the arrival.
    Front,
}

qdisc_params! {
    /// DropTail parameters.
    pub struct DropTailParams {
        /// Capacity in packets (Linux `txqueuelen`, ns-3 `FifoQueueDisc`).
        limit: u32 = 1000,
        /// Which packet to drop when full.
        drop: DropSide = DropSide::Tail,
    }
}

impl QdiscParams for DropTailParams {
    type Qdisc = DropTail;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)
    }
    fn build(&self, _link: &LinkInfo) -> Result<DropTail, ParamError> {
        DropTail::new(self.clone())
    }
    fn property_configs() -> Vec<Self> {
        let small = DropTailParams {
            limit: 5,
            ..Default::default()
        };
        vec![
            small.clone(),
            DropTailParams {
                drop: DropSide::Front,
                ..small
            },
        ]
    }
}

#[derive(Debug, Clone)]
pub struct DropTail {
    drop: DropSide,
    queue: LimitedQueue,
}

impl DropTail {
    pub fn new(params: DropTailParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(DropTail {
            drop: params.drop,
            queue: LimitedQueue::new(params.limit),
        })
    }
}

impl DropTail {
    /// A full queue gives up the arrival or its head. Out of line, so the common
    /// path (room) stays a leaf that saves no registers.
    #[cold]
    #[inline(never)]
    fn full(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        match self.drop {
            DropSide::Tail => {
                ctx.drop(pkt, DropReason::Overflow);
                Verdict::Dropped
            }
            DropSide::Front => {
                let head = self.queue.pop_front().expect("a full queue has a head");
                ctx.drop(head, DropReason::FrontDrop);
                self.queue.push_back(pkt);
                Verdict::Queued
            }
        }
    }
}

impl Qdisc for DropTail {
    backlog_of!(queue);

    // Not inlined into `AnyQdisc`'s dispatch: there it would add register saves
    // to every other qdisc's enqueue (measured, 3 instructions a packet).
    #[inline(never)]
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        if self.queue.is_full() {
            return self.full(pkt, ctx);
        }
        self.queue.push_back(pkt);
        Verdict::Queued
    }

    fn dequeue(&mut self, _ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.queue.pop_front()
    }

    fn passes_through_when_empty(&self) -> bool {
        // An empty queue admits the arrival (limit >= 1), and the dequeue returns it.
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{rejection, Harness};

    fn droptail(limit: u32, drop: DropSide) -> Harness<DropTail> {
        Harness::new(DropTail::new(DropTailParams { limit, drop }).unwrap())
    }

    /// The engine's shortcut for an idle link: passing a packet through an empty
    /// DropTail must count exactly what an enqueue and a dequeue count, and only an
    /// empty queue may be passed through.
    #[test]
    fn passing_through_an_empty_queue_counts_as_enqueue_then_dequeue() {
        let mut queued = droptail(3, DropSide::Tail);
        let mut passed = droptail(3, DropSide::Tail);
        assert!(passed.q.passes_through());
        for seq in 0..4 {
            queued.offer(1, seq);
            let out = queued.dequeue().unwrap();
            let mut p = Packet::new(crate::packet::FlowId(1), 1000);
            p.tag = seq;
            let through = passed.q.pass_through(p, passed.now);
            assert_eq!(through, out);
        }
        assert_eq!(passed.q.counts(), queued.q.counts());
        passed.offer(1, 9);
        assert!(!passed.q.passes_through(), "a packet is queued");
    }

    #[test]
    fn tail_drop_drops_the_arrival_when_full() {
        let mut h = droptail(3, DropSide::Tail);
        for seq in 0..5 {
            h.offer(1, seq);
        }
        assert_eq!(h.dropped_seqs(DropReason::Overflow), vec![3, 4]);
        assert_eq!(h.drain_seqs(), vec![0, 1, 2]);
    }

    #[test]
    fn front_drop_drops_the_head_and_keeps_the_arrival() {
        let mut h = droptail(3, DropSide::Front);
        for seq in 0..5 {
            h.offer(1, seq);
        }
        assert_eq!(h.dropped_seqs(DropReason::FrontDrop), vec![0, 1]);
        assert_eq!(h.drain_seqs(), vec![2, 3, 4]);
    }

    #[test]
    fn zero_limit_is_rejected_by_name() {
        let e = rejection(DropTailParams {
            limit: 0,
            drop: DropSide::Tail,
        });
        assert_eq!(e, "limit = 0 must be at least 1");
    }
}
