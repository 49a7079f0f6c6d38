//! A qdisc tree as a `tc` script writes it: one `tc qdisc add ... root handle 1:
//! htb|prio` line, `tc class add` lines for HTB's classes, `tc qdisc add ...
//! parent 1:10` lines for the leaves (any kind the one-line parser reads, or
//! another htb or prio: trees nest), and `tc filter add` lines that send packets
//! to leaf classes. The script becomes the nested `[qdisc]` table that
//! configures the same tree ([`aqm::htb`], [`aqm::prio`]).
//!
//! Filters: `u32 match ip dsfield VALUE MASK` (or `match ip tos`), as Linux
//! matches the TOS byte, becomes the list of DSCPs it matches; `group NAME` is
//! aqmlab's own classifier (Linux has none: a flow group is aqmlab's notion), the
//! way to send a flow group's packets to a class. A class takes a packet that
//! any of its filters matches; a packet that several classes' filters match goes
//! to the first class written.

#[cfg(test)]
use super::parse_any;
use super::{bad, int, parse, parse_rate, parse_size, parse_uint, TcError, TcQdisc, Value};
#[cfg(test)]
use serde::Deserialize;
use toml::Table;

/// A class or qdisc handle: `major:minor`, both hexadecimal as tc reads them
/// (`1:` is minor 0, the qdisc itself).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Handle {
    major: u32,
    minor: u32,
}

impl Handle {
    fn parse(option: &str, s: &str) -> Result<Handle, TcError> {
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

    fn text(self) -> String {
        if self.minor == 0 {
            format!("{:x}:", self.major)
        } else {
            format!("{:x}:{:x}", self.major, self.minor)
        }
    }
}

/// A qdisc of the script.
struct QdiscLine {
    line: usize,
    /// Its handle's major; `None` for a leaf written without `handle` (it can
    /// have no children).
    major: Option<u32>,
    /// The class it is the leaf of; `None` at the root.
    parent: Option<Handle>,
    /// Its keys: a tree's own options, or a leaf's whole table.
    keys: Table,
    notes: Vec<String>,
}

/// An HTB class of the script.
struct ClassLine {
    line: usize,
    id: Handle,
    parent: Handle,
    keys: Table,
}

/// A filter's catch: what it matches and the class it sends it to.
struct FilterLine {
    line: usize,
    parent: Handle,
    to: Handle,
    dscp: Vec<i64>,
    group: Option<String>,
}

/// Whether `text` is a tree script rather than one qdisc line: more than one
/// line (`;` separates lines as a shell does), a class or filter line, or an
/// htb or prio qdisc.
pub fn is_script(text: &str) -> bool {
    let lines: Vec<String> = script_lines(text).map(|(_, l)| l).collect();
    lines.len() > 1
        || lines.iter().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let at = usize::from(w.first().is_some_and(|w| is_tc(w)));
            matches!(w.get(at), Some(&("class" | "filter")))
                || w.iter().any(|w| *w == "htb" || *w == "prio")
        })
}

fn is_tc(w: &str) -> bool {
    w == "tc" || w.ends_with("/tc") || w == "$TC"
}

/// The script's lines that say something, numbered from 1; `#` starts a comment
/// and a trailing `\` joins a line to the next, as in a shell script.
fn script_lines(text: &str) -> impl Iterator<Item = (usize, String)> + '_ {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let code = raw.split('#').next().unwrap_or("");
        for (j, piece) in code.split(';').enumerate() {
            let (start, mut acc) = match (j, pending.take()) {
                (0, Some(p)) => p,
                _ => (i + 1, String::new()),
            };
            let piece = piece.trim_end();
            if let Some(cont) = piece.strip_suffix('\\') {
                acc.push_str(cont);
                acc.push(' ');
                pending = Some((start, acc));
            } else {
                acc.push_str(piece);
                if !acc.trim().is_empty() {
                    out.push((start, acc));
                }
            }
        }
    }
    if let Some((start, acc)) = pending {
        if !acc.trim().is_empty() {
            out.push((start, acc));
        }
    }
    out.into_iter()
}

/// Parses a tree script into the nested `[qdisc]` table of its root.
pub fn parse_script(text: &str) -> Result<TcQdisc, TcError> {
    let mut qdiscs = Vec::new();
    let mut classes = Vec::new();
    let mut filters = Vec::new();
    let mut echo = Vec::new();
    for (n, line) in script_lines(text) {
        let at = |e: TcError| TcError::InScript {
            line: n,
            error: Box::new(e),
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        echo.push(words.join(" "));
        let w = &words[usize::from(words.first().is_some_and(|w| is_tc(w)))..];
        match w.first() {
            Some(&"qdisc") => qdiscs.push(qdisc_line(n, &line, w).map_err(at)?),
            Some(&"class") => classes.push(class_line(n, w).map_err(at)?),
            Some(&"filter") => filters.push(filter_line(n, w).map_err(at)?),
            _ => {
                return Err(at(TcError::Syntax(
                    "each line of a tree is `tc qdisc`, `tc class` or `tc filter`".into(),
                )))
            }
        }
    }
    let tree = Tree {
        qdiscs,
        classes,
        filters,
    };
    let keys = tree.assemble()?;
    let notes = tree.qdiscs.iter().flat_map(|q| q.notes.clone()).collect();
    let out = TcQdisc {
        line: echo.join("\n"),
        keys: keys.into_iter().collect(),
        notes,
    };
    out.spec()?
        .validate(&aqm::LinkInfo::new(aqm::Rate::from_mbps(10)))
        .map_err(|e| TcError::Spec(e.to_string()))?;
    Ok(out)
}

/// `(verb, header words' values, rest)`: reads `add|replace|change`, then `dev
/// X`, `parent P`, `handle H`, `classid C`, `root`, `protocol P` and a filter's
/// `prio N`/`pref N`, up to the first other word.
struct Header<'a> {
    parent: Option<&'a str>,
    handle: Option<&'a str>,
    classid: Option<&'a str>,
    root: bool,
    rest: &'a [&'a str],
}

fn header<'a>(w: &'a [&'a str], filter: bool) -> Result<Header<'a>, TcError> {
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

fn qdisc_line(line: usize, text: &str, w: &[&str]) -> Result<QdiscLine, TcError> {
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
fn htb_options(o: &[&str]) -> Result<Table, TcError> {
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
fn prio_options(o: &[&str]) -> Result<Table, TcError> {
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

fn class_line(line: usize, w: &[&str]) -> Result<ClassLine, TcError> {
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
fn htb_class_options(o: &[&str]) -> Result<Table, TcError> {
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

fn filter_line(line: usize, w: &[&str]) -> Result<FilterLine, TcError> {
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
fn dsfield_match(o: &[&str]) -> Result<Vec<i64>, TcError> {
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

struct Tree {
    qdiscs: Vec<QdiscLine>,
    classes: Vec<ClassLine>,
    filters: Vec<FilterLine>,
}

impl Tree {
    fn at(line: usize, e: TcError) -> TcError {
        TcError::InScript {
            line,
            error: Box::new(e),
        }
    }

    fn assemble(&self) -> Result<Table, TcError> {
        let roots: Vec<&QdiscLine> = self.qdiscs.iter().filter(|q| q.parent.is_none()).collect();
        let root = match roots.as_slice() {
            [r] => *r,
            [] => return Err(TcError::Syntax("the script has no `root` qdisc".into())),
            [_, second, ..] => {
                return Err(Self::at(
                    second.line,
                    TcError::Syntax("a second `root` qdisc: a link has one".into()),
                ))
            }
        };
        // Every handle once.
        for (i, q) in self.qdiscs.iter().enumerate() {
            if let Some(m) = q.major {
                if self.qdiscs[..i].iter().any(|o| o.major == Some(m)) {
                    return Err(Self::at(
                        q.line,
                        bad("handle", &format!("{m:x}:"), "is already a qdisc's handle"),
                    ));
                }
            }
        }
        for (i, c) in self.classes.iter().enumerate() {
            if self.classes[..i].iter().any(|o| o.id == c.id) {
                return Err(Self::at(
                    c.line,
                    bad("classid", &c.id.text(), "is already a class"),
                ));
            }
        }
        let mut used = vec![false; self.qdiscs.len()];
        let table = self.qdisc_table(root, &mut used, 0)?;
        if let Some(i) = used.iter().position(|u| !u) {
            let q = &self.qdiscs[i];
            let p = q.parent.map(Handle::text).unwrap_or_default();
            return Err(Self::at(
                q.line,
                TcError::Syntax(format!("parent {p} is no class of the tree")),
            ));
        }
        for f in &self.filters {
            if !self.is_leaf_class(f.to) {
                return Err(Self::at(
                    f.line,
                    TcError::Syntax(format!(
                        "flowid {} is no leaf class of the tree (filters send packets to leaf \
                         classes)",
                        f.to.text()
                    )),
                ));
            }
            if f.parent.major != f.to.major {
                return Err(Self::at(
                    f.line,
                    TcError::Syntax(format!(
                        "flowid {} is not a class of the qdisc {} the filter is attached to",
                        f.to.text(),
                        f.parent.text()
                    )),
                ));
            }
        }
        Ok(table)
    }

    /// Whether `id` is a class with no children: an HTB leaf or a prio band.
    fn is_leaf_class(&self, id: Handle) -> bool {
        let owner = self.qdiscs.iter().find(|q| q.major == Some(id.major));
        match owner
            .and_then(|q| q.keys.get("kind"))
            .and_then(Value::as_str)
        {
            Some("htb") => {
                self.classes.iter().any(|c| c.id == id)
                    && !self.classes.iter().any(|c| c.parent == id)
            }
            Some("prio") => {
                let bands = owner
                    .and_then(|q| q.keys.get("bands"))
                    .and_then(Value::as_integer)
                    .unwrap_or(3);
                (1..=bands).contains(&i64::from(id.minor))
            }
            _ => false,
        }
    }

    /// The table of the htb or prio qdisc `q`, its classes' leaves within.
    fn qdisc_table(
        &self,
        q: &QdiscLine,
        used: &mut [bool],
        depth: usize,
    ) -> Result<Table, TcError> {
        let me = self
            .qdiscs
            .iter()
            .position(|o| std::ptr::eq(o, q))
            .expect("a qdisc of the script");
        used[me] = true;
        let mut t = q.keys.clone();
        let kind = t
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let Some(major) = q.major.filter(|_| kind == "htb" || kind == "prio") else {
            return Ok(t);
        };
        if depth > 8 {
            return Err(Self::at(
                q.line,
                TcError::Syntax("the tree nests deeper than 8".into()),
            ));
        }
        t.insert("handle".into(), Value::String(format!("{major:x}:")));
        if let Some(Value::Integer(minor)) = t.get("default").cloned() {
            t.insert(
                "default".into(),
                Value::String(format!("{major:x}:{minor:x}")),
            );
        }
        let mut classes = Vec::new();
        let ids: Vec<Handle> = if kind == "htb" {
            self.check_htb_classes(major)?;
            self.classes
                .iter()
                .filter(|c| c.id.major == major)
                .map(|c| c.id)
                .collect()
        } else {
            let bands = t
                .get("bands")
                .and_then(Value::as_integer)
                .unwrap_or(3)
                .clamp(0, 16);
            (1..=bands as u32)
                .map(|minor| Handle { major, minor })
                .collect()
        };
        for id in ids {
            let mut c = Table::new();
            c.insert("classid".into(), Value::String(id.text()));
            if let Some(line) = self.classes.iter().find(|c| c.id == id) {
                if line.parent.minor != 0 {
                    c.insert("parent".into(), Value::String(line.parent.text()));
                }
                c.extend(line.keys.clone());
            }
            if let Some(leaf) = self.qdiscs.iter().find(|l| l.parent == Some(id)) {
                let sub = self.qdisc_table(leaf, used, depth + 1)?;
                c.insert("qdisc".into(), Value::Table(sub));
            }
            if let Some(filter) = self.filter_table(id) {
                c.insert("filter".into(), Value::Table(filter));
            }
            // A prio band with nothing said of it keeps its default leaf.
            if kind == "prio" && c.len() == 1 {
                continue;
            }
            classes.push(Value::Table(c));
        }
        if !classes.is_empty() {
            t.insert("class".into(), Value::Array(classes));
        }
        Ok(t)
    }
    /// An HTB qdisc's classes: each parent exists, and has no leaf qdisc.
    fn check_htb_classes(&self, major: u32) -> Result<(), TcError> {
        for c in self.classes.iter().filter(|c| c.id.major == major) {
            let parent_ok = c.parent.major == major
                && (c.parent.minor == 0 || self.classes.iter().any(|o| o.id == c.parent));
            if !parent_ok {
                return Err(Self::at(
                    c.line,
                    TcError::Syntax(format!(
                        "class {}: parent {} does not exist",
                        c.id.text(),
                        c.parent.text()
                    )),
                ));
            }
            if let Some(leaf) = self.qdiscs.iter().find(|l| l.parent == Some(c.parent)) {
                return Err(Self::at(
                    c.line,
                    TcError::Syntax(format!(
                        "class {}: its parent {} has a leaf qdisc (line {}); a class with \
                         children takes no qdisc",
                        c.id.text(),
                        c.parent.text(),
                        leaf.line
                    )),
                ));
            }
        }
        Ok(())
    }

    /// What the filters to class `id` take, as its `filter` table (none when
    /// no filter sends packets there): the union of their DSCPs and groups.
    fn filter_table(&self, id: Handle) -> Option<Table> {
        let caught: Vec<&FilterLine> = self.filters.iter().filter(|f| f.to == id).collect();
        if caught.is_empty() {
            return None;
        }
        let mut filter = Table::new();
        let mut dscp: Vec<i64> = caught.iter().flat_map(|f| f.dscp.clone()).collect();
        dscp.sort_unstable();
        dscp.dedup();
        if !dscp.is_empty() {
            let dscp = dscp.into_iter().map(Value::Integer).collect();
            filter.insert("dscp".into(), Value::Array(dscp));
        }
        let groups: Vec<Value> = caught
            .iter()
            .filter_map(|f| f.group.clone().map(Value::String))
            .collect();
        if !groups.is_empty() {
            filter.insert("groups".into(), Value::Array(groups));
        }
        Some(filter)
    }
}

#[cfg(test)]
mod tests;
