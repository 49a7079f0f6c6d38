//! Qdisc parameters from fuzzer bytes, as the TOML table a scenario's `[qdisc]` is.
//!
//! The keys of each kind come from the registry itself (its defaults, serialized)
//! and from [`EXAMPLES`], so a parameter added to a qdisc is fuzzed without a
//! change here. Values are drawn by the type of the default: integers, floats,
//! booleans, durations and rates as unit strings, and the enum words the qdiscs
//! know. `Wild` draws the edges (zero, negative, huge, NaN, infinities, garbage
//! units) to test validation; `Tame` stays near the defaults, for the engine
//! target, which needs qdiscs that build.

use aqm::{parse_dur, parse_rate, QdiscSpec};
use arbitrary::{Result, Unstructured};
use std::sync::OnceLock;
use toml::{Table, Value};

/// Small configurations of every kind, as `crates/aqm/tests/properties.rs` has
/// them: they name the optional keys a default leaves out, and seed the corpus.
pub const EXAMPLES: &[&str] = &[
    "kind = \"droptail\"\nlimit = 5\ndrop = \"front\"",
    "kind = \"red\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.2\ngentle = true\necn = true\nadaptive = true",
    "kind = \"red\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.2\nbyte_mode = true\nwait = false",
    "kind = \"red\"\nlimit = 12\nmin_th = 8\nmax_th = 10\nstep = 3\necn = true",
    "kind = \"blue\"\nlimit = 6\nincrement = 0.2\ndecrement = 0.05\nfreeze_time = \"1ms\"\necn = true",
    "kind = \"sfb\"\nlimit = 10\nlevels = 3\nbins = 4\nbin_size = 3\nincrement = 0.2\ndecrement = 0.05\nrate_limit = \"1Mbps\"\nrate_limit_burst = 3000\nhash = \"moving\"\nrehash_period = \"20ms\"\necn = true",
    "kind = \"sfb\"\nlimit = 10\nlevels = 2\nbins = 3\nbin_size = 2\nincrement = 0.5\ndecrement = 0.1\nfreeze_time = \"1ms\"\nrate_limit = \"0.16Mbps\"\nhash = \"double_buffered\"\nrehash_period = \"20ms\"\nwarmup = \"5ms\"",
    "kind = \"sfred\"\nlimit = 10\nlevels = 3\nbins = 4\nmin_th = 0.5\nmax_th = 2\nw_q = 0.3\nadapt_interval = \"1ms\"\ngentle = true\nwait = false\necn = true",
    "kind = \"choke\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\ncandidates = 3",
    "kind = \"choke\"\nlimit = 12\nmin_th = 1\nmax_th = 8\nw_q = 0.5\nadaptive_candidates = true\nregions = 3\necn = true",
    "kind = \"choke\"\nlimit = 10\nmin_th = 1\nmax_th = 5\nw_q = 0.5\ncandidates = 2\ncandidate = \"front\"",
    "kind = \"choke\"\nlimit = 10\nmin_th = 1\nmax_th = 5\nw_q = 0.5\ncandidates = 2\ncandidate = \"back\"\nwait = false\nqlen_gate = false",
    "kind = \"breathe\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\ncounters = 3\necn = true",
    "kind = \"breathe\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\nrate_limit = \"2Mbps\"",
    "kind = \"mrul\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\nlist_size = 4\nd_w = 2\naging_period = \"5ms\"\necn = true",
    "kind = \"mrul\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\nlist_size = 30\npenalty_below_min_th = true\nwait = false",
    "kind = \"nlred\"\nlimit = 12\nmin_th = 2\nmax_th = 6\nw_q = 0.3\nmax_p = 0.9\nmax_p_scale = 1.5\necn = true",
    "kind = \"sfq\"\nlimit = 10\ndepth = 4\ndivisor = 5\nquantum = 300\nperturb_period = \"20ms\"",
    "kind = \"sfq\"\nlimit = 10\ndepth = 6\ndivisor = 3\ndrop = \"tail\"\nheaddrop = true\nred = true\nmin_th = 1\nmax_th = 3\nw_q = 0.3\ngentle = true\necn = true\nperturb_period = \"5ms\"",
    "kind = \"sfq\"\nlimit = 12\ndepth = 12\ndivisor = 4\nquantum = 100\nred = true\nmin_th = 1\nmax_th = 2\nw_q = 0.5\nbyte_mode = true\nmean_pkt_size = 500\nwait = false",
];

/// The words the qdiscs' enum parameters take (a wrong word for a key is an error).
const WORDS: &[&str] = &[
    "tail",
    "front",
    "back",
    "random",
    "longest",
    "fixed",
    "moving",
    "double_buffered",
];

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Any value of the key's type, edges first: tests the parameter checks.
    Wild,
    /// Values near the defaults: qdiscs that mostly build, for the engine.
    Tame,
}

/// A `[qdisc]` table for `kind`: each key left out, set as in an example, or drawn.
/// Whether qdisc `kind` has the key `key`.
pub fn takes_key(kind: &str, key: &str) -> bool {
    key_universe()
        .iter()
        .any(|(k, keys)| k == kind && keys.iter().any(|(name, _)| name.as_str() == key))
}

pub fn qdisc_table(u: &mut Unstructured, kind: &str, mode: Mode) -> Result<Table> {
    let keys = &key_universe()
        .iter()
        .find(|(k, _)| k == kind)
        .expect("a registered kind")
        .1;
    let mut out = Table::new();
    out.insert("kind".into(), Value::String(kind.into()));
    for (key, example) in keys {
        let (key, example) = (key.clone(), example.clone());
        if key == "kind" {
            continue;
        }
        let choice = match mode {
            Mode::Wild => u.int_in_range(0..=3u8)?,
            // Tame: most keys keep their defaults, so most specs build.
            Mode::Tame => u.choose(&[0u8, 0, 0, 1, 2])?.to_owned(),
        };
        match choice {
            0 => {}
            1 => {
                out.insert(key, example);
            }
            _ => {
                out.insert(key, value_like(u, &example, mode)?);
            }
        }
    }
    if mode == Mode::Wild && u.ratio(1u8, 32)? {
        out.insert("no_such_key".into(), Value::Integer(1));
    }
    Ok(out)
}

/// Each kind's keys with an example value: its defaults, then the keys the
/// examples add. Built once: the fuzzer calls this per iteration.
fn key_universe() -> &'static [(String, Table)] {
    static KEYS: OnceLock<Vec<(String, Table)>> = OnceLock::new();
    KEYS.get_or_init(|| {
        QdiscSpec::KINDS
            .iter()
            .map(|&kind| {
                let mut keys = default_table(kind);
                for text in EXAMPLES {
                    let t: Table = text.parse().expect("examples are TOML");
                    if t.get("kind").and_then(Value::as_str) == Some(kind) {
                        for (k, v) in t {
                            keys.entry(k).or_insert(v);
                        }
                    }
                }
                (kind.to_string(), keys)
            })
            .collect()
    })
}

/// A qdisc spec drawn as a table and parsed; `None` when the table does not parse
/// (a wild value of the wrong range: an error, which is what we want to see).
pub fn qdisc_spec(u: &mut Unstructured, mode: Mode) -> Result<Option<QdiscSpec>> {
    let kind = *u.choose(QdiscSpec::KINDS)?;
    let table = qdisc_table(u, kind, mode)?;
    Ok(Value::Table(table).try_into().ok())
}

/// The defaults of `kind` as a table (only the keys that have a default value).
pub fn default_table(kind: &str) -> Table {
    let spec: QdiscSpec = toml::from_str(&format!("kind = \"{kind}\""))
        .unwrap_or_else(|e| panic!("kind = \"{kind}\" alone must parse: {e}"));
    Table::try_from(&spec).expect("a spec serializes")
}

/// A value of the same sort as `like`.
fn value_like(u: &mut Unstructured, like: &Value, mode: Mode) -> Result<Value> {
    Ok(match like {
        Value::Integer(d) => Value::Integer(match mode {
            Mode::Wild => match u.int_in_range(0..=7u8)? {
                0 => 0,
                1 => 1,
                2 => -1,
                3 => u.int_in_range(0..=16)?,
                4 => u.arbitrary::<u8>()? as i64,
                5 => u.arbitrary::<u16>()? as i64,
                6 => *u.choose(&[u32::MAX as i64, i32::MAX as i64, 1 << 20, 100_000_000])?,
                _ => u.arbitrary::<i64>()?,
            },
            Mode::Tame => {
                let d = (*d).clamp(1, 1_000);
                u.int_in_range(1..=2 * d)?
            }
        }),
        Value::Float(d) => Value::Float(match mode {
            Mode::Wild => match u.int_in_range(0..=5u8)? {
                0 => *u.choose(&[0.0, -0.0, 1.0, 0.5, 2.0, -1.0])?,
                1 => *u.choose(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY])?,
                2 => *u.choose(&[1e-300, 1e-9, 1e9, 1e300, f64::MAX, f64::MIN_POSITIVE])?,
                3 => u.int_in_range(0..=1000u32)? as f64 / 1000.0,
                4 => d * *u.choose(&[0.1, 0.5, 2.0, 10.0])?,
                _ => f64::from_bits(u.arbitrary::<u64>()?),
            },
            Mode::Tame => {
                if *d <= 1.0 {
                    u.int_in_range(1..=1000u32)? as f64 / 1000.0
                } else {
                    d * *u.choose(&[0.5, 1.0, 1.5, 2.0])?
                }
            }
        }),
        Value::Boolean(_) => Value::Boolean(u.arbitrary()?),
        Value::String(s) if parse_dur(s).is_ok() => {
            Value::String(quantity(u, mode, &["ns", "us", "ms", "s"], "ms")?)
        }
        Value::String(s) if parse_rate(s).is_ok() => {
            Value::String(quantity(u, mode, &["bps", "kbps", "Mbps", "Gbps"], "Mbps")?)
        }
        Value::String(_) => Value::String(match mode {
            Mode::Wild if u.ratio(1u8, 8)? => u.arbitrary::<String>()?,
            _ => (*u.choose(WORDS)?).to_string(),
        }),
        other => other.clone(),
    })
}

/// A unit string: `"20ms"`, `"0.16Mbps"`; wild ones include zero, negatives,
/// overflow and text that is no number.
fn quantity(u: &mut Unstructured, mode: Mode, units: &[&str], tame_unit: &str) -> Result<String> {
    if mode == Mode::Tame {
        return Ok(format!("{}{tame_unit}", u.int_in_range(1..=200u32)?));
    }
    let unit = *u.choose(units)?;
    Ok(match u.int_in_range(0..=5u8)? {
        0 => format!("0{unit}"),
        1 => format!("{}{unit}", u.int_in_range(1..=1000u32)?),
        2 => format!("{}.{}{unit}", u.arbitrary::<u8>()?, u.arbitrary::<u8>()?),
        3 => format!("{}{unit}", u.arbitrary::<u64>()?),
        4 => format!(
            "{}{unit}",
            u.choose(&["-1", "1e400", "nan", "inf", "1e-400", ""])?
        ),
        _ => u.arbitrary::<String>()?,
    })
}
