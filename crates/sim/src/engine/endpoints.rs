//! Transports: what a flow's endpoints send, what they receive, and their timers.
//! The TCP, UDP and probe state machines do no I/O; this file carries out their
//! actions.

use super::Simulation;
use crate::event::{Event, TimerKind};
use crate::flow::Endpoints;
use crate::header::{Header, Kind, SackBlocks, FLAG_CWR, FLAG_ECE};
use crate::observe::objects::ObjectDone;
use crate::tcp::{self, Actions, Seg, TimerCmd};
use aqm::{Ecn, FlowId, Packet};

impl Simulation {
    fn send(&mut self, flow: usize, kind: Kind, seq: u32, ack: u32, sack: SackBlocks, flags: u8) {
        self.send_from(flow, kind, seq, ack, sack, flags, self.now);
    }

    /// [`Simulation::send`] with the header's `sent_at` given (an echo carries
    /// its probe's).
    #[allow(clippy::too_many_arguments)]
    fn send_from(
        &mut self,
        flow: usize,
        kind: Kind,
        seq: u32,
        ack: u32,
        sack: SackBlocks,
        flags: u8,
        sent_at: aqm::Time,
    ) {
        if kind == Kind::Data && !self.faults.is_empty() {
            if let Some(i) = self
                .faults
                .iter()
                .position(|&(f, s)| f as usize == flow && s == seq)
            {
                self.faults.swap_remove(i);
                return;
            }
        }
        let f = &self.flows[flow];
        let size = if kind == Kind::Ack {
            self.groups[f.group as usize].tcp.ack_size
        } else {
            f.packet_size
        };
        let uid = self.next_uid;
        self.next_uid += 1;
        let tag = self.headers.alloc(Header {
            uid,
            flow: flow as u32,
            route_at: if matches!(kind, Kind::Ack | Kind::Echo) {
                f.rev
            } else {
                f.fwd
            },
            kind,
            flags,
            seq,
            ack,
            sack,
            sent_at,
        });
        let mut pkt = Packet::new(FlowId(flow as u32), size);
        pkt.aggregate = f.aggregate;
        pkt.tag = tag;
        // ACKs carry neither: Linux's receivers do not reflect the sender's
        // ECN or TOS (tcp_reflect_tos is off by default).
        if kind != Kind::Ack {
            pkt.ecn = f.ecn;
            pkt.dscp = f.dscp;
        }
        self.forward(pkt);
    }

    pub(super) fn deliver(&mut self, pkt: Packet) {
        let h = *self.headers.get(pkt.tag);
        self.headers.free(pkt.tag);
        let fi = h.flow as usize;
        let now = self.now;
        #[cfg(test)]
        self.probe.deliveries.push((h.uid, h.flow, h.kind, now));
        if h.kind == Kind::Probe {
            // The receiver echoes a probe at once, its send time carried back.
            let sack = SackBlocks::default();
            self.send_from(fi, Kind::Echo, h.seq, 0, sack, 0, h.sent_at);
            return;
        }
        let mut act = std::mem::take(&mut self.actions);
        act.clear();
        let flow = &mut self.flows[fi];
        let cfg = &self.groups[flow.group as usize].tcp;
        match (&mut flow.endpoints, h.kind) {
            (Endpoints::Tcp { receiver, .. }, Kind::Data) => {
                // Only the Linux profile's segments carry a timestamp.
                let tsval = if cfg.is_linux() {
                    tcp::timestamp(h.sent_at)
                } else {
                    0
                };
                receiver.on_data(
                    now,
                    h.seq,
                    tsval,
                    pkt.ecn == Ecn::Ce,
                    h.flags & FLAG_CWR != 0,
                    cfg,
                    &mut act,
                );
            }
            (Endpoints::Tcp { sender, .. }, Kind::Ack) => {
                sender.on_ack_echoing(
                    now,
                    h.ack,
                    h.sack.as_slice(),
                    h.flags & FLAG_ECE != 0,
                    h.seq,
                    cfg,
                    &mut act,
                );
            }
            (Endpoints::Udp(u), Kind::Udp) => u.received += 1,
            (Endpoints::Probe(p), Kind::Echo) => p.echoed(h.sent_at, now, self.warmup_end),
            _ => unreachable!("a packet reached an endpoint of the wrong transport"),
        }
        self.apply(fi, &act);
        self.actions = act;
    }

    /// Carries out what a TCP endpoint asked for.
    fn apply(&mut self, fi: usize, act: &Actions) {
        for seg in &act.segs {
            match *seg {
                Seg::Data { seq, cwr } => self.send(
                    fi,
                    Kind::Data,
                    seq,
                    0,
                    SackBlocks::default(),
                    if cwr { FLAG_CWR } else { 0 },
                ),
                // An ACK's `seq` carries the timestamp it echoes.
                Seg::Ack {
                    ack,
                    sack,
                    ece,
                    tsecr,
                } => self.send(
                    fi,
                    Kind::Ack,
                    tsecr,
                    ack,
                    sack,
                    if ece { FLAG_ECE } else { 0 },
                ),
            }
        }
        for (k, cmd) in act.timers.iter().enumerate() {
            if let Some(cmd) = cmd {
                self.set_timer(fi, k, *cmd);
            }
        }
        if let (Some((start, packets)), Some(objects)) = (act.object_done, &mut self.obs.objects) {
            if start >= self.warmup_end {
                objects.done.push(ObjectDone {
                    flow: fi as u32,
                    start,
                    end: self.now,
                    packets,
                });
            }
        }
    }

    fn set_timer(&mut self, fi: usize, k: usize, cmd: TimerCmd) {
        let slot = &mut self.flows[fi].timers[k];
        match cmd {
            TimerCmd::Cancel => slot.set_deadline(None),
            TimerCmd::Arm(at) => {
                slot.set_deadline(Some(at));
                if slot.pending().is_none_or(|p| p > at) {
                    slot.set_pending(Some(at));
                    self.events
                        .push(at, Event::Timer(fi as u32, TimerKind::ALL[k]));
                }
            }
        }
    }

    pub(super) fn on_timer(&mut self, fi: usize, kind: TimerKind) {
        let now = self.now;
        let slot = &mut self.flows[fi].timers[kind as usize];
        if slot.pending() != Some(now) {
            return; // superseded by an earlier arming
        }
        slot.set_pending(None);
        match slot.deadline() {
            Some(d) if d <= now => slot.set_deadline(None),
            Some(d) => {
                slot.set_pending(Some(d));
                self.events.push(d, Event::Timer(fi as u32, kind));
                return;
            }
            None => return,
        }
        let mut act = std::mem::take(&mut self.actions);
        act.clear();
        let flow = &mut self.flows[fi];
        let group = &self.groups[flow.group as usize];
        let cfg = &group.tcp;
        let mut udp_send = false;
        let mut probe_seq = None;
        match (&mut flow.endpoints, kind) {
            (Endpoints::Tcp { sender, .. }, TimerKind::Send) => {
                if flow.started {
                    sender.on_send_timer(now, cfg, &mut act);
                } else {
                    flow.started = true;
                    sender.start(now, cfg, &mut act);
                }
            }
            (Endpoints::Tcp { sender, .. }, TimerKind::Rto) => sender.on_rto(now, cfg, &mut act),
            (Endpoints::Tcp { receiver, .. }, TimerKind::DelAck) => {
                receiver.on_delack_timer(&mut act)
            }
            (Endpoints::Tcp { sender, .. }, TimerKind::Stop) => sender.stop(),
            (Endpoints::Udp(u), TimerKind::Send) => {
                if group.stop.is_none_or(|s| now < s) {
                    let w = u.source.wake(
                        now,
                        group.udp.as_ref().expect("UDP flow has a UDP config"),
                        &mut u.rng,
                    );
                    udp_send = w.send;
                    if let Some(next) = w.next {
                        act.timers[TimerKind::Send as usize] = Some(TimerCmd::Arm(next));
                    }
                }
            }
            (Endpoints::Udp(_), _) => {}
            (Endpoints::Probe(p), TimerKind::Send) => {
                // None at the end itself: measured probes are those sent in
                // [warm-up end, end), `duration / interval` of them.
                if group.stop.is_none_or(|s| now < s) && now < self.end {
                    probe_seq = Some(p.send(now, self.warmup_end));
                    let interval = group.probe.expect("a probe group has an interval");
                    act.timers[TimerKind::Send as usize] = Some(TimerCmd::Arm(now + interval));
                }
            }
            (Endpoints::Probe(_), _) => {}
        }
        if udp_send {
            self.send(fi, Kind::Udp, 0, 0, SackBlocks::default(), 0);
        }
        if let Some(seq) = probe_seq {
            self.send(fi, Kind::Probe, seq, 0, SackBlocks::default(), 0);
        }
        self.apply(fi, &act);
        self.actions = act;
    }
}
