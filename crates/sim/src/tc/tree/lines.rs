//! One line of a tc script at a time: its handle, a qdisc line with a tree's
//! options (htb, prio) or a leaf's table, a class line with HTB's class
//! options, and a filter line (`u32 match ip dsfield`, aqmlab's `group`).

use super::super::{bad, int, parse, parse_rate, parse_size, parse_uint, TcError, Value};
use toml::Table;

/// A class or qdisc handle: `major:minor`, both hexadecimal as tc reads them
/// (`1:` is minor 0, the qdisc itself).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Handle {
    pub(super) major: u32,
    pub(super) minor: u32,
}

impl Handle {
    pub(super) fn parse(option: &str, s: &str) -> Result<Handle, TcError> {
        let rule = "must be MAJOR:MINOR in hexadecimal (1:10), or MAJOR: for a qdisc";
        let (major, minor) = s.split_once(':').ok_or_else(|| bad(option, s, rule))?;
        let hex = |h: &str| u32::from_str_radix(h, 16).ok().filter(|&n| n <= 0xffff);
        let major = hex(major).ok_or_else(|| bad(option, s, rule))?;
        let minor = if minor.is_empty() {
            0
        } else {
            hex(minor).ok_or_else(|| bad(option, s, rule))?
        };
        Ok(Handle { major, minor })
    }

    pub(super) fn text(self) -> String {
        if self.minor == 0 {
            format!("{:x}:", self.major)
        } else {
            format!("{:x}:{:x}", self.major, self.minor)
        }
    }
}

/// A qdisc of the script.
pub(super) struct QdiscLine {
    pub(super) line: usize,
    /// Its handle's major; `None` for a leaf written without `handle` (it can
    /// have no children).
    pub(super) major: Option<u32>,
    /// The class it is the leaf of; `None` at the root.
    pub(super) parent: Option<Handle>,
    /// Its keys: a tree's own options, or a leaf's whole table.
    pub(super) keys: Table,
    pub(super) notes: Vec<String>,
}

/// An HTB class of the script.
pub(super) struct ClassLine {
    pub(super) line: usize,
    pub(super) id: Handle,
    pub(super) parent: Handle,
    pub(super) keys: Table,
}

/// A filter's catch: what it matches and the class it sends it to.
pub(super) struct FilterLine {
    pub(super) line: usize,
    pub(super) parent: Handle,
    pub(super) to: Handle,
    pub(super) dscp: Vec<i64>,
    pub(super) group: Option<String>,
}

/// `(verb, header words' values, rest)`: reads `add|replace|change`, then `dev
/// X`, `parent P`, `handle H`, `classid C`, `root`, `protocol P` and a filter's
/// `prio N`/`pref N`, up to the first other word.
pub(super) struct Header<'a> {
    pub(super) parent: Option<&'a str>,
    pub(super) handle: Option<&'a str>,
    pub(super) classid: Option<&'a str>,
    pub(super) root: bool,
    pub(super) rest: &'a [&'a str],
}

pub(super) fn header<'a>(w: &'a [&'a str], filter: bool) -> Result<Header<'a>, TcError> {
    match w.get(1) {
        Some(&("add" | "replace" | "change")) => {}
        Some(v) => {
            return Err(TcError::Syntax(format!(
                "`{v}`: a tree is built with `add` (or `replace`, `change`)"
            )))
        }
        None => return Err(TcError::Syntax(format!("the line ends after `{}`", w[0]))),
    }
    let mut h = Header {
        parent: None,
        handle: None,
        classid: None,
        root: false,
        rest: &[],
    };
    let mut i = 2;
    while let Some(&word) = w.get(i) {
        let slot = match word {
            "dev" | "protocol" => None,
            "prio" | "pref" if filter => None,
            "parent" => Some(&mut h.parent),
            "handle" => Some(&mut h.handle),
            "classid" | "flowid" if !filter => Some(&mut h.classid),
            "root" => {
                h.root = true;
                i += 1;
                continue;
            }
            _ => break,
        };
        let value = w.get(i + 1).copied().ok_or_else(|| TcError::MissingValue {
            option: word.into(),
        })?;
        if let Some(slot) = slot {
            *slot = Some(value);
        }
        i += 2;
    }
    h.rest = &w[i..];
    Ok(h)
}

pub(super) fn qdisc_line(line: usize, text: &str, w: &[&str]) -> Result<QdiscLine, TcError> {
    let h = header(w, false)?;
    let parent = match (h.root, h.parent) {
        (true, None) => None,
        (false, Some(p)) => Some(Handle::parse("parent", p)?),
        (true, Some(_)) => {
            return Err(TcError::Syntax(
                "a qdisc is `root` or has a `parent`, not both".into(),
            ))
        }
        (false, None) => {
            return Err(TcError::Syntax(
                "a qdisc of a tree needs `root` or `parent CLASSID`".into(),
            ))
        }
    };
    let major = match h.handle {
        Some(s) => {
            let id = Handle::parse("handle", s)?;
            if id.minor != 0 || id.major == 0 {
                return Err(bad(
                    "handle",
                    s,
                    "a qdisc's handle is MAJOR: with MAJOR above 0",
                ));
            }
            Some(id.major)
        }
        None => None,
    };
    let kind = h.rest.first().copied().unwrap_or("");
    let (keys, notes) = match kind {
        "htb" => (htb_options(&h.rest[1..])?, Vec::new()),
        "prio" => (prio_options(&h.rest[1..])?, Vec::new()),
        _ => {
            // A leaf: the one-line parser reads it whole.
            let q = parse(text)?;
            (q.keys.into_iter().collect(), q.notes)
        }
    };
    if matches!(kind, "htb" | "prio") && major.is_none() {
        return Err(TcError::Required {
            kind: if kind == "htb" { "htb" } else { "prio" },
            option: "handle".into(),
        });
    }
    Ok(QdiscLine {
        line,
        major,
        parent,
        keys,
        notes,
    })
}

/// `htb [default ID] [r2q N] [direct_qlen P]` (tc/q_htb.c; `default` is hex).
pub(super) fn htb_options(o: &[&str]) -> Result<Table, TcError> {
    let mut t = Table::new();
    t.insert("kind".into(), "htb".into());
    let mut i = 0;
    while let Some(&opt) = o.get(i) {
        let v = o
            .get(i + 1)
            .copied()
            .ok_or_else(|| TcError::MissingValue { option: opt.into() });
        match opt {
            "default" => {
                let v = v?;
                let minor = u32::from_str_radix(v, 16)
                    .ok()
                    .filter(|&m| m <= 0xffff)
                    .ok_or_else(|| bad(opt, v, "must be a class's minor number, in hexadecimal"))?;
                // 0 is tc's "no default": unclassified packets go direct.
                if minor != 0 {
                    t.insert("default".into(), Value::Integer(minor.into()));
                }
            }
            "r2q" | "direct_qlen" => {
                let v = v?;
                let n = parse_uint(v)
                    .filter(|&n| n <= u32::MAX as u64)
                    .ok_or_else(|| bad(opt, v, "must be a whole number below 2^32"))?;
                t.insert(opt.into(), int(n));
            }
            "offload" => {
                return Err(TcError::Unsupported {
                    option: opt.into(),
                    why: "hardware offload has no meaning in a simulation".into(),
                })
            }
            _ => {
                return Err(TcError::UnknownOption {
                    kind: "htb",
                    option: opt.into(),
                })
            }
        }
        i += 2;
    }
    Ok(t)
}

/// `prio [bands N] [priomap P1 .. P16]` (tc/q_prio.c).
pub(super) fn prio_options(o: &[&str]) -> Result<Table, TcError> {
    let mut t = Table::new();
    t.insert("kind".into(), "prio".into());
    let mut i = 0;
    while let Some(&opt) = o.get(i) {
        match opt {
            "bands" => {
                let v = o
                    .get(i + 1)
                    .copied()
                    .ok_or_else(|| TcError::MissingValue { option: opt.into() })?;
                let n = parse_uint(v).ok_or_else(|| bad(opt, v, "must be a whole number"))?;
                t.insert("bands".into(), int(n));
                i += 2;
            }
            "priomap" => {
                let map: Vec<&str> = o[i + 1..].iter().take(16).copied().collect();
                if map.len() < 16 {
                    return Err(bad(opt, &map.join(" "), "needs 16 band numbers"));
                }
                let mut bands = Vec::new();
                for v in map {
                    let b = parse_uint(v).ok_or_else(|| bad(opt, v, "must be band numbers"))?;
                    bands.push(int(b));
                }
                t.insert("priomap".into(), Value::Array(bands));
                i += 17;
            }
            "multiqueue" => {
                return Err(TcError::Unsupported {
                    option: opt.into(),
                    why: "a simulated link has one transmit queue".into(),
                })
            }
            _ => {
                return Err(TcError::UnknownOption {
                    kind: "prio",
                    option: opt.into(),
                })
            }
        }
    }
    Ok(t)
}

pub(super) fn class_line(line: usize, w: &[&str]) -> Result<ClassLine, TcError> {
    let h = header(w, false)?;
    let id = h
        .classid
        .ok_or_else(|| TcError::Syntax("a class needs `classid MAJOR:MINOR`".into()))?;
    let id = Handle::parse("classid", id)?;
    if id.minor == 0 {
        return Err(bad("classid", &id.text(), "a class's minor is above 0"));
    }
    let parent = h
        .parent
        .ok_or_else(|| TcError::Syntax(format!("class {}: needs `parent`", id.text())))?;
    let parent = Handle::parse("parent", parent)?;
    match h.rest.first() {
        Some(&"htb") => {}
        Some(k) => {
            return Err(TcError::Syntax(format!(
                "class {}: `{k}` classes are not read (htb only: a prio qdisc's classes \
                 are its bands)",
                id.text()
            )))
        }
        None => {
            return Err(TcError::Syntax(format!(
                "class {}: no class kind",
                id.text()
            )))
        }
    }
    let keys = htb_class_options(&h.rest[1..])?;
    Ok(ClassLine {
        line,
        id,
        parent,
        keys,
    })
}

/// An htb class's options: `rate R [ceil R] [burst B] [cburst B] [prio N]
/// [quantum N]` (tc/q_htb.c), `rate` required.
pub(super) fn htb_class_options(o: &[&str]) -> Result<Table, TcError> {
    let mut keys = Table::new();
    let mut i = 0;
    const OPTIONS: [&str; 14] = [
        "rate",
        "ceil",
        "burst",
        "buffer",
        "maxburst",
        "cburst",
        "cbuffer",
        "minburst",
        "prio",
        "quantum",
        "mtu",
        "mpu",
        "overhead",
        "linklayer",
    ];
    while let Some(&opt) = o.get(i) {
        if !OPTIONS.contains(&opt) {
            return Err(TcError::UnknownOption {
                kind: "htb",
                option: opt.into(),
            });
        }
        let v = o
            .get(i + 1)
            .copied()
            .ok_or_else(|| TcError::MissingValue { option: opt.into() })?;
        match opt {
            "rate" | "ceil" => {
                let r = parse_rate(v).map_err(|e| {
                    bad(
                        opt,
                        v,
                        e.rule("must be a rate (bit/s, or with kbit, mbit, gbit, kbps, ...)"),
                    )
                })?;
                keys.insert(opt.into(), Value::String(r.to_string()));
            }
            "burst" | "buffer" | "maxburst" | "cburst" | "cbuffer" | "minburst" => {
                let bytes = parse_size(v).ok_or_else(|| {
                    bad(
                        opt,
                        v,
                        "must be a size in bytes (suffixes k, kb, m, mb, kbit, mbit)",
                    )
                })?;
                let key = if matches!(opt, "cburst" | "cbuffer" | "minburst") {
                    "cburst"
                } else {
                    "burst"
                };
                keys.insert(key.into(), int(bytes));
            }
            "prio" | "quantum" => {
                let n = parse_uint(v).ok_or_else(|| bad(opt, v, "must be a whole number"))?;
                keys.insert(opt.into(), int(n));
            }
            "mtu" | "mpu" | "overhead" | "linklayer" => {
                return Err(TcError::Unsupported {
                    option: opt.into(),
                    why: "HTB's classes charge each packet's size on the wire; no size table \
                          is modelled"
                        .into(),
                })
            }
            _ => {
                return Err(TcError::UnknownOption {
                    kind: "htb",
                    option: opt.into(),
                })
            }
        }
        i += 2;
    }
    if !keys.contains_key("rate") {
        return Err(TcError::Required {
            kind: "htb",
            option: "rate".into(),
        });
    }
    Ok(keys)
}

pub(super) fn filter_line(line: usize, w: &[&str]) -> Result<FilterLine, TcError> {
    let h = header(w, true)?;
    let parent = Handle::parse(
        "parent",
        h.parent.ok_or_else(|| {
            TcError::Syntax("a filter needs `parent` (the qdisc it classifies for)".into())
        })?,
    )?;
    let o = h.rest;
    let mut dscp: Option<Vec<i64>> = None;
    let mut group = None;
    let mut to = None;
    let mut i = match o.first() {
        Some(&"u32") => 1,
        Some(&"group") => {
            let name = o.get(1).ok_or_else(|| TcError::MissingValue {
                option: "group".into(),
            })?;
            group = Some(name.to_string());
            2
        }
        Some(k) => {
            return Err(TcError::Syntax(format!(
                "filter `{k}`: aqmlab reads `u32 match ip dsfield|tos VALUE MASK` and its own \
                 `group NAME`"
            )))
        }
        None => return Err(TcError::Syntax("the filter names no classifier".into())),
    };
    while let Some(&opt) = o.get(i) {
        match opt {
            "match" if group.is_none() => {
                let matched = dsfield_match(&o[i + 1..])?;
                dscp = Some(match dscp {
                    // Two matches on one filter: both must hold.
                    Some(prev) => prev.into_iter().filter(|d| matched.contains(d)).collect(),
                    None => matched,
                });
                i += 5;
            }
            "flowid" | "classid" => {
                let v = o
                    .get(i + 1)
                    .ok_or_else(|| TcError::MissingValue { option: opt.into() })?;
                to = Some(Handle::parse(opt, v)?);
                i += 2;
            }
            _ => {
                return Err(TcError::UnknownOption {
                    kind: "u32",
                    option: opt.into(),
                })
            }
        }
    }
    let to = to.ok_or_else(|| TcError::Syntax("the filter names no `flowid`".into()))?;
    if dscp.is_none() && group.is_none() {
        return Err(TcError::Syntax("the u32 filter has no `match`".into()));
    }
    Ok(FilterLine {
        line,
        parent,
        to,
        dscp: dscp.unwrap_or_default(),
        group,
    })
}

/// `ip dsfield|tos VALUE MASK` (the words after `match`): every DSCP whose TOS
/// byte the match accepts.
pub(super) fn dsfield_match(o: &[&str]) -> Result<Vec<i64>, TcError> {
    let (value, mask) = (o.get(2), o.get(3));
    if o.first() != Some(&"ip") {
        return Err(TcError::Unsupported {
            option: format!("match {}", o.first().unwrap_or(&"")),
            why: "only `match ip dsfield|tos` is read".into(),
        });
    }
    match o.get(1) {
        Some(&("dsfield" | "tos")) => {}
        Some(f) => {
            return Err(TcError::Unsupported {
                option: format!("match ip {f}"),
                why: "aqmlab's flows have no addresses or ports to match: send a \
                      flow group to a class with `group NAME`"
                    .into(),
            })
        }
        None => {
            return Err(TcError::MissingValue {
                option: "match ip".into(),
            })
        }
    }
    let (Some(v), Some(m)) = (value, mask) else {
        return Err(TcError::MissingValue {
            option: "match ip dsfield".into(),
        });
    };
    let byte = |s: &str| parse_uint(s).filter(|&n| n <= 0xff);
    let (v, m) = (
        byte(v).ok_or_else(|| bad("dsfield", v, "must be a byte (0x00 to 0xff)"))?,
        byte(m).ok_or_else(|| bad("dsfield", m, "the mask must be a byte"))?,
    );
    if m & 0x03 != 0 {
        return Err(bad(
            "dsfield",
            &format!("{v:#x} {m:#x}"),
            "a mask over the ECN bits is not read (aqmlab's filters match the \
             DSCP): use 0xfc",
        ));
    }
    Ok((0..64u64)
        .filter(|d| (d << 2) & m == v & m)
        .map(|d| d as i64)
        .collect())
}
