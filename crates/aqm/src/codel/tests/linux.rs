//! CoDel against Linux's arithmetic, drop by drop.
//!
//! `LinuxCodel` below is `sch_codel.c` with `include/net/codel.h` and
//! `codel_impl.h` transcribed line by line, written apart from `parts::codel` and
//! sharing nothing with it: `codel_time_t` is a `u32` compared serially
//! (`codel_time_before`: `(s32)(a - b) < 0`), `rec_inv_sqrt` a `u16` refined by
//! `codel_Newton_step`, the next drop `t + reciprocal_scale(interval, rec << 16)`,
//! `first_above_time == 0` means "below target", `backlog` is the qdisc's bytes
//! after the dequeue. The one free choice is the clock: Linux's is nanoseconds
//! shifted right by `CODEL_SHIFT = 10`; with a shift of 0 the same arithmetic runs
//! on aqmlab's nanoseconds.
//!
//! The traces are fixed: arrivals (times and sizes) and dequeue instants are
//! given, as a link of fixed rate would dequeue; every dequeue of both is compared
//! (the packet sent, the packets dropped on the way, the state after it).

use super::*;
use crate::packet::FlowId;
use std::collections::VecDeque;

/// Linux `CODEL_SHIFT`.
const CODEL_SHIFT: u32 = 10;

fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}
fn after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// `codel_Newton_step`: `u32 invsqrt = rec << 16; u32 invsqrt2 = ((u64)invsqrt *
/// invsqrt) >> 32; u64 val = (3LL << 32) - ((u64)count * invsqrt2); val >>= 2;
/// val = (val * invsqrt) >> (32 - 2 + 1); rec = val >> 16`.
fn linux_newton_step(rec: u16, count: u32) -> u16 {
    let invsqrt: u32 = (rec as u32) << 16;
    let invsqrt2: u32 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let mut val: u64 = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2 as u64);
    val >>= 2;
    val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
    (val >> 16) as u16
}

/// `codel_control_law`: `t + reciprocal_scale(interval, rec << 16)`, where
/// `reciprocal_scale(val, ep_ro) = (u32)(((u64)val * ep_ro) >> 32)`.
fn linux_control_law(t: u32, interval: u32, rec: u16) -> u32 {
    let ep_ro = (rec as u32) << 16;
    t.wrapping_add(((interval as u64 * ep_ro as u64) >> 32) as u32)
}

struct Skb {
    tag: u32,
    len: u32,
    enqueue_time: u32,
}

/// What one dequeue did: the tags dropped, the tag sent, the state after.
#[derive(Debug, PartialEq, Eq)]
struct Step {
    dropped: Vec<u32>,
    sent: Option<u32>,
    count: u32,
    lastcount: u32,
    dropping: bool,
    rec_inv_sqrt: u16,
    /// On the clock of the run (`ns >> shift`, to 32 bits).
    drop_next: u32,
}

/// How often each rule of Linux's CoDel decided something, so a test can show its
/// traces reach all of them.
#[derive(Debug, Default)]
struct Reached {
    /// Sojourn at or above target but at most `mtu` bytes left: no drop.
    mtu_rule: u64,
    /// Dropping state entered with `count - lastcount` carried over.
    reentry_reuse: u64,
    /// Dropping state entered afresh (`count = 1`) after an earlier episode.
    reentry_fresh: u64,
    /// Dequeues whose drop loop dropped two packets or more.
    loop_multi: u64,
    /// Dropping state left inside the drop loop.
    loop_exit: u64,
    /// Arrivals refused at the limit.
    overflow: u64,
}

/// `sch_codel` with its `codel_vars`, on a clock of `now_ns >> shift`.
struct LinuxCodel {
    shift: u32,
    limit: usize,
    // codel_params
    target: u32,
    interval: u32,
    mtu: u32,
    // codel_vars
    count: u32,
    lastcount: u32,
    dropping: bool,
    rec_inv_sqrt: u16,
    first_above_time: u32,
    drop_next: u32,
    ldelay: u32,
    // the qdisc
    q: VecDeque<Skb>,
    backlog: u32,
    reached: Reached,
}

impl LinuxCodel {
    /// `codel_change`: `target = ((u64)target_us * NSEC_PER_USEC) >> CODEL_SHIFT`.
    fn new(p: &CodelParams, shift: u32) -> Self {
        LinuxCodel {
            shift,
            limit: p.limit as usize,
            target: (p.target.as_nanos() >> shift) as u32,
            interval: (p.interval.as_nanos() >> shift) as u32,
            mtu: p.mtu,
            count: 0,
            lastcount: 0,
            dropping: false,
            rec_inv_sqrt: 0,
            first_above_time: 0,
            drop_next: 0,
            ldelay: 0,
            q: VecDeque::new(),
            backlog: 0,
            reached: Reached::default(),
        }
    }

    /// `codel_get_time`: `ktime_get_ns() >> CODEL_SHIFT`, truncated to u32.
    fn time(&self, now_ns: u64) -> u32 {
        (now_ns >> self.shift) as u32
    }

    /// `codel_qdisc_enqueue`: stamp and queue, or drop at the limit.
    fn enqueue(&mut self, now_ns: u64, tag: u32, len: u32) -> bool {
        if self.q.len() < self.limit {
            let enqueue_time = self.time(now_ns);
            self.q.push_back(Skb {
                tag,
                len,
                enqueue_time,
            });
            self.backlog += len;
            true
        } else {
            self.reached.overflow += 1;
            false
        }
    }

    /// `dequeue_func`: `__qdisc_dequeue_head`, `backlog -= qdisc_pkt_len(skb)`.
    fn dequeue_func(&mut self) -> Option<Skb> {
        let skb = self.q.pop_front()?;
        self.backlog -= skb.len;
        Some(skb)
    }

    fn should_drop(&mut self, skb: Option<&Skb>, now: u32) -> bool {
        let Some(skb) = skb else {
            self.first_above_time = 0;
            return false;
        };
        self.ldelay = now.wrapping_sub(skb.enqueue_time);
        if before(self.ldelay, self.target) || self.backlog <= self.mtu {
            if !before(self.ldelay, self.target) {
                self.reached.mtu_rule += 1;
            }
            self.first_above_time = 0;
            return false;
        }
        let mut ok_to_drop = false;
        if self.first_above_time == 0 {
            self.first_above_time = now.wrapping_add(self.interval);
        } else if after(now, self.first_above_time) {
            ok_to_drop = true;
        }
        ok_to_drop
    }

    /// `codel_dequeue` (ECN off), returning what it did.
    fn dequeue(&mut self, now_ns: u64) -> Step {
        let mut dropped = Vec::new();
        let mut skb = self.dequeue_func();
        if skb.is_none() {
            self.dropping = false;
            return self.step(dropped, None);
        }
        let now = self.time(now_ns);
        let drop = self.should_drop(skb.as_ref(), now);
        if self.dropping {
            if !drop {
                self.dropping = false;
            } else if after_eq(now, self.drop_next) {
                while self.dropping && after_eq(now, self.drop_next) {
                    self.count = self.count.wrapping_add(1);
                    self.rec_inv_sqrt = linux_newton_step(self.rec_inv_sqrt, self.count);
                    dropped.push(skb.take().expect("dropping with no packet").tag);
                    skb = self.dequeue_func();
                    if !self.should_drop(skb.as_ref(), now) {
                        self.dropping = false;
                        self.reached.loop_exit += 1;
                    } else {
                        self.drop_next =
                            linux_control_law(self.drop_next, self.interval, self.rec_inv_sqrt);
                    }
                }
                if dropped.len() > 1 {
                    self.reached.loop_multi += 1;
                }
            }
        } else if drop {
            dropped.push(skb.take().expect("a packet to drop").tag);
            skb = self.dequeue_func();
            let _ = self.should_drop(skb.as_ref(), now);
            self.dropping = true;
            let delta = self.count.wrapping_sub(self.lastcount);
            if delta > 1
                && before(
                    now.wrapping_sub(self.drop_next),
                    16u32.wrapping_mul(self.interval),
                )
            {
                self.count = delta;
                self.rec_inv_sqrt = linux_newton_step(self.rec_inv_sqrt, self.count);
                self.reached.reentry_reuse += 1;
            } else {
                if self.count > 0 {
                    self.reached.reentry_fresh += 1;
                }
                self.count = 1;
                self.rec_inv_sqrt = (!0u32 >> 16) as u16;
            }
            self.lastcount = self.count;
            self.drop_next = linux_control_law(now, self.interval, self.rec_inv_sqrt);
        }
        self.step(dropped, skb.map(|s| s.tag))
    }

    fn step(&self, dropped: Vec<u32>, sent: Option<u32>) -> Step {
        Step {
            dropped,
            sent,
            count: self.count,
            lastcount: self.lastcount,
            dropping: self.dropping,
            rec_inv_sqrt: self.rec_inv_sqrt,
            drop_next: self.drop_next,
        }
    }
}

/// One event of a trace: an arrival of `size` bytes, or a dequeue.
#[derive(Copy, Clone, Debug)]
enum Ev {
    Arrive(u32),
    Dequeue,
}

/// A trace: events in time order (an arrival before a dequeue of the same instant).
struct Trace(Vec<(u64, Ev)>);

impl Trace {
    /// A link that dequeues every `tx` from `from` to `to`, and arrivals every
    /// `gap` over the same span, sizes taken in turn from `sizes`.
    fn phase(&mut self, from: u64, to: u64, tx: u64, gap: Option<u64>, sizes: &[u32]) {
        let mut evs = Vec::new();
        let mut t = from;
        while t < to {
            evs.push((t, 1, Ev::Dequeue));
            t += tx;
        }
        if let Some(gap) = gap {
            let mut t = from;
            let mut i = 0;
            while t < to {
                evs.push((t, 0, Ev::Arrive(sizes[i % sizes.len()])));
                i += 1;
                t += gap;
            }
        }
        evs.sort_by_key(|&(t, order, _)| (t, order));
        self.0.extend(evs.into_iter().map(|(t, _, e)| (t, e)));
    }
}

/// Both CoDels' steps through one trace, and the rules Linux's reached.
struct Run {
    ours: Vec<(u64, Step)>,
    linux: Vec<(u64, Step)>,
    /// Arrivals the two treated differently (one queued, the other refused).
    enqueue_differences: u64,
    reached: Reached,
}

/// Runs `trace` through aqmlab's CoDel and through `LinuxCodel` on a clock of
/// `ns >> shift`.
fn run_both(p: &CodelParams, shift: u32, trace: &Trace) -> Run {
    let mut h = Harness::new(Codel::new(p.clone()).unwrap());
    let mut linux = LinuxCodel::new(p, shift);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut enqueue_differences = 0;
    let mut tag = 0u32;
    for &(t, ev) in &trace.0 {
        h.now = Time::from_nanos(t);
        match ev {
            Ev::Arrive(size) => {
                let mut pkt = Packet::new(FlowId(0), size);
                pkt.tag = tag;
                let queued = h.offer_pkt(pkt) == crate::qdisc::Verdict::Queued;
                if queued != linux.enqueue(t, tag, size) {
                    enqueue_differences += 1;
                }
                tag += 1;
            }
            Ev::Dequeue => {
                let before = h.sink.drops.len();
                let sent = h.dequeue().map(|p| p.tag);
                let v = *h.q.qdisc().vars();
                let dropped = h.sink.drops[before..].iter().map(|(p, _)| p.tag).collect();
                ours.push((
                    t,
                    Step {
                        dropped,
                        sent,
                        count: v.count,
                        lastcount: v.lastcount,
                        dropping: v.dropping,
                        rec_inv_sqrt: v.rec_inv_sqrt,
                        drop_next: (v.drop_next.as_nanos() >> shift) as u32,
                    },
                ));
                theirs.push((t, linux.dequeue(t)));
            }
        }
    }
    Run {
        ours,
        linux: theirs,
        enqueue_differences,
        reached: linux.reached,
    }
}

/// xorshift64*, so the traces need nothing but this file.
struct Xs(u64);
impl Xs {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const MS: u64 = 1_000_000;

/// Linux's defaults on a 10 Mbit/s link (a 1500-byte packet every 1.2 ms):
/// overload at 4/3 of the rate, a drain at half, overload at 3/2 soon after (the
/// re-entry that reuses `count - lastcount`), a backlog of one packet whose
/// sojourn is above target (the `mtu` rule), idle, and overload again. Ends before
/// 4.29 s so a 32-bit nanosecond clock does not wrap.
fn defaults_trace() -> Trace {
    let mut t = Trace(Vec::new());
    let tx = 1_200_000;
    t.phase(0, 1200 * MS, tx, Some(900_000), &[1500]);
    t.phase(1200 * MS, 1700 * MS, tx, None, &[]);
    t.phase(1700 * MS, 1900 * MS, tx, Some(2_400_000), &[1500]);
    t.phase(1900 * MS, 2500 * MS, tx, Some(800_000), &[1500, 1500, 64]);
    t.phase(2500 * MS, 2700 * MS, tx, None, &[]);
    // One packet stands in the queue and waits 8 ms: above target, one MTU.
    t.phase(2700 * MS, 2700 * MS + 1, tx, Some(1), &[1500]);
    t.phase(2700 * MS + 1, 3300 * MS, 8 * MS, Some(8 * MS), &[1500]);
    t.phase(3300 * MS, 3600 * MS, tx, None, &[]);
    t.phase(3600 * MS, 4250 * MS, tx, Some(700_000), &[1500, 576]);
    t
}

/// Random bursts through a link that dequeues every `tx` until `end`: on and off
/// periods of 1 to `longest` random length with random rates (none, half the link
/// rate, just below it, 1.5 times it) and random sizes; in one period of six the
/// link stalls, dequeuing only every 40 `tx`, so several drops fall due at once.
fn random_trace(seed: u64, tx: u64, longest: u64, end: u64) -> Trace {
    let mut x = Xs(seed);
    let mut t = Trace(Vec::new());
    let mut now = 0;
    while now < end {
        let len = 1 + x.below(longest);
        let stop = (now + len).min(end);
        let gap = match x.below(5) {
            0 => None,
            1 => Some(tx * 2),
            2 => Some(tx - x.below(tx / 2)),
            _ => Some(tx * 2 / 3 + x.below(tx / 6)),
        };
        let sizes: Vec<u32> = (0..7)
            .map(|_| [64, 576, 1500, 1500][x.below(4) as usize])
            .collect();
        let every = if x.below(6) == 0 { 40 * tx } else { tx };
        t.phase(now, stop, every, gap, &sizes);
        now = stop;
    }
    t
}

fn scaled() -> CodelParams {
    CodelParams {
        target: Dur::from_micros(500),
        interval: Dur::from_millis(10),
        ..Default::default()
    }
}

/// Every dequeue of aqmlab's CoDel (the packet sent, the packets dropped, count,
/// lastcount, the state, rec_inv_sqrt, the next drop time) equals Linux's
/// arithmetic run on aqmlab's nanosecond clock, over traces that reach every rule.
/// The traces end before 4.29 s and no episode above target lasts 2.1 s, so the
/// 32-bit clock of the transcription neither wraps nor compares serially across
/// half its range (which Linux's 1024-ns clock does after 36 minutes).
#[test]
fn every_dequeue_matches_linux_arithmetic_on_the_nanosecond_clock() {
    let cases = [
        (CodelParams::default(), defaults_trace()),
        // One 1500-byte packet left is exactly `mtu` in the trace's phase at 2.7 s.
        (
            CodelParams {
                mtu: 1500,
                ..Default::default()
            },
            defaults_trace(),
        ),
        (
            CodelParams::default(),
            random_trace(4, 1_200_000, 600 * MS, 4_200 * MS),
        ),
        (scaled(), random_trace(1, 120_000, 300 * MS, 4_200 * MS)),
        (scaled(), random_trace(2, 120_000, 300 * MS, 4_200 * MS)),
        (
            CodelParams {
                limit: 40,
                ..scaled()
            },
            random_trace(3, 120_000, 300 * MS, 4_200 * MS),
        ),
        // Dequeues every 100 us fall exactly on `first_above_time` (interval = 100
        // of them).
        (
            CodelParams {
                mtu: 1500,
                ..scaled()
            },
            random_trace(8, 100_000, 300 * MS, 4_200 * MS),
        ),
    ];
    let mut reached = Reached::default();
    let mut drops = 0;
    for (i, (p, trace)) in cases.iter().enumerate() {
        let run = run_both(p, 0, trace);
        assert_eq!(run.enqueue_differences, 0, "case {i}");
        assert_eq!(run.ours.len(), run.linux.len());
        for (a, b) in run.ours.iter().zip(&run.linux) {
            assert_eq!(a, b, "case {i}: the dequeue at {} ns", a.0);
        }
        drops += run
            .linux
            .iter()
            .map(|(_, s)| s.dropped.len())
            .sum::<usize>();
        let r = run.reached;
        reached.mtu_rule += r.mtu_rule;
        reached.reentry_reuse += r.reentry_reuse;
        reached.reentry_fresh += r.reentry_fresh;
        reached.loop_multi += r.loop_multi;
        reached.loop_exit += r.loop_exit;
        reached.overflow += r.overflow;
    }
    // The traces reach every rule, many times.
    let r = &reached;
    assert!(drops > 10_000, "{drops} drops");
    for (rule, n) in [
        ("mtu", r.mtu_rule),
        ("re-entry with count carried over", r.reentry_reuse),
        ("re-entry afresh", r.reentry_fresh),
        ("several drops in one dequeue", r.loop_multi),
        ("leaving inside the drop loop", r.loop_exit),
        ("overflow", r.overflow),
    ] {
        assert!(n >= 5, "{rule}: reached {n} times ({r:?})");
    }
}

/// The link dequeues every 1.2 ms and also at the very instants Linux decides at,
/// `first_above_time` and `drop_next`, under overload, drain and overload again:
/// the edges of `codel_time_after` (no drop at `first_above_time` itself) and
/// `codel_time_after_eq` (a drop at `drop_next` itself).
#[test]
fn dequeues_at_the_instants_linux_decides_at_match_too() {
    let p = CodelParams::default();
    let mut h = Harness::new(Codel::new(p.clone()).unwrap());
    let mut linux = LinuxCodel::new(&p, 0);
    let gap = |t: u64| match t / MS {
        0..1200 => Some(900_000),
        1700..2300 => Some(800_000),
        2800..4000 => Some(700_000),
        _ => None,
    };
    let (tx, end) = (1_200_000, 4_000 * MS);
    let (mut next_arrival, mut next_tx, mut last, mut tag) = (0, 0, 0, 0u32);
    let (mut at_fat, mut at_drop_next) = (0, 0);
    while next_tx < end {
        let mut t = next_tx;
        for e in [linux.first_above_time, linux.drop_next] {
            let e = e as u64;
            if e > last && e < t {
                t = e;
            }
        }
        while next_arrival <= t {
            if let Some(g) = gap(next_arrival) {
                h.now = Time::from_nanos(next_arrival);
                let mut pkt = Packet::new(FlowId(0), 1500);
                pkt.tag = tag;
                let queued = h.offer_pkt(pkt) == crate::qdisc::Verdict::Queued;
                assert_eq!(queued, linux.enqueue(next_arrival, tag, 1500));
                tag += 1;
                next_arrival += g;
            } else {
                next_arrival += MS;
            }
        }
        at_fat += (t == linux.first_above_time as u64) as u32;
        at_drop_next += (t == linux.drop_next as u64 && linux.dropping) as u32;
        h.now = Time::from_nanos(t);
        let before = h.sink.drops.len();
        let sent = h.dequeue().map(|p| p.tag);
        let v = *h.q.qdisc().vars();
        let ours = Step {
            dropped: h.sink.drops[before..].iter().map(|(p, _)| p.tag).collect(),
            sent,
            count: v.count,
            lastcount: v.lastcount,
            dropping: v.dropping,
            rec_inv_sqrt: v.rec_inv_sqrt,
            drop_next: v.drop_next.as_nanos() as u32,
        };
        assert_eq!(ours, linux.dequeue(t), "the dequeue at {t} ns");
        if t == next_tx {
            next_tx += tx;
        }
        last = t;
    }
    assert!(
        at_fat >= 3 && at_drop_next >= 100,
        "{at_fat} {at_drop_next}"
    );
}

/// On Linux's own clock (nanoseconds >> 10) the two differ only by its
/// resolution: Linux truncates the clock and each control-law step to whole
/// 1.024 us units, so its next drop time runs ahead of aqmlab's by under 1.024 us
/// per drop of an episode plus one unit. Episodes here are under 200 drops, so the
/// two drop the same number of packets, each at the same dequeue or the next one
/// (1.2 ms apart), never further.
#[test]
fn on_linux_1024_ns_clock_every_drop_falls_at_the_same_dequeue_or_the_next() {
    let tx = 1_200_000;
    let run = run_both(&CodelParams::default(), CODEL_SHIFT, &defaults_trace());
    let drops = |v: &[(u64, Step)]| -> Vec<u64> {
        v.iter()
            .flat_map(|(t, s)| s.dropped.iter().map(move |_| *t))
            .collect()
    };
    let (ours, linux) = (drops(&run.ours), drops(&run.linux));
    assert_eq!(ours.len(), linux.len());
    assert!(ours.len() >= 150, "{} drops", ours.len());
    for (k, (a, b)) in ours.iter().zip(&linux).enumerate() {
        assert!(
            *a == *b || *a == *b + tx,
            "drop {k}: {a} ns against Linux's {b} ns"
        );
    }
}
