//! A sender and a receiver over one bottleneck, for tests that follow a
//! congestion control through time: a FIFO of `pps` packets per second holding
//! at most `buffer` packets (tail drop; `None`: never full), the base RTT split
//! as all-forward delay, ACKs never lost or delayed beyond it.

use super::{timestamp, Actions, Seg, TcpConfig, TcpReceiver, TcpSender, TimerCmd};
use crate::event::TimerKind;
use aqm::{Dur, Time};
use std::collections::VecDeque;

pub struct Path {
    pub pps: f64,
    pub rtt: Dur,
    pub buffer: Option<usize>,
}

/// Runs one flow until `until`; calls `see` after every ACK the sender takes.
/// Returns the packets the bottleneck dropped.
pub fn drive(
    cfg: &TcpConfig,
    seed: u64,
    path: &Path,
    until: Time,
    mut see: impl FnMut(Time, &TcpSender),
) -> u64 {
    let mut s = TcpSender::new(cfg);
    s.seed(seed, cfg);
    let mut rx = TcpReceiver::default();
    let (mut act, mut rx_act) = (Actions::default(), Actions::default());
    let gap = Dur::from_secs_f64(1.0 / path.pps);
    let mut now = Time::ZERO;
    // Departure times of the packets in the bottleneck, and what arrives when.
    let mut queue: VecDeque<Time> = VecDeque::new();
    let mut data: VecDeque<(Time, u32, u32)> = VecDeque::new();
    let mut acks: VecDeque<(Time, Seg)> = VecDeque::new();
    let (mut send, mut rto, mut delack): (Option<Time>, Option<Time>, Option<Time>) =
        (None, None, None);
    let mut drops = 0;
    s.start(now, cfg, &mut act);
    loop {
        while queue.front().is_some_and(|&t| t <= now) {
            queue.pop_front();
        }
        for seg in &act.segs {
            if let Seg::Data { seq, .. } = *seg {
                if path.buffer.is_some_and(|b| queue.len() > b) {
                    drops += 1;
                    continue;
                }
                let leaves = queue.back().copied().unwrap_or(now).max(now) + gap;
                queue.push_back(leaves);
                data.push_back((leaves + path.rtt, seq, timestamp(now)));
            }
        }
        for (slot, k) in [(&mut send, TimerKind::Send), (&mut rto, TimerKind::Rto)] {
            match act.timers[k as usize] {
                Some(TimerCmd::Arm(t)) => *slot = Some(t),
                Some(TimerCmd::Cancel) => *slot = None,
                None => {}
            }
        }
        act.clear();
        for seg in &rx_act.segs {
            acks.push_back((now, *seg));
        }
        match rx_act.timers[TimerKind::DelAck as usize] {
            Some(TimerCmd::Arm(t)) => delack = Some(t),
            Some(TimerCmd::Cancel) => delack = None,
            None => {}
        }
        rx_act.clear();
        let next_data = data.front().map_or(Time::MAX, |&(t, _, _)| t);
        let next_ack = acks.front().map_or(Time::MAX, |&(t, _)| t);
        let timers = [send, rto, delack].map(|t| t.unwrap_or(Time::MAX));
        let next = next_data
            .min(next_ack)
            .min(timers.into_iter().min().unwrap());
        if next > until {
            return drops;
        }
        now = next;
        if next == next_ack {
            let (_, seg) = acks.pop_front().unwrap();
            if let Seg::Ack {
                ack,
                sack,
                ece,
                tsecr,
            } = seg
            {
                s.on_ack_echoing(now, ack, sack.as_slice(), ece, tsecr, cfg, &mut act);
                see(now, &s);
            }
        } else if next == next_data {
            let (_, seq, tsval) = data.pop_front().unwrap();
            rx.on_data(now, seq, tsval, false, false, cfg, &mut rx_act);
        } else if Some(next) == send {
            send = None;
            s.on_send_timer(now, cfg, &mut act);
        } else if Some(next) == rto {
            rto = None;
            s.on_rto(now, cfg, &mut act);
        } else {
            delack = None;
            rx.on_delack_timer(&mut rx_act);
        }
    }
}
