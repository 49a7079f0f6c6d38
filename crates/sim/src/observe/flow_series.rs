//! Each flow's traffic across a monitored link, per interval: the packets and bytes
//! the link sent for it, and its packets the link's queue dropped or marked.
//!
//! Per link, a counter per flow and the list of flows touched in the current
//! interval: an interval's end costs one row per active flow, not one per flow, so
//! a series of 100,000 mostly idle flows stays cheap. Rows cover the whole run,
//! warm-up included, stamped with their interval's start.

use aqm::{Dur, Time};

#[derive(Copy, Clone, Debug, Default)]
struct Acc {
    packets: u32,
    bytes: u64,
    drops: u32,
    marks: u32,
    touched: bool,
}

/// One interval of one flow at one link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SeriesRow {
    pub start: Time,
    pub len: Dur,
    pub flow: u32,
    pub packets: u32,
    pub bytes: u64,
    pub drops: u32,
    pub marks: u32,
}

/// The series of one monitored link.
pub struct SeriesAcc {
    acc: Vec<Acc>,
    touched: Vec<u32>,
    interval_start: Time,
    pub rows: Vec<SeriesRow>,
}

impl SeriesAcc {
    pub fn new(flows: usize) -> Self {
        SeriesAcc {
            acc: vec![Acc::default(); flows],
            touched: Vec::new(),
            interval_start: Time::ZERO,
            rows: Vec::new(),
        }
    }

    #[inline]
    fn touch(&mut self, flow: usize) -> &mut Acc {
        let a = &mut self.acc[flow];
        if !a.touched {
            a.touched = true;
            self.touched.push(flow as u32);
        }
        a
    }

    #[inline]
    pub fn tx(&mut self, flow: usize, size: u32) {
        let a = self.touch(flow);
        a.packets += 1;
        a.bytes += size as u64;
    }

    #[inline]
    pub fn drop(&mut self, flow: usize) {
        self.touch(flow).drops += 1;
    }

    #[inline]
    pub fn mark(&mut self, flow: usize) {
        self.touch(flow).marks += 1;
    }

    /// The rows of the interval that runs from its start to `now`, flows in order.
    fn pending(&self, now: Time) -> Vec<SeriesRow> {
        let mut flows = self.touched.clone();
        flows.sort_unstable();
        let len = now.saturating_since(self.interval_start);
        flows
            .into_iter()
            .map(|f| {
                let a = &self.acc[f as usize];
                SeriesRow {
                    start: self.interval_start,
                    len,
                    flow: f,
                    packets: a.packets,
                    bytes: a.bytes,
                    drops: a.drops,
                    marks: a.marks,
                }
            })
            .collect()
    }

    /// The interval ends at `now`: its rows are kept and a new one begins.
    pub fn close_interval(&mut self, now: Time) {
        let rows = self.pending(now);
        self.rows.extend(rows);
        for f in self.touched.drain(..) {
            self.acc[f as usize] = Acc::default();
        }
        self.interval_start = now;
    }

    /// Every row so far, the running interval's included (it ends at `now`).
    pub fn rows_at(&self, now: Time) -> Vec<SeriesRow> {
        let mut rows = self.rows.clone();
        if now > self.interval_start {
            rows.extend(self.pending(now));
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_per_active_flow_per_interval() {
        let mut s = SeriesAcc::new(4);
        s.tx(2, 1000);
        s.tx(0, 500);
        s.tx(2, 1000);
        s.drop(3);
        s.close_interval(Time::from_secs(1));
        s.mark(1);
        let rows = s.rows_at(Time::from_nanos(1_500_000_000));
        let view: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.start.as_nanos(),
                    r.len.as_nanos(),
                    r.flow,
                    r.packets,
                    r.bytes,
                    r.drops,
                    r.marks,
                )
            })
            .collect();
        assert_eq!(
            view,
            vec![
                (0, 1_000_000_000, 0, 1, 500, 0, 0),
                (0, 1_000_000_000, 2, 2, 2000, 0, 0),
                (0, 1_000_000_000, 3, 0, 0, 1, 0),
                (1_000_000_000, 500_000_000, 1, 0, 0, 0, 1),
            ]
        );
    }
}
