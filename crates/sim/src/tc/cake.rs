//! `tc qdisc add ... cake ...` (tc-cake(8), iproute2's `tc/q_cake.c`): the
//! shaper, the RTT presets, the isolation keywords, the overhead keywords and
//! their presets, the tin modes and `wash`. What aqmlab's CAKE does not model
//! is refused by name (autorate, the ACK filter, fwmark) or noted as having no
//! effect (`nat`, `split-gso`: no addresses behind a NAT or GSO here).

use super::*;

/// The RTT presets: interval and target in microseconds (q_cake.c).
const RTT_PRESETS: [(&str, u64, u64); 8] = [
    ("datacentre", 100, 5),
    ("lan", 1_000, 50),
    ("metro", 10_000, 500),
    ("regional", 30_000, 1_500),
    ("internet", 100_000, 5_000),
    ("oceanic", 300_000, 15_000),
    ("satellite", 1_000_000, 50_000),
    ("interplanetary", 1_000_000_000, 50_000_000),
];

/// The isolation keywords, as the scenario key spells them.
const ISOLATION: [&str; 8] = [
    "flowblind",
    "srchost",
    "dsthost",
    "hosts",
    "flows",
    "dual-srchost",
    "dual-dsthost",
    "triple-isolate",
];

/// Overhead presets: (keyword, overhead, mpu, framing); `None` leaves mpu as is.
const OVERHEAD_PRESETS: [(&str, i64, Option<u64>, &str); 13] = [
    ("ipoa-vcmux", 8, None, "atm"),
    ("ipoa-llcsnap", 16, None, "atm"),
    ("bridged-vcmux", 24, None, "atm"),
    ("bridged-llcsnap", 32, None, "atm"),
    ("pppoa-vcmux", 10, None, "atm"),
    ("pppoa-llc", 14, None, "atm"),
    ("pppoe-vcmux", 32, None, "atm"),
    ("pppoe-llcsnap", 40, None, "atm"),
    ("pppoe-ptm", 30, None, "ptm"),
    ("bridged-ptm", 22, None, "ptm"),
    ("conservative", 48, None, "atm"),
    ("ethernet", 38, Some(84), "none"),
    ("docsis", 18, Some(64), "none"),
];

pub(super) fn cake(p: &mut Parser) -> Result<(), TcError> {
    p.set("kind", "cake");
    let mut overhead: i64 = 0;
    while let Some(o) = p.next() {
        if let Some(&(_, interval, target)) = RTT_PRESETS.iter().find(|r| r.0 == o) {
            p.set("rtt", dur(Dur::from_micros(interval)));
            p.set("target", dur(Dur::from_micros(target)));
            continue;
        }
        if ISOLATION.contains(&o) {
            p.set("isolation", o);
            continue;
        }
        if let Some(&(_, oh, mpu, framing)) = OVERHEAD_PRESETS.iter().find(|r| r.0 == o) {
            overhead = oh;
            if let Some(m) = mpu {
                p.set("mpu", int(m));
            }
            p.set("framing", framing);
            continue;
        }
        match o {
            "bandwidth" => {
                let r = p.rate(o)?;
                if r.bps() == 0 {
                    p.out.keys.retain(|(k, _)| k != "bandwidth");
                } else {
                    p.set("bandwidth", r.to_string());
                }
            }
            "unlimited" => p.out.keys.retain(|(k, _)| k != "bandwidth"),
            "rtt" => {
                let t = p.time(o)?;
                let us = t.as_nanos() / 1000;
                if us == 0 {
                    return Err(bad(o, &format!("{t}"), "must be at least 1us"));
                }
                p.set("rtt", dur(t));
                // tc: target = rtt / 20, at least 1 us.
                p.set("target", dur(Dur::from_micros((us / 20).max(1))));
            }
            "besteffort" | "precedence" | "diffserv3" | "diffserv4" | "diffserv8" => {
                p.set("diffserv", o)
            }
            "autorate-ingress" => {
                return Err(TcError::Unsupported {
                    option: o.into(),
                    why: "the rate is fixed by `bandwidth`; no estimate from arrivals".into(),
                })
            }
            "ack-filter" | "ack-filter-aggressive" => {
                return Err(TcError::Unsupported {
                    option: o.into(),
                    why: "a qdisc here does not see TCP headers".into(),
                })
            }
            "fwmark" => {
                return Err(TcError::Unsupported {
                    option: o.into(),
                    why: "packets carry no firewall mark".into(),
                })
            }
            "wash" | "nowash" => p.set("wash", o == "wash"),
            "no-ack-filter" | "nonat" | "no-split-gso" | "via-ethernet" => {}
            "nat" | "split-gso" => p.note(format!(
                "`{o}` has no effect: aqmlab's packets carry no addresses behind a NAT \
                 and no GSO aggregates"
            )),
            "ingress" | "egress" => p.set("ingress", o == "ingress"),
            "atm" | "ptm" => p.set("framing", o),
            "noatm" => p.set("framing", "none"),
            "raw" => {
                overhead = 0;
                p.set("framing", "none");
            }
            "ether-vlan" => overhead += 4,
            "overhead" => {
                let v = p.value(o)?;
                overhead = v
                    .parse::<i64>()
                    .ok()
                    .filter(|n| (-64..=256).contains(n))
                    .ok_or_else(|| bad(o, v, "must be a whole number from -64 to 256"))?;
            }
            "mpu" => {
                let v = p.value(o)?;
                let m = parse_uint(v)
                    .filter(|&n| n <= 256)
                    .ok_or_else(|| bad(o, v, "must be a whole number from 0 to 256"))?;
                p.set("mpu", int(m));
            }
            "memlimit" => {
                let m = p.size(o)?;
                p.set("memlimit", int(m));
            }
            _ => return Err(p.unknown(o)),
        }
    }
    if overhead != 0 {
        p.set("overhead", Value::Integer(overhead));
    }
    Ok(())
}
