//! A flow group's `ecn`, `variant` and `pacing` keys as a scenario writes them.

use crate::scenario::Scenario;
use aqm::Ecn;

fn scenario(flow: &str) -> Result<Scenario, String> {
    let text = format!(
        "name = \"e\"\nduration = \"2s\"\n\n[topology]\nkind = \"dumbbell\"\n\
         access = {{ rate = \"100Mbps\", delay = \"1ms\" }}\n\
         bottleneck = {{ rate = \"10Mbps\", delay = \"5ms\" }}\n\n\
         [qdisc]\nkind = \"dualpi2\"\n\n[[flows]]\nname = \"a\"\n{flow}\n"
    );
    Scenario::from_toml(&text, "s.toml").map_err(|e| e.to_string())
}

fn codepoint(flow: &str) -> Ecn {
    scenario(flow).unwrap().file.flows[0].get_ref().codepoint()
}

#[test]
fn ecn_chooses_the_codepoint_and_the_variant_gives_the_default() {
    assert_eq!(codepoint("kind = \"tcp\""), Ecn::NotEct);
    assert_eq!(codepoint("kind = \"tcp\"\necn = true"), Ecn::Ect);
    assert_eq!(codepoint("kind = \"tcp\"\necn = \"ect1\""), Ecn::Ect1);
    assert_eq!(
        codepoint("kind = \"cbr\"\nrate = \"1Mbps\"\necn = \"ect1\""),
        Ecn::Ect1
    );
    // DCTCP and Prague are ECN-capable unless told otherwise: ECT(0) and ECT(1).
    assert_eq!(codepoint("kind = \"tcp\"\nvariant = \"dctcp\""), Ecn::Ect);
    assert_eq!(codepoint("kind = \"tcp\"\nvariant = \"prague\""), Ecn::Ect1);
    assert_eq!(
        codepoint("kind = \"tcp\"\nvariant = \"prague\"\necn = true"),
        Ecn::Ect1
    );
    assert_eq!(
        codepoint("kind = \"tcp\"\nvariant = \"dctcp\"\necn = \"ect1\""),
        Ecn::Ect1
    );
    assert_eq!(
        codepoint("kind = \"tcp\"\nvariant = \"prague\"\necn = \"ect0\""),
        Ecn::Ect
    );
    let cfg = scenario("kind = \"tcp\"\nvariant = \"prague\"")
        .unwrap()
        .file
        .flows[0]
        .get_ref()
        .tcp_config();
    assert!(
        cfg.ecn == Ecn::Ect1 && cfg.pacing,
        "Prague paces by default"
    );
    let cfg = scenario("kind = \"tcp\"\nvariant = \"dctcp\"\npacing = true")
        .unwrap()
        .file
        .flows[0]
        .get_ref()
        .tcp_config();
    assert!(cfg.ecn == Ecn::Ect && cfg.pacing);
    let cfg = scenario("kind = \"tcp\"").unwrap().file.flows[0]
        .get_ref()
        .tcp_config();
    assert!(!cfg.pacing);
}

#[test]
fn bad_ecn_values_name_the_key_and_its_line() {
    let e = scenario("kind = \"tcp\"\necn = \"ect2\"").unwrap_err();
    assert!(e.starts_with("s.toml:15: flows[0].ecn"), "{e}");
    assert!(e.contains("\"ect0\" or \"ect1\""), "{e}");
    let e = scenario("kind = \"tcp\"\nvariant = \"dctcp\"\necn = false").unwrap_err();
    assert!(e.starts_with("s.toml:16:"), "{e}");
    assert!(e.contains("ecn = false: variant = \"dctcp\""), "{e}");
}

#[test]
fn ecn_written_back_is_what_was_read() {
    // The simulated value of a scenario (a sweep's identity of a run) keeps the
    // old spelling of `true` and `false`.
    let v = scenario("kind = \"tcp\"").unwrap().simulated();
    assert_eq!(v["flows"][0]["ecn"], serde_json::json!(false));
    let v = scenario("kind = \"tcp\"\necn = true").unwrap().simulated();
    assert_eq!(v["flows"][0]["ecn"], serde_json::json!(true));
    let v = scenario("kind = \"tcp\"\necn = \"ect1\"")
        .unwrap()
        .simulated();
    assert_eq!(v["flows"][0]["ecn"], serde_json::json!("ect1"));
}
