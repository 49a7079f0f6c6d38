//! COBALT's defining properties (BLUE rises on an unresponsive flow and decays
//! when it stops; CoDel's count decays rather than resets) and a transcription of
//! Linux's `cobalt_*` functions, compared call by call on random traces.

use super::*;
use rand::{Rng as _, SeedableRng};

const MS: u64 = 1_000_000;

fn params() -> CobaltParams {
    CobaltParams {
        interval: 100 * MS,
        target: 5 * MS,
        mtu_time: 0,
        p_inc: CobaltParams::P_INC,
        p_dec: CobaltParams::P_DEC,
    }
}

fn at(ms: u64) -> Time {
    Time::from_nanos(ms * MS)
}

#[test]
fn blue_rises_on_overflow_once_per_target_and_decays_when_the_queue_empties() {
    let p = params();
    let mut v = CobaltVars::default();
    // An unresponsive flow overflows its queue every millisecond for 1 s: BLUE
    // steps once per target (5 ms, strictly more), 1/256 each time.
    let mut went_active = 0;
    for t in 1..=1000 {
        went_active += v.queue_full(&p, at(t)) as u32;
    }
    assert_eq!(went_active, 1, "active once, at the first overflow");
    let steps = (v.p_drop / p.p_inc) as u64;
    assert!((160..=200).contains(&steps), "{steps} steps in 1 s");
    let raised = v.p_drop();
    assert!(raised > 0.6, "{raised}");
    // The flow stops: each look at the empty queue more than 5 ms apart lowers
    // p_drop by 1/4096, so it takes 4096 / 256 = 16 looks per step of increase.
    let mut went_idle = false;
    let mut t = 2000;
    while v.p_drop > 0 {
        went_idle |= v.queue_empty(&p, at(t));
        t += 6;
    }
    assert!(went_idle);
    let looks = (t - 2000) / 6;
    assert_eq!(looks, steps * 16, "{looks} looks for {steps} steps");
    // An active BLUE drops about p_drop of the packets CoDel passes.
    let mut v = CobaltVars {
        p_drop: u32::MAX / 4,
        ..Default::default()
    };
    let mut rng = crate::rng::stream(1, 0);
    let blue = (0..10_000)
        .filter(|i| {
            let s = v.should_drop(&p, at(3000 + i), 0, 0, true, rng.gen());
            s == Signal::Blue
        })
        .count();
    assert!((2300..2700).contains(&blue), "{blue} of 10000 at p = 1/4");
}

#[test]
fn codel_signals_after_an_interval_then_faster_and_its_count_decays_rather_than_resets() {
    let p = params();
    let mut v = CobaltVars::default();
    let look = |v: &mut CobaltVars, t: u64| v.should_drop(&p, at(t), 10 * MS, 0, false, u32::MAX);
    assert_eq!(
        look(&mut v, 0),
        Signal::Pass,
        "over target, the first signal waits"
    );
    assert_eq!(look(&mut v, 99), Signal::Pass);
    assert_eq!(look(&mut v, 100), Signal::Drop, "one interval later");
    let mut drops = vec![100];
    for t in 101..=400 {
        if look(&mut v, t) == Signal::Drop {
            drops.push(t);
        }
    }
    let gaps: Vec<u64> = drops.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.windows(2).all(|g| g[1] <= g[0]), "{gaps:?}");
    assert!(gaps.last().unwrap() < &50, "{gaps:?}");
    let count = v.count;
    // Below target: dropping ends; the count is kept and decays one step per
    // scheduled signal time that passes.
    v.should_drop(&p, at(401), 0, 0, false, u32::MAX);
    assert!(!v.dropping);
    assert!(v.count >= count - 1, "{} after {count}", v.count);
    v.should_drop(&p, at(2000), 0, 0, false, u32::MAX);
    assert!(v.count < count / 2, "{} after {count}", v.count);
    // ECN-capable packets are marked instead.
    let mut v = CobaltVars::default();
    v.should_drop(&p, at(0), 10 * MS, 0, true, u32::MAX);
    assert_eq!(
        v.should_drop(&p, at(100), 10 * MS, 0, true, u32::MAX),
        Signal::Mark
    );
}

#[test]
fn the_cache_holds_one_over_the_square_root() {
    for (n, &r) in INV_SQRT_CACHE.iter().enumerate().skip(2) {
        let exact = 1.0 / (n as f64).sqrt();
        let got = r as f64 / (1u64 << 32) as f64;
        assert!((got - exact).abs() < 1e-3, "{n}: {got} vs {exact}");
    }
}

/// Linux's `struct cobalt_vars` and functions, written again from the C with its
/// types: `ktime_t` as `i64`, `u32` fixed point, the cache filled at run time.
mod linux {
    pub struct Vars {
        pub count: u32,
        pub rec_inv_sqrt: u32,
        pub drop_next: i64,
        pub blue_timer: i64,
        pub p_drop: u32,
        pub dropping: bool,
        pub ecn_marked: bool,
    }
    pub struct Params {
        pub interval: u64,
        pub target: u64,
        pub mtu_time: u64,
        pub p_inc: u32,
        pub p_dec: u32,
    }

    fn newton_step(v: &mut Vars) {
        let invsqrt: u32 = v.rec_inv_sqrt;
        let invsqrt2: u32 = (((invsqrt as u64) * (invsqrt as u64)) >> 32) as u32;
        let mut val: u64 = (3u64 << 32).wrapping_sub((v.count as u64) * (invsqrt2 as u64));
        val >>= 2;
        val = (val.wrapping_mul(invsqrt as u64)) >> (32 - 2 + 1);
        v.rec_inv_sqrt = val as u32;
    }

    pub fn cache() -> [u32; 16] {
        let mut c = [0u32; 16];
        let mut v = fresh();
        v.rec_inv_sqrt = !0u32;
        c[0] = v.rec_inv_sqrt;
        v.count = 1;
        while v.count < 16 {
            for _ in 0..4 {
                newton_step(&mut v);
            }
            c[v.count as usize] = v.rec_inv_sqrt;
            v.count += 1;
        }
        c
    }

    pub fn fresh() -> Vars {
        Vars {
            count: 0,
            rec_inv_sqrt: !0u32,
            drop_next: 0,
            blue_timer: 0,
            p_drop: 0,
            dropping: false,
            ecn_marked: false,
        }
    }

    fn invsqrt(v: &mut Vars, c: &[u32; 16]) {
        if v.count < 16 {
            v.rec_inv_sqrt = c[v.count as usize];
        } else {
            newton_step(v);
        }
    }

    /// `reciprocal_scale(val, ep_ro)`: `(u32)(((u64)val * ep_ro) >> 32)`, with
    /// the 64-bit interval of `cobalt_control`.
    fn control(t: i64, interval: u64, rec: u32) -> i64 {
        t + ((interval as u128 * rec as u128) >> 32) as i64
    }

    pub fn queue_full(v: &mut Vars, p: &Params, now: i64) -> bool {
        let mut up = false;
        if now - v.blue_timer > p.target as i64 {
            up = v.p_drop == 0;
            v.p_drop = v.p_drop.wrapping_add(p.p_inc);
            if v.p_drop < p.p_inc {
                v.p_drop = !0;
            }
            v.blue_timer = now;
        }
        v.dropping = true;
        v.drop_next = now;
        if v.count == 0 {
            v.count = 1;
        }
        up
    }

    pub fn queue_empty(v: &mut Vars, p: &Params, now: i64, c: &[u32; 16]) -> bool {
        let mut down = false;
        if v.p_drop != 0 && now - v.blue_timer > p.target as i64 {
            if v.p_drop < p.p_dec {
                v.p_drop = 0;
            } else {
                v.p_drop -= p.p_dec;
            }
            v.blue_timer = now;
            down = v.p_drop == 0;
        }
        v.dropping = false;
        if v.count != 0 && now - v.drop_next >= 0 {
            v.count -= 1;
            invsqrt(v, c);
            v.drop_next = control(v.drop_next, p.interval, v.rec_inv_sqrt);
        }
        down
    }

    /// 0: not dropped, 1: congested (CoDel), 2: flood (BLUE).
    #[allow(clippy::too_many_arguments)]
    pub fn should_drop(
        v: &mut Vars,
        p: &Params,
        now: i64,
        enqueue_time: i64,
        ect: bool,
        bulk_flows: u32,
        random: u32,
        c: &[u32; 16],
    ) -> u8 {
        let mut reason = 0;
        let sojourn = (now - enqueue_time) as u64;
        let mut schedule = now - v.drop_next;
        let over_target = sojourn > p.target
            && sojourn > p.mtu_time * bulk_flows as u64 * 2
            && sojourn > p.mtu_time * 4;
        let mut next_due = v.count != 0 && schedule >= 0;
        v.ecn_marked = false;
        if over_target {
            if !v.dropping {
                v.dropping = true;
                v.drop_next = control(now, p.interval, v.rec_inv_sqrt);
            }
            if v.count == 0 {
                v.count = 1;
            }
        } else if v.dropping {
            v.dropping = false;
        }
        if next_due && v.dropping {
            v.ecn_marked = ect;
            if !v.ecn_marked {
                reason = 1;
            }
            v.count = v.count.wrapping_add(1);
            if v.count == 0 {
                v.count = v.count.wrapping_sub(1);
            }
            invsqrt(v, c);
            v.drop_next = control(v.drop_next, p.interval, v.rec_inv_sqrt);
            schedule = now - v.drop_next;
        } else {
            while next_due {
                v.count -= 1;
                invsqrt(v, c);
                v.drop_next = control(v.drop_next, p.interval, v.rec_inv_sqrt);
                schedule = now - v.drop_next;
                next_due = v.count != 0 && schedule >= 0;
            }
        }
        if v.p_drop != 0 && reason == 0 && random < v.p_drop {
            reason = 2;
        }
        if v.count == 0 {
            v.drop_next = now + p.interval as i64;
        } else if schedule > 0 && reason == 0 {
            v.drop_next = now;
        }
        reason
    }
}

#[test]
fn the_cache_is_linuxs() {
    assert_eq!(INV_SQRT_CACHE, linux::cache());
}

/// Random calls of the three entry points on a queue whose sojourn wanders
/// across the target, for several interval/target pairs and in ingress mode;
/// every result and the state after every call are compared.
#[test]
fn every_call_matches_linuxs_arithmetic() {
    let cache = linux::cache();
    let mut reached = [0u64; 4];
    for (seed, (interval, target, mtu_time)) in [
        (100 * MS, 5 * MS, 0),
        (100 * MS, 5 * MS, 1_200_000),
        (10 * MS, 500_000, 0),
        (MS / 10, 5_000, 600),
    ]
    .into_iter()
    .enumerate()
    {
        let ours_p = CobaltParams {
            interval,
            target,
            mtu_time,
            p_inc: CobaltParams::P_INC,
            p_dec: CobaltParams::P_DEC,
        };
        let theirs_p = linux::Params {
            interval,
            target,
            mtu_time,
            p_inc: CobaltParams::P_INC,
            p_dec: CobaltParams::P_DEC,
        };
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed as u64);
        let mut ours = CobaltVars::default();
        let mut theirs = linux::fresh();
        let mut now: i64 = 1_000 * MS as i64;
        let mut level = 0.0f64;
        for _ in 0..200_000 {
            now += rng.gen_range(0..target as i64 / 2 + 2);
            level = (level + rng.gen_range(-0.2..0.21f64)).clamp(0.0, 4.0);
            let sojourn = (level * target as f64) as u64;
            let t = Time::from_nanos(now as u64);
            match rng.gen_range(0..20) {
                0 => assert_eq!(
                    ours.queue_full(&ours_p, t),
                    linux::queue_full(&mut theirs, &theirs_p, now)
                ),
                1 | 2 => assert_eq!(
                    ours.queue_empty(&ours_p, t),
                    linux::queue_empty(&mut theirs, &theirs_p, now, &cache)
                ),
                _ => {
                    let ect = rng.gen_bool(0.3);
                    let bulk = rng.gen_range(0..8);
                    let draw: u32 = rng.gen();
                    let s = ours.should_drop(&ours_p, t, sojourn, bulk, ect, draw);
                    let r = linux::should_drop(
                        &mut theirs,
                        &theirs_p,
                        now,
                        now - sojourn as i64,
                        ect,
                        bulk,
                        draw,
                        &cache,
                    );
                    let expect = match (r, theirs.ecn_marked) {
                        (1, _) => Signal::Drop,
                        (2, _) => Signal::Blue,
                        (_, true) => Signal::Mark,
                        _ => Signal::Pass,
                    };
                    assert_eq!(s, expect);
                    reached[match s {
                        Signal::Pass => 0,
                        Signal::Mark => 1,
                        Signal::Drop => 2,
                        Signal::Blue => 3,
                    }] += 1;
                }
            }
            let state = (
                ours.count,
                ours.rec_inv_sqrt,
                ours.drop_next,
                ours.blue_timer,
                ours.p_drop,
                ours.dropping,
            );
            let linux_state = (
                theirs.count,
                theirs.rec_inv_sqrt,
                theirs.drop_next,
                theirs.blue_timer,
                theirs.p_drop,
                theirs.dropping,
            );
            assert_eq!(state, linux_state);
        }
    }
    assert!(reached.iter().all(|&n| n > 100), "{reached:?}");
}
