//! Memory follows the traffic, not the parameters (issue #16: CHOKe allocated its
//! whole queue up front, and `limit = 1e8` or `candidates = 4294967295` aborted
//! the process). A counting allocator measures what each kind allocates when
//! built with the largest `limit` it accepts, and then while it holds packets.

use aqm::{rng, FlowId, LinkInfo, Monitored, Packet, QdiscSpec, Rate, Time, VecSink};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the bytes this thread allocates (tests run on several threads).
struct Counting;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.with(|a| a.set(a.get() + layout.size()));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.with(|a| a.set(a.get() + new_size));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocated() -> usize {
    ALLOCATED.with(|a| a.get())
}

#[test]
fn no_kind_allocates_for_its_limit_before_packets_arrive() {
    let link = LinkInfo::new(Rate::from_mbps(10));
    for kind in QdiscSpec::KINDS {
        let text = format!(
            "kind = \"{kind}\"\nlimit = {}",
            aqm::qdisc::check::MAX_LIMIT
        );
        let spec: QdiscSpec = toml::from_str(&text).unwrap();
        let before = allocated();
        let mut q = Monitored::new(spec.build(&link).unwrap());
        let built = allocated() - before;
        // What a kind needs whatever its limit: SFQ's 1024 bins are the most.
        assert!(
            built < 256 << 10,
            "{kind}: {built} bytes allocated when built"
        );
        // A thousand packets of distinct flows cost a few hundred bytes each; the
        // per-flow queues (wfq, drr) add a class each, under a KiB with the
        // growth of their tables (this counts every allocation, freed or not).
        let (mut rng, mut sink) = (rng::stream(1, 1), VecSink::default());
        let before = allocated();
        for i in 0..1_000 {
            q.enqueue(
                Packet::new(FlowId(i), 1000),
                Time::ZERO,
                &mut rng,
                &mut sink,
            );
        }
        let held = allocated() - before;
        assert!(held < 1_000 * 1024, "{kind}: {held} bytes for 1000 packets");
    }
}

#[test]
fn limits_and_tables_that_cannot_fit_are_errors_that_name_the_key() {
    let link = LinkInfo::new(Rate::from_mbps(10));
    let cases = [
        (
            "droptail",
            "limit = 4294967295",
            "limit = 4294967295 must be at most 16777216 packets",
        ),
        (
            "choke",
            "limit = 100000000",
            "limit = 100000000 must be at most 16777216 packets",
        ),
        (
            "choke",
            "candidates = 4294967295",
            "candidates = 4294967295 must be at most limit",
        ),
        (
            "sfq",
            "limit = 16777217",
            "limit = 16777217 must be at most 16777216 packets",
        ),
        (
            "sfq",
            "divisor = 4294967295",
            "divisor = 4294967295 must be at most 65536",
        ),
        (
            "sfb",
            "bins = 4294967295",
            "bins = 4294967295 times levels = 2 must be at most",
        ),
        ("sfb", "levels = 1000", "levels = 1000 must be at most 32"),
        (
            "sfred",
            "bins = 2000000",
            "bins = 2000000 times levels = 2 must be at most",
        ),
        (
            "breathe",
            "counters = 4294967295",
            "counters = 4294967295 gives K = 4294967295",
        ),
        (
            "mrul",
            "list_size = 4294967295",
            "list_size = 4294967295 must be at most",
        ),
        (
            "lru_red",
            "list_size = 4294967295",
            "list_size = 4294967295 must be at most",
        ),
    ];
    for (kind, line, want) in cases {
        let spec: QdiscSpec = toml::from_str(&format!("kind = \"{kind}\"\n{line}")).unwrap();
        let before = allocated();
        let e = spec.build(&link).unwrap_err().to_string();
        assert!(e.starts_with(want), "{kind} {line}: {e}");
        assert!(
            allocated() - before < 1 << 20,
            "{kind} {line}: allocated before failing"
        );
    }
}
