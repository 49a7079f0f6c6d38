//! `tc qdisc add ... fq ...` (tc-fq(8), iproute2's `tc/q_fq.c`): the options
//! aqmlab's `fq` models, and those it cannot (no socket timestamps, exact flow
//! lookup) noted or refused by name.

use super::*;

pub(super) fn fq(p: &mut Parser) -> Result<(), TcError> {
    p.set("kind", "fq");
    while let Some(o) = p.next() {
        match o {
            "limit" | "flow_limit" | "quantum" | "initial_quantum" => {
                let v = p.uint(o)?;
                p.set(o, int(v));
            }
            "maxrate" | "low_rate_threshold" => {
                let r = p.rate(o)?;
                p.set(o, r.to_string());
            }
            "refill_delay" | "ce_threshold" => {
                let t = p.time(o)?;
                p.set(o, dur(t));
            }
            "pacing" | "nopacing" => p.set("pacing", o == "pacing"),
            "buckets" | "orphan_mask" => {
                p.uint(o)?;
                p.note(format!(
                    "`{o}` has no effect: aqmlab's fq finds each flow exactly, by its id"
                ));
            }
            "horizon" | "timer_slack" => {
                p.time(o)?;
                p.note(format!(
                    "`{o}` has no effect: aqmlab's packets carry no departure timestamps"
                ));
            }
            "horizon_drop" | "horizon_cap" => p.note(format!(
                "`{o}` has no effect: aqmlab's packets carry no departure timestamps"
            )),
            "priomap" | "weights" => {
                return Err(TcError::Unsupported {
                    option: o.into(),
                    why: "aqmlab's fq has one band (sch_fq before Linux 6.7)".into(),
                })
            }
            _ => return Err(p.unknown(o)),
        }
    }
    Ok(())
}
