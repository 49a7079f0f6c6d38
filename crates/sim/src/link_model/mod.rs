//! What a link does to packets besides queueing them: a rate that changes over
//! time (a schedule, or a Mahimahi delivery trace), random loss before the queue
//! (Bernoulli, or Gilbert-Elliott as netem parameterises it), and delay jitter
//! (netem's distributions). Each model is plain data and a small state, drawn
//! from the link direction's own random stream, so that the simulation and the
//! emulator can apply the same one and turning one on moves no other draw.

pub mod delay;
pub mod loss;
pub mod rate;
pub mod synthetic;

pub use delay::{Distribution, Jitter, JitterSpec};
pub use loss::{Loss, LossSpec};
pub use rate::{DeliveryTrace, LinkRate, RateSchedule, Transmitter, OPPORTUNITY_BYTES};

use aqm::Rng;

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
