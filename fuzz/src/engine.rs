//! Target `engine`: small random *valid* scenarios, generated structurally (a
//! dumbbell or a small connected graph, a few flow groups of every kind, a qdisc
//! of every kind with parameters near their defaults), run to their end.
//!
//! The bytes choose the scenario; it is written as TOML and read back with
//! `Scenario::from_toml`, the way users give one. A generated scenario the
//! validator rejects, or whose qdisc parameters do not build, is skipped (the
//! replay test checks that most of the corpus does run, so a generator that
//! drifts out of the valid set is noticed). What runs must:
//! - not panic;
//! - conserve packets on every reported link: arrivals = transmitted + dropped +
//!   what is left (queued, or one in transmission), so `arrivals - drops - tx`
//!   is between 0 and the limit + 1 without a warm-up, and within the limit + 1
//!   either way with one (the warm-up snapshot moves the start);
//! - keep its bounds: the largest queue within the qdisc's limit, utilization in
//!   [0, 1], a link sending at most its rate (plus one packet at a boundary), no
//!   flow delivering more than it sent;
//! - be deterministic: a second run, built afresh and driven with `run_until` in
//!   uneven steps, gives byte-identical JSON (the wall clock is passed as 0).

use crate::gen::{self, Mode};
use aqm::qdisc::check;
use aqm::{Limit, LinkInfo, QdiscSpec, Rate, Time};
use arbitrary::{Result, Unstructured};
use sim::{RunResult, Scenario, Simulation};
use toml::{Table, Value};

/// What became of an input.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The bytes ran out before a scenario was drawn.
    Short,
    /// Drawn, but rejected by the validator or by a qdisc's parameter checks.
    Rejected,
    /// Ran twice and passed the checks.
    Ran,
}

pub fn run(data: &[u8]) {
    run_checked(data);
}

pub fn run_checked(data: &[u8]) -> Outcome {
    let mut u = Unstructured::new(data);
    let Ok(table) = scenario_table(&mut u) else {
        return Outcome::Short;
    };
    let text = toml::to_string(&table).expect("a table serializes");
    let Ok(scenario) = Scenario::from_toml(&text, "engine.toml") else {
        return Outcome::Rejected;
    };
    let Ok(mut sim) = Simulation::new(&scenario) else {
        return Outcome::Rejected;
    };
    sim.run(&mut |_| {});
    let first = sim.report(0.0);
    check(&scenario, &table, &first);

    // Again from scratch, in uneven steps: the same bytes must come out.
    let mut sim = Simulation::new(&scenario).expect("built once already");
    let end = sim.end().as_nanos();
    for k in [137u64, 500, 731, 999] {
        sim.run_until(Time::from_nanos(end / 1000 * k), &mut |_| {});
    }
    sim.run(&mut |_| {});
    let second = sim.report(0.0);
    let (a, b) = (json(&first), json(&second));
    assert!(a == b, "two runs of one scenario differ:\n{text}");
    Outcome::Ran
}

fn json(r: &RunResult) -> String {
    serde_json::to_string(r).expect("a result serializes")
}

/// A scenario as a TOML table, valid by construction (up to qdisc parameters).
fn scenario_table(u: &mut Unstructured) -> Result<Table> {
    let mut t = Table::new();
    let duration_ms = u.int_in_range(50..=1500u64)?;
    t.insert("name".into(), "fuzz".into());
    t.insert("duration".into(), ms(duration_ms));
    if u.arbitrary()? {
        t.insert("warmup".into(), ms(u.int_in_range(0..=duration_ms / 2)?));
    }
    t.insert("seed".into(), Value::Integer(u.int_in_range(0..=i64::MAX)?));
    let interval = *u.choose(&["0s", "1ms", "10ms", "100ms"])?;
    t.insert(
        "monitor".into(),
        Value::Table(Table::from_iter([(
            "queue_interval".to_string(),
            Value::from(interval),
        )])),
    );
    let graph = u.ratio(2u8, 5)?;
    let nodes: Vec<String> = if graph {
        (0..u.int_in_range(2..=5usize)?)
            .map(|i| format!("n{i}"))
            .collect()
    } else {
        Vec::new()
    };
    let mut topo = Table::new();
    if graph {
        topo.insert("kind".into(), "graph".into());
        // A random tree keeps every pair of nodes connected; extra links add
        // cycles (never a second link between one pair: the validator refuses
        // parallel links).
        let mut ends: Vec<(usize, usize)> = Vec::new();
        for i in 1..nodes.len() {
            ends.push((u.int_in_range(0..=i - 1)?, i));
        }
        for _ in 0..u.int_in_range(0..=2u8)? {
            let a = u.int_in_range(0..=nodes.len() - 1)?;
            let b = u.int_in_range(0..=nodes.len() - 1)?;
            let joined = ends
                .iter()
                .any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a));
            if a != b && !joined {
                ends.push((a, b));
            }
        }
        let mut links = Vec::new();
        for (a, b) in ends {
            let (a, b) = if u.arbitrary()? { (a, b) } else { (b, a) };
            let mut l = Table::new();
            l.insert("from".into(), nodes[a].clone().into());
            l.insert("to".into(), nodes[b].clone().into());
            l.insert("rate".into(), kbit(u.int_in_range(500..=20_000)?));
            l.insert("delay".into(), ms(u.int_in_range(0..=30)?));
            if u.ratio(1u8, 3)? {
                l.insert("qdisc".into(), qdisc(u)?);
            }
            if u.ratio(1u8, 4)? {
                l.insert("reverse_qdisc".into(), qdisc(u)?);
            }
            if u.ratio(1u8, 5)? {
                l.insert("monitor".into(), false.into());
            }
            links.push(Value::Table(l));
        }
        let names = nodes.iter().cloned().map(Value::from).collect();
        topo.insert("nodes".into(), Value::Array(names));
        topo.insert("links".into(), Value::Array(links));
    } else {
        topo.insert("kind".into(), "dumbbell".into());
        topo.insert(
            "access".into(),
            link(
                kbit(u.int_in_range(10_000..=100_000)?),
                u.int_in_range(0..=20)?,
            ),
        );
        topo.insert(
            "bottleneck".into(),
            link(kbit(u.int_in_range(500..=20_000)?), u.int_in_range(0..=50)?),
        );
        if u.ratio(1u8, 4)? {
            topo.insert("reverse_qdisc".into(), qdisc(u)?);
        }
    }
    t.insert("topology".into(), Value::Table(topo));
    if u.ratio(4u8, 5)? {
        t.insert("qdisc".into(), qdisc(u)?);
    }
    let mut flows = Vec::new();
    for g in 0..u.int_in_range(1..=4u8)? {
        flows.push(Value::Table(flow(u, g, duration_ms, &nodes)?));
    }
    t.insert("flows".into(), Value::Array(flows));
    Ok(t)
}

fn flow(u: &mut Unstructured, g: u8, duration_ms: u64, nodes: &[String]) -> Result<Table> {
    let mut f = Table::new();
    let kind = *u.choose(&["tcp", "web", "cbr", "poisson", "onoff"])?;
    f.insert("name".into(), format!("g{g}").into());
    f.insert("kind".into(), kind.into());
    if u.arbitrary()? {
        f.insert("count".into(), Value::Integer(u.int_in_range(1..=4)?));
    }
    if nodes.is_empty() {
        if u.ratio(1u8, 4)? {
            f.insert("access_delay".into(), ms(u.int_in_range(0..=20)?));
        }
        if u.ratio(1u8, 4)? {
            f.insert("access_rate".into(), kbit(u.int_in_range(1_000..=100_000)?));
        }
    } else {
        let from = u.int_in_range(0..=nodes.len() - 1)?;
        let to = (from + u.int_in_range(1..=nodes.len() - 1)?) % nodes.len();
        f.insert("from".into(), nodes[from].clone().into());
        f.insert("to".into(), nodes[to].clone().into());
    }
    if u.arbitrary()? {
        // 100 bytes and up: issue #16 asks for TCP sizes below the headers to be
        // rejected, and the generator should stay valid after that fix.
        f.insert(
            "packet_size".into(),
            Value::Integer(u.int_in_range(100..=1500)?),
        );
    }
    let mut start = 0;
    if u.arbitrary()? {
        start = u.int_in_range(0..=duration_ms)?;
        f.insert("start".into(), ms(start));
    }
    if u.ratio(1u8, 4)? {
        f.insert("start_spread".into(), ms(u.int_in_range(0..=duration_ms)?));
    }
    if u.ratio(1u8, 4)? {
        f.insert("stop".into(), ms(start + u.int_in_range(1..=duration_ms)?));
    }
    if u.ratio(1u8, 4)? {
        f.insert("aggregate".into(), Value::Integer(u.int_in_range(0..=3)?));
    }
    if u.arbitrary()? {
        let ecn = match u.int_in_range(0..=3u8)? {
            0 => Value::Boolean(false),
            1 => Value::Boolean(true),
            2 => "ect0".into(),
            _ => "ect1".into(),
        };
        f.insert("ecn".into(), ecn);
    }
    match kind {
        "tcp" | "web" => {
            if u.arbitrary()? {
                let variant =
                    *u.choose(&["reno", "newreno", "sack", "cubic", "dctcp", "prague"])?;
                f.insert("variant".into(), variant.into());
                if variant == "cubic" && u.arbitrary()? {
                    f.insert("hystart".into(), Value::Boolean(u.arbitrary()?));
                }
                if variant == "newreno" && u.arbitrary()? {
                    let timer = *u.choose(&["impatient", "slow_but_steady"])?;
                    f.insert("newreno_timer".into(), timer.into());
                }
                if variant == "reno" && u.arbitrary()? {
                    f.insert("reno_bugfix".into(), Value::Boolean(u.arbitrary()?));
                }
                if u.ratio(1u8, 4)? {
                    f.insert("pacing".into(), Value::Boolean(u.arbitrary()?));
                }
            }
            // Windows near the defaults, or far above what the path holds (the
            // sender keeps a record per packet in flight).
            if u.arbitrary()? {
                let w = if u.ratio(1u8, 8)? {
                    u.int_in_range(1..=4096)?
                } else {
                    u.int_in_range(1..=64)?
                };
                f.insert("max_window".into(), Value::Integer(w));
            }
            if u.arbitrary()? {
                let w = if u.ratio(1u8, 8)? {
                    u.int_in_range(1..=4096)?
                } else {
                    u.int_in_range(1..=10)?
                };
                f.insert("initial_window".into(), Value::Integer(w));
            }
            if u.ratio(1u8, 4)? {
                f.insert("min_rto".into(), ms(u.int_in_range(10..=1000)?));
            }
            if u.ratio(1u8, 4)? {
                let on: bool = u.arbitrary()?;
                f.insert("delayed_ack".into(), Value::Boolean(on));
                if on && u.arbitrary()? {
                    f.insert("delack_timeout".into(), ms(u.int_in_range(1..=499)?));
                }
            }
            if u.ratio(1u8, 4)? {
                f.insert("limited_transmit".into(), Value::Boolean(u.arbitrary()?));
            }
            if u.ratio(1u8, 4)? {
                f.insert("counting".into(), (*u.choose(&["packet", "byte"])?).into());
            }
            if kind == "web" {
                f.insert(
                    "object_size".into(),
                    Value::Integer(u.int_in_range(1..=50)?),
                );
                if u.arbitrary()? {
                    f.insert("think".into(), ms(u.int_in_range(0..=500)?));
                }
            }
        }
        _ => {
            f.insert("rate".into(), kbit(u.int_in_range(50..=10_000)?));
            if u.ratio(1u8, 4)? {
                let mut at = 0;
                let mut steps = Vec::new();
                for _ in 0..u.int_in_range(1..=3u8)? {
                    at += u.int_in_range(1..=duration_ms)?;
                    let mut st = Table::new();
                    st.insert("at".into(), ms(at));
                    st.insert("rate".into(), kbit(u.int_in_range(0..=10_000)?));
                    steps.push(Value::Table(st));
                }
                f.insert("schedule".into(), Value::Array(steps));
            }
            if kind == "onoff" {
                // Periods from a nanosecond (far below a packet time: no event
                // each) to half a second.
                f.insert("on".into(), period(u)?);
                f.insert("off".into(), period(u)?);
                if u.arbitrary()? {
                    f.insert("distribution".into(), "pareto".into());
                    let shape = 1.1 + u.int_in_range(0..=190u32)? as f64 / 100.0;
                    f.insert("shape".into(), Value::Float(shape));
                }
            }
        }
    }
    Ok(f)
}

fn qdisc(u: &mut Unstructured) -> Result<Value> {
    let kind = *u.choose(QdiscSpec::KINDS)?;
    let mut table = gen::qdisc_table(u, kind, Mode::Tame)?;
    // Now and then the largest limit a scenario may give, far above what the
    // run can fill: it must cost nothing until packets arrive.
    if u.ratio(1u8, 8)? && gen::takes_key(kind, "limit") {
        table.insert("limit".into(), Value::Integer(i64::from(check::MAX_LIMIT)));
    }
    Ok(Value::Table(table))
}

/// An on/off period: 1 ns to 500 ms, spread over the decades.
fn period(u: &mut Unstructured) -> Result<Value> {
    let decade = u.int_in_range(0..=8u32)?;
    let v = u.int_in_range(1..=9u64)? * 10u64.pow(decade);
    Ok(Value::String(format!("{}ns", v.min(500_000_000))))
}

fn link(rate: Value, delay_ms: u64) -> Value {
    Value::Table(Table::from_iter([
        ("rate".to_string(), rate),
        ("delay".to_string(), ms(delay_ms)),
    ]))
}

fn ms(v: u64) -> Value {
    Value::String(format!("{v}ms"))
}

fn kbit(v: u64) -> Value {
    Value::String(format!("{v}kbit"))
}

/// The qdisc spec of each reported link direction, by `from->to` name.
fn link_specs(table: &Table) -> Vec<(String, QdiscSpec)> {
    let spec =
        |v: Option<&Value>| -> Option<QdiscSpec> { v.map(|v| v.clone().try_into().unwrap()) };
    let default = spec(table.get("qdisc")).unwrap_or_default();
    let topo = table["topology"].as_table().unwrap();
    let mut out = Vec::new();
    match topo["kind"].as_str() {
        Some("dumbbell") => {
            out.push(("left->right".to_string(), default));
            let rev = spec(topo.get("reverse_qdisc")).unwrap_or_default();
            out.push(("right->left".to_string(), rev));
        }
        _ => {
            for l in topo["links"].as_array().unwrap() {
                let l = l.as_table().unwrap();
                let (a, b) = (l["from"].as_str().unwrap(), l["to"].as_str().unwrap());
                let fwd = spec(l.get("qdisc")).unwrap_or_else(|| default.clone());
                let rev = spec(l.get("reverse_qdisc")).unwrap_or_default();
                out.push((format!("{a}->{b}"), fwd));
                out.push((format!("{b}->{a}"), rev));
            }
        }
    }
    out
}

/// The most packets a qdisc built from `spec` on a link of `rate` may hold.
fn packet_limit(spec: &QdiscSpec, rate: Rate) -> u64 {
    match spec
        .build(&LinkInfo::new(rate))
        .map(|q| aqm::Qdisc::limit(&q))
    {
        Ok(Limit::Packets(n)) => u64::from(n),
        // The smallest packet the engine makes is 40 bytes (an ACK).
        Ok(Limit::Bytes(b)) => b / 40 + 1,
        Err(e) => panic!("a qdisc that ran does not build: {e}"),
    }
}

fn check(scenario: &Scenario, table: &Table, r: &RunResult) {
    let f = &scenario.file;
    let warm = !f.warmup.is_zero();
    let secs = (f.duration.as_nanos() - f.warmup.as_nanos()) as f64 * 1e-9;
    let specs = link_specs(table);
    for l in &r.links {
        let rate = Rate::from_bps(l.rate_bps);
        let limit = specs
            .iter()
            .filter(|(name, _)| *name == l.name)
            .map(|(_, s)| packet_limit(s, rate))
            .max()
            .unwrap_or_else(|| panic!("reported link {} is not in the scenario", l.name));
        let left = l.arrivals as i128 - l.drops_total as i128 - l.tx_packets as i128;
        let low = if warm { -(limit as i128) - 1 } else { 0 };
        assert!(
            (low..=limit as i128 + 1).contains(&left),
            "{}: {} arrivals, {} drops, {} sent leave {left} (limit {limit}, warm-up {})",
            l.name,
            l.arrivals,
            l.drops_total,
            l.tx_packets,
            f.warmup
        );
        assert!(
            u64::from(l.max_queue_packets) <= limit,
            "{}: max queue {} above the limit {limit}",
            l.name,
            l.max_queue_packets
        );
        for &p in &l.queue.packets {
            assert!(u64::from(p) <= limit, "{}: a sample of {p} packets", l.name);
        }
        assert!(
            (0.0..=1.0).contains(&l.utilization),
            "{}: utilization {}",
            l.name,
            l.utilization
        );
        // At most the rate over the measured time, plus the packet that was being
        // sent when measurement began (issue #16: at most one packet over).
        let sent_bits = l.throughput_bps * secs;
        let max_bits = l.rate_bps as f64 * secs + 1600.0 * 8.0;
        assert!(
            sent_bits <= max_bits * (1.0 + 1e-9),
            "{}: sent {sent_bits} bits in {secs} s at {} bps",
            l.name,
            l.rate_bps
        );
    }
    if !warm {
        for fl in &r.flows {
            assert!(
                fl.delivered <= fl.sent,
                "flow {} delivered {} of {} sent",
                fl.id,
                fl.delivered,
                fl.sent
            );
        }
    }
}
