//! Counters frozen at the warm-up's end, packed: the report subtracts them once,
//! flow by flow in order, so they need not be kept at their in-memory size. Each
//! value is serialized with postcard, whose integers are variable-length (7 bits a
//! byte) and whose floats keep their 8 bytes, so nothing is rounded or cut and any
//! value reads back exactly; in bench/scale.py's 100,000-flow run (2 s of warm-up)
//! a TCP flow's counters take under 30 bytes instead of 144.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::marker::PhantomData;

/// Bytes a flow's counters take packed, for the memory estimate (`setup::memory`):
/// seven counters below 2^21 in 3 bytes each, two non-zero reasons in 3 and the
/// other nine in 1, the float's 8 bytes (under 30 in bench/scale.py's
/// 100,000-flow run).
pub(crate) const PACKED_FLOW_COUNTERS: u64 =
    7 * 3 + 2 * 3 + (aqm::DropReason::COUNT as u64 - 2) + 8;

/// Values of one type, serialized one after the other, read back in order.
pub struct Packed<T> {
    bytes: Box<[u8]>,
    len: usize,
    of: PhantomData<T>,
}

impl<T: Serialize> FromIterator<T> for Packed<T> {
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        let mut bytes = Vec::new();
        let mut len = 0;
        for v in values {
            bytes = postcard::to_extend(&v, bytes).expect("counters serialize into a Vec");
            len += 1;
        }
        Packed {
            bytes: bytes.into_boxed_slice(),
            len,
            of: PhantomData,
        }
    }
}

impl<T: DeserializeOwned> Packed<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        let mut rest = &self.bytes[..];
        (0..self.len).map(move |_| {
            let (v, after) = postcard::take_from_bytes(rest).expect("read back what was written");
            rest = after;
            v
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::FlowCounters;

    #[test]
    fn every_value_reads_back_exactly() {
        let edge = [0, 1, 127, 128, 16_383, 16_384, u64::MAX / 3, u64::MAX];
        let flows: Vec<FlowCounters> = edge
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let mut drops = [0; aqm::DropReason::COUNT];
                drops[i % drops.len()] = v;
                drops[drops.len() - 1] = u64::MAX - v;
                FlowCounters {
                    sent: v,
                    delivered: v / 2,
                    drops,
                    marks: !v,
                    retransmits: v.rotate_left(9),
                    timeouts: 0,
                    fast_recoveries: 1,
                    rtt_sum_s: if i == 0 { -0.0 } else { v as f64 / 7.0 },
                    rtt_samples: v.wrapping_mul(3),
                }
            })
            .collect();
        let packed: Packed<FlowCounters> = flows.iter().copied().collect();
        assert_eq!(packed.len(), flows.len());
        let back: Vec<FlowCounters> = packed.iter().collect();
        assert_eq!(back, flows);
        assert!(
            back[0].rtt_sum_s.is_sign_negative(),
            "the float's bits are kept"
        );

        let wide = [0u128, 1 << 64, u128::MAX];
        let p: Packed<u128> = wide.iter().copied().collect();
        assert_eq!(p.iter().collect::<Vec<_>>(), wide);
    }

    #[test]
    fn zero_counts_take_a_byte() {
        let p: Packed<FlowCounters> = std::iter::once(FlowCounters::default()).collect();
        // Seven counters and every reason in one byte each, the float's eight.
        assert_eq!(p.bytes.len(), 7 + aqm::DropReason::COUNT + 8);
    }

    #[test]
    fn the_memory_estimate_holds_for_counters_below_2_21() {
        let mut drops = [0; aqm::DropReason::COUNT];
        drops[2] = (1 << 21) - 1;
        drops[3] = (1 << 21) - 1;
        let c = FlowCounters {
            sent: (1 << 21) - 1,
            delivered: (1 << 21) - 1,
            drops,
            marks: (1 << 21) - 1,
            retransmits: (1 << 21) - 1,
            timeouts: (1 << 21) - 1,
            fast_recoveries: (1 << 21) - 1,
            rtt_sum_s: 1e9,
            rtt_samples: (1 << 21) - 1,
        };
        let p: Packed<FlowCounters> = std::iter::once(c).collect();
        assert_eq!(p.bytes.len() as u64, super::PACKED_FLOW_COUNTERS);
    }
}
