//! Configurations that parse and pass every key's own check, yet cannot do what
//! their names say: a RED whose `limit` is not above `min_th` never drops early (a
//! DropTail under a RED label), a flow that starts after the run ends never sends.
//!
//! Each finding names the keys and sits at the line of the one to change. Those
//! that make a part do nothing at all are errors (from validation, so a sweep
//! refuses the point before it runs anything); those with a legitimate use (a
//! RED whose curve is cut short by its buffer, a group that stops in the warm-up)
//! are warnings, which `aqmlab run` prints on stderr and `aqmlab.run` raises as
//! `RuntimeWarning`s.

use super::{KeyPath, Scenario, ScenarioError, Topology, Traffic};
use aqm::early_drop::EarlyDrop;
use aqm::{Dur, QdiscSpec};

/// How bad a finding is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Severity {
    /// The configuration cannot do what it says: refused.
    Error,
    /// It can be meant: said, and run.
    Warning,
}

struct Finding {
    severity: Severity,
    /// The key to change (its line is the finding's).
    at: KeyPath,
    message: String,
    /// A flow group's finding: the group, the key and what the finding says of
    /// any group, so that many alike are told once.
    group: Option<(usize, &'static str, &'static str)>,
}

/// The flow groups whose warning of one kind is told in full; the others with
/// the same warning are summed up in one more.
const SHOWN_GROUPS: usize = 3;

/// The warnings, each group's beyond the first [`SHOWN_GROUPS`] of its kind
/// summed up in one (a generated scenario can carry the same finding for every
/// one of 100,000 groups).
fn summarise(found: impl Iterator<Item = Finding>) -> Vec<Finding> {
    struct Rest {
        key: &'static str,
        gist: &'static str,
        at: KeyPath,
        first: usize,
        last: usize,
        count: usize,
    }
    let mut out = Vec::new();
    let mut shown: Vec<(&'static str, usize)> = Vec::new();
    let mut rest: Vec<Rest> = Vec::new();
    for f in found {
        let Some((group, key, gist)) = f.group else {
            out.push(f);
            continue;
        };
        let n = match shown.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => n,
            None => {
                shown.push((key, 0));
                &mut shown.last_mut().unwrap().1
            }
        };
        *n += 1;
        if *n <= SHOWN_GROUPS {
            out.push(f);
        } else if let Some(r) = rest.iter_mut().find(|r| r.key == key) {
            r.last = group;
            r.count += 1;
        } else {
            rest.push(Rest {
                key,
                gist,
                at: f.at,
                first: group,
                last: group,
                count: 1,
            });
        }
    }
    out.extend(rest.into_iter().map(|r| Finding {
        severity: Severity::Warning,
        message: if r.count == 1 {
            format!("flows[{}]: {}: {}", r.first, r.key, r.gist)
        } else {
            format!(
                "{} more flow groups, flows[{}] to flows[{}], the same at {}: {}",
                thousands(r.count),
                r.first,
                r.last,
                r.key,
                r.gist
            )
        },
        at: r.at,
        group: None,
    }));
    out
}

/// `n` with a comma every three digits: 1,998.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Scenario {
    /// The findings that are errors, the first as the error: the hook
    /// validation calls.
    pub(super) fn refuse_no_ops(&self) -> Result<(), ScenarioError> {
        match self
            .no_ops()
            .into_iter()
            .find(|f| f.severity == Severity::Error)
        {
            Some(f) => Err(self.error_at(&f.at, f.message)),
            None => Ok(()),
        }
    }

    /// The configurations that may do less than their names say but can be
    /// meant, each at its key's line, to print as `warning: {origin}:{line}: ...`.
    /// Many flow groups with the same finding are told in a few lines.
    pub fn warnings(&self) -> Vec<ScenarioError> {
        let found = self
            .no_ops()
            .into_iter()
            .filter(|f| f.severity == Severity::Warning);
        self.errors_at(summarise(found).into_iter().map(|f| (f.at, f.message)))
    }

    fn no_ops(&self) -> Vec<Finding> {
        let mut found = Vec::new();
        for (path, spec) in self.qdisc_specs() {
            self.qdisc_no_ops(&path, spec, &mut found);
        }
        self.flow_no_ops(&mut found);
        found
    }

    /// Every qdisc the scenario writes, with where.
    fn qdisc_specs(&self) -> Vec<(KeyPath, &QdiscSpec)> {
        let f = &self.file;
        let mut specs = Vec::new();
        let default_used = match f.topology.get_ref() {
            Topology::Dumbbell { reverse_qdisc, .. } => {
                if let Some(q) = reverse_qdisc {
                    specs.push((KeyPath::top("topology").key("reverse_qdisc"), q));
                }
                true
            }
            // A fat tree's ports: the one qdisc, where it is written.
            Topology::Graph {
                fat_tree: Some(fat),
                ..
            } => {
                if let Some(q) = &fat.qdisc {
                    specs.push((KeyPath::top("topology").key("qdisc"), q));
                }
                fat.qdisc.is_none()
            }
            Topology::Graph { links, .. } => {
                for (i, l) in links.iter().enumerate() {
                    let at = KeyPath::top("topology").key("links").index(i);
                    for (key, q) in [("qdisc", &l.qdisc), ("reverse_qdisc", &l.reverse_qdisc)] {
                        if let Some(q) = q {
                            specs.push((at.key(key), q));
                        }
                    }
                }
                links.iter().any(|l| l.qdisc.is_none())
            }
        };
        if let (Some(q), true) = (&f.qdisc, default_used) {
            specs.insert(0, (KeyPath::top("qdisc"), q.get_ref()));
        }
        specs
    }

    fn qdisc_no_ops(&self, path: &KeyPath, spec: &QdiscSpec, found: &mut Vec<Finding>) {
        let said = limit_rules(spec)
            .into_iter()
            .chain(kind_rules(spec))
            .chain(period_rules(spec, self.file.duration));
        for (severity, key, message) in said {
            found.push(Finding {
                severity,
                at: path.key(key),
                message: format!("{path}: {message}"),
                group: None,
            });
        }
    }

    fn flow_no_ops(&self, found: &mut Vec<Finding>) {
        let f = &self.file;
        let (warmup, duration) = (f.warmup, f.duration);
        let mut measured = false;
        for (i, g) in f.flows.iter().enumerate() {
            let spec = g.get_ref();
            let name = &spec.name;
            let at = KeyPath::top("flows").index(i);
            let mut say = |severity, key: &'static str, message: String, gist: &'static str| {
                found.push(Finding {
                    severity,
                    at: at.key(key),
                    message: format!("flows[{i}] ({name}): {message}"),
                    group: Some((i, key, gist)),
                })
            };
            let (start, spread) = (spec.start, spec.start_spread);
            let stop = spec.stop.unwrap_or(Dur::MAX);
            if start >= duration {
                say(
                    Severity::Error,
                    "start",
                    format!(
                        "start = {start} is not before duration = {duration}: the group \
                         never sends"
                    ),
                    "the group never sends",
                );
                continue;
            }
            if !spread.is_zero() && start + spread > duration && spec.count != 0 {
                say(
                    Severity::Warning,
                    "start_spread",
                    format!(
                        "start = {start} plus start_spread = {spread} ends after \
                         duration = {duration}: some of the group's flows never start"
                    ),
                    "start plus start_spread ends after duration: some of their flows never start",
                );
            }
            if stop <= warmup {
                say(
                    Severity::Warning,
                    "stop",
                    format!(
                        "stop = {stop} is not after warmup = {warmup}: the group sends \
                         only during the warm-up, so nothing of it is measured"
                    ),
                    "stop is not after warmup: nothing of them is measured",
                );
            } else {
                measured = true;
            }
            if let Traffic::Onoff(k) = &spec.traffic {
                if let Some(on) = k.on.filter(|&on| on >= duration) {
                    say(
                        Severity::Warning,
                        "on",
                        format!(
                            "on = {on} (the mean on period) is not shorter than duration \
                             = {duration}: most flows never switch off, a cbr"
                        ),
                        "the mean on period is not shorter than duration: most of their \
                         flows never switch off",
                    );
                }
            }
            if let Some(steps) = spec.schedule() {
                if let Some(late) = steps.iter().find(|s| s.at >= duration) {
                    say(
                        Severity::Warning,
                        "schedule",
                        format!(
                            "the schedule's step at {} is not before duration = {duration}: \
                             it never applies",
                            late.at
                        ),
                        "a schedule step is not before duration: it never applies",
                    );
                }
            }
        }
        if !measured && !warmup.is_zero() {
            found.push(Finding {
                severity: Severity::Error,
                at: KeyPath::top("warmup"),
                message: format!(
                    "warmup = {warmup}: every flow group stops before the warm-up ends, so \
                     the run measures nothing; shorten warmup or move the groups' stop"
                ),
                group: None,
            });
        }
    }
}

#[cfg(test)]
mod tests;

/// A finding about a key of a qdisc table: how bad, the key, what it does.
type Said = (Severity, &'static str, String);

/// A RED-family qdisc's limit against the thresholds it waits for. Each qdisc
/// says what it waits for in its own file, so a new RED-family kind cannot miss
/// this check.
fn limit_rules(spec: &QdiscSpec) -> Option<Said> {
    let kind = spec.kind();
    let EarlyDrop::AboveMinTh(t) = spec.early_drop() else {
        return None;
    };
    if f64::from(t.limit) <= t.min_th {
        Some((
            Severity::Error,
            "limit",
            format!(
                "limit = {} is not above min_th = {}: the average queue never \
                 exceeds min_th, so {kind} never drops early and is a DropTail of \
                 {} packets; raise limit or lower min_th",
                t.limit, t.min_th, t.limit
            ),
        ))
    } else if f64::from(t.limit) <= t.max_th {
        Some((
            Severity::Warning,
            "max_th",
            format!(
                "max_th = {} is not below limit = {}: the average queue never \
                 reaches max_th, so {kind}'s drop curve is cut short below max_p",
                t.max_th, t.limit
            ),
        ))
    } else {
        None
    }
}

/// The periods a qdisc waits before it drops early, against the run's duration.
fn period_rules(spec: &QdiscSpec, duration: Dur) -> Vec<Said> {
    let kind = spec.kind();
    let EarlyDrop::After(periods) = spec.early_drop() else {
        return Vec::new();
    };
    periods
        .into_iter()
        .filter(|&(_, period)| period >= duration)
        .map(|(key, period)| {
            let message = format!(
                "{key} = {period} is not shorter than duration = {duration}: \
                 {kind} never drops early in this run"
            );
            (Severity::Warning, key, message)
        })
        .collect()
}

/// Rules of one kind's own keys; a kind without one has nothing to say here.
fn kind_rules(spec: &QdiscSpec) -> Vec<Said> {
    // Linux accepts a tree whose children's rates exceed their parent's ceil,
    // and cannot give them: said, and run.
    if let QdiscSpec::Htb(p) = spec {
        return p
            .warnings()
            .into_iter()
            .map(|w| (Severity::Warning, "class", w))
            .collect();
    }
    let codel_target = |target, interval, rfc| {
        format!(
            "target = {target} is not below interval = {interval}: CoDel drops only once \
             the sojourn has stayed above target for a whole interval, so it rarely acts \
             ({rfc}: target 5-10% of interval)"
        )
    };
    let one = match spec {
        QdiscSpec::Sfb(p) if p.bin_size > p.limit => (
            Severity::Error,
            "bin_size",
            format!(
                "bin_size = {} is above limit = {}: no bin ever holds bin_size \
                 packets, so no marking probability rises and sfb is a DropTail; \
                 lower bin_size",
                p.bin_size, p.limit
            ),
        ),
        QdiscSpec::Sfb(p) if p.bins == 1 => (
            Severity::Warning,
            "bins",
            "bins = 1: every flow shares the one bin of each level, so sfb cannot \
             tell flows apart and rate-limits all or none (a BLUE)"
                .into(),
        ),
        QdiscSpec::Sfred(p) if p.bins == 1 => (
            Severity::Warning,
            "bins",
            "bins = 1: every flow shares the one bin of each level, so sfred \
             cannot tell flows apart (an adaptive RED)"
                .into(),
        ),
        QdiscSpec::Codel(p) if p.target >= p.interval => (
            Severity::Warning,
            "target",
            codel_target(p.target, p.interval, "RFC 8289"),
        ),
        QdiscSpec::FqCodel(p) if p.target >= p.interval => (
            Severity::Warning,
            "target",
            codel_target(p.target, p.interval, "RFC 8290"),
        ),
        QdiscSpec::FqCodel(p) if p.flows == 1 => (
            Severity::Warning,
            "flows",
            "flows = 1: one flow queue for all flows, so fq_codel is a CoDel".into(),
        ),
        _ => return Vec::new(),
    };
    vec![one]
}
