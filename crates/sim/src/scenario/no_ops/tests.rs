//! Each configuration that cannot do what it says: refused, or warned about, at
//! the line of the key to change.

use crate::scenario::Scenario;

const SHOWN: usize = super::SHOWN_GROUPS;

/// A dumbbell whose `[qdisc]` table (from line 9) and flows are given.
fn scenario(qdisc: &str, flows: &str) -> String {
    format!(
        "name = \"n\"\nduration = \"10s\"\nwarmup = \"2s\"\n\
         [topology]\nkind = \"dumbbell\"\naccess = {{ rate = \"10Mbps\", delay = \"1ms\" }}\n\
         bottleneck = {{ rate = \"1Mbps\", delay = \"5ms\" }}\n\n\
         [qdisc]\n{qdisc}\n\n{flows}"
    )
}

const TCP: &str = "[[flows]]\nname = \"t\"\nkind = \"tcp\"\ncount = 2\n";

fn error(text: &str) -> String {
    Scenario::from_toml(text, "s.toml").unwrap_err().to_string()
}

fn warnings(text: &str) -> Vec<String> {
    Scenario::from_toml(text, "s.toml")
        .unwrap()
        .warnings()
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Every registered kind with RED's `min_th` key, read off the registry so a new
/// one is checked without being listed, but FRED (left unchecked:
/// `aqm::early_drop`) and SFQ (whose per-bin RED is off unless asked for:
/// `sfq_with_red_compares_its_total_limit_too`).
fn red_family() -> Vec<&'static str> {
    let kinds: Vec<&'static str> = aqm::QdiscSpec::KINDS
        .iter()
        .copied()
        .filter(|k| aqm::QdiscSpec::keys(k).unwrap().contains(&"min_th"))
        .filter(|k| !["fred", "sfq"].contains(k))
        .collect();
    for known in [
        "red", "choke", "breathe", "mrul", "lru_red", "nlred", "sfred",
    ] {
        assert!(kinds.contains(&known), "{known} not in {kinds:?}");
    }
    kinds
}

#[test]
fn a_red_family_qdisc_whose_limit_is_not_above_min_th_is_refused_at_limit() {
    for kind in red_family() {
        let q = format!("kind = \"{kind}\"\nmin_th = 100\nmax_th = 200\nlimit = 100");
        let e = error(&scenario(&q, TCP));
        assert!(
            e.starts_with("s.toml:13: qdisc: limit = 100 is not above min_th = 100")
                && e.contains(&format!("{kind} never drops early")),
            "{kind}: {e}"
        );
        // One packet more and it is a RED again (its curve cut short: a warning).
        let q = q.replace("limit = 100", "limit = 101");
        assert_eq!(
            warnings(&scenario(&q, TCP)),
            [format!(
                "s.toml:12: qdisc: max_th = 200 is not below limit = 101: the average \
                 queue never reaches max_th, so {kind}'s drop curve is cut short below max_p"
            )],
            "{kind}"
        );
    }
    // A sweep over limit with min_th from the defaults: CHOKe's 100.
    let e = error(&scenario("kind = \"choke\"\nlimit = 80", TCP));
    assert!(
        e.starts_with("s.toml:11: qdisc: limit = 80 is not above min_th = 100"),
        "{e}"
    );
}

#[test]
fn red_thresholds_in_byte_mode_or_an_mrul_penalty_below_min_th_are_not_refused() {
    let q = "kind = \"red\"\nbyte_mode = true\nmin_th = 100\nmax_th = 200\nlimit = 50";
    assert!(Scenario::from_toml(&scenario(q, TCP), "s.toml").is_ok());
    let q = "kind = \"mrul\"\npenalty_below_min_th = true\nmin_th = 100\nmax_th = 200\nlimit = 50";
    assert!(Scenario::from_toml(&scenario(q, TCP), "s.toml").is_ok());
}

#[test]
fn sfq_with_red_compares_its_total_limit_too() {
    let q = "kind = \"sfq\"\nred = true\nlimit = 4\nmin_th = 5\nmax_th = 10\ndepth = 127";
    let e = error(&scenario(q, TCP));
    assert!(
        e.starts_with("s.toml:12: qdisc: limit = 4 is not above min_th = 5"),
        "{e}"
    );
    // Without red the thresholds are not used.
    let q = "kind = \"sfq\"\nlimit = 4\nmin_th = 5\nmax_th = 10";
    assert!(warnings(&scenario(q, TCP)).is_empty());
}

#[test]
fn a_graph_links_qdisc_and_a_reverse_qdisc_are_checked_at_their_own_lines() {
    let text = "name = \"g\"\nduration = \"10s\"\n\
        [topology]\nkind = \"graph\"\nnodes = [\"a\", \"b\"]\n\
        [[topology.links]]\nfrom = \"a\"\nto = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
        qdisc = { kind = \"red\", min_th = 50, max_th = 60, limit = 40 }\n\n\
        [[flows]]\nname = \"t\"\nkind = \"tcp\"\nfrom = \"a\"\nto = \"b\"\n";
    let e = error(text);
    assert!(
        e.starts_with("s.toml:11: topology.links[0].qdisc: limit = 40 is not above min_th = 50"),
        "{e}"
    );
    let text = scenario("kind = \"droptail\"", TCP).replace(
        "delay = \"5ms\" }\n",
        "delay = \"5ms\" }\nreverse_qdisc = { kind = \"red\", limit = 3 }\n",
    );
    let e = error(&text);
    assert!(
        e.starts_with("s.toml:8: topology.reverse_qdisc: limit = 3 is not above min_th = 5"),
        "{e}"
    );
}

#[test]
fn an_sfb_whose_bins_cannot_fill_is_refused_and_one_bin_is_warned_about() {
    let e = error(&scenario("kind = \"sfb\"\nlimit = 10\nbin_size = 11", TCP));
    assert!(
        e.starts_with("s.toml:12: qdisc: bin_size = 11 is above limit = 10")
            && e.contains("sfb is a DropTail"),
        "{e}"
    );
    assert!(Scenario::from_toml(
        &scenario("kind = \"sfb\"\nlimit = 10\nbin_size = 10", TCP),
        "s"
    )
    .is_ok());
    let w = warnings(&scenario("kind = \"sfb\"\nbins = 1", TCP));
    assert_eq!(w.len(), 1);
    assert!(
        w[0].starts_with("s.toml:11: qdisc: bins = 1: every flow shares"),
        "{w:?}"
    );
}

#[test]
fn codel_with_target_not_below_interval_is_warned_about() {
    for kind in ["codel", "fq_codel"] {
        let q = format!("kind = \"{kind}\"\ntarget = \"100ms\"\ninterval = \"100ms\"");
        let w = warnings(&scenario(&q, TCP));
        assert_eq!(w.len(), 1, "{kind}: {w:?}");
        assert!(
            w[0].starts_with("s.toml:11: qdisc: target = 100ms is not below interval = 100ms"),
            "{w:?}"
        );
        let q = format!("kind = \"{kind}\"\ntarget = \"5ms\"\ninterval = \"100ms\"");
        assert!(warnings(&scenario(&q, TCP)).is_empty(), "{kind}");
    }
}

#[test]
fn a_qdisc_whose_first_update_comes_after_the_run_is_warned_about() {
    let w = warnings(&scenario("kind = \"pie\"\nmax_burst = \"10s\"", TCP));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("s.toml:11: qdisc: max_burst = 10s is not shorter than duration = 10s"),
        "{w:?}"
    );
    let w = warnings(&scenario("kind = \"codel\"\ninterval = \"20s\"", TCP));
    assert!(
        w.iter()
            .any(|w| w.contains("interval = 20s is not shorter")),
        "{w:?}"
    );
    assert!(warnings(&scenario("kind = \"pie\"", TCP)).is_empty());
}

#[test]
fn a_flow_group_starting_after_the_run_is_refused_at_start() {
    let flows = format!("{TCP}\n[[flows]]\nname = \"late\"\nkind = \"tcp\"\nstart = \"10s\"\n");
    let e = error(&scenario("kind = \"droptail\"", &flows));
    assert_eq!(
        e,
        "s.toml:20: flows[1] (late): start = 10s is not before duration = 10s: the group \
         never sends"
    );
}

#[test]
fn a_spread_past_the_end_and_a_group_that_stops_in_the_warmup_are_warned_about() {
    let flows = format!(
        "{TCP}\n[[flows]]\nname = \"spread\"\nkind = \"tcp\"\nstart = \"5s\"\nstart_spread = \"10s\"\n\
         \n[[flows]]\nname = \"early\"\nkind = \"tcp\"\nstop = \"2s\"\n"
    );
    let w = warnings(&scenario("kind = \"droptail\"", &flows));
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("s.toml:21: flows[1] (spread): start = 5s plus start_spread = 10s"),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("s.toml:26: flows[2] (early): stop = 2s is not after warmup = 2s"),
        "{w:?}"
    );
}

#[test]
fn a_warmup_that_swallows_every_groups_life_is_refused_at_warmup() {
    let flows = "[[flows]]\nname = \"t\"\nkind = \"tcp\"\nstop = \"1s\"\n";
    let e = error(&scenario("kind = \"droptail\"", flows));
    assert!(
        e.starts_with("s.toml:3: warmup = 2s: every flow group stops before the warm-up ends"),
        "{e}"
    );
}

#[test]
fn an_onoff_source_on_for_the_whole_run_and_a_late_schedule_step_are_warned_about() {
    let flows = "[[flows]]\nname = \"o\"\nkind = \"onoff\"\nrate = \"1Mbps\"\non = \"10s\"\noff = \"1s\"\n\
                 \n[[flows]]\nname = \"c\"\nkind = \"cbr\"\nrate = \"1Mbps\"\n\
                 schedule = [{ at = \"1s\", rate = \"2Mbps\" }, { at = \"12s\", rate = \"0bps\" }]\n";
    let w = warnings(&scenario("kind = \"droptail\"", flows));
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("s.toml:16: flows[0] (o): on = 10s"),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("s.toml:23: flows[1] (c): the schedule's step at 12s"),
        "{w:?}"
    );
}

/// One warning per group of thousands is told in a few lines, at once: the text
/// is indexed once, not scanned per warning (4,000 groups took a minute).
#[test]
fn many_groups_with_one_warning_each_are_summed_up_in_linear_time() {
    let group = |i: usize| {
        format!(
            "[[flows]]\nname = \"g{i}\"\nkind = \"cbr\"\nrate = \"1kbit\"\ncount = 2\n\
             start_spread = \"20s\"\n"
        )
    };
    let time = |n: usize| {
        let flows: String = (0..n).map(group).collect();
        let text = scenario("kind = \"droptail\"", &flows);
        let s = Scenario::from_toml(&text, "s.toml").unwrap();
        let t = std::time::Instant::now();
        let w: Vec<String> = s.warnings().iter().map(ToString::to_string).collect();
        (t.elapsed(), w)
    };
    let (_, w) = time(2000);
    assert_eq!(w.len(), SHOWN + 1, "{w:?}");
    // The first groups in full, each at its own start_spread line (line 10 is
    // the qdisc's; each group is 6 lines from line 12).
    for (i, w) in w.iter().take(SHOWN).enumerate() {
        let line = 12 + 6 * i + 5;
        assert!(
            w.starts_with(&format!(
                "s.toml:{line}: flows[{i}] (g{i}): start = 0ns plus start_spread"
            )),
            "{w}"
        );
    }
    let line = 12 + 6 * SHOWN + 5;
    assert!(
        w[SHOWN].starts_with(&format!(
            "s.toml:{line}: 1,997 more flow groups, flows[3] to flows[1999], the same at start_spread"
        )),
        "{}",
        w[SHOWN]
    );
    // Linear: 8 times the groups take far less than 64 times as long.
    let (small, _) = time(1000);
    let (large, _) = time(8000);
    assert!(
        large < small * 24 + std::time::Duration::from_millis(50),
        "1,000 groups {small:?}, 8,000 groups {large:?}"
    );
}

#[test]
fn one_warning_beyond_the_shown_is_told_as_itself() {
    let flows: String = (0..SHOWN + 1)
        .map(|i| format!("[[flows]]\nname = \"g{i}\"\nkind = \"tcp\"\nstop = \"1s\"\n"))
        .chain(std::iter::once(TCP.to_string()))
        .collect();
    let w = warnings(&scenario("kind = \"droptail\"", &flows));
    assert_eq!(w.len(), SHOWN + 1, "{w:?}");
    assert!(
        w[SHOWN].contains(&format!("flows[{SHOWN}]: stop:")),
        "{w:?}"
    );
}
