//! One tin's flow queues (Linux's `cake_flow` and `cake_tin_data`): each
//! queue's packets, deficit, rotation and COBALT state; a tin's new, old and
//! decaying rotations, its counts and constants; and how DRR++ picks, refills,
//! and retires a queue.

use super::hash::Tables;
use super::shaper::{ByteTime, Shaper};
use super::tins::TinConfig;
use super::{Isolation, MTU};
use crate::drop_reason::DropReason;
use crate::packet::{Ecn, Packet};
use crate::parts::cobalt::{CobaltParams, CobaltVars, Signal};
use crate::parts::fifo::PacketFifo;
use crate::qdisc::Ctx;
use crate::time::Time;
use std::collections::VecDeque;

/// Which rotation a queue is in (Linux's `CAKE_SET_*`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) enum FlowSet {
    /// Idle and unscheduled.
    #[default]
    None,
    /// Newly active: served first.
    Sparse,
    /// Empty but in the bulk rotation with credit to settle; still counted sparse.
    SparseWait,
    /// In the bulk rotation.
    Bulk,
    /// Empty, kept scheduled until its COBALT state is at rest.
    Decaying,
}

/// One flow queue.
#[derive(Clone, Debug, Default)]
pub(super) struct Flow {
    pub(super) queue: PacketFifo,
    pub(super) deficit: i32,
    pub(super) set: FlowSet,
    pub(super) cobalt: CobaltVars,
    /// Host slots it counts against.
    pub(super) src: u16,
    pub(super) dst: u16,
}

impl Flow {
    /// COBALT's verdict on `pkt`, just taken from this queue: `None` sends it
    /// (CE-marked if COBALT marks it), or the reason it is dropped. The last
    /// packet of a queue is never dropped.
    #[inline]
    pub(super) fn cobalt_verdict(
        &mut self,
        cobalt: &CobaltParams,
        pkt: &mut Packet,
        bulk_flows: u32,
        ctx: &mut Ctx<'_>,
    ) -> Option<DropReason> {
        let now = ctx.now;
        let draw = rand::RngCore::next_u32(ctx.rng);
        let sojourn = now.saturating_since(pkt.enqueued_at).as_nanos();
        let ect = pkt.ecn.is_ect();
        match self
            .cobalt
            .should_drop(cobalt, now, sojourn, bulk_flows, ect, draw)
        {
            Signal::Pass => None,
            Signal::Mark => {
                pkt.ecn = Ecn::Ce;
                ctx.sink.mark(pkt, DropReason::Sojourn);
                None
            }
            _ if self.queue.is_empty() => None,
            Signal::Drop => Some(DropReason::Sojourn),
            Signal::Blue => Some(DropReason::Unresponsive),
        }
    }
}

/// One host slot: its tags and bulk flows as a source and as a destination.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Host {
    pub(super) src_tag: u32,
    pub(super) dst_tag: u32,
    pub(super) src_bulk: u16,
    pub(super) dst_bulk: u16,
}

/// Which list a queue is served from.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum List {
    New,
    Old,
    Decaying,
}

/// `quantum_div[i] = 65535 / i`, the fixed-point share of a host with `i` flows.
pub(super) const fn quantum_div(load: u16) -> u32 {
    65535 / load as u32
}

/// One tin (Linux's `cake_tin_data`): its queues, their rotations and counts,
/// and its constants and threshold schedule from `cake_set_rate`.
#[derive(Debug, Clone)]
pub(super) struct Tin {
    pub(super) t: Tables,
    pub(super) new_flows: VecDeque<u16>,
    pub(super) old_flows: VecDeque<u16>,
    pub(super) decaying_flows: VecDeque<u16>,
    pub(super) sparse_count: u32,
    pub(super) bulk_count: u32,
    pub(super) decaying_count: u32,
    pub(super) unresponsive_count: u32,
    /// Bytes queued in the tin.
    pub(super) bytes: u64,
    pub(super) cobalt: CobaltParams,
    pub(super) flow_quantum: u32,
    /// The threshold rate in bytes per second (0: none).
    pub(super) threshold: u64,
    /// Its time per byte, none when there is no threshold.
    pub(super) rate: Option<ByteTime>,
    /// When the tin is next within its threshold.
    pub(super) time_next: Time,
    /// DRR over tins when unshaped: weight and deficit.
    pub(super) quantum: u16,
    pub(super) deficit: i32,
}

impl Tin {
    /// `cake_set_rate`: the tin's constants from its rate and one MTU's time at it.
    pub(super) fn new(c: TinConfig, target: u64, rtt: u64) -> Self {
        let rate = (c.rate > 0).then(|| ByteTime::new(c.rate));
        let flow_quantum = if c.rate > 0 {
            (c.rate >> 12).clamp(300, 1514) as u32
        } else {
            1514
        };
        let mtu_time = rate.map_or(0, |r| r.duration(MTU));
        let c_target = (mtu_time * 3 / 2).max(target);
        Tin {
            t: Tables::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            decaying_flows: VecDeque::new(),
            sparse_count: 0,
            bulk_count: 0,
            decaying_count: 0,
            unresponsive_count: 0,
            bytes: 0,
            cobalt: CobaltParams {
                target: c_target,
                interval: (rtt + c_target - target).max(c_target * 2),
                mtu_time,
                p_inc: CobaltParams::P_INC,
                p_dec: CobaltParams::P_DEC,
            },
            flow_quantum,
            threshold: c.rate,
            rate,
            time_next: Time::ZERO,
            quantum: c.quantum,
            deficit: 0,
        }
    }

    /// Queues with packets or credit to settle (decaying ones do not count).
    #[inline]
    pub(super) fn active(&self) -> bool {
        self.sparse_count + self.bulk_count > 0
    }

    /// `cake_get_flow_quantum`: the flow quantum over its host load, dithered.
    /// The queue to serve next and the list it heads (`cake_dequeue`'s
    /// `retry`): the decaying list first once per dequeue (`first`), then new,
    /// old and decaying; a head short of deficit gets a quantum and goes to the
    /// back of the old list, a sparse one becoming bulk if it still holds
    /// packets. `None` when no queue is scheduled.
    pub(super) fn next_queue(
        &mut self,
        mode: Isolation,
        first: &mut bool,
        ctx: &mut Ctx<'_>,
    ) -> Option<(List, usize)> {
        loop {
            let from = if *first && !self.decaying_flows.is_empty() {
                List::Decaying
            } else if !self.new_flows.is_empty() {
                List::New
            } else if !self.old_flows.is_empty() {
                List::Old
            } else if !self.decaying_flows.is_empty() {
                List::Decaying
            } else {
                return None;
            };
            *first = false;
            let q = *self.list(from).front().expect("non-empty list") as usize;
            if self.t.flows[q].deficit > 0 {
                return Some((from, q));
            }
            let quantum = self.quantum(mode, q, ctx);
            self.t.flows[q].deficit += quantum;
            self.move_head(from, List::Old);
            if self.t.flows[q].set == FlowSet::Sparse {
                if self.t.flows[q].queue.is_empty() {
                    self.t.flows[q].set = FlowSet::SparseWait;
                } else {
                    self.t.flows[q].set = FlowSet::Bulk;
                    self.sparse_count -= 1;
                    self.bulk_count += 1;
                    self.t.bulk_inc(mode, q);
                }
            }
        }
    }

    pub(super) fn quantum(&self, mode: Isolation, q: usize, ctx: &mut Ctx<'_>) -> i32 {
        let load = self.t.host_load(mode, q);
        let dither = (rand::RngCore::next_u32(ctx.rng) >> 16) as u64;
        ((self.flow_quantum as u64 * quantum_div(load) as u64 + dither) >> 16) as i32
    }

    /// Charges `adjusted` bytes of the tin to the shapers (a send, or a drop
    /// the upstream link carried) and to the tin's DRR deficit.
    #[inline]
    pub(super) fn charge(
        &mut self,
        shaper: &mut Option<Shaper>,
        adjusted: u32,
        dropped: bool,
        now: Time,
    ) {
        self.deficit -= adjusted as i32;
        if let Some(s) = shaper {
            self.advance(adjusted, now);
            s.advance(adjusted, dropped);
        }
    }

    /// The tin's share of `cake_advance_shaper`: its threshold schedule moves
    /// by the packet's time at the threshold rate, but never to more than one
    /// packet past now, so a tin over its threshold is not locked out for long.
    pub(super) fn advance(&mut self, adjusted: u32, now: Time) {
        let d = self.rate.map_or(0, |r| r.duration(adjusted));
        let after = |t: Time| Time::from_nanos(t.as_nanos().saturating_add(d));
        if self.time_next < now {
            self.time_next = after(self.time_next);
        } else if self.time_next < after(now) {
            self.time_next = after(now);
        }
    }

    pub(super) fn list(&mut self, l: List) -> &mut VecDeque<u16> {
        match l {
            List::New => &mut self.new_flows,
            List::Old => &mut self.old_flows,
            List::Decaying => &mut self.decaying_flows,
        }
    }

    /// Takes queue `q` off the head of list `from` and appends it to `to`.
    pub(super) fn move_head(&mut self, from: List, to: List) {
        let q = self.list(from).pop_front().expect("the served queue");
        self.list(to).push_back(q);
    }

    /// The served queue `q` (head of `from`) was found empty.
    pub(super) fn on_empty(&mut self, mode: Isolation, q: usize, from: List, now: Time) {
        let flow = &mut self.t.flows[q];
        if flow.cobalt.queue_empty(&self.cobalt, now) {
            self.unresponsive_count = self.unresponsive_count.saturating_sub(1);
        }
        let set = flow.set;
        if !flow.cobalt.at_rest(now) {
            // Kept in the rotation until its state has decayed to rest.
            self.move_head(from, List::Decaying);
            match set {
                FlowSet::Bulk => {
                    self.bulk_count -= 1;
                    self.decaying_count += 1;
                    self.t.bulk_dec(mode, q);
                }
                FlowSet::Sparse | FlowSet::SparseWait => {
                    self.sparse_count -= 1;
                    self.decaying_count += 1;
                }
                _ => {}
            }
            self.t.flows[q].set = FlowSet::Decaying;
        } else {
            self.list(from).pop_front();
            match set {
                FlowSet::Sparse | FlowSet::SparseWait => self.sparse_count -= 1,
                FlowSet::Bulk => {
                    self.bulk_count -= 1;
                    self.t.bulk_dec(mode, q);
                }
                _ => self.decaying_count -= 1,
            }
            self.t.flows[q].set = FlowSet::None;
        }
    }
}
