//! The Linux profile against the kernel's own conformance scripts: packetdrill's
//! `gtests/net/tcp/cubic/` scripts drive a Linux sender with scripted ACKs and
//! assert its cwnd and ssthresh (`tcpi_snd_cwnd`, `tcpi_snd_ssthresh`) at fixed
//! points. These tests replay the same ACK patterns into aqmlab's sender
//! (segments of 1000 bytes; sequence numbers here count segments) and assert the
//! same values at the same points.

use super::*;
use aqm::Dur;

/// A CUBIC sender under the Linux profile that started at `start`.
fn linux_cubic(start: Time) -> (TcpSender, TcpConfig, Actions) {
    let cfg = TcpConfig {
        packet_size: 1000,
        max_window: 526,
        ..TcpConfig::linux(Variant::Cubic)
    };
    let mut s = TcpSender::new(&cfg);
    let mut act = Actions::default();
    s.start(start, &cfg, &mut act);
    (s, cfg, act)
}

fn at(ms: u64) -> Time {
    Time::ZERO + Dur::from_millis(ms)
}

/// `cubic-hystart-delay-rtt-jumps-upward.pkt`: after a 200 ms round trip the
/// RTT jumps to 240 ms; the ninth sample of the round finds it 12.5% above the
/// minimum (more than the 16 ms clamp) and ends slow start at cwnd 36.
#[test]
fn hystart_delay_exits_at_cwnd_36_when_the_rtt_jumps_upward() {
    let (mut s, cfg, mut act) = linux_cubic(at(0));
    assert_eq!(s.cwnd(), 10.0);
    s.on_ack(at(200), 10, &[], false, &cfg, &mut act);
    assert_eq!(s.cwnd(), 20.0);
    let mut t = 440;
    for (ack, cwnd) in (12..=26).step_by(2).zip((22..).step_by(2)) {
        s.on_ack(at(t), ack, &[], false, &cfg, &mut act);
        assert_eq!(s.ssthresh(), f64::INFINITY, "ack {ack}");
        assert_eq!(s.cwnd(), cwnd as f64, "ack {ack}");
        t += 1;
    }
    s.on_ack(at(t), 28, &[], false, &cfg, &mut act);
    assert_eq!(s.ssthresh(), 36.0);
    assert_eq!(s.cwnd(), 36.0);
    s.on_ack(at(t + 1), 30, &[], false, &cfg, &mut act);
    assert_eq!(s.ssthresh(), 36.0);
    assert_eq!(s.cwnd(), 36.0);
}

/// `cubic-bulk-166k.pkt`: a bulk flow whose ACKs come two segments every 100 ms
/// (166 kbit/s) while its window keeps growing. The kernel's growth laws, as
/// the script asserts them: slow start by the segments ACKed; after HyStart
/// ends it, no W_max yet, so `cnt` is capped at 20 (one segment per ten ACKs of
/// two); once the convex curve is far above, one segment per two ACKed (`cnt`
/// at its floor of 2), ten per ten ACKs, to the end.
///
/// Where the kernel's HyStart ends slow start differs: 48 in the script, whose
/// sender fq paces in TSO bursts of at least four segments (`tcp_min_tso_segs`),
/// 36 here, unpaced (the delay test above, unpaced in the kernel too, agrees
/// exactly). The exit point moves with the send times of the segments sampled.
#[test]
fn bulk_166k_grows_by_the_kernels_laws() {
    let (mut s, cfg, mut act) = linux_cubic(at(100));
    let mut cwnd_at = std::collections::BTreeMap::new();
    let mut exit = None;
    for k in 1..=200u32 {
        s.on_ack(at(100 + 100 * k as u64), 2 * k, &[], false, &cfg, &mut act);
        cwnd_at.insert(2 * k, s.cwnd() as u32);
        if exit.is_none() && s.ssthresh().is_finite() {
            exit = Some(2 * k);
        }
    }
    for (ack, cwnd) in [(10, 20), (20, 30)] {
        assert_eq!(cwnd_at[&ack], cwnd, "slow start: ack {ack}: {cwnd_at:?}");
    }
    let e = exit.expect("HyStart ends slow start");
    let w = cwnd_at[&e];
    assert_eq!(w, 36, "{cwnd_at:?}");
    // cnt capped at 20: one segment per 20 ACKed.
    assert_eq!(cwnd_at[&(e + 20)], w + 1, "{cwnd_at:?}");
    assert_eq!(cwnd_at[&(e + 40)], w + 2, "{cwnd_at:?}");
    // Then the curve: one segment per two ACKed, ten per ten ACKs, to the end.
    for ack in (150..=400).step_by(2) {
        assert_eq!(
            cwnd_at[&ack],
            cwnd_at[&(ack - 2)] + 1,
            "ack {ack}: {cwnd_at:?}"
        );
    }
}
