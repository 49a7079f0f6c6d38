//! CoDel: Controlled Delay (Nichols & Jacobson, *Controlling Queue Delay*, ACM
//! Queue 2012; RFC 8289), as Linux `net/sched/sch_codel.c` runs it.
//!
//! A FIFO of at most `limit` packets whose AQM acts at dequeue, on each packet's
//! sojourn time (now minus `enqueued_at`). While the sojourn stays below `target`
//! nothing happens. Once it has stayed at or above `target` for a whole
//! `interval`, CoDel enters the dropping state: it drops the packet at hand and
//! schedules the next drop `interval / sqrt(count)` later, `count` growing by one
//! per drop, until a packet comes out with a sojourn below `target`. The control
//! law, the Newton step for `1/sqrt(count)` and the rule that re-uses the last
//! drop rate when the dropping state is re-entered soon after it was left live in
//! [`crate::parts::codel`] (Linux's `codel_impl.h`), which `fq_codel` shares.
//!
//! With `ecn`, ECN-capable packets are CE-marked instead of dropped (`sojourn`
//! marks); `ce_threshold` CE-marks every ECN-capable packet whose sojourn exceeds
//! it, whatever the state (Linux's `ce_threshold`, for DCTCP-style senders). A
//! backlog of at most `mtu` bytes after the dequeue is never dropped from (one
//! packet in the queue is not a standing queue). The time CoDel sees is the `now`
//! of each dequeue: as in Linux there is no timer of its own.
//!
//! Defaults are Linux's (`tc qdisc add ... codel`): `limit = 1000` packets,
//! `target = 5ms`, `interval = 100ms`, `ecn = false`, no `ce_threshold`, and `mtu
//! = 1514` (Linux's `psched_mtu` of an Ethernet device: 1500 + 14). Where aqmlab
//! differs from Linux (nanosecond time, no double counting of marks) is said in
//! `parts::codel`.

use crate::drop_reason::DropReason;
use crate::packet::Packet;
use crate::parts::codel::{self as codel_core, CodelConfig, CodelStats, CodelVars};
use crate::parts::fifo::PacketFifo;
use crate::qdisc::{check, Ctx, Limit, LinkInfo, ParamError, Qdisc, QdiscParams, Verdict};
use crate::time::Dur;
use serde::{Deserialize, Serialize};

/// CoDel parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CodelParams {
    /// Capacity in packets. Default 1000 (Linux).
    pub limit: u32,
    /// Acceptable standing sojourn time. Default 5 ms (RFC 8289, Linux).
    pub target: Dur,
    /// Time the sojourn must stay above target before dropping starts; the base of
    /// the drop spacing. Default 100 ms (RFC 8289, Linux).
    pub interval: Dur,
    /// CE-mark ECN-capable packets instead of dropping them. Default false (Linux).
    pub ecn: bool,
    /// CE-mark ECN-capable packets whose sojourn exceeds this. Default off (Linux).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<Dur>,
    /// No drop while the backlog is at most this many bytes. Default 1514 (Linux's
    /// `psched_mtu` for Ethernet).
    pub mtu: u32,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            limit: 1000,
            target: Dur::from_millis(5),
            interval: Dur::from_millis(100),
            ecn: false,
            ce_threshold: None,
            mtu: 1514,
        }
    }
}

impl QdiscParams for CodelParams {
    type Qdisc = Codel;
    fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        self.config().validate()
    }
    fn build(&self, _link: &LinkInfo) -> Result<Codel, ParamError> {
        Codel::new(self.clone())
    }
    fn property_configs() -> Vec<Self> {
        let ms = Dur::from_millis;
        vec![
            CodelParams {
                limit: 6,
                target: ms(1),
                interval: ms(5),
                mtu: 0,
                ..Default::default()
            },
            CodelParams {
                limit: 8,
                target: ms(1),
                interval: ms(3),
                ecn: true,
                ce_threshold: Some(ms(2)),
                mtu: 500,
            },
        ]
    }
}

impl CodelParams {
    /// The control law's view of these parameters.
    pub fn config(&self) -> CodelConfig {
        CodelConfig {
            target: self.target,
            interval: self.interval,
            ce_threshold: self.ce_threshold,
            mtu: self.mtu as u64,
            ecn: self.ecn,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Codel {
    params: CodelParams,
    config: CodelConfig,
    queue: PacketFifo,
    vars: CodelVars,
    stats: CodelStats,
}

impl Codel {
    pub fn new(params: CodelParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Codel {
            config: params.config(),
            queue: PacketFifo::new(),
            vars: CodelVars::default(),
            stats: CodelStats::default(),
            params,
        })
    }

    /// The control law's state (count, dropping, next drop time, ...).
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }

    /// Linux's `codel` statistics: control-law drops, ECN marks, CE-threshold marks.
    pub fn stats(&self) -> &CodelStats {
        &self.stats
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) -> Verdict {
        if self.queue.len() < self.params.limit as usize {
            self.queue.push_back(pkt);
            Verdict::Queued
        } else {
            ctx.drop(pkt, DropReason::Overflow);
            Verdict::Dropped
        }
    }

    fn dequeue(&mut self, ctx: &mut Ctx<'_>) -> Option<Packet> {
        codel_core::dequeue(
            &mut self.queue,
            &self.config,
            &mut self.vars,
            &mut self.stats,
            ctx,
        )
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
    fn bytes(&self) -> u64 {
        self.queue.bytes()
    }
    fn limit(&self) -> Limit {
        Limit::Packets(self.params.limit)
    }
}

impl crate::early_drop::EarlyDropRule for CodelParams {
    fn early_drop(&self) -> crate::early_drop::EarlyDrop {
        use crate::early_drop::EarlyDrop;
        EarlyDrop::After(vec![("interval", self.interval)])
    }
}

#[cfg(test)]
mod tests;
