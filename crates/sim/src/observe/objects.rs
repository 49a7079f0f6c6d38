//! The transfer time of every web object: from the moment the object may start
//! (the flow's start, or the end of the think time before it) to the ACK of its last
//! packet at the sender. Objects that start during the warm-up are left out, as is
//! one still in transfer when the run ends.

use aqm::Time;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ObjectDone {
    pub flow: u32,
    pub start: Time,
    pub end: Time,
    /// Packets in the object.
    pub packets: u32,
}

#[derive(Default)]
pub struct Objects {
    pub done: Vec<ObjectDone>,
}
