//! TCP state per flow per interval: congestion window, slow-start threshold,
//! smoothed RTT, retransmission timeout and packets in flight, sampled at the end
//! of each interval for every TCP (and web) flow.

use crate::tcp::TcpSample;

/// The samples so far.
#[derive(Default)]
pub struct TcpTrace {
    pub samples: Vec<TcpSample>,
}
