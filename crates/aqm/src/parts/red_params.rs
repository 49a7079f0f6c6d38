//! The one RED parameter block: the nine keys every RED-based qdisc has (`limit`,
//! `min_th`, `max_th`, `max_p`, `w_q`, `mean_pkt_size`, `wait`, `ecn`,
//! `qlen_gate`), declared, documented and validated here once, with ns-2's defaults as [`RedBlock::NS2`].
//!
//! How it joins a qdisc's own keys: `red_params!` writes the nine fields into the
//! qdisc's parameter struct, flat, ahead of its own, and adds `red()`, which gives
//! them back as a [`RedBlock`]. Each qdisc states only where its defaults differ:
//!
//! ```text
//! red_params! {
//!     pub struct ChokeParams {
//!         red_defaults: RedBlock { limit: 300, min_th: 100.0, max_th: 200.0, ..RedBlock::NS2 },
//!         /// m, the number of drop candidates.
//!         candidates: u32 = 1,
//!     }
//! }
//! ```
//!
//! Why a macro and not a nested struct: a scenario writes the keys flat
//! (`min_th = 100` inside `[qdisc]`), unknown keys must stay errors, and serde's
//! `flatten` cannot be combined with `deny_unknown_fields`. A macro keeps one flat
//! struct with derived serde, so the format, the unknown-key errors and the type
//! errors (which name the key) are exactly serde's, and code that builds the
//! parameters field by field keeps working.

use crate::qdisc::{check, ParamError};

/// RED's shared parameters as one value. Thresholds are average queue lengths in
/// packets (of `mean_pkt_size` bytes where a qdisc measures bytes).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RedBlock {
    /// Capacity in packets.
    pub limit: u32,
    /// Below this average there are no early drops.
    pub min_th: f64,
    /// Where the drop probability reaches `max_p` (the curve's end).
    pub max_th: f64,
    /// The drop probability at `max_th`.
    pub max_p: f64,
    /// The EWMA weight of the average queue.
    pub w_q: f64,
    /// Bytes of a mean packet: the idle-time decay's packet time, byte mode's unit.
    pub mean_pkt_size: u32,
    /// ns-2's `wait` in the count spacing of early drops.
    pub wait: bool,
    /// CE-mark ECN-capable packets instead of dropping them early.
    pub ecn: bool,
    /// ns-2's `qlen > 1` rule: no drop or mark by the average while at most one
    /// packet is queued ahead of the arrival ([`RedRegion::gated`]).
    ///
    /// [`RedRegion::gated`]: crate::parts::red::RedRegion::gated
    pub qlen_gate: bool,
}

impl RedBlock {
    /// ns-2's RED: `thresh_ = 5`, `maxthresh_ = 15`, `linterm_ = 10` (max_p 0.1),
    /// `q_weight_ = 0.002`, `mean_pktsize_ = 500`, `wait_ = true`, no ECN, the
    /// `qlen > 1` rule of its `enque`; and Linux's `limit` of 1000 packets.
    pub const NS2: RedBlock = RedBlock {
        limit: 1000,
        min_th: 5.0,
        max_th: 15.0,
        max_p: 0.1,
        w_q: 0.002,
        mean_pkt_size: 500,
        wait: true,
        ecn: false,
        qlen_gate: true,
    };

    /// The CHOKe paper's single-link simulation (seed 002, section III-A): 300
    /// packets of 1 KB, `min_th = 100`, `max_th = 2 min_th`; ns-2's RED otherwise
    /// (the paper gives no max_p or w_q; ns-2 was its simulator). BREATHe's paper
    /// (001) runs on the same topology and buffer.
    pub const CHOKE_SINGLE_LINK: RedBlock = RedBlock {
        limit: 300,
        min_th: 100.0,
        max_th: 200.0,
        mean_pkt_size: 1000,
        ..RedBlock::NS2
    };

    /// The per-queue RED of the SFB paper's SFQ+RED comparison (seed 000, section
    /// III-B): `min_th` 2 KB and `max_th` 8 KB at its 1000-byte packets, i.e. 2 and
    /// 8 packets; ns-2's RED otherwise. SFRED was compared in the same setup.
    pub const SFB_PAPER_PER_BIN: RedBlock = RedBlock {
        min_th: 2.0,
        max_th: 8.0,
        mean_pkt_size: 1000,
        ..RedBlock::NS2
    };

    /// A small queue whose average crosses both thresholds within a few packets
    /// (w_q 0.3): the RED block of the property tests' configurations.
    pub const TINY: RedBlock = RedBlock {
        limit: 12,
        min_th: 2.0,
        max_th: 6.0,
        w_q: 0.3,
        ..RedBlock::NS2
    };

    /// This block with another `limit`.
    pub const fn with_limit(self, limit: u32) -> RedBlock {
        RedBlock { limit, ..self }
    }

    /// RED's rules, with messages that name the key
    /// (`min_th = 200 must be below max_th = 100`).
    pub fn validate(&self) -> Result<(), ParamError> {
        check::limit("limit", self.limit)?;
        check::finite("min_th", self.min_th)?;
        check::finite("max_th", self.max_th)?;
        check::at_least("min_th", self.min_th, 0.0)?;
        check::below("min_th", self.min_th, "max_th", self.max_th)?;
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(ParamError::new("max_p", self.max_p, "must be in (0, 1]"));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(ParamError::new("w_q", self.w_q, "must be in (0, 1]"));
        }
        check::at_least("mean_pkt_size", self.mean_pkt_size, 1)
    }
}

/// Declares a RED-based qdisc's parameters: RED's nine keys (defaults from the
/// `red_defaults:` [`RedBlock`]) and then the qdisc's own, as `qdisc_params!` does.
macro_rules! red_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            red_defaults: $red:expr,
            $($own:tt)*
        }
    ) => {
        $crate::parts::params::qdisc_params! {
            $(#[$meta])*
            pub struct $name {
                /// Capacity in packets.
                limit: u32 = ($red).limit,
                /// Average queue (packets) below which nothing is dropped early.
                min_th: f64 = ($red).min_th,
                /// Average queue (packets) at which the drop probability reaches max_p.
                max_th: f64 = ($red).max_th,
                /// RED's drop probability at max_th.
                max_p: f64 = ($red).max_p,
                /// EWMA weight of the average queue.
                w_q: f64 = ($red).w_q,
                /// Bytes of a mean packet, for the idle-time decay of the average.
                mean_pkt_size: u32 = ($red).mean_pkt_size,
                /// RED's count spacing of drops with ns-2's `wait`.
                wait: bool = ($red).wait,
                /// CE-mark ECN-capable packets instead of dropping them early.
                ecn: bool = ($red).ecn,
                /// ns-2's `qlen > 1` rule: no drop by the average while at most one
                /// packet is queued; false is Linux's RED, which has no such rule.
                qlen_gate: bool = ($red).qlen_gate,
                $($own)*
            }
        }

        impl $name {
            /// These parameters with RED's nine keys taken from `red`.
            pub fn with_red(self, red: $crate::parts::red_params::RedBlock) -> Self {
                $name {
                    limit: red.limit,
                    min_th: red.min_th,
                    max_th: red.max_th,
                    max_p: red.max_p,
                    w_q: red.w_q,
                    mean_pkt_size: red.mean_pkt_size,
                    wait: red.wait,
                    ecn: red.ecn,
                    qlen_gate: red.qlen_gate,
                    ..self
                }
            }

            /// RED's nine keys as one block.
            pub fn red(&self) -> $crate::parts::red_params::RedBlock {
                $crate::parts::red_params::RedBlock {
                    limit: self.limit,
                    min_th: self.min_th,
                    max_th: self.max_th,
                    max_p: self.max_p,
                    w_q: self.w_q,
                    mean_pkt_size: self.mean_pkt_size,
                    wait: self.wait,
                    ecn: self.ecn,
                    qlen_gate: self.qlen_gate,
                }
            }
        }
    };
}
pub(crate) use red_params;

#[cfg(test)]
mod tests {
    use super::*;

    red_params! {
        /// A qdisc of RED's keys and one more.
        pub struct Probe {
            red_defaults: RedBlock { limit: 30, ..RedBlock::NS2 },
            /// Its own key.
            extra: u32 = 7,
        }
    }

    #[test]
    fn the_block_parses_flat_keys_with_defaults_and_rejects_unknown_ones() {
        let p: Probe = toml::from_str("min_th = 2\nextra = 3").unwrap();
        assert_eq!(
            p.red(),
            RedBlock {
                limit: 30,
                min_th: 2.0,
                ..RedBlock::NS2
            }
        );
        assert_eq!(p.extra, 3);
        assert_eq!(Probe::default().red().limit, 30);
        let tiny = Probe {
            extra: 9,
            ..Default::default()
        }
        .with_red(RedBlock::TINY);
        assert_eq!((tiny.red(), tiny.extra), (RedBlock::TINY, 9));
        let e = toml::from_str::<Probe>("min_thresh = 2").unwrap_err();
        assert!(e.to_string().contains("unknown field `min_thresh`"), "{e}");
        let e = toml::from_str::<Probe>("max_th = \"x\"").unwrap_err();
        assert!(e.to_string().contains("max_th"), "{e}");
    }

    #[test]
    fn core_parameters_are_checked_by_name() {
        let bad = |b: RedBlock| b.validate().unwrap_err().to_string();
        assert_eq!(
            bad(RedBlock {
                min_th: 5.0,
                max_th: 5.0,
                ..RedBlock::NS2
            }),
            "min_th = 5 must be below max_th = 5"
        );
        assert!(bad(RedBlock {
            max_p: 0.0,
            ..RedBlock::NS2
        })
        .starts_with("max_p"));
    }
}
