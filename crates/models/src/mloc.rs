//! The queue of the CHOKe paper's back-CHOKe model (section IV-B; the chain is
//! [`crate::choke_back`]), as a qdisc the queue lab drives beside the real ones.

use aqm::{Ctx, DropReason, FlowId, Limit, Packet, PacketFifo, Qdisc, Verdict};
use std::collections::VecDeque;

/// The paper's back-CHOKe model (section IV-B) as a qdisc: a FIFO that remembers
/// the flow ids of the last `memory` admitted packets ("Mloc") and drops an
/// arrival whose id is among them (reported as `ChokeMatch`), even when the queue
/// is empty. Queued packets are never dropped. An arrival to a full queue is an
/// `Overflow` and leaves the memory unchanged.
#[derive(Debug, Clone)]
pub struct Mloc {
    fifo: PacketFifo,
    recent: VecDeque<FlowId>,
    memory: usize,
    limit: u32,
}

impl Mloc {
    pub fn new(memory: usize, limit: u32) -> Self {
        Mloc {
            fifo: PacketFifo::new(),
            recent: VecDeque::with_capacity(memory + 1),
            memory,
            limit,
        }
    }
}

impl Qdisc for Mloc {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        if self.recent.contains(&pkt.flow) {
            ctx.drop(pkt, DropReason::ChokeMatch);
            return Verdict::Dropped;
        }
        if self.fifo.len() >= self.limit as usize {
            ctx.drop(pkt, DropReason::Overflow);
            return Verdict::Dropped;
        }
        if self.memory > 0 {
            if self.recent.len() == self.memory {
                self.recent.pop_front();
            }
            self.recent.push_back(pkt.flow);
        }
        self.fifo.push_back(pkt);
        Verdict::Queued
    }
    fn dequeue(&mut self, _ctx: &mut Ctx<'_>) -> Option<Packet> {
        self.fifo.pop_front()
    }
    fn len(&self) -> usize {
        self.fifo.len()
    }
    fn bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn limit(&self) -> Limit {
        Limit::Packets(self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::testing::Harness;

    #[test]
    fn mloc_drops_an_arrival_whose_flow_was_among_the_last_admitted() {
        let mut h = Harness::new(Mloc::new(2, 10));
        assert_eq!(h.offer(1, 0), Verdict::Queued);
        assert_eq!(h.offer(2, 1), Verdict::Queued);
        assert_eq!(h.offer(1, 2), Verdict::Dropped); // memory (1, 2)
        assert_eq!(h.offer(3, 3), Verdict::Queued); // memory (2, 3)
        assert_eq!(h.drain_seqs(), vec![0, 1, 3]);
        // Even with the queue empty, the memory still drops flow 2 and 3.
        assert_eq!(h.offer(2, 4), Verdict::Dropped);
        assert_eq!(h.offer(1, 5), Verdict::Queued); // memory (3, 1)
        assert_eq!(h.offer(2, 6), Verdict::Queued);
        assert_eq!(h.dropped_seqs(DropReason::ChokeMatch), vec![2, 4]);
    }
}
