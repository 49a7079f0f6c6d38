//! CHOKe: CHOose and Keep for responsive flows, CHOose and Kill for unresponsive
//! flows (Pan, Prabhakar & Psounis, INFOCOM 2000; seed 002).
//!
//! A single FIFO with RED's average and thresholds (section II-A, Fig. 1). Below
//! `min_th` every arrival is queued. Above it, the arrival is compared with
//! `candidates = m` drop candidates drawn from the queue; every candidate of the
//! arrival's flow is dropped, and so is the arrival (`ChokeMatch`). If none
//! matches, RED decides: an early drop (or CE mark) between the thresholds
//! (`Early`), a drop above `max_th` (`Forced`). The comparison still happens
//! above `max_th` ("we still compare and drop packets from the queue when the
//! queue size is above max_th"). A full queue drops the arrival (`Overflow`).
//!
//! Options: `adaptive_candidates` (self-adjusting CHOKe, II-A and III-C): the band
//! is cut into `regions = k` equal regions and region i draws m = 2i candidates
//! (2k above max_th, footnote 7). `candidate`: `random` (original CHOKe), `front`
//! (the head, IV-A) or `back` (the most recently admitted packet, IV-B); with
//! m > 1 they take the m real packets nearest that end.
//!
//! Storage, as Linux `sch_choke.c`: a power-of-two ring of slots with *holes*
//! ([`HoleyRing`]): a victim in the middle is removed in O(1) by emptying its
//! slot; holes at either end are trimmed at once. Unlike Linux (which lets holes
//! pile up and falls back to the head after three unlucky draws), the ring is
//! compacted when an arrival's comparison starts with more holes than packets
//! (amortised O(1) per victim), so a random draw hits a hole with probability
//! below 1/2; a draw retries [`RANDOM_RETRIES`] times before taking the head.
//!
//! Choices where the paper is silent or Linux differs: flows are compared by
//! [`FlowId`] (Linux: a flow hash); a matched arrival is
//! `ChokeMatch` in every region (Linux); a match leaves RED's `count` alone
//! (Linux); matched drops are never ECN marks; m = 2i *candidates* in region i
//! (II-A and DESIGN.md; III-C counts drops); random candidates are drawn with
//! replacement, and one already dropped by this arrival is a hole and redrawn.
//!
//! Defaults: the single-link simulation of section III-A; the paper gives neither
//! `max_p` nor `w_q`, so they are ns-2's RED defaults (ns-2 being its simulator).

use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::parts::fifo::PacketStore;
use crate::parts::red::{Curve, RedRegion};
use crate::parts::red_params::{red_params, RedBlock};
use crate::parts::red_queue::{red_queue_methods, RedQueue};
use crate::qdisc::{check, Ctx, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use serde::{Deserialize, Serialize};

/// Which queued packets an arrival is compared with.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Candidate {
    /// Drawn uniformly from the queue: original CHOKe.
    #[default]
    Random,
    /// The packet(s) at the head: front CHOKe (section IV-A).
    Front,
    /// The most recently admitted packet(s): back CHOKe (section IV-B).
    Back,
}

red_params! {
    /// CHOKe parameters. Thresholds are in packets.
    pub struct ChokeParams {
        red_defaults: RedBlock::CHOKE_SINGLE_LINK,
        /// m, the number of drop candidates when not adaptive (basic CHOKe).
        candidates: u32 = 1,
        /// Self-adjusting CHOKe: m = 2 i in region i of `regions`.
        adaptive_candidates: bool = false,
        /// k, the number of regions between min_th and max_th (II-A's int_th).
        regions: u32 = 2,
        /// Where candidates come from.
        candidate: Candidate = Candidate::Random,
    }
}

impl QdiscParams for ChokeParams {
    type Qdisc = Choke;
    fn validate(&self) -> Result<(), ParamError> {
        self.red().validate()?;
        check::at_least("candidates", self.candidates, 1)?;
        if self.candidates > self.limit {
            return Err(ParamError::new(
                "candidates",
                self.candidates,
                format!(
                    "must be at most limit = {}: an arrival is compared with queued packets",
                    self.limit
                ),
            ));
        }
        check::at_least("regions", self.regions, 1)?;
        if self.regions > 1024 {
            return Err(ParamError::new(
                "regions",
                self.regions,
                "must be at most 1024 (region i draws 2 i candidates)",
            ));
        }
        Ok(())
    }
    fn build(&self, link: &LinkInfo) -> Result<Choke, ParamError> {
        Choke::new(self.clone(), link)
    }
    fn property_configs() -> Vec<Self> {
        let small = ChokeParams::default().with_red(RedBlock::TINY);
        let edge = ChokeParams {
            candidates: 2,
            ..ChokeParams::default().with_red(RedBlock {
                limit: 10,
                min_th: 1.0,
                max_th: 5.0,
                w_q: 0.5,
                ..RedBlock::TINY
            })
        };
        vec![
            ChokeParams {
                candidates: 3,
                ..small.clone()
            },
            ChokeParams {
                min_th: 1.0,
                max_th: 8.0,
                w_q: 0.5,
                adaptive_candidates: true,
                regions: 3,
                ecn: true,
                ..small
            },
            ChokeParams {
                candidate: Candidate::Front,
                ..edge.clone()
            },
            ChokeParams {
                candidate: Candidate::Back,
                wait: false,
                ..edge
            },
        ]
    }
}

/// Self-adjusting CHOKe's m: 2 i when `avg` lies in region i (1-based) of `regions`
/// equal regions of [min_th, max_th); 2 `regions` at and above max_th, 2 below
/// min_th (where no comparison is made anyway).
#[inline]
pub fn adaptive_candidates(avg: f64, min_th: f64, max_th: f64, regions: u32) -> u32 {
    let k = regions.max(1);
    let x = ((avg - min_th) / (max_th - min_th)).clamp(0.0, 1.0);
    let i = ((x * k as f64).floor() as u32 + 1).min(k);
    2 * i
}

/// Draws of a random candidate that may land on a hole before falling back to the
/// head. Holes are at most half the span when drawing, so fallback is below 2^-8.
pub const RANDOM_RETRIES: u32 = 8;

/// A power-of-two ring of packet slots in which a slot can be emptied in place:
/// Linux `sch_choke.c`'s table with holes. Positions are absolute (wrapping)
/// indices, stable until the next [`HoleyRing::compact`]. The ring starts empty
/// and doubles when packets and holes fill it (positions survive a growth), so
/// its memory follows the backlog, not `limit`: CHOKe keeps the span below
/// 2 limit + m + 1, so it never exceeds twice that.
#[derive(Debug, Clone, Default)]
pub struct HoleyRing {
    slots: Vec<Option<Packet>>,
    mask: usize,
    head: usize,
    tail: usize,
    len: usize,
    holes: usize,
    bytes: u64,
}

impl HoleyRing {
    /// An empty ring; nothing is allocated until the first packet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Real packets held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Bytes of the real packets held.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// Emptied slots between the head and the tail.
    #[inline]
    pub fn holes(&self) -> usize {
        self.holes
    }
    /// Slots from the head to the tail: packets plus holes.
    #[inline]
    pub fn span(&self) -> usize {
        self.tail.wrapping_sub(self.head)
    }
    /// Absolute position of the head; the tail is `head() + span()`.
    #[inline]
    pub fn head(&self) -> usize {
        self.head
    }
    /// The packet at absolute position `pos`, or `None` for a hole.
    #[inline]
    pub fn at(&self, pos: usize) -> Option<&Packet> {
        self.slots[pos & self.mask].as_ref()
    }

    pub fn push_back(&mut self, pkt: Packet) {
        if self.span() == self.slots.len() {
            self.grow();
        }
        self.slots[self.tail & self.mask] = Some(pkt);
        self.tail = self.tail.wrapping_add(1);
        self.len += 1;
        self.bytes += pkt.size as u64;
    }

    pub fn pop_front(&mut self) -> Option<Packet> {
        if self.len == 0 {
            return None;
        }
        let pkt = self.slots[self.head & self.mask].take()?;
        self.head = self.head.wrapping_add(1);
        self.len -= 1;
        self.bytes -= pkt.size as u64;
        self.trim();
        Some(pkt)
    }

    /// Empties the slot at absolute position `pos`, leaving a hole (trimmed at
    /// once if it is at either end). O(1) amortised.
    pub fn remove_at(&mut self, pos: usize) -> Option<Packet> {
        let pkt = self.slots[pos & self.mask].take()?;
        self.len -= 1;
        self.bytes -= pkt.size as u64;
        self.holes += 1;
        self.trim();
        Some(pkt)
    }

    /// Doubles the slots (16 at first), keeping every position: O(span), so
    /// amortised O(1) per packet.
    #[cold]
    fn grow(&mut self) {
        let cap = (2 * self.slots.len()).max(16);
        let (mut slots, mask) = (vec![None; cap], cap - 1);
        let mut pos = self.head;
        while pos != self.tail {
            slots[pos & mask] = self.slots[pos & self.mask].take();
            pos = pos.wrapping_add(1);
        }
        self.slots = slots;
        self.mask = mask;
    }

    /// Slots allocated (packets, holes and free room).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Drops holes at the head and at the tail, so both ends are real packets.
    fn trim(&mut self) {
        while self.head != self.tail && self.slots[self.head & self.mask].is_none() {
            self.head = self.head.wrapping_add(1);
            self.holes -= 1;
        }
        while self.head != self.tail && self.slots[self.tail.wrapping_sub(1) & self.mask].is_none()
        {
            self.tail = self.tail.wrapping_sub(1);
            self.holes -= 1;
        }
        debug_assert_eq!(self.span(), self.len + self.holes);
    }

    /// Closes every hole, keeping the order: O(span). Invalidates positions.
    pub fn compact(&mut self) {
        let mut write = self.head;
        let mut read = self.head;
        while read != self.tail {
            if let Some(p) = self.slots[read & self.mask].take() {
                self.slots[write & self.mask] = Some(p);
                write = write.wrapping_add(1);
            }
            read = read.wrapping_add(1);
        }
        self.tail = write;
        self.holes = 0;
        debug_assert_eq!(self.span(), self.len);
    }
}

impl PacketStore for HoleyRing {
    #[inline]
    fn push_back(&mut self, pkt: Packet) {
        HoleyRing::push_back(self, pkt)
    }
    #[inline]
    fn pop_front(&mut self) -> Option<Packet> {
        HoleyRing::pop_front(self)
    }
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    #[inline]
    fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[derive(Debug, Clone)]
pub struct Choke {
    params: ChokeParams,
    queue: RedQueue<HoleyRing>,
}

impl Choke {
    pub fn new(params: ChokeParams, link: &LinkInfo) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Choke {
            queue: RedQueue::new(&params.red(), link),
            params,
        })
    }

    /// The current average queue, in packets.
    pub fn avg(&self) -> f64 {
        self.queue.average.avg
    }

    /// Emptied slots currently in the ring (for tests and the queue lab).
    pub fn holes(&self) -> usize {
        self.queue.queue.store().holes()
    }

    /// How many candidates an arrival seeing `avg` is compared with.
    pub fn candidates_at(&self, avg: f64) -> u32 {
        let p = &self.params;
        if p.adaptive_candidates {
            adaptive_candidates(avg, p.min_th, p.max_th, p.regions)
        } else {
            p.candidates
        }
    }

    /// A random real packet's position: uniform over the span, redrawn on a hole.
    fn random_position(ring: &HoleyRing, ctx: &mut Ctx<'_>) -> usize {
        let span = ring.span();
        for _ in 0..RANDOM_RETRIES {
            let pos = ring
                .head()
                .wrapping_add(rand::Rng::gen_range(&mut *ctx.rng, 0..span));
            if ring.at(pos).is_some() {
                return pos;
            }
        }
        ring.head()
    }

    /// Drops the queued candidate at `pos` if it is of `flow`; returns whether it was.
    #[inline]
    fn kill_if_match(ring: &mut HoleyRing, pos: usize, flow: FlowId, ctx: &mut Ctx<'_>) -> bool {
        match ring.at(pos) {
            Some(c) if c.flow == flow => {
                let victim = ring.remove_at(pos).expect("a packet was there");
                ctx.drop(victim, DropReason::ChokeMatch);
                true
            }
            _ => false,
        }
    }

    /// Compares the arrival with `m` candidates and drops those of its flow.
    /// Returns how many were dropped. O(m) expected (plus holes skipped at the
    /// ends for front/back).
    fn drop_matching_candidates(&mut self, pkt: &Packet, m: u32, ctx: &mut Ctx<'_>) -> u32 {
        let ring = self.queue.queue.store_mut();
        if ring.holes() > ring.len() {
            ring.compact();
        }
        let mut matched = 0;
        match self.params.candidate {
            Candidate::Random => {
                for _ in 0..m {
                    if ring.is_empty() {
                        break;
                    }
                    let pos = Self::random_position(ring, ctx);
                    matched += Self::kill_if_match(ring, pos, pkt.flow, ctx) as u32;
                }
            }
            Candidate::Front => {
                let mut pos = ring.head();
                let end = pos.wrapping_add(ring.span());
                let mut seen = 0;
                while seen < m && pos != end {
                    if ring.at(pos).is_some() {
                        seen += 1;
                        matched += Self::kill_if_match(ring, pos, pkt.flow, ctx) as u32;
                    }
                    pos = pos.wrapping_add(1);
                }
            }
            Candidate::Back => {
                let head = ring.head();
                let mut pos = head.wrapping_add(ring.span());
                let mut seen = 0;
                while seen < m && pos != head {
                    pos = pos.wrapping_sub(1);
                    if ring.at(pos).is_some() {
                        seen += 1;
                        matched += Self::kill_if_match(ring, pos, pkt.flow, ctx) as u32;
                    }
                }
            }
        }
        matched
    }
}

impl Qdisc for Choke {
    red_queue_methods!(queue);

    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        let avg = self.queue.average_now(ctx.now);
        let p = &self.params;
        let region = self
            .queue
            .gate(Curve::Linear.region(avg, p.min_th, p.max_th, p.max_p));
        if region != RedRegion::Below {
            let m = self.candidates_at(avg);
            if self.drop_matching_candidates(&pkt, m, ctx) > 0 {
                ctx.drop(pkt, DropReason::ChokeMatch);
                return Verdict::Dropped;
            }
        }
        self.queue.admit(region, pkt, ctx)
    }
}

impl crate::early_drop::EarlyDropRule for ChokeParams {
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        EarlyDrop::AboveMinTh(self.red())
    }
}

#[cfg(test)]
mod tests;
