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
use super::{bad, TcError, TcQdisc, Value};
#[cfg(test)]
use serde::Deserialize;
use toml::Table;

mod lines;
use lines::{class_line, filter_line, qdisc_line, ClassLine, FilterLine, Handle, QdiscLine};

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

/// A script's lines, read: its qdiscs, classes and filters, assembled into one
/// nested table.
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
