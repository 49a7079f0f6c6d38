//! The links a packet crosses in the data plane: access links as FIFO
//! serializers on the logical clock, and each bottleneck direction, whose qdisc,
//! rate, loss, delay and jitter are the simulator's own [`LinkRuntime`] driven on
//! that clock: the emulator has no link timing of its own but the access links'
//! FIFO, timed by `aqm::Rate` as the simulator times a packet.

use aqm::{Dur, Packet, Rate, Time};
use sim::runner::LinkRuntime;

/// The packets an access link holds waiting, as the simulator's access links
/// (a default DropTail) hold them.
pub const ACCESS_LIMIT: u64 = 1000;

/// One direction of an access link: a FIFO serializer on a logical clock,
/// holding at most [`ACCESS_LIMIT`] packets waiting: a source faster than its
/// link loses the rest there, as in simulation, and the emulator's buffers stay
/// bounded by the scenario. Each direction has its own, as each direction of a
/// simulated link has its own queue and transmitter: a packet going one way
/// never waits for one going the other.
#[derive(Copy, Clone, Debug)]
pub struct Pipe {
    rate: Rate,
    delay: Dur,
    /// When the last packet given to the link will have left it.
    next_free: u64,
}

impl Pipe {
    pub fn new(rate: Rate, delay: Dur) -> Self {
        Pipe {
            rate,
            delay,
            next_free: 0,
        }
    }
    fn tx_ns(&self, bytes: u32) -> u64 {
        self.rate.tx_time(u64::from(bytes)).as_nanos()
    }
    /// When a packet of `bytes` arriving at `t` reaches the far end.
    pub(super) fn pass(&mut self, t: u64, bytes: u32) -> u64 {
        let dep = self.next_free.max(t) + self.tx_ns(bytes);
        self.next_free = dep;
        dep + self.delay.as_nanos()
    }
    /// [`Pipe::pass`] for a packet its host sends into the link: `None` when
    /// [`ACCESS_LIMIT`] packets of its size wait already (a DropTail's tail
    /// drop, counted in time so a packet costs no state).
    pub(super) fn send(&mut self, t: u64, bytes: u32) -> Option<u64> {
        let tx = self.tx_ns(bytes);
        if self.next_free.saturating_sub(t) > tx.saturating_mul(ACCESS_LIMIT) {
            return None;
        }
        Some(self.pass(t, bytes))
    }
}

/// The access links a flow's packets cross, per direction of travel: `into[d]`
/// from the host that sends in direction `d` to the bottleneck, `out_of[d]`
/// from the bottleneck to the host that receives. Forward, the sender's uplink
/// and the receiver's downlink; reverse (ACKs, echoes), the receiver's uplink
/// and the sender's downlink.
#[derive(Copy, Clone, Debug)]
pub struct Access {
    pub into: [Pipe; 2],
    pub out_of: [Pipe; 2],
}

/// One bottleneck direction: the simulator's link runtime, and what the data
/// plane keeps of the packet in transmission.
pub struct Bottleneck {
    pub link: LinkRuntime,
    pub(super) busy: bool,
    /// When the current busy period began, ns.
    pub(super) busy_since: u64,
    pub(super) in_tx: Option<Packet>,
    /// When the packet in transmission started and when it finishes, ns.
    pub(super) in_tx_span: (u64, u64),
}

impl Bottleneck {
    pub fn new(link: LinkRuntime) -> Self {
        Bottleneck {
            link,
            busy: false,
            busy_since: 0,
            in_tx: None,
            in_tx_span: (0, 0),
        }
    }

    /// Whether the link's model loses an arrival at `t` (before the queue); the
    /// qdisc is told the link's rate first if it changed.
    pub(super) fn lost(&mut self, t: u64) -> bool {
        self.link.arrive(Time::from_nanos(t))
    }

    /// When a packet of `bytes` that starts at `t` has left, ns.
    pub(super) fn tx_end(&mut self, t: u64, bytes: u32) -> u64 {
        self.link.tx_end(Time::from_nanos(t), bytes).as_nanos()
    }

    /// When a packet that left at `t` reaches the far end.
    pub(super) fn arrival(&mut self, t: u64) -> u64 {
        self.link.far_end(Time::from_nanos(t)).as_nanos()
    }
}

#[cfg(test)]
mod tests {
    use super::Bottleneck;
    use sim::runner::build;
    use sim::Scenario;

    /// The bottleneck of a dumbbell whose delay jitters (20 ms, 5 ms, normal), as
    /// the emulator takes it out of the simulator's network.
    fn jittered(reorder: bool) -> Bottleneck {
        let text = format!(
            r#"
name = "jitter"
duration = "1s"
flows = [{{ name = "t", kind = "tcp" }}]
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
[topology.bottleneck]
rate = "10Mbps"
delay = {{ mean = "20ms", jitter = "5ms", distribution = "normal", reorder = {reorder} }}
"#
        );
        let s = Scenario::from_toml(&text, "jitter.toml").unwrap();
        let mut built = build(&s).unwrap();
        let bottleneck = built.net.monitored[0] as usize;
        Bottleneck::new(built.net.take_runtime(bottleneck))
    }

    /// The emulator's bottleneck delays packets as the simulator's link model does:
    /// netem's normal table around the mean, and without `reorder` no packet
    /// reaches the far end before one that left earlier.
    #[test]
    fn jitter_has_its_moments_and_keeps_order_unless_asked() {
        for reorder in [false, true] {
            let mut b = jittered(reorder);
            // One departure every 20 ms, four jitters apart: the order rule seldom
            // bites (0.2% of pairs), so the delays keep their distribution.
            let arrivals: Vec<u64> = (0..20_000u64).map(|i| b.arrival(i * 20_000_000)).collect();
            let delays: Vec<f64> = arrivals
                .iter()
                .enumerate()
                .map(|(i, &a)| (a - i as u64 * 20_000_000) as f64 / 1e6)
                .collect();
            let n = delays.len() as f64;
            let mean = delays.iter().sum::<f64>() / n;
            let sd = (delays.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n).sqrt();
            assert!(
                (mean - 20.0).abs() < 0.2,
                "mean {mean} ms (reorder {reorder})"
            );
            assert!((sd - 5.0).abs() < 0.3, "sd {sd} ms (reorder {reorder})");
            let in_order = arrivals.windows(2).all(|w| w[0] <= w[1]);
            assert_eq!(in_order, !reorder, "reorder = {reorder}");
        }
    }
}
