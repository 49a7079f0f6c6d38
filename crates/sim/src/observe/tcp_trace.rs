//! TCP state per flow per interval: congestion window, slow-start threshold,
//! smoothed RTT, retransmission timeout and packets in flight, sampled at the end
//! of each interval for every TCP (and web) flow.

use aqm::Time;

/// One sample of one TCP sender.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TcpSample {
    pub at: Time,
    pub flow: u32,
    /// Packets.
    pub cwnd: f64,
    /// Packets; infinite until the first loss.
    pub ssthresh: f64,
    /// Seconds; 0 before the first RTT sample.
    pub srtt_s: f64,
    pub rto_s: f64,
    /// Packets sent and not yet acknowledged.
    pub in_flight: u32,
}

/// The samples so far.
#[derive(Default)]
pub struct TcpTrace {
    pub samples: Vec<TcpSample>,
}
