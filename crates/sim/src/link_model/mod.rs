//! What a link does to packets besides queueing them: a rate that changes over
//! time (a schedule, or a Mahimahi delivery trace), random loss before the queue
//! (Bernoulli, or Gilbert-Elliott as netem parameterises it), and delay jitter
//! (netem's distributions). Each model is plain data and a small state, drawn
//! from the link direction's own random stream, so that the simulation and the
//! emulator can apply the same one and turning one on moves no other draw.
//!
//! [`LinkModel`]'s methods are what a runner asks of a link direction besides its
//! queue (an arrival, a transmission's end, the delivery at the far end); the
//! engine calls them on simulated time (`engine/varying.rs`) and the emulator,
//! through [`LinkRuntime`], on its logical wall clock, so the two never differ in
//! how a link behaves.

pub mod delay;
pub mod loss;
pub mod rate;
pub mod runtime;
pub mod synthetic;

pub use delay::{Distribution, Jitter, JitterSpec};
pub use loss::{Loss, LossSpec};
pub use rate::{DeliveryTrace, LinkRate, RateSchedule, Transmitter, OPPORTUNITY_BYTES};
pub use runtime::LinkRuntime;

use crate::link::Queue;
use aqm::{Dur, Rate, Rng, Time};

/// What a link direction does besides a constant rate and delay, with its state
/// and its own random streams (loss and jitter apart, so turning one on moves no
/// draw of the other, nor any flow's or qdisc's).
#[derive(Clone)]
pub struct LinkModel {
    pub tx: Transmitter,
    pub loss: Option<Loss>,
    pub jitter: Option<Jitter>,
    pub loss_rng: Rng,
    pub jitter_rng: Rng,
    /// The rate the link's qdisc was last told (`Qdisc::set_link_rate`).
    pub told: aqm::Rate,
}

impl LinkModel {
    /// A link direction of constant `rate` and nothing else: no loss, no jitter,
    /// so its streams are never drawn from. What a runner with no plain path of
    /// its own (the emulator) drives on a link the scenario does not model; its
    /// transmitter times each packet as `Rate::tx_time`.
    pub fn constant(rate: Rate) -> Self {
        LinkModel {
            tx: Transmitter::new(LinkRate::Constant(rate)),
            loss: None,
            jitter: None,
            loss_rng: aqm::rng::stream(0, 0),
            jitter_rng: aqm::rng::stream(0, 0),
            told: rate,
        }
    }

    /// A packet arrives at `now`: the link's qdisc (`queue`) is told the link's
    /// rate if it changed since it was last told (`Qdisc::set_link_rate`), then
    /// the link's loss is drawn. Returns whether the loss takes the packet,
    /// before the queue.
    #[inline]
    pub fn arrive(&mut self, now: Time, queue: &mut Queue) -> bool {
        if !matches!(self.tx.rate(), LinkRate::Constant(_)) {
            let rate = self.tx.rate_at(now);
            if rate != self.told {
                self.told = rate;
                queue.set_link_rate(rate);
            }
        }
        match &mut self.loss {
            Some(loss) => loss.lose(&mut self.loss_rng),
            None => false,
        }
    }

    /// When the last bit of a packet of `bytes` whose transmission starts at
    /// `start` has left the transmitter.
    #[inline]
    pub fn tx_end(&mut self, start: Time, bytes: u32) -> Time {
        self.tx.finish(start, u64::from(bytes))
    }

    /// When a packet that left the transmitter at `left` reaches the far end:
    /// `delay` (the link's propagation delay) later, or with jitter its drawn
    /// delay later, not before the packet ahead of it unless the link
    /// [`reorders`](Self::reorders).
    #[inline]
    pub fn far_end(&mut self, left: Time, delay: Dur) -> Time {
        match &mut self.jitter {
            Some(jitter) => jitter.arrival(left, &mut self.jitter_rng),
            None => left + delay,
        }
    }

    /// Whether a packet may reach the far end before one that left earlier.
    #[inline]
    pub fn reorders(&self) -> bool {
        self.jitter.as_ref().is_some_and(|j| j.spec().reorder)
    }
}
