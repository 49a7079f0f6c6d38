//! Bad input is a clear error naming the key, never a panic, an abort or a queue
//! that silently does nothing (issue #16). For every key of every kind, values a
//! user might type by mistake: NaN, infinities, zero, negatives, huge numbers,
//! zero and huge durations. Each either fails to parse (a type error, which the
//! scenario loader reports with the key's line), or is rejected by `build` with a
//! message that names the key, or builds a qdisc that then carries traffic.

use aqm::{rng, FlowId, LinkInfo, Monitored, Packet, QdiscSpec, Rate, Time, VecSink};

const VALUES: &[&str] = &[
    "nan",
    "inf",
    "-inf",
    "0",
    "0.0",
    "-1",
    "-1.5",
    "1e300",
    "4294967295",
    "9223372036854775807",
    "\"0s\"",
    "\"1ns\"",
    "\"100000h\"",
    "\"0bps\"",
    "\"1bps\"",
];

#[test]
fn every_key_rejects_nonsense_by_name_or_runs() {
    let link = LinkInfo::new(Rate::from_mbps(10));
    let mut rejected = 0;
    for kind in QdiscSpec::KINDS {
        for key in QdiscSpec::keys(kind).unwrap() {
            for value in VALUES {
                let text = format!("kind = \"{kind}\"\n{key} = {value}");
                let Ok(spec) = toml::from_str::<QdiscSpec>(&text) else {
                    continue;
                };
                match spec.build(&link) {
                    Err(e) => {
                        rejected += 1;
                        let msg = e.to_string();
                        assert!(
                            msg.contains(canonical(key)),
                            "{kind}: `{key} = {value}` rejected without naming it: {msg}"
                        );
                    }
                    Ok(q) => carries_traffic(q, &text),
                }
            }
        }
    }
    assert!(rejected > 50, "only {rejected} rejections");
}

/// The name an error gives a key typed under one of its serde aliases.
fn canonical(key: &str) -> &str {
    match key {
        "t_update" => "tupdate",
        "drop_batch" => "drop_batch_size",
        other => other,
    }
}

/// A built qdisc takes and gives back packets without panicking, and does not
/// drop everything at an empty queue.
fn carries_traffic(q: aqm::AnyQdisc, text: &str) {
    let mut q = Monitored::new(q);
    let (mut rng, mut sink) = (rng::stream(2, 2), VecSink::default());
    let mut now = Time::ZERO;
    let mut out = 0;
    for i in 0..200u32 {
        q.enqueue(Packet::new(FlowId(i % 7), 1000), now, &mut rng, &mut sink);
        if i % 2 == 0 {
            out += q.dequeue(now, &mut rng, &mut sink).is_some() as u32;
        }
        now += aqm::Dur::from_micros(500);
    }
    assert!(out > 0, "{text}: nothing ever left the queue");
}

#[test]
fn nan_and_infinite_floats_are_rejected_by_name() {
    // Every float key, as the loop above finds them, must refuse NaN and
    // infinity: none of them means anything there.
    let link = LinkInfo::new(Rate::from_mbps(10));
    let mut floats = 0;
    for kind in QdiscSpec::KINDS {
        for key in QdiscSpec::keys(kind).unwrap() {
            for value in ["nan", "inf", "-inf"] {
                let text = format!("kind = \"{kind}\"\n{key} = {value}");
                if let Ok(spec) = toml::from_str::<QdiscSpec>(&text) {
                    floats += 1;
                    let e = spec.build(&link).unwrap_err();
                    assert_eq!(e.key, *key, "{text}: {e}");
                }
            }
        }
    }
    assert!(floats >= 3 * 25, "only {floats} float cases");
}
