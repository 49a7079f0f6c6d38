//! The undo rules, segment by segment: what Linux undoes (a timeout or a
//! recovery that timestamps, F-RTO or DSACKs show spurious), and what it keeps
//! (a real loss).

use super::super::super::{
    timestamp, Actions, ReductionCause, Seg, TcpConfig, TcpReceiver, TcpSender, Variant,
};
use super::super::scripted::{at, first_lost, linux};
use aqm::Time;

fn ts(ms: u64) -> u32 {
    timestamp(at(ms))
}

fn ack(
    s: &mut TcpSender,
    ms: u64,
    ack: u32,
    sack: &[(u32, u32)],
    tsecr: u32,
    cfg: &TcpConfig,
) -> Actions {
    let mut act = Actions::default();
    s.on_ack_echoing(at(ms), ack, sack, false, tsecr, cfg, &mut act);
    act
}

/// A first window of 10 at 0, ACKed at 50 ms: cwnd 20, segments 10 to 29
/// sent at 50 ms. Then the path's delay grows and the timer fires: first as
/// a tail loss probe (segment 30), then as the timeout at 400 ms, which
/// resends segment 10.
fn timed_out(cfg: &TcpConfig) -> (TcpSender, f64, f64) {
    let mut s = TcpSender::new(cfg);
    let mut act = Actions::default();
    s.start(at(0), cfg, &mut act);
    for a in 1..=10 {
        ack(&mut s, 50, a, &[], ts(0), cfg);
    }
    let (cwnd, ssthresh) = (s.cwnd(), s.ssthresh());
    assert_eq!(cwnd, 20.0);
    s.on_rto(at(300), cfg, &mut act);
    assert_eq!(s.stats.timeouts, 0, "the probe first");
    act.clear();
    s.on_rto(at(400), cfg, &mut act);
    assert_eq!(s.stats.timeouts, 1);
    assert_eq!(act.data_seqs(), vec![10]);
    assert_eq!(s.cwnd(), 1.0);
    (s, cwnd, ssthresh)
}

/// The ACK after the timeout echoes segment 10's first transmission (sent at
/// 50 ms, before the retransmission at 400): it was delayed, not lost, and
/// the window and ssthresh from before the timeout come back at once.
#[test]
fn a_timeout_timestamps_show_spurious_is_undone() {
    let cfg = linux(10);
    let (mut s, cwnd, ssthresh) = timed_out(&cfg);
    s.trace = Some(Box::default());
    let act = ack(&mut s, 450, 11, &[], ts(50), &cfg);
    assert_eq!(s.undos(), 1);
    let trace = s.trace.as_deref().unwrap();
    assert_eq!(trace.len(), 1);
    assert_eq!(
        trace[0].cause,
        ReductionCause::Undo,
        "the trace shows the undo"
    );
    assert!(trace[0].cwnd_after > trace[0].cwnd_before);
    assert!(s.cwnd() >= cwnd, "{} against {cwnd}", s.cwnd());
    assert_eq!(s.ssthresh(), ssthresh);
    assert!(
        act.data_seqs().iter().all(|&q| q > 30),
        "no more retransmissions: {:?}",
        act.data_seqs()
    );
}

/// The same ACK echoing the retransmission's timestamp: the loss was real, so
/// the reduction stays, and F-RTO sends new data (step 2) where the loss
/// state would resend segment 11. A SACK of that new data, with 11 still
/// missing, proves the loss real (step 3.a): 11 is resent, nothing undone.
#[test]
fn a_real_timeout_keeps_its_reduction_and_frto_probes_with_new_data() {
    let cfg = linux(10);
    let (mut s, cwnd, _) = timed_out(&cfg);
    let act = ack(&mut s, 450, 11, &[], ts(400), &cfg);
    let sent = act.data_seqs();
    assert!(
        !sent.is_empty() && sent.iter().all(|&q| q > 30),
        "new data only: {sent:?}"
    );
    assert_eq!(s.undos(), 0);
    let new = sent[0];
    let act = ack(&mut s, 460, 11, &[(new, new + 1)], ts(400), &cfg);
    assert!(act.data_seqs().contains(&11), "{:?}", act.data_seqs());
    assert_eq!(s.undos(), 0);
    assert!(s.cwnd() < cwnd / 2.0);
}

/// Without timestamps F-RTO alone finds the spurious timeout: after its new
/// data, an ACK of segment 11, never sent twice, says the window was not
/// lost (step 3.b).
#[test]
fn frto_finds_a_spurious_timeout_without_timestamps() {
    let cfg = linux(10);
    let (mut s, cwnd, ssthresh) = timed_out(&cfg);
    let act = ack(&mut s, 450, 11, &[], 0, &cfg);
    assert!(act.data_seqs().iter().all(|&q| q > 30));
    assert_eq!(s.undos(), 0, "one ACK is not yet proof");
    ack(&mut s, 451, 12, &[], 0, &cfg);
    assert_eq!(s.undos(), 1);
    assert!(s.cwnd() >= cwnd);
    assert_eq!(s.ssthresh(), ssthresh);
}

/// Segment 0 of a first window is delayed behind 1 to 3: three duplicate
/// ACKs start a fast recovery that resends it. Returns the sender in
/// recovery, its window and ssthresh from before.
fn spurious_recovery(cfg: &TcpConfig) -> (TcpSender, f64, f64) {
    let probe = TcpSender::new(cfg);
    let (cwnd, ssthresh) = (probe.cwnd(), probe.ssthresh());
    let (s, act) = first_lost(cfg, 3);
    assert!(s.in_recovery());
    assert_eq!(act.data_seqs(), vec![0]);
    (s, cwnd, ssthresh)
}

/// The original arrives and its ACK ends the recovery echoing a timestamp
/// older than the retransmission: the recovery is undone there.
#[test]
fn a_recovery_ended_by_a_delayed_original_is_undone() {
    let cfg = linux(10);
    let (mut s, cwnd, ssthresh) = spurious_recovery(&cfg);
    ack(&mut s, 60, 10, &[], ts(0), &cfg);
    assert!(!s.in_recovery());
    assert_eq!(s.undos(), 1);
    assert!(s.cwnd() >= cwnd);
    assert_eq!(s.ssthresh(), ssthresh);
}

/// Without timestamps the recovery ends reduced; the DSACK the needless
/// retransmission brings afterwards undoes it (`tcp_try_undo_dsack`).
#[test]
fn a_late_dsack_undoes_a_recovery_already_over() {
    let cfg = linux(10);
    let (mut s, cwnd, ssthresh) = spurious_recovery(&cfg);
    ack(&mut s, 60, 10, &[], 0, &cfg);
    assert!(!s.in_recovery());
    assert_eq!(s.undos(), 0);
    assert!(s.cwnd() < cwnd);
    ack(&mut s, 100, 10, &[(0, 1)], 0, &cfg);
    assert_eq!(s.undos(), 1);
    assert!(s.cwnd() >= cwnd);
    assert_eq!(s.ssthresh(), ssthresh);
}

/// A real loss: the retransmission is what the receiver needed, no DSACK
/// and no older timestamp come, and the reduction stays.
#[test]
fn a_real_recovery_is_not_undone() {
    let cfg = linux(10);
    let (mut s, cwnd, _) = spurious_recovery(&cfg);
    ack(&mut s, 100, 10, &[], ts(50), &cfg);
    assert!(!s.in_recovery());
    assert_eq!(s.undos(), 0);
    assert!(s.cwnd() < cwnd);
}

/// The `ns2` profile has no undo: the same spurious recovery stays reduced.
#[test]
fn the_ns2_profile_never_undoes() {
    let cfg = TcpConfig {
        variant: Variant::Sack,
        initial_window: 10,
        ..TcpConfig::default()
    };
    let (mut s, cwnd, _) = spurious_recovery(&cfg);
    ack(&mut s, 60, 10, &[], ts(0), &cfg);
    ack(&mut s, 100, 10, &[(0, 1)], ts(50), &cfg);
    assert_eq!(s.undos(), 0);
    assert!(s.cwnd() < cwnd);
}

/// An ACK as sent: cumulative ACK, SACK blocks, timestamp echoed.
type SentAck = (u32, Vec<(u32, u32)>, u32);

fn acks(act: &Actions) -> Vec<SentAck> {
    act.segs
        .iter()
        .filter_map(|s| match s {
            Seg::Ack {
                ack, sack, tsecr, ..
            } => Some((*ack, sack.as_slice().to_vec(), *tsecr)),
            Seg::Data { .. } => None,
        })
        .collect()
}

/// RFC 7323's echo and RFC 2883's DSACK at the Linux profile's receiver: an
/// out-of-order segment does not move the echo, the segment that fills the
/// hole does, a duplicate is reported first and moves nothing.
#[test]
fn the_receiver_echoes_the_left_edge_and_reports_duplicates() {
    let cfg = TcpConfig {
        delayed_ack: false,
        ..TcpConfig::linux(Variant::Cubic)
    };
    let mut r = TcpReceiver::default();
    let mut act = Actions::default();
    let t = Time::ZERO;
    r.on_data(t, 0, 1, false, false, &cfg, &mut act);
    r.on_data(t, 2, 3, false, false, &cfg, &mut act);
    r.on_data(t, 1, 7, false, false, &cfg, &mut act);
    r.on_data(t, 1, 9, false, false, &cfg, &mut act);
    r.on_data(t, 5, 10, false, false, &cfg, &mut act);
    r.on_data(t, 5, 11, false, false, &cfg, &mut act);
    assert_eq!(
        acks(&act),
        vec![
            (1, vec![], 1),
            (1, vec![(2, 3)], 1),
            (3, vec![], 7),
            (3, vec![(1, 2)], 7),
            (3, vec![(5, 6)], 7),
            (3, vec![(5, 6), (5, 6)], 7),
        ]
    );
    // The `ns2` profile: no timestamps, no DSACK.
    let ns2 = TcpConfig::default();
    let mut r = TcpReceiver::default();
    let mut act = Actions::default();
    r.on_data(t, 0, 1, false, false, &ns2, &mut act);
    r.on_data(t, 0, 2, false, false, &ns2, &mut act);
    assert_eq!(acks(&act), vec![(1, vec![], 0), (1, vec![], 0)]);
}

/// A delayed ACK echoes the first of the two segments it acknowledges (RFC
/// 7323, 4.3), so its RTT sample includes the receiver's wait.
#[test]
fn a_delayed_ack_echoes_its_first_segment() {
    let cfg = TcpConfig::linux(Variant::Cubic);
    let mut r = TcpReceiver::default();
    let mut act = Actions::default();
    // The first 16 segments are acknowledged at once (quick-ACK mode).
    for seq in 0..16 {
        r.on_data(Time::ZERO, seq, 1 + seq, false, false, &cfg, &mut act);
    }
    act.clear();
    r.on_data(Time::ZERO, 16, 100, false, false, &cfg, &mut act);
    assert!(acks(&act).is_empty());
    r.on_data(Time::ZERO, 17, 101, false, false, &cfg, &mut act);
    assert_eq!(acks(&act), vec![(18, vec![], 100)]);
}
