//! What a kernel TCP sender says of itself: its `TCP_INFO` (cwnd, ssthresh,
//! srtt, the pacing rate, data segments out, retransmissions and timeouts), its
//! congestion control's own estimates where that is BBR (`TCP_CC_INFO`), and
//! its entries into fast recovery, counted from the state it polls.

use sim::results::TcpTraceResult;
use std::os::fd::RawFd;

/// A sender's `TCP_INFO` at one instant.
#[derive(Copy, Clone, Debug, Default)]
pub struct InfoSample {
    pub t_ns: u64,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt_us: u32,
    pub rto_us: u32,
    pub unacked: u32,
    pub data_segs_out: u32,
    pub total_retrans: u32,
    pub snd_mss: u32,
    /// `tcpi_pacing_rate`, bytes of payload per second (`u64::MAX`: unbounded).
    pub pacing_rate: u64,
    /// BBR's own estimates (`TCP_CC_INFO`); none for other congestion controls.
    pub bbr: Option<BbrInfo>,
    /// Retransmission timeouts so far (`tcpi_total_rto`, Linux 6.7 and later;
    /// SYN timeouts included).
    pub total_rto: u32,
    /// Entries into fast recovery so far, polled every 2 ms (`Recoveries`).
    pub recoveries: u32,
}

/// Linux's `struct tcp_bbr_info`, as `TCP_CC_INFO` returns it for `bbr`.
#[derive(Copy, Clone, Debug, Default)]
pub struct BbrInfo {
    /// `bbr_bw`, bytes of payload per second.
    pub bw: u64,
    pub min_rtt_us: u32,
}

/// The calling socket's BBR estimates, where its congestion control is BBR.
pub(crate) fn bbr_info(fd: RawFd) -> Option<BbrInfo> {
    let mut words = [0u32; 8];
    let len = tcp_option(fd, libc::TCP_CC_INFO, &mut words)?;
    // bbr_bw_lo, bbr_bw_hi, bbr_min_rtt, bbr_pacing_gain, bbr_cwnd_gain: 20
    // bytes. Other congestion controls fill nothing (CUBIC) or another struct.
    (len == 20).then(|| BbrInfo {
        bw: u64::from(words[0]) | u64::from(words[1]) << 32,
        min_rtt_us: words[2],
    })
}

impl InfoSample {
    /// The kernel's pacing rate in segments per second; none while unbounded
    /// (before an RTT sample). The kernel computes it whether or not it paces:
    /// it paces BBR itself, other flows only under the `fq` qdisc.
    pub fn pacing_rate_pps(&self) -> Option<f64> {
        (self.pacing_rate != u64::MAX && self.snd_mss != 0)
            .then(|| self.pacing_rate as f64 / f64::from(self.snd_mss))
    }

    /// The TCP trace's row for flow `flow`, in the simulator's units.
    pub fn trace_row(&self, flow: u32) -> TcpTraceResult {
        let mss = f64::from(self.snd_mss.max(1));
        TcpTraceResult {
            t_s: self.t_ns as f64 * 1e-9,
            flow,
            cwnd: f64::from(self.cwnd),
            // Linux's "infinite" ssthresh, before a first reduction.
            ssthresh: if self.ssthresh >= 0x7fff_ffff {
                f64::INFINITY
            } else {
                f64::from(self.ssthresh)
            },
            srtt_s: f64::from(self.srtt_us) * 1e-6,
            rto_s: f64::from(self.rto_us) * 1e-6,
            in_flight: self.unacked,
            pacing_rate_pps: self.pacing_rate_pps(),
            bbr_bw_pps: self.bbr.map(|b| b.bw as f64 / mss),
            bbr_min_rtt_s: self.bbr.map(|b| f64::from(b.min_rtt_us) * 1e-6),
        }
    }
}

/// Linux's `TCP_CA_Recovery`: the sender is repairing a loss found by duplicate
/// ACKs, SACK or RACK (fast recovery), not by its timer (`TCP_CA_Loss`).
const TCP_CA_RECOVERY: u8 = 3;

/// Counts a sender's entries into fast recovery. Linux keeps no per-socket
/// count (only the namespace's `TcpExt` `TCPRenoRecovery` and
/// `TCPSackRecovery`), so the sender polls its congestion-avoidance state every
/// 2 ms (`traffic::POLL_NS`) and counts each change into `TCP_CA_Recovery`. A recovery lasts
/// at least a round trip, longer than the poll, so few are missed; the emulator's
/// test holds the per-flow sum against the namespace's count.
#[derive(Default)]
pub(crate) struct Recoveries {
    inside: bool,
    pub count: u32,
}

impl Recoveries {
    pub fn see(&mut self, ca_state: u8) {
        let inside = ca_state == TCP_CA_RECOVERY;
        if inside && !self.inside {
            self.count += 1;
        }
        self.inside = inside;
    }
}

/// `TCP_INFO` as Linux 6.7 and later fill it: the `libc` struct, then
/// `tcpi_rcv_wnd`, `tcpi_rehash`, `tcpi_total_rto` (u16), ... The buffer is
/// larger than any kernel's struct; the length the kernel returns says which
/// fields it filled.
#[repr(C, align(8))]
struct InfoBuf([u8; 512]);

/// Where `tcpi_total_rto` lies: after `tcpi_snd_wnd`, `tcpi_rcv_wnd` and
/// `tcpi_rehash` (u32 each).
const TOTAL_RTO_AT: usize = std::mem::offset_of!(libc::tcp_info, tcpi_snd_wnd) + 12;

/// The calling socket's `TCP_INFO`, and its `tcpi_total_rto` where the kernel
/// has it.
pub(crate) fn tcp_info(fd: RawFd) -> Option<(libc::tcp_info, Option<u16>)> {
    let mut buf = InfoBuf([0; 512]);
    let len = tcp_option(fd, libc::TCP_INFO, &mut buf.0)?;
    // SAFETY: tcp_info is plain data, the buffer is at least as large and
    // aligned for it; fields the kernel did not fill are zero.
    let info: libc::tcp_info = unsafe { std::ptr::read(buf.0.as_ptr() as *const libc::tcp_info) };
    let rto = (len >= TOTAL_RTO_AT + 2)
        .then(|| u16::from_ne_bytes([buf.0[TOTAL_RTO_AT], buf.0[TOTAL_RTO_AT + 1]]));
    Some((info, rto))
}

/// Reads the TCP-level option `name` of the socket into `buf`: the length the
/// kernel filled, or none if it refused.
fn tcp_option<T: Copy>(fd: RawFd, name: libc::c_int, buf: &mut [T]) -> Option<usize> {
    let mut len = std::mem::size_of_val(buf) as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes, the buffer's size, into
    // it; `T` is plain data (integers or bytes).
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            name,
            buf.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    (r == 0).then_some(len as usize)
}
