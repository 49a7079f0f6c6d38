//! What a qdisc keeps beyond its packets in tables sized by one of its keys, for a
//! run's memory estimate before anything is built: FQ-CoDel's flow queues
//! (`flows`), SFQ's bins (`divisor`), SFB's and SFRED's bins (`levels` x `bins`),
//! AFD's shadow buffer (`shadow`), BREATHe's counters (`counters`, or the link rate
//! over `rate_limit`), MRUL's and LRU-RED's lists (`list_size`) and FRED's per-flow
//! state (a flow with a packet queued, so at most `limit`).
//!
//! Each is bounded when the parameters validate, and counted here at that bound from
//! the parameters alone. Tables that grow (a list, a hash map) are counted full; a
//! hash map at twice its entries' size (its load factor and power-of-two growth).
//! The packets the qdisc holds are counted by the caller, from `limit`.

use crate::qdisc::LinkInfo;
use std::mem::size_of;

/// A qdisc's tables sized by `key` (whose value is `value`), `bytes` in all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyedTable {
    pub key: &'static str,
    pub value: String,
    pub bytes: u64,
}

/// Parameters whose qdisc keeps tables sized by one of its keys.
pub trait TableBytes {
    /// The tables the qdisc these parameters build keeps on a link of `link`'s
    /// rate, at their largest; `None` when it keeps none sized by a key.
    fn table_bytes(&self, link: &LinkInfo) -> Option<KeyedTable>;
}

/// `n` values of `T`.
pub(crate) fn vec_bytes<T>(n: u64) -> u64 {
    n.saturating_mul(size_of::<T>() as u64)
}

/// A hash map of at most `n` entries of `K` to `V` at its largest.
pub(crate) fn map_bytes<K, V>(n: u64) -> u64 {
    n.saturating_mul(2 * (size_of::<K>() + size_of::<V>() + 1) as u64)
}

/// Qdiscs that keep no table sized by a key (their state is a few numbers, or
/// grows with their packets, or with the flows routed over the link).
macro_rules! no_tables {
    ($($t:ty),* $(,)?) => {$(
        impl TableBytes for $t {
            fn table_bytes(&self, _: &LinkInfo) -> Option<KeyedTable> {
                None
            }
        }
    )*};
}

no_tables!(
    crate::droptail::DropTailParams,
    crate::red::RedParams,
    crate::blue::BlueParams,
    crate::choke::ChokeParams,
    crate::nlred::NlredParams,
    crate::codel::CodelParams,
    crate::pie::PieParams,
    crate::rem::RemParams,
    crate::fq::FqParams,
    crate::dualpi2::DualPi2Params,
    crate::linux_fq::FqParams,
);

#[cfg(test)]
mod tests {
    use crate::any::QdiscSpec;
    use crate::qdisc::LinkInfo;
    use crate::units::Rate;

    /// Each keyed table grows with its key, by at least a byte per entry.
    #[test]
    fn every_keyed_table_grows_with_its_key() {
        let link = LinkInfo::new(Rate::from_bps(10_000_000_000));
        let spec = |text: &str| -> QdiscSpec { toml::from_str(text).unwrap() };
        let cases = [
            ("fq_codel", "flows"),
            ("sfq", "divisor"),
            ("sfb", "bins"),
            ("sfred", "bins"),
            ("afd", "shadow"),
            ("breathe", "counters"),
            ("mrul", "list_size"),
            ("lru_red", "list_size"),
            ("fred", "limit"),
        ];
        for (kind, key) in cases {
            let small = spec(&format!("kind = \"{kind}\"\n{key} = 16\n"));
            let big = spec(&format!("kind = \"{kind}\"\n{key} = 16384\n"));
            let (s, b) = (small.table_bytes(&link), big.table_bytes(&link));
            let (s, b) = (s.expect(kind), b.expect(kind));
            assert_eq!((s.key, b.key), (key, key), "{kind}");
            assert!(b.bytes >= s.bytes + (16384 - 16), "{kind}: {s:?} {b:?}");
        }
        for kind in ["droptail", "red", "codel", "pie", "wfq", "dualpi2"] {
            assert_eq!(spec(&format!("kind = \"{kind}\"")).table_bytes(&link), None);
        }
    }
}
