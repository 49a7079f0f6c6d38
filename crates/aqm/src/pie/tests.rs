//! PIE against RFC 8033 and Linux's sch_pie: the controller's update, burst
//! allowance, derandomization, ECN, the drain-rate estimator, idle periods and a
//! window-based load; ns-3's test case in `ns3`.

use super::*;
use crate::packet::{Ecn, FlowId};
use crate::qdisc::VecSink;
use crate::testing::{self, Harness};
use crate::{rng, Rng};

mod ns3;

/// Drives a `Pie` directly, so a test can look at (and, as ns-3's tests do,
/// set) its internals between calls.
struct Driver {
    q: Pie,
    now: Time,
    rng: Rng,
    sink: VecSink,
    size: u32,
    ect: bool,
    seq: u32,
}

impl Driver {
    fn new(params: PieParams) -> Self {
        Driver {
            q: Pie::new(params).unwrap(),
            now: Time::ZERO,
            rng: rng::stream(1, 0),
            sink: VecSink::default(),
            size: 1000,
            ect: false,
            seq: 0,
        }
    }
    fn at(&mut self, t: Dur) {
        self.now = Time::ZERO + t;
    }
    fn enqueue(&mut self) -> Verdict {
        let mut p = Packet::new(FlowId(0), self.size);
        p.tag = self.seq;
        self.seq += 1;
        p.enqueued_at = self.now;
        if self.ect {
            p.ecn = Ecn::Ect;
        }
        let mut ctx = Ctx::new(self.now, &mut self.rng, &mut self.sink);
        self.q.enqueue(p, &mut ctx)
    }
    fn dequeue(&mut self) -> Option<Packet> {
        let mut ctx = Ctx::new(self.now, &mut self.rng, &mut self.sink);
        self.q.dequeue(&mut ctx)
    }
    /// Runs the controller up to now without a packet (what a call would do
    /// first).
    fn tick(&mut self) {
        self.q.advance_clock(self.now);
    }
    fn count(&self, reason: DropReason) -> usize {
        self.sink.drops.iter().filter(|(_, r)| *r == reason).count()
    }
    fn marks(&self) -> usize {
        self.sink.marks.len()
    }
}

/// Holds the queueing delay at `delay_ms`: one arrival and one departure per
/// millisecond through `enqueue`/`dequeue`, `delay_ms` packets queued, and an
/// arrival PIE drops replaced behind its back so the depth stays. Starts by
/// trimming the queue to its newest `delay_ms` packets (or filling an empty
/// one). Returns p after each update.
fn hold_delay(d: &mut Driver, from: Dur, dur: Dur, delay_ms: u64) -> Vec<f64> {
    let stamped = |t: Time| {
        let mut p = Packet::new(FlowId(0), 1000);
        p.enqueued_at = t;
        p
    };
    let depth = delay_ms as usize;
    while d.q.queue.len() > depth {
        d.q.queue.pop_front();
    }
    if d.q.queue.is_empty() {
        for k in (1..=delay_ms).rev() {
            let t = Time::ZERO + (from - Dur::from_millis(k));
            d.q.queue.push_back(stamped(t));
        }
    }
    assert_eq!(d.q.queue.len(), depth);
    let mut probs = Vec::new();
    let mut t = from;
    while t < from + dur {
        d.at(t);
        let before = d.q.next_update;
        if d.enqueue() == Verdict::Dropped {
            d.q.queue.push_back(stamped(d.now));
        }
        let p = d.dequeue().unwrap();
        assert_eq!(
            d.now.saturating_since(p.enqueued_at),
            Dur::from_millis(delay_ms)
        );
        if d.q.next_update != before {
            probs.push(d.q.prob);
        }
        t = t + Dur::from_millis(1);
    }
    probs
}

#[test]
fn p_rises_while_the_delay_is_above_target_and_falls_below() {
    let mut d = Driver::new(PieParams::default());
    let s = Dur::from_secs;
    let up = hold_delay(&mut d, s(1), s(3), 40);
    assert!(up.windows(2).all(|w| w[1] > w[0]), "{up:?}");
    assert!(*up.last().unwrap() > 0.1, "{up:?}");
    let top = d.q.prob;
    let down = hold_delay(&mut d, s(4), s(12), 5);
    assert!(down.windows(2).all(|w| w[1] <= w[0]), "{down:?}");
    assert!(down[0] < top);
    assert_eq!(*down.last().unwrap(), 0.0);
}

#[test]
fn one_update_follows_the_rfc_formula_with_its_auto_tuning() {
    let mut d = Driver::new(PieParams {
        max_burst: Dur::ZERO,
        ..Default::default()
    });
    let step = |d: &mut Driver, qdelay_ms: u64| {
        d.q.qdelay = Dur::from_millis(qdelay_ms);
        d.q.update_probability();
        d.q.prob
    };
    // qdelay 35 ms twice: alpha * 20 ms = 0.0025, beta term 0 the second time.
    let p1 = step(&mut d, 35);
    let beta_part = 1.25 * 0.035;
    assert!((p1 - (0.0025 + beta_part) / 2048.0).abs() < 1e-15, "{p1}");
    // p1 ~ 2.25e-5 is in [1e-5, 1e-4): gain / 128.
    let p2 = step(&mut d, 35);
    assert!((p2 - (p1 + 0.0025 / 128.0)).abs() < 1e-15, "{p2}");
    // Once p >= 10% a large step is capped at 2%.
    d.q.prob = 0.5;
    let p3 = step(&mut d, 400);
    assert!((p3 - 0.52).abs() < 1e-12, "{p3}");
    // Below 10% it is not capped (but halved).
    d.q.prob = 0.05;
    d.q.qdelay_old = Dur::from_millis(400);
    let p4 = step(&mut d, 400);
    assert!((p4 - (0.05 + 0.125 * 0.385 / 2.0)).abs() < 1e-12, "{p4}");
    // Both delays zero: p loses 2% beyond the (negative) controller step.
    d.q.prob = 0.5;
    d.q.qdelay_old = Dur::ZERO;
    let p5 = step(&mut d, 0);
    assert!((p5 - (0.5 - 0.125 * 0.015) * 0.98).abs() < 1e-12, "{p5}");
}

#[test]
fn the_burst_allowance_is_spent_by_updates_and_refilled_when_quiet() {
    let mut d = Driver::new(PieParams::default());
    let ms = Dur::from_millis;
    // A standing queue of 60 ms from t = 1 s: no early drop while the 150 ms
    // allowance lasts, whatever p says; the allowance loses 15 ms per update.
    let probs = hold_delay(&mut d, ms(1000), ms(150), 60);
    assert!(probs.len() >= 9);
    assert!(d.q.prob() > 0.0);
    assert_eq!(d.count(DropReason::Early), 0);
    assert!(d.q.burst_allowance() <= ms(15));
    hold_delay(&mut d, ms(1150), ms(2000), 60);
    assert!(d.count(DropReason::Early) > 0);
    assert_eq!(d.q.burst_allowance(), Dur::ZERO);
    // Quiet again: once p is back to 0 and both delays are below 7.5 ms, the
    // next arrival finds a full allowance.
    hold_delay(&mut d, ms(3150), ms(15000), 2);
    assert_eq!(d.q.prob(), 0.0);
    d.enqueue();
    assert_eq!(d.q.burst_allowance(), ms(150));
}

#[test]
fn no_early_drops_at_low_delay_or_with_two_packets_queued() {
    // p is high but the last delay was below target / 2: work-conserving.
    let mut d = Driver::new(PieParams {
        max_burst: Dur::ZERO,
        ..Default::default()
    });
    for _ in 0..10 {
        d.enqueue();
    }
    d.q.prob = 0.15;
    d.q.qdelay_old = Dur::from_millis(7);
    d.q.accu_prob = 5.0;
    for _ in 0..1000 {
        d.enqueue();
        d.q.queue.pop_back();
    }
    assert_eq!(d.count(DropReason::Early), 0);
    // Delay high and p = 0.9: with three MTUs queued arrivals are dropped...
    let mut d = Driver::new(PieParams {
        max_burst: Dur::ZERO,
        derandomize: false,
        ..Default::default()
    });
    d.q.prob = 0.9;
    d.q.qdelay_old = Dur::from_millis(100);
    d.size = 1514;
    for _ in 0..1000 {
        while d.q.len() < 3 {
            d.q.queue.push_back(Packet::new(FlowId(0), 1514));
        }
        if d.enqueue() == Verdict::Queued {
            d.q.queue.pop_back();
        }
    }
    let dropped = d.count(DropReason::Early);
    assert!(dropped > 800, "{dropped}");
    // ...but not one while at most two are.
    for _ in 0..1000 {
        while d.q.len() > 2 {
            d.q.queue.pop_back();
        }
        d.enqueue();
    }
    assert_eq!(d.count(DropReason::Early), dropped);
}

#[test]
fn derandomization_spaces_drops_between_085_and_85() {
    // With p fixed at 0.1 the accumulated probability reaches 0.85 at the
    // ninth arrival after a drop; none comes earlier, and one comes once it
    // reaches 8.5 (the 86th: 85 x 0.1 falls a hair short in floating point).
    let mut d = Driver::new(PieParams {
        max_burst: Dur::ZERO,
        tupdate: Dur::from_secs(1_000_000),
        ..Default::default()
    });
    for _ in 0..5 {
        d.enqueue();
    }
    d.q.qdelay_old = Dur::from_millis(100);
    let mut since = 0;
    let mut gaps = Vec::new();
    for _ in 0..20_000 {
        d.q.prob = 0.1;
        since += 1;
        if d.enqueue() == Verdict::Dropped {
            gaps.push(since);
            since = 0;
        } else {
            d.q.queue.pop_back();
        }
    }
    assert!(gaps.len() > 500);
    assert!(gaps.iter().all(|&g| (9..=86).contains(&g)), "{gaps:?}");
    // Without derandomization gaps of 1 happen.
    let mut d = Driver::new(PieParams {
        max_burst: Dur::ZERO,
        derandomize: false,
        tupdate: Dur::from_secs(1_000_000),
        ..Default::default()
    });
    for _ in 0..5 {
        d.enqueue();
    }
    d.q.qdelay_old = Dur::from_millis(100);
    let mut last = false;
    let mut back_to_back = 0;
    for _ in 0..20_000 {
        d.q.prob = 0.1;
        let dropped = d.enqueue() == Verdict::Dropped;
        if !dropped {
            d.q.queue.pop_back();
        }
        back_to_back += (dropped && last) as u32;
        last = dropped;
    }
    assert!(back_to_back > 50, "{back_to_back}");
}

#[test]
fn ecn_marks_below_the_threshold_and_drops_above() {
    for (prob, marks) in [(0.05, true), (0.2, false)] {
        let mut d = Driver::new(PieParams {
            max_burst: Dur::ZERO,
            ecn: true,
            derandomize: false,
            tupdate: Dur::from_secs(1_000_000),
            ..Default::default()
        });
        d.ect = true;
        for _ in 0..5 {
            d.enqueue();
        }
        d.q.qdelay_old = Dur::from_millis(100);
        for _ in 0..5000 {
            d.q.prob = prob;
            if d.enqueue() == Verdict::Queued {
                d.q.queue.pop_back();
            }
        }
        if marks {
            assert!(d.marks() > 100 && d.count(DropReason::Early) == 0);
        } else {
            assert!(d.marks() == 0 && d.count(DropReason::Early) > 100);
        }
    }
}

#[test]
fn the_drain_rate_estimator_gives_backlog_over_rate() {
    // 1000-byte packets leave every millisecond: 1 MB/s. With 50 packets
    // queued the estimated delay is 50 ms.
    let mut d = Driver::new(PieParams {
        dq_rate_estimator: true,
        ..Default::default()
    });
    for _ in 0..50 {
        d.enqueue();
    }
    for ms in 1..=2000u64 {
        d.at(Dur::from_millis(ms));
        d.enqueue();
        d.dequeue();
    }
    assert!((d.q.dq_rate() - 1e6).abs() < 1e3, "{}", d.q.dq_rate());
    d.tick();
    d.at(Dur::from_millis(2016));
    d.tick();
    let (qdelay, _) = d.q.qdelay();
    assert!(
        (qdelay.as_secs_f64() - d.q.len() as f64 * 1e-3).abs() < 1e-4,
        "{qdelay} for {} packets",
        d.q.len()
    );
}

#[test]
fn idle_periods_cost_nothing_and_change_nothing_once_quiet() {
    let mut d = Driver::new(PieParams::default());
    d.enqueue();
    d.dequeue();
    // A year later (two billion updates): the quiet updates, which only spend
    // the burst allowance, are done at once.
    d.at(Dur::from_secs(365 * 86_400));
    d.tick();
    assert_eq!(d.q.prob(), 0.0);
    assert!(d.q.next_update >= d.now);
    assert!(d.q.next_update <= d.now + Dur::from_millis(15));
    assert_eq!(d.q.burst_allowance(), Dur::ZERO);
    // The arrival finds congestion long gone: a full allowance again.
    d.enqueue();
    assert_eq!(d.q.burst_allowance(), Dur::from_millis(150));
}

#[test]
fn catching_up_at_once_equals_updating_on_time() {
    // After a congested spell the queue drains; then 20 s pass. Running the
    // controller every millisecond and running it once at the end agree.
    let mut a = Driver::new(PieParams::default());
    hold_delay(&mut a, Dur::from_secs(1), Dur::from_secs(2), 40);
    while a.dequeue().is_some() {}
    assert!(a.q.prob() > 0.0);
    let mut b = Driver::new(PieParams::default());
    b.q = a.q.clone();
    let end = Dur::from_secs(23);
    let mut t = Dur::from_secs(3);
    while t < end {
        a.at(t);
        a.tick();
        t = t + Dur::from_millis(1);
    }
    a.at(end);
    a.tick();
    b.at(end);
    b.tick();
    let state = |q: &Pie| {
        (
            q.prob,
            q.qdelay,
            q.qdelay_old,
            q.burst_allowance,
            q.next_update,
        )
    };
    assert_eq!(state(&a.q), state(&b.q));
    assert_eq!(a.q.prob(), 0.0);
}

/// The mean queueing delay and the link's use of `aimd_through` from 10 s to 40 s.
fn aimd_through(params: PieParams) -> (f64, f64) {
    let (from, to) = (Time::from_secs(10), Time::from_secs(40));
    let load = testing::aimd_through(&mut Harness::build(params), from, to);
    (load.delay_s, load.utilization)
}

#[test]
fn under_steady_window_based_load_the_delay_settles_near_target() {
    let (delay, utilization) = aimd_through(PieParams::default());
    // Within 20% of the 15 ms target (it comes out at 14.9 ms).
    assert!((0.012..0.018).contains(&delay), "mean delay {delay}");
    assert!(utilization > 0.95, "utilization {utilization}");
    // The same senders through the same buffer with the controller off
    // (alpha = beta = 0: p stays 0, only the 1000-packet limit drops) fill it.
    let (delay, _) = aimd_through(PieParams {
        alpha: 0.0,
        beta: 0.0,
        ..Default::default()
    });
    assert!(delay > 0.2, "mean delay without the controller {delay}");
}

#[test]
fn bad_parameters_are_rejected_by_name() {
    let err = |p: PieParams| Pie::new(p).unwrap_err().to_string();
    assert_eq!(
        err(PieParams {
            tupdate: Dur::ZERO,
            ..Default::default()
        }),
        "tupdate = 0ns must be at least 1us"
    );
    assert_eq!(
        err(PieParams {
            alpha: f64::NAN,
            ..Default::default()
        }),
        "alpha = NaN must be a finite number >= 0"
    );
    assert_eq!(
        err(PieParams {
            mark_ecn_threshold: 1.5,
            ..Default::default()
        }),
        "mark_ecn_threshold = 1.5 must be a probability in [0, 1]"
    );
    assert_eq!(
        err(PieParams {
            target: Dur::ZERO,
            ..Default::default()
        }),
        "target = 0ns must be positive"
    );
    let p: PieParams = toml::from_str("t_update = \"30ms\"").unwrap();
    assert_eq!(p.tupdate, Dur::from_millis(30));
}
