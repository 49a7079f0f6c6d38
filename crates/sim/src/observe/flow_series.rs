//! Each flow's traffic across a monitored link, per interval: the packets and bytes
//! the link sent for it, and its packets the link's queue dropped or marked.
//!
//! Per link, a counter per flow and the list of flows touched in the current
//! interval: an interval's end costs one row per active flow, not one per flow, so
//! a series of 100,000 mostly idle flows stays cheap. Rows cover the whole run,
//! warm-up included, stamped with their interval's start.
//!
//! Bits are counted as they leave the transmitter: a packet in transmission when
//! an interval ends is split between the two intervals, so no interval carries
//! more than the link's rate allows. Packets are counted when their last bit leaves.

use aqm::{Dur, Time};

#[derive(Copy, Clone, Debug, Default)]
struct Acc {
    packets: u32,
    bits: u64,
    drops: u32,
    marks: u32,
    touched: bool,
}

/// One interval of one flow at one link; `flow` is the flow's row in the link's
/// `FlowSlots` (its id where the link keeps a row per flow).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SeriesRow {
    pub start: Time,
    pub len: Dur,
    pub flow: u32,
    pub packets: u32,
    pub bits: u64,
    pub drops: u32,
    pub marks: u32,
}

/// The series of one monitored link.
pub struct SeriesAcc {
    acc: Vec<Acc>,
    touched: Vec<u32>,
    interval_start: Time,
    /// Bits of the packet in transmission already counted in earlier intervals.
    carried: u64,
    pub rows: Vec<SeriesRow>,
}

impl SeriesAcc {
    /// The series of a link with `rows` rows (`observe::flow_slots`); its methods
    /// take a flow's row.
    pub fn new(rows: usize) -> Self {
        SeriesAcc {
            acc: vec![Acc::default(); rows],
            touched: Vec::new(),
            interval_start: Time::ZERO,
            carried: 0,
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

    /// The link finished sending a packet of `size` bytes of `flow`.
    #[inline]
    pub fn tx(&mut self, flow: usize, size: u32) {
        let rest = size as u64 * 8 - std::mem::take(&mut self.carried);
        let a = self.touch(flow);
        a.packets += 1;
        a.bits += rest;
    }

    #[inline]
    pub fn drop(&mut self, flow: usize) {
        self.touch(flow).drops += 1;
    }

    #[inline]
    pub fn mark(&mut self, flow: usize) {
        self.touch(flow).marks += 1;
    }

    /// The rows of the interval that runs from its start to `now`, flows in order;
    /// `partial` is the flow of the packet in transmission and its bits sent so
    /// far (`in_progress`).
    fn pending(&self, now: Time, partial: Option<(usize, u64)>) -> Vec<SeriesRow> {
        let acc = |f: usize| self.acc[f];
        let mut flows = self.touched.clone();
        let extra = partial.map(|(f, bits)| (f, bits - self.carried));
        if let Some((f, bits)) = extra {
            if bits > 0 && !self.acc[f].touched {
                flows.push(f as u32);
            }
        }
        flows.sort_unstable();
        let len = now.saturating_since(self.interval_start);
        flows
            .into_iter()
            .map(|f| {
                let mut a = acc(f as usize);
                if let Some((pf, bits)) = extra {
                    if pf == f as usize {
                        a.bits += bits;
                    }
                }
                SeriesRow {
                    start: self.interval_start,
                    len,
                    flow: f,
                    packets: a.packets,
                    bits: a.bits,
                    drops: a.drops,
                    marks: a.marks,
                }
            })
            .collect()
    }

    /// The interval ends at `now`: its rows are kept and a new one begins.
    pub fn close_interval(&mut self, now: Time, partial: Option<(usize, u64)>) {
        let rows = self.pending(now, partial);
        self.rows.extend(rows);
        for f in self.touched.drain(..) {
            self.acc[f as usize] = Acc::default();
        }
        if let Some((_, bits)) = partial {
            self.carried = bits;
        }
        self.interval_start = now;
    }

    /// Every row so far, the running interval's included (it ends at `now`).
    pub fn rows_at(&self, now: Time, partial: Option<(usize, u64)>) -> Vec<SeriesRow> {
        let mut rows = self.rows.clone();
        if now > self.interval_start {
            rows.extend(self.pending(now, partial));
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_per_active_flow_per_interval_with_bits_split_at_edges() {
        let mut s = SeriesAcc::new(4);
        s.tx(2, 1000);
        s.tx(0, 500);
        s.tx(2, 1000);
        s.drop(3);
        // Flow 1's packet of 100 bytes is in transmission: 300 of its bits left.
        s.close_interval(Time::from_secs(1), Some((1, 300)));
        s.mark(1);
        s.tx(1, 100);
        let rows = s.rows_at(Time::from_nanos(1_500_000_000), None);
        let view: Vec<_> = rows
            .iter()
            .map(|r| {
                let t = (r.start.as_nanos(), r.len.as_nanos());
                (t, r.flow, r.packets, r.bits, r.drops, r.marks)
            })
            .collect();
        let first = (0, 1_000_000_000);
        assert_eq!(
            view,
            vec![
                (first, 0, 1, 4000, 0, 0),
                (first, 1, 0, 300, 0, 0),
                (first, 2, 2, 16000, 0, 0),
                (first, 3, 0, 0, 1, 0),
                ((1_000_000_000, 500_000_000), 1, 1, 500, 0, 1),
            ]
        );
    }
}
