//! `tc qdisc add ... dualpi2 ...` (iproute2's `tc/q_dualpi2.c`): the options,
//! tc's defaults, and its `max_rtt` / `typical_rtt` auto-configuration.

use super::*;

/// iproute2's `get_packets`: a count with a packet suffix (`30p`, `30packets`).
fn packets(v: &str) -> Option<u64> {
    let end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(end);
    ["p", "pkt", "pkts", "packet", "packets"]
        .contains(&unit)
        .then(|| num.parse::<u64>().ok())
        .flatten()
        .filter(|&n| n <= u32::MAX as u64)
}

pub(super) fn dualpi2(p: &mut Parser) -> Result<(), TcError> {
    defaults(p);
    let (mut max_rtt, mut typical_rtt) = (None, None);
    let mut explicit_pi = false;
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
                explicit_pi = true;
                p.set(o, dur(t));
            }
            "alpha" | "beta" => {
                let v = p.value(o)?;
                let f: f64 = v
                    .parse()
                    .ok()
                    .filter(|f: &f64| f.is_finite() && *f >= 0.0)
                    .ok_or_else(|| bad(o, v, "must be a number of hertz"))?;
                explicit_pi = true;
                // tc keeps whole 1/256 steps, truncating.
                p.set(o, (f * 256.0).trunc() / 256.0);
            }
            "step_thresh" => step_thresh(p, o)?,
            "min_qlen_step" => {
                let v = p.uint(o)?;
                p.set("min_qlen_step", int(v));
            }
            "coupling_factor" => {
                let v = p.uint(o)?;
                if v > 255 {
                    return Err(bad(o, &v.to_string(), "must be from 0 to 255"));
                }
                p.set("coupling_factor", int(v));
            }
            "drop_on_overload" | "overflow" => p.set("drop_on_overload", o == "drop_on_overload"),
            "drop_enqueue" | "drop_dequeue" => p.set("drop_enqueue", o == "drop_enqueue"),
            "l4s_ect" | "any_ect" => p.set("any_ect", o == "any_ect"),
            "classic_protection" => classic_protection(p, o)?,
            "max_rtt" => max_rtt = Some(p.time(o)?),
            "typical_rtt" => typical_rtt = Some(p.time(o)?),
            "split_gso" | "no_split_gso" => p.note(format!(
                "`{o}` has no effect: aqmlab's packets are single packets, never GSO aggregates"
            )),
            "memlimit" => {
                return Err(TcError::Unsupported {
                    option: o.into(),
                    why: "aqmlab bounds DualPI2 by `limit` packets, not by memory".into(),
                })
            }
            _ => return Err(p.unknown(o)),
        }
    }
    if max_rtt.is_some() || typical_rtt.is_some() {
        from_rtts(p, max_rtt, typical_rtt, explicit_pi)?;
    }
    Ok(())
}

/// tc's defaults, before any option.
fn defaults(p: &mut Parser) {
    p.set("kind", "dualpi2");
    p.set("limit", int(10_000));
    p.set("target", "15ms");
    p.set("tupdate", "16ms");
    p.set("alpha", 0.16);
    p.set("beta", 3.2);
    p.set("step_thresh", "1ms");
    p.set("coupling_factor", int(2));
    p.set("drop_on_overload", true);
    p.set("drop_enqueue", false);
    p.set("classic_protection", int(10));
    p.set("any_ect", false);
}

/// `step_thresh TIME` or `step_thresh PACKETS`: one threshold holds, the last
/// given (tc keeps one field).
fn step_thresh(p: &mut Parser, o: &str) -> Result<(), TcError> {
    let v = p.value(o)?;
    if let Some(t) = parse_time(v) {
        p.unset("step_thresh_packets");
        p.set("step_thresh", dur(t));
    } else if let Some(n) = packets(v) {
        p.unset("step_thresh");
        p.set("step_thresh_packets", int(n));
    } else {
        return Err(bad(
            o,
            v,
            "must be a time (1ms) or a number of packets (30p)",
        ));
    }
    Ok(())
}

/// `classic_protection PERCENT`, `%` optional.
fn classic_protection(p: &mut Parser, o: &str) -> Result<(), TcError> {
    let v = p.value(o)?;
    let pct = v
        .strip_suffix('%')
        .unwrap_or(v)
        .parse::<f64>()
        .ok()
        .filter(|x| (0.0..=100.0).contains(x))
        .ok_or_else(|| bad(o, v, "must be a percentage from 0 to 100"))?;
    p.set("classic_protection", int(pct.round() as u64));
    Ok(())
}

/// tc's auto-configuration from `max_rtt` and `typical_rtt` (q_dualpi2.c), in
/// microseconds: target, tupdate, alpha and beta, over any given.
fn from_rtts(
    p: &mut Parser,
    max_rtt: Option<Dur>,
    typical_rtt: Option<Dur>,
    explicit_pi: bool,
) -> Result<(), TcError> {
    let us = |d: Dur| (d.as_nanos() / 1000) as f64;
    let (max, typ) = match (max_rtt, typical_rtt) {
        (Some(m), None) => (us(m), (us(m) / 6.0).trunc().max(1.0)),
        (None, Some(t)) => (us(t) * 6.0, us(t)),
        (Some(m), Some(t)) if t > m => {
            return Err(bad(
                "typical_rtt",
                &t.to_string(),
                "must be at most max_rtt",
            ))
        }
        (Some(m), Some(t)) => (us(m), us(t)),
        (None, None) => return Ok(()),
    };
    if explicit_pi {
        p.note("max_rtt is given: target, tupdate, alpha and beta are computed from it (tc ignores them)".into());
    }
    let tupdate = typ.min(max / 3.0).trunc().max(1.0);
    let alpha = tupdate / max / max * 1e6 * 0.1;
    let beta = 0.3 / max * 1e6;
    p.set("target", dur(Dur::from_micros(typ as u64)));
    p.set("tupdate", dur(Dur::from_micros(tupdate as u64)));
    p.set("alpha", (alpha * 256.0).trunc() / 256.0);
    p.set("beta", (beta * 256.0).trunc() / 256.0);
    Ok(())
}
