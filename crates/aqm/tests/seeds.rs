//! A run's seed must seed every random choice unless the scenario pins it (issue
//! #16): every hashed qdisc (a kind with a `hash_seed` key) keys its hashes with
//! the link's seed, which the engine derives from the run's, unless `hash_seed`
//! is given. Checked through the registry on the same scripted overload, so a
//! qdisc added later is held to it too.

use aqm::{rng, Ecn, FlowId, LinkInfo, Monitored, Packet, QdiscSpec, Rate, Time, VecSink};

/// What the qdisc did with an overload of 64 flows: the flows in departure order
/// and the dropped packets' tags.
fn trace(spec: &QdiscSpec, link: &LinkInfo) -> (Vec<u32>, Vec<u32>) {
    let mut q = Monitored::new(spec.build(link).unwrap());
    let (mut rng, mut sink) = (rng::stream(3, 3), VecSink::default());
    let mut now = Time::ZERO;
    let mut departed = Vec::new();
    for step in 0..20_000u32 {
        for k in 0..3 {
            let mut p = Packet::new(FlowId((step * 3 + k) % 64), 1000);
            p.tag = step * 3 + k;
            // DualPI2 hashes only the L queue's flows (queue protection).
            if spec.kind() == "dualpi2" {
                p.ecn = Ecn::Ect1;
            }
            q.enqueue(p, now, &mut rng, &mut sink);
        }
        if let Some(p) = q.dequeue(now, &mut rng, &mut sink) {
            departed.push(p.flow.0);
        }
        now += aqm::Dur::from_micros(800);
    }
    let drops = sink.drops.iter().map(|(p, _)| p.tag).collect();
    (departed, drops)
}

fn hashed_kinds() -> Vec<&'static str> {
    QdiscSpec::KINDS
        .iter()
        .copied()
        .filter(|k| QdiscSpec::keys(k).unwrap().contains(&"hash_seed"))
        .collect()
}

fn spec(kind: &str, extra: &str) -> QdiscSpec {
    toml::from_str(&format!("kind = \"{kind}\"\n{extra}")).unwrap()
}

#[test]
fn the_links_seed_moves_the_hashes_unless_hash_seed_is_pinned() {
    let kinds = hashed_kinds();
    assert_eq!(
        kinds,
        ["sfb", "sfred", "sfq", "fq_codel", "dualpi2", "cake"]
    );
    let rate = Rate::from_mbps(10);
    for kind in kinds {
        // Small tables, so that which flows share a bin decides what happens.
        let extra = match kind {
            "sfq" => "divisor = 16",
            "fq_codel" => "flows = 8\nset_ways = 2\nlimit = 40",
            // 1024 queues: the hash decides which of equal queues is fattest.
            "cake" => "limit = 40",
            // Two buckets: which flows own one decides who is sanctioned.
            "dualpi2" => "queue_protection = true\nqp_bucket_bits = 1\nqp_attempts = 1",
            _ => "bins = 8",
        };
        let free = spec(kind, extra);
        let one = trace(&free, &LinkInfo::with_seed(rate, 1));
        let two = trace(&free, &LinkInfo::with_seed(rate, 2));
        assert_ne!(one, two, "{kind}: seeds 1 and 2 hash alike");
        assert_eq!(one, trace(&free, &LinkInfo::with_seed(rate, 1)), "{kind}");
        // LinkInfo::new is seed 0, what an unpinned hash_seed meant before.
        let zero = trace(
            &spec(kind, &format!("{extra}\nhash_seed = 0")),
            &LinkInfo::new(rate),
        );
        assert_eq!(trace(&free, &LinkInfo::new(rate)), zero, "{kind}");
        // Pinned: the link's seed no longer matters.
        let pinned = spec(kind, &format!("{extra}\nhash_seed = 5"));
        assert_eq!(
            trace(&pinned, &LinkInfo::with_seed(rate, 1)),
            trace(&pinned, &LinkInfo::with_seed(rate, 2)),
            "{kind}: a pinned hash_seed still follows the link"
        );
    }
}
