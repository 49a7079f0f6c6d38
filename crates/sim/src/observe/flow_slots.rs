//! Which flows a monitored link direction keeps a row for, and each one's row.
//!
//! Packets follow their flow's two routes (data and ACKs), fixed at setup, so the
//! flows a link can ever see are read off the routes before the run. A link that
//! carries most flows (a dumbbell's bottleneck) keeps a row per flow, indexed by the
//! flow's id: no lookup. A link that carries few of them (one spoke of a star of
//! 100,000 hosts) keeps rows for those alone, found through the runs of consecutive
//! flow ids it carries (a group's flows share their routes, so a run is usually a
//! group): a table of every flow on every monitored link was links x flows.
//!
//! Rows are in flow order either way, so what is reported is the same.

use crate::flow::Flow;
use crate::net::routes::Routes;

/// Bytes a flow's row takes on a link: its counters (32) and its queue
/// occupancy (16). Decides between the two forms only.
const ROW: u64 = 48;

/// A run of consecutive flow ids a link carries: flows `first..end` have rows
/// `row..row + (end - first)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Run {
    first: u32,
    end: u32,
    row: u32,
}

/// Bytes a [`Run`] takes, for the memory estimate.
pub const RUN_BYTES: u64 = std::mem::size_of::<Run>() as u64;

/// Where a monitored link keeps each flow's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowSlots {
    /// A row per flow of the run (`flows` of them), flow `i` in row `i`.
    Dense { flows: u32 },
    /// Rows for the flows of these runs only (sorted, disjoint), `rows` in all.
    Runs { runs: Box<[Run]>, rows: u32 },
}

impl FlowSlots {
    /// How many rows the link's tables have.
    pub fn rows(&self) -> usize {
        match self {
            FlowSlots::Dense { flows } => *flows as usize,
            FlowSlots::Runs { rows, .. } => *rows as usize,
        }
    }

    /// The row of `flow`, a flow whose routes cross the link.
    #[inline]
    pub fn row(&self, flow: usize) -> usize {
        match self {
            FlowSlots::Dense { .. } => flow,
            FlowSlots::Runs { runs, .. } => {
                let f = flow as u32;
                let r = &runs[runs.partition_point(|r| r.end <= f)];
                debug_assert!(r.first <= f, "flow {flow} is not routed over this link");
                (r.row + (f - r.first)) as usize
            }
        }
    }

    /// The flow of `row`.
    pub fn flow(&self, row: usize) -> u32 {
        match self {
            FlowSlots::Dense { .. } => row as u32,
            FlowSlots::Runs { runs, .. } => {
                let row = row as u32;
                let r = &runs[runs.partition_point(|r| r.row <= row) - 1];
                r.first + (row - r.row)
            }
        }
    }

    /// The flow of each row, in row order (ascending flow ids).
    pub fn flows(&self) -> impl Iterator<Item = u32> + '_ {
        let (dense, runs): (u32, &[Run]) = match self {
            FlowSlots::Dense { flows } => (*flows, &[]),
            FlowSlots::Runs { runs, .. } => (0, runs),
        };
        (0..dense).chain(runs.iter().flat_map(|r| r.first..r.end))
    }
}

/// What a monitored link's routes put on it, counted before any table is made.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Flows whose data or ACKs cross the link.
    pub carried: u32,
    /// Runs of consecutive ids among them.
    pub runs: u32,
    last: Option<u32>,
}

impl Census {
    /// Counts `flow`; flows come in ascending order, a flow maybe more than once.
    fn add(&mut self, flow: u32) {
        match self.last {
            Some(l) if l == flow => return,
            Some(l) if l + 1 == flow => {}
            _ => self.runs += 1,
        }
        self.carried += 1;
        self.last = Some(flow);
    }

    /// Whether the link keeps a row per flow of the run's `flows`: unless rows
    /// for its own flows alone take under half as much.
    pub fn dense(&self, flows: u32) -> bool {
        #[cfg(test)]
        if tests::FORCE_DENSE.get() {
            return true;
        }
        let sparse = u64::from(self.carried) * ROW + u64::from(self.runs) * RUN_BYTES;
        2 * sparse > u64::from(flows) * ROW
    }

    /// The rows the link's tables will have among `flows` flows.
    pub fn rows(&self, flows: u32) -> u64 {
        if self.dense(flows) {
            u64::from(flows)
        } else {
            u64::from(self.carried)
        }
    }

    /// Bytes of the link's slot map among `flows` flows.
    pub fn slot_bytes(&self, flows: u32) -> u64 {
        if self.dense(flows) {
            0
        } else {
            u64::from(self.runs) * RUN_BYTES
        }
    }
}

/// Flow `i` of `flows` crosses link direction `l` of `monitored` (by position),
/// for each such pair once, flows in ascending order.
fn crossings(
    routes: &Routes,
    flows: &[Flow],
    monitored: &[u32],
    links: usize,
    mut visit: impl FnMut(usize, u32),
) {
    let mut position = vec![u32::MAX; links];
    for (i, &l) in monitored.iter().enumerate() {
        position[l as usize] = i as u32;
    }
    for (id, f) in flows.iter().enumerate() {
        for start in [f.fwd, f.rev] {
            for &l in routes.route(start) {
                let p = position[l as usize];
                if p != u32::MAX {
                    visit(p as usize, id as u32);
                }
            }
        }
    }
}

/// Per monitored link direction (of `links`), what its routes put on it.
pub fn census(routes: &Routes, flows: &[Flow], monitored: &[u32], links: usize) -> Vec<Census> {
    let mut out = vec![Census::default(); monitored.len()];
    crossings(routes, flows, monitored, links, |m, flow| out[m].add(flow));
    out
}

/// Per monitored link direction, where it keeps each flow's row, as `census`
/// (made by [`census`] from the same routes) decided.
pub fn slots(
    routes: &Routes,
    flows: &[Flow],
    monitored: &[u32],
    links: usize,
    census: &[Census],
) -> Vec<FlowSlots> {
    let n = flows.len() as u32;
    let mut runs: Vec<Option<Vec<Run>>> = census
        .iter()
        .map(|c| (!c.dense(n)).then(|| Vec::with_capacity(c.runs as usize)))
        .collect();
    let mut rows = vec![0u32; monitored.len()];
    crossings(routes, flows, monitored, links, |m, flow| {
        let Some(runs) = &mut runs[m] else { return };
        match runs.last_mut() {
            Some(r) if r.end > flow => {}
            Some(r) if r.end == flow => {
                r.end += 1;
                rows[m] += 1;
            }
            _ => {
                runs.push(Run {
                    first: flow,
                    end: flow + 1,
                    row: rows[m],
                });
                rows[m] += 1;
            }
        }
    });
    runs.into_iter()
        .zip(rows)
        .map(|(r, rows)| match r {
            None => FlowSlots::Dense { flows: n },
            Some(runs) => FlowSlots::Runs {
                runs: runs.into_boxed_slice(),
                rows,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests;
