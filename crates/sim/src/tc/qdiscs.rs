//! The readers of each qdisc's tc options, as iproute2's `tc/q_*.c` read them:
//! option names, units, defaults and derived values (see the parent module).

use super::*;

pub(super) fn pfifo(p: &mut Parser) -> Result<(), TcError> {
    let mut limit = TXQUEUELEN;
    while let Some(o) = p.next() {
        match o {
            "limit" => limit = p.size(o)?,
            _ => return Err(p.unknown(o)),
        }
    }
    p.set("kind", "droptail");
    p.set("limit", int(limit));
    Ok(())
}

pub(super) fn bfifo(p: &mut Parser) -> Result<(), TcError> {
    let mut limit = TXQUEUELEN * PSCHED_MTU;
    while let Some(o) = p.next() {
        match o {
            "limit" => limit = p.size(o)?,
            _ => return Err(p.unknown(o)),
        }
    }
    let packets = (limit / PACKET_SIZE).max(1);
    p.set("kind", "droptail");
    p.set("limit", int(packets));
    p.note(format!(
        "bfifo's limit of {limit} bytes is {packets} packets of {PACKET_SIZE} bytes: aqmlab's \
         FIFO counts packets"
    ));
    Ok(())
}

/// tc's `tc_red_eval_ewma`: the smallest Wlog whose EWMA lets a burst of `burst`
/// packets arrive at an idle queue without the average passing `qmin`.
fn red_wlog(qmin: u64, burst: u64, avpkt: u64) -> Result<u32, TcError> {
    let a = burst as f64 + 1.0 - qmin as f64 / avpkt as f64;
    if a < 1.0 {
        return Err(bad(
            "burst",
            &burst.to_string(),
            &format!("too small for min; try burst {}", 1 + qmin / avpkt),
        ));
    }
    let mut w = 0.5f64;
    for wlog in 1..32 {
        if a <= (1.0 - (1.0 - w).powi(burst as i32)) / w {
            return Ok(wlog);
        }
        w /= 2.0;
    }
    Err(bad(
        "burst",
        &burst.to_string(),
        "needs an EWMA weight below 2^-31",
    ))
}

/// The options RED, CHOKe and SFQ's RED share, as their tc parsers read them.
#[derive(Default)]
struct RedOpts {
    min: u64,
    max: u64,
    burst: u64,
    avpkt: Option<u64>,
    probability: Option<f64>,
    bandwidth: Option<Rate>,
    ecn: bool,
    harddrop: bool,
}

impl RedOpts {
    /// Reads one RED option (`sizes`: min and max in bytes, else packets);
    /// false when `o` is not one.
    fn read(&mut self, p: &mut Parser, o: &str, sizes: bool) -> Result<bool, TcError> {
        match o {
            "min" if sizes => self.min = p.size(o)?,
            "max" if sizes => self.max = p.size(o)?,
            "min" => self.min = p.uint(o)?,
            "max" => self.max = p.uint(o)?,
            "burst" => self.burst = p.uint(o)?,
            "avpkt" => self.avpkt = Some(p.size(o)?.max(1)),
            "probability" => self.probability = Some(p.prob(o)?),
            "bandwidth" => self.bandwidth = Some(p.rate(o)?),
            "ecn" => self.ecn = true,
            "harddrop" => self.harddrop = true,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The keys every RED-like qdisc takes, thresholds in packets of `avpkt`.
    fn apply(
        &self,
        p: &mut Parser,
        min_bytes: u64,
        max_bytes: u64,
        avpkt: u64,
        burst: u64,
    ) -> Result<(), TcError> {
        let wlog = red_wlog(min_bytes, burst, avpkt)?;
        p.set("min_th", min_bytes as f64 / avpkt as f64);
        p.set("max_th", max_bytes as f64 / avpkt as f64);
        p.set("max_p", self.probability.unwrap_or(0.02));
        p.set("w_q", 0.5f64.powi(wlog as i32));
        p.set("mean_pkt_size", int(avpkt));
        p.set("ecn", self.ecn);
        // Linux's RED has no ns-2 `qlen > 1` rule.
        p.set("qlen_gate", false);
        if let Some(b) = self.bandwidth {
            p.note(format!(
                "bandwidth {b} is not used: the idle-time decay of the average uses the \
                 link's own rate"
            ));
        }
        if self.ecn && !self.harddrop {
            p.note(
                "with ecn, Linux also marks (rather than drops) ECN-capable packets above \
                 max; aqmlab drops them there, as Linux does with harddrop"
                    .into(),
            );
        }
        Ok(())
    }
}

pub(super) fn red(p: &mut Parser) -> Result<(), TcError> {
    let mut r = RedOpts::default();
    let mut limit = 0;
    let mut adaptive = false;
    while let Some(o) = p.next() {
        if r.read(p, o, true)? {
            continue;
        }
        match o {
            "limit" => limit = p.size(o)?,
            "adaptive" | "adaptative" => adaptive = true,
            "nodrop" => {
                return Err(TcError::Unsupported {
                    option: o.into(),
                    why: "aqmlab's RED drops what it cannot mark".into(),
                })
            }
            _ => return Err(p.unknown(o)),
        }
    }
    let Some(avpkt) = r.avpkt.filter(|_| limit > 0) else {
        let option = if limit == 0 { "limit" } else { "avpkt" };
        return Err(TcError::Required {
            kind: "red",
            option: option.into(),
        });
    };
    // tc's defaults (Floyd's recommendations, as q_red.c computes them).
    let mut max = r.max;
    let mut min = r.min;
    if max == 0 {
        max = if min > 0 { min * 3 } else { limit / 4 };
    }
    if min == 0 {
        min = max / 3;
    }
    let burst = if r.burst == 0 {
        (2 * min + max) / (3 * avpkt)
    } else {
        r.burst
    };
    p.set("kind", "red");
    p.set("limit", int((limit / avpkt).max(1)));
    r.apply(p, min, max, avpkt, burst)?;
    p.set("gentle", false);
    p.set("adaptive", adaptive);
    p.note(format!(
        "Linux averages the backlog in bytes; aqmlab in packets, the thresholds and limit \
         here in packets of avpkt = {avpkt} bytes"
    ));
    Ok(())
}

pub(super) fn choke(p: &mut Parser) -> Result<(), TcError> {
    let mut r = RedOpts::default();
    let mut limit = 0;
    while let Some(o) = p.next() {
        // q_choke.c reads no harddrop.
        if o != "harddrop" && r.read(p, o, false)? {
            continue;
        }
        match o {
            "limit" => limit = p.uint(o)?,
            _ => return Err(p.unknown(o)),
        }
    }
    if limit == 0 || r.bandwidth.is_none() {
        let option = if limit == 0 { "limit" } else { "bandwidth" };
        return Err(TcError::Required {
            kind: "choke",
            option: option.into(),
        });
    }
    let avpkt = r.avpkt.unwrap_or(1000);
    let max = if r.max == 0 { limit / 4 } else { r.max };
    let min = if r.min == 0 { max / 3 } else { r.min };
    let burst = if r.burst == 0 {
        (2 * min + max) / 3
    } else {
        r.burst
    };
    if max > limit {
        return Err(bad(
            "max",
            &max.to_string(),
            &format!("must be at most limit {limit}"),
        ));
    }
    if min >= max {
        return Err(bad(
            "min",
            &min.to_string(),
            &format!("must be below max {max}"),
        ));
    }
    p.set("kind", "choke");
    p.set("limit", int(limit));
    r.apply(p, min * avpkt, max * avpkt, avpkt, burst)?;
    // sch_choke.c compares the arrival with one queued packet.
    p.set("candidates", int(1));
    Ok(())
}

pub(super) fn sfb(p: &mut Parser) -> Result<(), TcError> {
    let (mut rehash, mut db) = (600_000u64, 60_000u64);
    let (mut limit, mut max, mut target) = (0u64, 0u64, 0u64);
    let (mut increment, mut decrement) = (0.0005, 0.00005);
    let (mut penalty_rate, mut penalty_burst) = (10u64, 20u64);
    while let Some(o) = p.next() {
        match o {
            "rehash" => rehash = p.uint(o)?,
            "db" => db = p.uint(o)?,
            "limit" => limit = p.uint(o)?,
            "max" => max = p.uint(o)?,
            "target" => target = p.uint(o)?,
            "increment" => increment = p.prob(o)?,
            "decrement" => decrement = p.prob(o)?,
            "penalty_rate" => penalty_rate = p.uint(o)?,
            "penalty_burst" => penalty_burst = p.uint(o)?,
            _ => return Err(p.unknown(o)),
        }
    }
    // q_sfb.c: max and target (the kernel's bin_size) default from each other.
    if max == 0 {
        max = if target >= 1 {
            (target * 5 + 1) / 4
        } else {
            25
        };
    }
    if target == 0 {
        target = (max * 4 + 3) / 5;
    }
    if limit == 0 {
        limit = TXQUEUELEN;
    }
    p.set("kind", "sfb");
    p.set("limit", int(limit));
    // sch_sfb.c: SFB_LEVELS = 8 levels of SFB_NUMBUCKETS = 16 bins.
    p.set("levels", int(8));
    p.set("bins", int(16));
    p.set("bin_size", int(target));
    p.set("increment", increment);
    p.set("decrement", decrement);
    p.set(
        "rate_limit",
        Rate::from_bps(penalty_rate * PACKET_SIZE * 8).to_string(),
    );
    p.set("rate_limit_burst", int(penalty_burst * PACKET_SIZE));
    p.set("hash", "double_buffered");
    p.set("rehash_period", dur(Dur::from_millis(rehash)));
    p.set("warmup", dur(Dur::from_millis(db)));
    // sfb_enqueue marks every ECN-capable packet it would drop with pmin.
    p.set("ecn", true);
    p.note(format!(
        "Linux raises a bin's pm at target = {target} and drops when all of a packet's bins \
         hold max = {max}; aqmlab does both at bin_size = target"
    ));
    p.note(format!(
        "penalty_rate {penalty_rate} pps and penalty_burst {penalty_burst} packets are \
         converted at {PACKET_SIZE}-byte packets: aqmlab's rate limiter counts bytes"
    ));
    Ok(())
}

pub(super) fn sfq(p: &mut Parser) -> Result<(), TcError> {
    let mut r = RedOpts::default();
    let mut red_limit = 0;
    let mut any_red = false;
    let mut flows = None;
    let (mut limit, mut depth, mut divisor) = (127u64, 127u64, 1024u64);
    let (mut quantum, mut perturb, mut headdrop) = (PSCHED_MTU, 0u64, false);
    while let Some(o) = p.next() {
        // q_sfq.c reads no bandwidth.
        if o != "bandwidth" && r.read(p, o, true)? {
            any_red = true;
            continue;
        }
        match o {
            "quantum" => quantum = p.size(o)?,
            "perturb" => {
                // tc's get_integer: a signed 32-bit number of seconds.
                perturb = p.uint(o)?;
                if perturb > i32::MAX as u64 {
                    return Err(bad(
                        "perturb",
                        &perturb.to_string(),
                        "must be below 2^31 seconds",
                    ));
                }
            }
            "limit" => {
                limit = p.uint(o)?;
                if limit < 2 {
                    return Err(bad("limit", &limit.to_string(), "must be at least 2"));
                }
            }
            "divisor" => {
                divisor = p.uint(o)?;
                // sch_sfq.c refuses other divisors.
                if !divisor.is_power_of_two() || divisor > 65536 {
                    return Err(bad(
                        "divisor",
                        &divisor.to_string(),
                        "must be a power of two up to 65536 (Linux's rule)",
                    ));
                }
            }
            "flows" => flows = Some(p.uint(o)?),
            "depth" => depth = p.uint(o)?,
            "headdrop" => headdrop = true,
            "redflowlimit" => {
                red_limit = p.uint(o)?;
                any_red = true;
            }
            _ => return Err(p.unknown(o)),
        }
    }
    p.set("kind", "sfq");
    p.set("limit", int(limit));
    p.set("depth", int(depth));
    p.set("divisor", int(divisor));
    p.set("quantum", int(quantum));
    p.set("perturb_period", dur(Dur::from_secs(perturb)));
    p.set("headdrop", headdrop);
    if let Some(f) = flows {
        p.note(format!(
            "flows {f} is not used: Linux serves at most `flows` active slots, aqmlab \
             gives each of the divisor bins its own queue"
        ));
    }
    if any_red {
        if red_limit == 0 {
            return Err(TcError::Required {
                kind: "sfq",
                option: "redflowlimit".into(),
            });
        }
        let avpkt = r.avpkt.unwrap_or(1000);
        let max = if r.max == 0 { red_limit / 4 } else { r.max };
        let min = if r.min == 0 { max / 3 } else { r.min };
        let burst = if r.burst == 0 {
            (2 * min + max) / (3 * avpkt)
        } else {
            r.burst
        };
        if max > red_limit {
            return Err(bad("max", &max.to_string(), "must be at most redflowlimit"));
        }
        if min >= max {
            return Err(bad(
                "min",
                &min.to_string(),
                &format!("must be below max {max}"),
            ));
        }
        p.set("red", true);
        r.apply(p, min, max, avpkt, burst)?;
        p.set("gentle", false);
        p.note(format!(
            "each bin's RED averages its backlog in bytes in Linux; aqmlab in packets, the \
             thresholds here in packets of avpkt = {avpkt} bytes"
        ));
    }
    Ok(())
}

/// `ecn`/`noecn` and the CoDel options codel and fq_codel share.
fn codel_opt(p: &mut Parser, o: &str) -> Result<bool, TcError> {
    match o {
        "target" => {
            let t = p.time(o)?;
            p.set("target", dur(t));
        }
        "interval" => {
            let t = p.time(o)?;
            p.set("interval", dur(t));
        }
        "ce_threshold" => {
            let t = p.time(o)?;
            p.set("ce_threshold", dur(t));
        }
        "ecn" => p.set("ecn", true),
        "noecn" => p.set("ecn", false),
        _ => return Ok(false),
    }
    Ok(true)
}

pub(super) fn codel(p: &mut Parser) -> Result<(), TcError> {
    p.set("kind", "codel");
    p.set("limit", int(1000));
    p.set("target", "5ms");
    p.set("interval", "100ms");
    p.set("ecn", false);
    while let Some(o) = p.next() {
        if codel_opt(p, o)? {
            continue;
        }
        match o {
            // tc sends no limit of 0: the kernel keeps its default.
            "limit" => {
                let v = p.uint(o)?;
                if v > 0 {
                    p.set("limit", int(v));
                }
            }
            _ => return Err(p.unknown(o)),
        }
    }
    Ok(())
}

pub(super) fn fq_codel(p: &mut Parser) -> Result<(), TcError> {
    p.set("kind", "fq_codel");
    p.set("limit", int(10240));
    p.set("flows", int(1024));
    p.set("quantum", int(PSCHED_MTU));
    p.set("target", "5ms");
    p.set("interval", "100ms");
    p.set("ecn", true);
    p.set("memory_limit", int(32 << 20));
    p.set("drop_batch_size", int(64));
    while let Some(o) = p.next() {
        if codel_opt(p, o)? {
            continue;
        }
        let key = match o {
            "limit" => "limit",
            "flows" => "flows",
            "quantum" => "quantum",
            "drop_batch" => "drop_batch_size",
            "memory_limit" => {
                let v = p.size(o)?;
                p.set("memory_limit", int(v));
                continue;
            }
            "ce_threshold_selector" => {
                return Err(TcError::Unsupported {
                    option: o.into(),
                    why: "aqmlab's packets carry no DSCP field to select on".into(),
                })
            }
            _ => return Err(p.unknown(o)),
        };
        // tc sends none of these when 0: the kernel keeps its default.
        let v = p.uint(o)?;
        if v > 0 {
            p.set(key, int(v));
        }
    }
    Ok(())
}

pub(super) fn pie(p: &mut Parser) -> Result<(), TcError> {
    p.set("kind", "pie");
    p.set("limit", int(1000));
    p.set("target", "15ms");
    p.set("tupdate", "15ms");
    // tc gives alpha and beta in sixteenths: Linux's 2 and 20 are RFC 8033's
    // 0.125 and 1.25.
    p.set("alpha", 0.125);
    p.set("beta", 1.25);
    p.set("ecn", false);
    p.set("bytemode", false);
    p.set("dq_rate_estimator", false);
    while let Some(o) = p.next() {
        match o {
            // tc sends no limit of 0: the kernel keeps its default.
            "limit" => {
                let v = p.uint(o)?;
                if v > 0 {
                    p.set("limit", int(v));
                }
            }
            "target" | "tupdate" => {
                let t = p.time(o)?;
                p.set(o, dur(t));
            }
            "alpha" | "beta" => {
                let v = p.uint(o)?;
                if v > 32 {
                    return Err(bad(o, &v.to_string(), "must be between 0 and 32"));
                }
                p.set(o, v as f64 / 16.0);
            }
            "ecn" | "noecn" => p.set("ecn", o == "ecn"),
            "bytemode" | "nobytemode" => p.set("bytemode", o == "bytemode"),
            "dq_rate_estimator" | "no_dq_rate_estimator" => {
                p.set("dq_rate_estimator", o == "dq_rate_estimator")
            }
            _ => return Err(p.unknown(o)),
        }
    }
    Ok(())
}
