//! # aqm: active queue management algorithms
//!
//! The algorithms of aqmlab, with no engine, no I/O, no clock and no `unsafe`: a
//! qdisc sees packets, the current time and a random stream, and nothing else, so
//! the same code runs in the simulator, in an emulator, and under a property test.
//!
//! ## Map
//! - [`qdisc`]: the contract: [`Qdisc`], [`Ctx`] (time, RNG, drop sink),
//!   [`Verdict`], [`Limit`], [`LinkInfo`], [`ParamError`].
//! - [`drop_reason`]: [`DropReason`], why a packet was dropped or marked.
//! - [`packet`]: [`Packet`], the small `Copy` struct queues hold by value.
//! - [`time`], [`units`]: integer-nanosecond [`Time`]/[`Dur`], [`Rate`], unit parsing.
//! - [`rng`]: the pinned generator and per-component streams.
//! - [`queue_counts`]: [`QueueCounts`], a queue's counters, the arithmetic of each
//!   call and ns-3's identities that check them (one type for every wrapper).
//! - [`monitored`]: [`Monitored`], the wrapper that counts and checks, for tests.
//! - [`any`]: [`QdiscSpec`] (a scenario's `[qdisc]` table) and [`AnyQdisc`].
//! - [`table_bytes`]: a qdisc's keyed tables, for a run's memory estimate.
//! - [`early_drop`]: what must happen before a qdisc drops early (RED's average
//!   above `min_th`, periods passed), for a scenario's checks of what cannot act.
//! - [`testing`]: a scripted driver for unit tests.
//! - [`parts`]: what several qdiscs share and none owns (as Linux's
//!   `include/net/red.h`): the RED core and its one parameter block, the FIFO
//!   admit tail, flow hashing, BLUE's probability step, the token bucket, the
//!   heavy-hitter set, CoDel's control law. A qdisc imports parts, never a qdisc.
//!
//! One qdisc per file, each registered in [`any`] (the list of kinds, and a
//! section each: `docs/qdiscs.md`); the fair-queueing family's class table and
//! buffer managers are in [`fq`] (Linux's `fq` qdisc is [`linux_fq`]). Adding a
//! qdisc is one new file (parameters with
//! `qdisc_params!` or `red_params!`, its [`QdiscParams`], its tests) and one line
//! in [`any`]'s registry (with its `pub mod` line here), its tables' size in
//! [`table_bytes`] and what it waits for before dropping early in [`early_drop`].
//!
//! ## Example
//! ```
//! use aqm::{Monitored, QdiscSpec, LinkInfo, Packet, FlowId, Rate, Time, VecSink, rng};
//! let spec: QdiscSpec = toml::from_str("kind = \"red\"\nmin_th = 5\nmax_th = 15").unwrap();
//! let mut q = Monitored::new(spec.build(&LinkInfo::new(Rate::from_mbps(10))).unwrap());
//! let (mut rng, mut sink) = (rng::stream(1, 0), VecSink::default());
//! q.enqueue(Packet::new(FlowId(0), 1000), Time::ZERO, &mut rng, &mut sink);
//! assert_eq!(q.dequeue(Time::ZERO, &mut rng, &mut sink).unwrap().size, 1000);
//! ```
#![deny(unsafe_code)]

pub mod afd;
pub mod any;
pub mod blue;
pub mod breathe;
pub mod cake;
pub mod choke;
pub mod codel;
pub mod drop_reason;
pub mod droptail;
pub mod drr;
pub mod dualpi2;
pub mod early_drop;
pub mod fq;
pub mod fq_codel;
pub mod fred;
pub mod htb;
pub mod linux_fq;
pub mod lru_red;
pub mod monitored;
pub mod mrul;
pub mod nlred;
pub mod packet;
pub mod parts;
pub mod pie;
pub mod prio;
pub mod qdisc;
pub mod queue_counts;
pub mod red;
pub mod rem;
pub mod rng;
pub mod sfb;
pub mod sfq;
pub mod sfred;
pub mod table_bytes;
pub mod testing;
pub mod time;
pub mod units;
pub mod wfq;

pub use any::{field_names, AnyQdisc, QdiscSpec};
pub use drop_reason::{DropReason, ReasonCounts};
pub use monitored::Monitored;
pub use packet::{Dscp, Ecn, FlowId, Packet};
pub use parts::fifo::PacketFifo;
pub use parts::heavy_hitters::HeavyHitters;
pub use qdisc::{
    Ctx, DropSink, FlowClass, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, VecSink, Verdict,
};
pub use queue_counts::QueueCounts;
pub use rng::Rng;
pub use time::{Dur, Time};
pub use units::{parse_dur, parse_rate, Rate, UnitError};
