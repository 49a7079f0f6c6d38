//! A log of every drop and ECN mark at any queue: when, where, whose packet and
//! why. Off unless `[monitor] events = true`; it stops at `max_events` entries
//! (and the results say so) so that a long overloaded run cannot exhaust memory.

use aqm::{DropReason, Time};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueueEvent {
    pub at: Time,
    pub link: u32,
    pub flow: u32,
    pub reason: DropReason,
    /// A CE mark rather than a drop.
    pub mark: bool,
}

pub struct EventLog {
    pub events: Vec<QueueEvent>,
    pub max: u64,
    /// Events that happened after the log was full.
    pub missed: u64,
}

impl EventLog {
    pub fn new(max: u64) -> Self {
        EventLog {
            events: Vec::new(),
            max,
            missed: 0,
        }
    }

    #[inline]
    pub fn push(&mut self, e: QueueEvent) {
        if (self.events.len() as u64) < self.max {
            self.events.push(e);
        } else {
            self.missed += 1;
        }
    }
}
