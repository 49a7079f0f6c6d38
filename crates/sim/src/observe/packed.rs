//! Counters frozen at the warm-up's end, packed: the report subtracts them once,
//! flow by flow in order, so they need not be kept at their in-memory size. A
//! counter is a variable-length integer (LEB128: 7 bits a byte), an array of
//! counters a bitmask of its non-zero entries and then those entries, a float its
//! 8 bytes. Nothing is rounded or cut, so any value reads back exactly; in
//! bench/scale.py's 100,000-flow run (2 s of warm-up) a TCP flow's counters take
//! 17 bytes instead of 144, and a monitored link's share of a flow 4 instead of 32.

use std::marker::PhantomData;

/// A value that writes itself to bytes and reads itself back.
pub trait Pack: Sized {
    fn pack(&self, out: &mut Vec<u8>);
    /// Reads a value [`Pack::pack`] wrote at the start of `inp`, and moves `inp`
    /// past it.
    fn unpack(inp: &mut &[u8]) -> Self;
}

fn put_varint(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(inp: &mut &[u8]) -> u128 {
    let mut v = 0u128;
    let mut shift = 0;
    loop {
        let (&b, rest) = inp.split_first().expect("a packed value is complete");
        *inp = rest;
        v |= u128::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

impl Pack for u64 {
    fn pack(&self, out: &mut Vec<u8>) {
        put_varint(out, u128::from(*self));
    }
    fn unpack(inp: &mut &[u8]) -> Self {
        get_varint(inp) as u64
    }
}

impl Pack for u128 {
    fn pack(&self, out: &mut Vec<u8>) {
        put_varint(out, *self);
    }
    fn unpack(inp: &mut &[u8]) -> Self {
        get_varint(inp)
    }
}

impl Pack for f64 {
    fn pack(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    fn unpack(inp: &mut &[u8]) -> Self {
        let (b, rest) = inp
            .split_first_chunk::<8>()
            .expect("a packed f64 is complete");
        *inp = rest;
        f64::from_bits(u64::from_le_bytes(*b))
    }
}

/// Counts by reason: most are zero for most flows, so only the non-zero ones are
/// written, after a mask saying which.
impl<const N: usize> Pack for [u64; N] {
    fn pack(&self, out: &mut Vec<u8>) {
        const { assert!(N <= 128) };
        let mask = self
            .iter()
            .enumerate()
            .filter(|(_, &c)| c != 0)
            .fold(0u128, |m, (i, _)| m | 1 << i);
        put_varint(out, mask);
        for &c in self.iter().filter(|&&c| c != 0) {
            c.pack(out);
        }
    }
    fn unpack(inp: &mut &[u8]) -> Self {
        let mask = get_varint(inp);
        std::array::from_fn(|i| {
            if mask >> i & 1 == 1 {
                u64::unpack(inp)
            } else {
                0
            }
        })
    }
}

impl<T: Pack> Pack for Vec<T> {
    fn pack(&self, out: &mut Vec<u8>) {
        put_varint(out, self.len() as u128);
        for x in self {
            x.pack(out);
        }
    }
    fn unpack(inp: &mut &[u8]) -> Self {
        let n = get_varint(inp) as usize;
        (0..n).map(|_| T::unpack(inp)).collect()
    }
}

impl Pack for aqm::QueueCounts {
    fn pack(&self, out: &mut Vec<u8>) {
        for c in [
            self.received,
            self.queued,
            self.dequeued,
            self.dequeued_bytes,
            self.arrivals_dropped,
            self.victims,
        ] {
            c.pack(out);
        }
        self.drops.pack(out);
        self.marks.pack(out);
    }
    fn unpack(inp: &mut &[u8]) -> Self {
        aqm::QueueCounts {
            received: u64::unpack(inp),
            queued: u64::unpack(inp),
            dequeued: u64::unpack(inp),
            dequeued_bytes: u64::unpack(inp),
            arrivals_dropped: u64::unpack(inp),
            victims: u64::unpack(inp),
            drops: Pack::unpack(inp),
            marks: Pack::unpack(inp),
        }
    }
}

/// A sequence of values packed one after another, read back in order.
pub struct Packed<T> {
    bytes: Box<[u8]>,
    len: usize,
    of: PhantomData<T>,
}

impl<T: Pack> FromIterator<T> for Packed<T> {
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        let mut bytes = Vec::new();
        let mut len = 0;
        for v in values {
            v.pack(&mut bytes);
            len += 1;
        }
        Packed {
            bytes: bytes.into_boxed_slice(),
            len,
            of: PhantomData,
        }
    }
}

impl<T: Pack> Packed<T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The values in the order they were packed.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        let mut rest = &self.bytes[..];
        (0..self.len).map(move |_| T::unpack(&mut rest))
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
        // Seven counters and the reason mask of one byte each, the float's eight.
        assert_eq!(p.bytes.len(), 8 + 8);
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
        assert_eq!(
            p.bytes.len() as u64,
            crate::build::memory::PACKED_FLOW_COUNTERS
        );
    }
}
