//! Congestion control: how the window grows on an ACK and how far it falls on a
//! congestion signal (a loss, an ECN echo, a timeout). Loss recovery (which packet
//! to resend, when recovery ends) stays in the sender; this is only the window
//! arithmetic, so a new algorithm is one variant here.
//!
//! - Reno: slow start (+1 per ACK, or up to 2 packets per ACK with byte counting,
//!   RFC 3465 L = 2) below ssthresh, +1/cwnd per ACK above; a signal halves the
//!   window, as ns-2 (`slowdown(CLOSE_SSTHRESH_HALF)`) and Linux
//!   (`tcp_reno_ssthresh`) compute it. RFC 5681's FlightSize / 2 differs after a
//!   long NewReno recovery, when snd_max - snd_una counts thousands of packets that
//!   already reached the receiver out of order.

use super::{Counting, TcpConfig};

/// A congestion-control algorithm and its state.
#[derive(Debug, Clone)]
pub enum Congestion {
    Reno,
}

impl Congestion {
    pub fn new(_cfg: &TcpConfig) -> Self {
        Congestion::Reno
    }

    /// The window after an ACK of `acked` new packets outside recovery, from
    /// `cwnd` and `ssthresh` (capped at the receiver's window).
    #[inline]
    pub fn on_ack(&mut self, cwnd: f64, ssthresh: f64, acked: u32, cfg: &TcpConfig) -> f64 {
        let acked = acked as f64;
        let grown = match self {
            Congestion::Reno => {
                if cwnd < ssthresh {
                    cwnd + match cfg.counting {
                        Counting::Packet => 1.0,
                        Counting::Byte => acked.min(2.0),
                    }
                } else {
                    cwnd + match cfg.counting {
                        Counting::Packet => 1.0,
                        Counting::Byte => acked,
                    } / cwnd
                }
            }
        };
        grown.min(cfg.max_window as f64)
    }

    /// The window a congestion signal at window `cwnd` leads to, before any floor
    /// (ssthresh is never below 2 packets; cwnd after an ECN echo never below 1).
    #[inline]
    pub fn on_signal(&mut self, cwnd: f64, cfg: &TcpConfig) -> f64 {
        match self {
            Congestion::Reno => cwnd.min(cfg.max_window as f64) / 2.0,
        }
    }
}
