//! ALQD+ (`buffer = "alqd_plus"`; Sun & Shin, *TCP Performance under Aggregate
//! Fair Queueing*, 003 IV, Fig. 2 and Table I): ALQD with early drops that only
//! ever take a packet of the arriving packet's own flow, at a rate BLUE learns per
//! queue, updated in rounds.
//!
//! For a packet arriving to queue k (the steps of Fig. 2 as the text gives them):
//!
//! 1. **Buffer full**: if `qlen_k > share_k`, the head of queue k is dropped
//!    (`front_drop`); otherwise, as in ALQD, the head of the registered longest
//!    queue (`push_out`, or `front_drop` if that is k). The arrival is queued.
//! 2. **Early drop** (buffer not full): go to step 3 if the buffer holds more than
//!    a% of B and `qlen_k > b% share_k`, or, if `qlen_k > c% share_k`, with
//!    probability `d_k`. Otherwise queue the arrival.
//! 3. **Packet match**: if queue k's head is of the arrival's flow, drop that head
//!    (`early`); in every case queue the arrival. So no flow ever loses a packet
//!    early because another flow's packet arrived.
//!
//! `share_k = w_k B / sum w` with the sum over the classes holding packets (see
//! [`Classes::share`]); lengths are compared before the arrival is counted ("already
//! exceeds").
//!
//! **`d_k`, BLUE in rounds** (Table I). A round of queue k starts at a packet of
//! some flow f and ends just before f's next packet arrives at queue k; drops taken
//! from queue k during the round (steps 1 and 3, whoever's arrival caused them) are
//! counted, and when f's next packet arrives, if the round had drops and more than
//! `freeze_time` passed since `d_k` last changed, `d_k += increment *
//! max(count, (now - last_update) / freeze_time)`. When the link sends queue k's
//! last packet and more than `freeze_time` passed, `d_k -= decrement`. `d_k` stays in
//! [0, 1]. Readings the text leaves open, each in docs/qdiscs.md: the delimiting
//! flow is the first flow seen after the queue was last empty, and an emptied
//! queue ends its round (with the loss update if it had drops, before the empty
//! update), so a flow that has left cannot hold a round open for ever once the
//! queue drains; `last_update` starts when the class is created, not at time
//! zero (otherwise the first update after a long quiet start would add many
//! `increment`s at once); a class keeps its BLUE state while `d_k > 0`, even empty.

use super::buffer::{head_of, Admit, BufferManager};
use super::classes::{ClassId, Classes};
use super::register::LongestRegister;
use crate::drop_reason::DropReason;
use crate::packet::{FlowId, Packet};
use crate::qdisc::Ctx;
use crate::time::{Dur, Time};

/// ALQD+'s constants, from the qdisc's validated parameters.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AlqdPlusConfig {
    /// Fractions (not percentages) of B, of share_k, of share_k.
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub increment: f64,
    pub decrement: f64,
    pub freeze_time: Dur,
}

/// BLUE's probability step, clamped to [0, 1]: the one piece of BLUE that ALQD+
/// uses (the shared BLUE part will take its place). Snaps to the ends so that
/// 1/step steps reach exactly 1 and back to exactly 0 despite rounding.
#[inline]
fn blue_step(p: f64, step: f64) -> f64 {
    let p = p + step;
    if p > 1.0 - 1e-9 {
        1.0
    } else if p < 1e-12 {
        0.0
    } else {
        p
    }
}

/// Queue k's BLUE state and its current round.
#[derive(Copy, Clone, Debug, Default)]
struct ClassBlue {
    /// d_k, the early-drop probability.
    d: f64,
    last_update: Time,
    /// The flow whose next packet ends the round; none until the first arrival.
    round_flow: Option<FlowId>,
    /// Drops taken from the queue during the round.
    round_drops: u32,
}

impl ClassBlue {
    /// The round ends: Table I's packet-loss update with the round's drop count.
    fn end_round(&mut self, cfg: &AlqdPlusConfig, now: Time) {
        let count = std::mem::take(&mut self.round_drops);
        let since = now.saturating_since(self.last_update);
        if count > 0 && since > cfg.freeze_time {
            let periods = since.as_secs_f64() / cfg.freeze_time.as_secs_f64();
            self.d = blue_step(self.d, cfg.increment * (count as f64).max(periods));
            self.last_update = now;
        }
    }
}

#[derive(Debug, Clone)]
pub struct AlqdPlus {
    cfg: AlqdPlusConfig,
    register: LongestRegister,
    blue: Vec<ClassBlue>,
}

impl AlqdPlus {
    pub fn new(cfg: AlqdPlusConfig) -> Self {
        AlqdPlus {
            cfg,
            register: LongestRegister::default(),
            blue: Vec::new(),
        }
    }

    /// d_k of class `c`.
    pub fn drop_probability(&self, c: ClassId) -> f64 {
        self.blue.get(c as usize).map_or(0.0, |b| b.d)
    }

    /// The class the register names.
    pub fn registered(&self) -> Option<ClassId> {
        self.register.get()
    }

    /// A packet of `flow` arrives at queue `c`: a packet of the round's flow ends
    /// the round (Table I's packet-loss update if it had drops) and starts the next.
    fn round(&mut self, c: ClassId, flow: FlowId, now: Time) {
        let cfg = self.cfg;
        let s = &mut self.blue[c as usize];
        match s.round_flow {
            None => {
                s.round_flow = Some(flow);
                s.round_drops = 0;
            }
            Some(f) if f == flow => s.end_round(&cfg, now),
            Some(_) => {}
        }
    }

    /// Counts a drop from queue `c` in its round.
    #[inline]
    fn count_drop(&mut self, c: ClassId) {
        let s = &mut self.blue[c as usize];
        s.round_drops = s.round_drops.saturating_add(1);
    }
}

impl BufferManager for AlqdPlus {
    fn admit(&mut self, classes: &Classes, k: ClassId, pkt: &Packet, ctx: &mut Ctx<'_>) -> Admit {
        self.round(k, pkt.flow, ctx.now);
        let qlen = classes.len_of(k) as f64;
        let share = classes.share(k);
        if classes.is_full() {
            let victim = if qlen > share {
                k
            } else {
                self.register.victim(classes, k)
            };
            self.count_drop(victim);
            return head_of(classes, victim, k);
        }
        let cfg = self.cfg;
        let over_early =
            classes.len() as f64 > cfg.a * classes.limit() as f64 && qlen > cfg.b * share;
        let d = self.blue[k as usize].d;
        let to_match = over_early || (qlen > cfg.c * share && d > 0.0 && ctx.uniform() < d);
        if to_match && classes.head(k).is_some_and(|h| h.flow == pkt.flow) {
            self.count_drop(k);
            return Admit::DropHead {
                victim: k,
                reason: DropReason::Early,
            };
        }
        Admit::Accept
    }

    #[inline]
    fn changed(&mut self, classes: &Classes, c: ClassId) {
        self.register.touched(classes, c);
    }

    fn emptied(&mut self, c: ClassId, now: Time) {
        let cfg = self.cfg;
        let s = &mut self.blue[c as usize];
        // An emptied queue ends its round (the flow that delimited it may be gone
        // for good): a round with drops updates d_k first, which also freezes it
        // against the decrement below, as BLUE's one change per freeze_time.
        s.end_round(&cfg, now);
        s.round_flow = None;
        if now.saturating_since(s.last_update) > cfg.freeze_time {
            s.d = blue_step(s.d, -cfg.decrement);
            s.last_update = now;
        }
    }

    fn created(&mut self, c: ClassId, now: Time) {
        let i = c as usize;
        if i >= self.blue.len() {
            self.blue.resize(i + 1, ClassBlue::default());
        }
        self.blue[i] = ClassBlue {
            last_update: now,
            ..ClassBlue::default()
        };
    }

    fn released(&mut self, c: ClassId) {
        self.register.released(c);
    }

    fn keeps(&self, c: ClassId) -> bool {
        self.blue[c as usize].d > 0.0
    }
}
