//! Packets propagating on the wires of every link, in one slab.
//!
//! Each link direction's wire is a FIFO (the delay is fixed, so packets arrive in
//! the order they left). A `VecDeque` per link direction held a buffer of its own
//! from its first packet on: four per flow in a dumbbell, about 830 bytes per flow
//! at a million flows, almost all of it empty at any instant. Here a wire is two
//! indices into one shared slab of nodes linked in send order, so memory follows
//! the packets in flight, not the number of links.

use aqm::{Packet, Time};

const NIL: u32 = u32::MAX;

/// One link direction's wire: the oldest and newest packet on it.
#[derive(Copy, Clone, Debug)]
pub struct Wire {
    head: u32,
    tail: u32,
}

impl Default for Wire {
    fn default() -> Self {
        Wire {
            head: NIL,
            tail: NIL,
        }
    }
}

impl Wire {
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

struct Node {
    arrives: Time,
    pkt: Packet,
    next: u32,
}

/// The nodes of every wire, recycled through a free list.
#[derive(Default)]
pub struct WireSlab {
    nodes: Vec<Node>,
    free: Vec<u32>,
}

impl WireSlab {
    /// Puts `pkt` at the back of `wire`, arriving at `arrives`; returns whether the
    /// wire was empty (the caller then schedules its `Arrive`).
    #[inline]
    pub fn push_back(&mut self, wire: &mut Wire, arrives: Time, pkt: Packet) -> bool {
        let i = self.park(pkt);
        self.push_parked(wire, i, arrives)
    }

    /// Keeps `pkt` in a node of its own, on no wire yet: the packet a link is
    /// serializing waits here (not in the link, which stays one cache line), and
    /// its node goes on the wire when the last bit leaves (`push_parked`).
    #[inline]
    pub fn park(&mut self, pkt: Packet) -> u32 {
        let node = Node {
            arrives: Time::MAX,
            pkt,
            next: NIL,
        };
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                u32::try_from(self.nodes.len() - 1)
                    .ok()
                    .filter(|&i| i < NIL - 1)
                    .expect("fewer than 2^32 - 2 packets in flight")
            }
        }
    }

    /// The packet parked in node `i`.
    #[inline]
    pub fn parked(&self, i: u32) -> &Packet {
        &self.nodes[i as usize].pkt
    }

    /// The packet parked in node `i`, to change (cut-through hands it on).
    #[inline]
    pub fn parked_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.nodes[i as usize].pkt
    }

    /// Takes the packet parked in node `i` and frees the node (a packet that
    /// may overtake others arrives by an event of its own, on no wire).
    #[inline]
    pub fn take_parked(&mut self, i: u32) -> Packet {
        self.free.push(i);
        self.nodes[i as usize].pkt
    }

    /// Puts the packet parked in node `i` at the back of `wire`, arriving at
    /// `arrives`; returns whether the wire was empty.
    #[inline]
    pub fn push_parked(&mut self, wire: &mut Wire, i: u32, arrives: Time) -> bool {
        self.nodes[i as usize].arrives = arrives;
        let was_empty = wire.is_empty();
        if was_empty {
            wire.head = i;
        } else {
            self.nodes[wire.tail as usize].next = i;
        }
        wire.tail = i;
        was_empty
    }

    /// Takes the oldest packet off `wire`.
    #[inline]
    pub fn pop_front(&mut self, wire: &mut Wire) -> Option<(Time, Packet)> {
        if wire.is_empty() {
            return None;
        }
        let i = wire.head;
        let node = &self.nodes[i as usize];
        wire.head = node.next;
        if wire.head == NIL {
            wire.tail = NIL;
        }
        self.free.push(i);
        Some((node.arrives, node.pkt))
    }

    /// When the oldest packet on `wire` arrives.
    #[inline]
    pub fn front_arrival(&self, wire: &Wire) -> Option<Time> {
        (!wire.is_empty()).then(|| self.nodes[wire.head as usize].arrives)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqm::FlowId;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// A parked packet (a link's packet in transmission) is on no wire until it is
    /// pushed, and then behind every packet already there; its node is reused.
    #[test]
    fn a_parked_packet_joins_the_wire_when_pushed() {
        let mut slab = WireSlab::default();
        let mut wire = Wire::default();
        let t = Time::from_nanos;
        assert!(slab.push_back(&mut wire, t(5), Packet::new(FlowId(1), 1)));
        let i = slab.park(Packet::new(FlowId(2), 1));
        assert_eq!(slab.parked(i).flow, FlowId(2));
        assert_eq!(slab.front_arrival(&wire), Some(t(5)));
        assert!(
            !slab.push_parked(&mut wire, i, t(9)),
            "the wire was not empty"
        );
        let got: Vec<_> = std::iter::from_fn(|| slab.pop_front(&mut wire))
            .map(|(t, p)| (t.as_nanos(), p.flow.0))
            .collect();
        assert_eq!(got, [(5, 1), (9, 2)]);
        assert_eq!(
            slab.park(Packet::new(FlowId(3), 1)),
            i,
            "freed nodes are reused"
        );
    }

    proptest! {
        /// Several wires sharing one slab each behave as their own FIFO.
        #[test]
        fn wires_in_one_slab_are_independent_fifos(
            ops in proptest::collection::vec((0usize..4, any::<bool>()), 0..400),
        ) {
            let mut slab = WireSlab::default();
            let mut wires = [Wire::default(); 4];
            let mut model: [VecDeque<(Time, u32)>; 4] = Default::default();
            for (i, (w, push)) in ops.into_iter().enumerate() {
                if push {
                    let t = Time::from_nanos(i as u64);
                    let was_empty = slab.push_back(&mut wires[w], t, Packet::new(FlowId(i as u32), 1));
                    prop_assert_eq!(was_empty, model[w].is_empty());
                    model[w].push_back((t, i as u32));
                } else {
                    let got = slab.pop_front(&mut wires[w]).map(|(t, p)| (t, p.flow.0));
                    prop_assert_eq!(got, model[w].pop_front());
                }
                prop_assert_eq!(slab.front_arrival(&wires[w]), model[w].front().map(|m| m.0));
                prop_assert_eq!(wires[w].is_empty(), model[w].is_empty());
            }
            let live: usize = model.iter().map(VecDeque::len).sum();
            prop_assert_eq!(slab.nodes.len() - slab.free.len(), live);
        }
    }
}
