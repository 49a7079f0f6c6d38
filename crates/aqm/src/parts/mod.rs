//! Parts: what several qdiscs share, owned by none of them, as Linux keeps
//! `include/net/red.h` and `codel_impl.h` apart from the `sch_*.c` files. A qdisc
//! file imports parts and never another qdisc file.
//!
//! - [`params`]: `qdisc_params!`, how a qdisc declares its keys with their
//!   defaults, each written once.
//! - [`red_params`]: the one RED parameter block, [`RedBlock`](red_params::RedBlock),
//!   and `red_params!`, which gives a RED-based qdisc RED's eight keys.
//! - [`red`]: RED's core: the average with the idle-time correction, `count`
//!   spacing, the drop curves (linear, gentle, NLRED's quadratic), the action on
//!   an arrival, adaptive max_p.
//! - [`red_queue`]: [`RedQueue`](red_queue::RedQueue), RED over one FIFO: the
//!   average, `count` and the queue of RED, NLRED, CHOKe, BREATHe and MRUL.
//! - [`fifo`]: [`PacketFifo`](fifo::PacketFifo) and
//!   [`LimitedQueue`](fifo::LimitedQueue), the admit-or-overflow tail.
//! - [`flow_hash`]: the keyed flow hash and its keys (SFB, SFRED, SFQ).
//! - [`blue_probability`]: BLUE's probability step (BLUE, SFB's bins).
//! - [`token_bucket`]: SFB's rate limiter.
//! - [`heavy_hitters`]: the O(1) frequent-elements set (BREATHe).
//! - [`recency_list`]: a bounded list of recently seen flows with aged per-flow
//!   counters (MRUL's list, LRU-RED's cache).
//! - [`cobalt`]: COBALT, CoDel's control law with a decaying count plus BLUE
//!   for unresponsive flows, in Linux's fixed point (CAKE).
//! - [`queue_protection`]: RFC 9957's per-flow queuing scores that sanction
//!   flows building a queue in a low-latency queue (DualPI2's `queue_protection`).
//! - [`tree`]: what the class-based qdiscs (HTB, prio) share: `tc` class ids,
//!   filters by flow group and DSCP, leaves of any kind, Linux's TOS priority.
//! - [`codel`]: CoDel's control law (Linux's integer Newton step) and dequeue
//!   state machine (CoDel, FQ-CoDel).

pub mod blue_probability;
pub mod cobalt;
pub mod codel;
pub mod fifo;
pub mod flow_hash;
pub mod heavy_hitters;
pub mod params;
pub mod queue_protection;
pub mod recency_list;
pub mod red;
pub mod red_params;
pub mod red_queue;
pub mod token_bucket;
pub mod tree;
