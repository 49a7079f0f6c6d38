//! The links a packet crosses in the data plane: access links as FIFO
//! serializers on the logical clock, and each bottleneck direction with its qdisc
//! and, when the scenario gives one, the simulator's link model.

use aqm::{Packet, Time};
use sim::link::Queue;
use sim::link_model::{LinkModel, LinkRate};

/// One FIFO serializer on a logical clock.
#[derive(Copy, Clone, Debug)]
pub struct Pipe {
    pub bps: u64,
    pub delay_ns: u64,
    next_free: u64,
}

impl Pipe {
    pub fn new(bps: u64, delay_ns: u64) -> Self {
        Pipe {
            bps,
            delay_ns,
            next_free: 0,
        }
    }
    pub(super) fn tx_ns(&self, bytes: u32) -> u64 {
        (u64::from(bytes) * 8 * 1_000_000_000).div_ceil(self.bps.max(1))
    }
    /// When a packet of `bytes` arriving at `t` reaches the far end.
    pub(super) fn pass(&mut self, t: u64, bytes: u32) -> u64 {
        let dep = self.next_free.max(t) + self.tx_ns(bytes);
        self.next_free = dep;
        dep + self.delay_ns
    }
}

/// One bottleneck direction.
pub struct Bottleneck {
    pub queue: Queue,
    pub pipe: Pipe,
    /// The link's model (a rate that varies, loss, jitter), as the simulator runs
    /// it (`sim::link_model`), on the emulator's logical clock.
    pub model: Option<LinkModel>,
    pub(super) busy: bool,
    pub(super) in_tx: Option<Packet>,
}

impl Bottleneck {
    pub fn new(queue: Queue, pipe: Pipe, model: Option<LinkModel>) -> Self {
        Bottleneck {
            queue,
            pipe,
            model,
            busy: false,
            in_tx: None,
        }
    }

    /// Whether the link's model loses an arrival at `t` (before the queue); the
    /// qdisc is told the link's rate first if it changed.
    pub(super) fn lost(&mut self, t: u64) -> bool {
        let Some(m) = &mut self.model else {
            return false;
        };
        if !matches!(m.tx.rate(), LinkRate::Constant(_)) {
            let rate = m.tx.rate_at(Time::from_nanos(t));
            if rate != m.told {
                m.told = rate;
                self.queue.set_link_rate(rate);
            }
        }
        match &mut m.loss {
            Some(loss) => loss.lose(&mut m.loss_rng),
            None => false,
        }
    }

    /// How long a packet of `bytes` that starts at `t` takes to leave.
    pub(super) fn tx_ns(&mut self, t: u64, bytes: u32) -> u64 {
        match &mut self.model {
            None => self.pipe.tx_ns(bytes),
            Some(m) => {
                let done = m.tx.finish(Time::from_nanos(t), u64::from(bytes));
                done.as_nanos().saturating_sub(t)
            }
        }
    }

    /// When a packet that left at `t` reaches the far end.
    pub(super) fn arrival(&mut self, t: u64) -> u64 {
        match &mut self.model {
            Some(LinkModel {
                jitter: Some(j),
                jitter_rng,
                ..
            }) => j.arrival(Time::from_nanos(t), jitter_rng).as_nanos(),
            _ => t + self.pipe.delay_ns,
        }
    }
}
