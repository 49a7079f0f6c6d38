//! Unit tests of a link's queue and transmitter.

use super::{ceil_ns, Link, Queue, QueuePool};
use crate::event::Deferred;
use crate::wire::WireSlab;
use aqm::{Dur, FlowId, Packet, Rate, Time, VecSink};
use proptest::prelude::*;

/// An access link's DropTail exists only while packets wait in it, and behaves
/// as a DropTail throughout: FIFO order, counts, an empty one passes through.
#[test]
fn a_lazy_droptail_is_built_while_packets_wait_and_freed_after() {
    let (mut q, mut sink, t) = (Queue::lazy_droptail(), VecSink::default(), Time::ZERO);
    let mut pool = QueuePool::default();
    assert!(q.0.is_none() && q.is_empty() && q.passes_through_when_empty());
    assert_eq!(q.kind(), "droptail");
    assert!(q.dequeue(t, &mut sink, &mut pool).is_none());
    for round in 0..2 {
        for i in 0..3 {
            q.enqueue(Packet::new(FlowId(i), 1000), t, &mut sink, &mut pool);
        }
        assert_eq!((q.len(), q.bytes()), (3, 3000), "round {round}");
        assert!(q.0.is_some() && pool.0.is_empty(), "taken from the pool");
        for i in 0..3 {
            let got = q.dequeue(t, &mut sink, &mut pool).map(|p| p.flow);
            assert_eq!(got, Some(FlowId(i)));
            assert_eq!(q.0.is_none(), i == 2, "returned only when empty");
        }
        assert_eq!(pool.0.len(), 1);
    }
    assert!(sink.drops.is_empty());
}

/// A monitored link keeps its queue (the observer's index lives there): a
/// lazy DropTail becomes a kept one, never handed back to the pool.
#[test]
fn a_monitored_access_link_keeps_its_droptail() {
    let (mut q, mut sink, t) = (Queue::lazy_droptail(), VecSink::default(), Time::ZERO);
    let mut pool = QueuePool::default();
    assert_eq!(q.monitor(), None);
    q.set_monitor(3);
    assert_eq!((q.monitor(), q.kind()), (Some(3), "droptail"));
    q.enqueue(Packet::new(FlowId(0), 1000), t, &mut sink, &mut pool);
    assert!(q.dequeue(t, &mut sink, &mut pool).is_some());
    assert!(q.0.is_some() && pool.0.is_empty());
    assert_eq!(q.monitor(), Some(3));
}

/// The transmitter's states: a begun packet waits in the slab; sent ahead it
/// is on the wire; ended it is on the wire and the link is free.
#[test]
fn a_packet_in_transmission_waits_in_the_wire_slab() {
    let mut wires = WireSlab::default();
    let mut link = Link::new(0, 1, 0, Queue::lazy_droptail());
    let rate = Rate::from_mbps(8); // 1000 bytes in 1 ms
    let ms = |n: u64| Time::from_nanos(n * 1_000_000);
    assert!(!link.is_busy());
    assert_eq!(
        link.begin_tx(Packet::new(FlowId(7), 1000), ms(0), rate, &mut wires),
        ms(1)
    );
    assert!(link.is_busy() && !link.sent_ahead());
    let (pkt, bits) = link
        .in_progress(Time::from_nanos(500_000), rate, &wires)
        .unwrap();
    assert_eq!((pkt.flow, bits), (FlowId(7), 4000));
    let node = link.end_tx();
    assert!(wires.parked(node).flow == FlowId(7) && !link.is_busy());
    assert!(wires.push_parked(&mut link.wire, node, ms(3)), "the first");
    assert_eq!(wires.front_arrival(&link.wire), Some(ms(3)));
    // Back to back: timed from the busy period's start; sent ahead at once.
    assert_eq!(
        link.begin_tx(Packet::new(FlowId(8), 1000), ms(1), rate, &mut wires),
        ms(2)
    );
    let node = link.send_ahead();
    assert!(
        !wires.push_parked(&mut link.wire, node, ms(4)),
        "behind the first"
    );
    assert!(link.is_busy() && link.sent_ahead());
    assert!(link.in_progress(ms(1), rate, &wires).is_none());
    link.deferred = Deferred::NONE;
    assert!(!link.free_before(ms(5)), "its end is queued");
    link.end_sent_ahead();
    assert!(!link.is_busy() && link.free_before(ms(2)));
    assert_eq!(link.go_idle(ms(2)), Dur::from_nanos(2_000_000));
}

/// Cut-through's start: a packet on its way is timed as a begun one would be,
/// sent ahead, and the transmitter is free only strictly after its end.
#[test]
fn a_packet_sent_ahead_on_arrival_is_timed_from_the_busy_period() {
    let mut link = Link::new(0, 1, 0, Queue::lazy_droptail());
    let rate = Rate::from_mbps(8);
    let ms = |n: u64| Time::from_nanos(n * 1_000_000);
    assert_eq!(link.begin_tx_ahead(1000, ms(5), rate), ms(6));
    assert!(link.sent_ahead());
    let mut queue = crate::event::EventQueue::new();
    link.deferred = queue.defer(ms(6), 0);
    assert!(!link.free_before(ms(6)) && link.free_before(ms(6) + Dur::from_nanos(1)));
    // Back to back with the first: 2 ms after the busy period began.
    link.end_sent_ahead();
    assert_eq!(link.begin_tx_ahead(1000, ms(6), rate), ms(7));
}

/// One cache line, aligned to one: the size the engine's prefetch and the
/// memory estimate (BENCHMARKS.md, cost per flow) count on. A dumbbell has
/// four per flow; at 128 bytes they were 512 bytes of a flow's 1,247.
#[test]
fn a_link_is_one_cache_line() {
    assert_eq!(std::mem::size_of::<Link>(), 64);
    assert_eq!(std::mem::align_of::<Link>(), 64);
}

proptest! {
    /// The u64 path rounds exactly as the u128 one, on both sides of its limit.
    #[test]
    fn ceil_ns_matches_u128_arithmetic(
        bits in prop_oneof![0u64..1 << 40, 0u64..=u64::MAX],
        bps in 1u64..=u64::MAX,
    ) {
        let want = (u128::from(bits) * 1_000_000_000).div_ceil(u128::from(bps)).min(u64::MAX as u128) as u64;
        prop_assert_eq!(ceil_ns(bits, bps), want);
    }
}

/// Validation builds no link of rate 0; one built anyway (a library user's own
/// `Pipe`) sends at 1 bit/s and reads its progress without dividing by zero.
#[test]
fn a_link_of_rate_zero_does_not_panic() {
    let mut wires = WireSlab::default();
    let mut link = Link::new(0, 1, 0, Queue::lazy_droptail());
    let zero = Rate::from_bps(0);
    let done = link.begin_tx(Packet::new(FlowId(1), 125), Time::ZERO, zero, &mut wires);
    assert_eq!(done, Time::from_secs(1000), "1,000 bits at 1 bit/s");
    let (_, bits) = link.in_progress(Time::from_secs(10), zero, &wires).unwrap();
    assert_eq!(bits, 10);
}
