"""aqmlab repro: the registry, an experiment end to end, the run cache, argument
errors, and the CHOKe Fig. 3 check itself (short runs)."""

from __future__ import annotations

import inspect
import json

import pandas as pd
import pytest

import aqmlab
from aqmlab.repro import EXPERIMENTS, _core, experiments, resolve
from aqmlab.repro._helpers import with_flows, with_qdisc

from conftest import ROOT, cli_error, run_cli

CHOKE_IDS = [
    "choke-fig3",
    "choke-fig4",
    "choke-fig5",
    "choke-fig6",
    "choke-table1",
    "choke-fig8",
    "choke-fig9",
    "choke-fig10",
    "choke-table2",
    "choke-table3",
]
SFB_IDS = ["sfb-table1", "sfb-fig3", "sfb-fig4", "sfb-fig5", "sfb-fig6", "sfb-table2", "sfb-fig8"]


class Counter:
    """Counts in-process simulations (jobs=1 runs them in this process)."""

    def __init__(self, monkeypatch):
        self.calls = 0
        real = _core._simulate

        def counting(scenario, seed):
            self.calls += 1
            return real(scenario, seed)

        monkeypatch.setattr(_core, "_simulate", counting)


def test_the_registry_lists_every_choke_experiment():
    assert inspect.isfunction(aqmlab.repro)  # a plain function, the package's own
    assert [e for e in EXPERIMENTS if e.startswith("choke-")] == CHOKE_IDS
    listed = experiments()
    assert list(listed.index[: len(CHOKE_IDS)]) == CHOKE_IDS
    for exp in EXPERIMENTS.values():
        for name in exp.scenarios:
            assert (ROOT / "scenarios" / f"{name}.toml").is_file(), name
        points = exp.build_points()
        assert points, exp.id
        for p in points:  # every point's scenario is a valid scenario (or queue lab)
            if _core.QUEUE_LAB in p.scenario:
                continue
            aqmlab.run(p.scenario, duration="0.5s", warmup="0s")
    proc = run_cli("repro", "--list", script=True)
    assert proc.returncode == 0, proc.stderr
    ids = [line.split()[0] for line in proc.stdout.splitlines()]
    assert ids[: len(CHOKE_IDS)] == CHOKE_IDS
    assert ids[len(CHOKE_IDS) : len(CHOKE_IDS) + len(SFB_IDS)] == SFB_IDS
    assert not [i for i in ids if i.endswith("-*")]  # no paper is left "not yet reproduced"


def test_the_sfb_experiments_are_registered_with_their_scenarios():
    from aqmlab.repro import sfb

    assert [e for e in EXPERIMENTS if e.startswith("sfb-")] == SFB_IDS
    assert [e.id for e in resolve("sfb")] == SFB_IDS
    for name in ("sfb-fig2b", "sfb-fig4", "sfb-fig8"):
        assert aqmlab.scenario_text(name), name  # a built-in too (needs a rebuild)
    # Table I's points put each scheme on the bottleneck A->B and nowhere else.
    for p in EXPERIMENTS["sfb-table1"].build_points():
        links = {(lk["from"], lk["to"]): lk for lk in p.scenario["topology"]["links"]}
        assert links[("A", "B")]["qdisc"]["kind"] == sfb.QDISCS[p.label["qdisc"]]["kind"]
        assert all("qdisc" not in lk for k, lk in links.items() if k != ("A", "B"))
        assert p.scenario["qdisc"]["kind"] == "droptail"
    # Fig. 5: eq. (1) gives the paper's 11 and 36 misclassified flows of 400.
    assert round(400 * sfb.misclassification(2, 23, 4)) == 11
    assert round(400 * sfb.misclassification(2, 23, 8)) == 36


def test_sfq_bin_is_the_rust_qdiscs_flow_to_bin_map():
    # The same values pin Sfq::bin_of in crates/aqm/src/sfq.rs
    # (the_flow_to_bin_map_is_pinned_for_the_python_replica).
    from aqmlab.repro import sfb

    assert [sfb.sfq_bin(f, 46) for f in (400, 0, 1, 2, 3)] == [3, 27, 9, 10, 45]
    assert sfb.sfq_bin(5, 1024, hash_seed=7, generation=3) == 500


def test_the_sfb_experiments_mark_with_ecn_under_every_scheme():
    for exp_id in ("sfb-table1", "sfb-fig8"):
        for p in EXPERIMENTS[exp_id].build_points():
            links = {(lk["from"], lk["to"]): lk for lk in p.scenario["topology"]["links"]}
            assert links[("A", "B")]["qdisc"]["ecn"] is True, p.label
            assert all(f["ecn"] is True for f in p.scenario["flows"] if f["kind"] == "tcp"), p.label


def test_sfb_fig4_theory_is_eq1_and_matches_the_model_command():
    from aqmlab.repro import sfb

    # The values the paper quotes in III-C, and `aqmlab model sfb-misclass`.
    for (levels, bins, m), quoted in sfb.EQ1_QUOTED.items():
        assert round(sfb.misclassification(levels, bins, m), 4) == quoted
        proc = run_cli(
            "model",
            "sfb-misclass",
            "--levels",
            str(levels),
            "--bins",
            str(bins),
            "--nonresponsive",
            str(m),
            "--json",
        )
        assert proc.returncode == 0, proc.stderr
        expected = sfb.misclassification(levels, bins, m)
        assert json.loads(proc.stdout)["p"] == pytest.approx(expected, rel=1e-12)
    # Fig. 4's qualitative claims hold for eq. (1) itself.
    for total in (90, 900):
        p = {
            levels: [sfb.misclassification(levels, total // levels, m) for m in range(1, total + 1)]
            for levels in (1, 2, 3)
        }
        small = total // 9
        assert p[3][small - 1] < p[2][small - 1] < p[1][small - 1]
        assert p[1][total - 1] < p[2][total - 1] < p[3][total - 1]
    # Every point: total // L bins per level, M flows offering 4x the link.
    points = EXPERIMENTS["sfb-fig4"].build_points()
    assert len(points) == 2 * 3 * 5 * len(sfb.FIG4_HASH_SEEDS)
    for pt in points:
        q, lab = pt.scenario["qdisc"], pt.label
        bins = lab["total_bins"] // lab["levels"]
        assert (q["kind"], q["levels"], q["bins"]) == ("sfb", lab["levels"], bins)
        nr = next(f for f in pt.scenario["flows"] if f["name"] == "nonresp")
        assert nr["count"] == lab["nonresp"]


def test_sfb_fig4_the_qdisc_misclassifies_the_flows_its_hash_pollutes():
    # Two points of Fig. 4 (90 bins, M = 45: one level against three; the file's
    # 15 s, under a second each), one hash seed each: every non-responsive flow is identified, the real SFB
    # rate-limits exactly the low-rate flows whose bins are all polluted under
    # the run's hash (re-done in Python), and their share is near eq. (1)'s (one
    # hash draw: the number of polluted bins varies more than the binomial band
    # of the experiment, which averages five).
    from aqmlab.repro import _core, sfb

    base = _core.load_scenario("sfb-fig4")
    for levels in (1, 3):
        scenario = sfb.fig4_scenario(base, 90, levels, 45, hash_seed=1)
        result = aqmlab.run(scenario)
        label = {"total_bins": 90, "levels": levels, "nonresp": 45, "hash_seed": 1}
        numbers = sfb.fig4_numbers(label, result)
        assert numbers["low_flows"] == 400
        assert numbers["nonresp_never_limited"] == 0
        assert numbers["low_extra"] == 0 and numbers["low_missed"] <= 2, numbers
        p = sfb.misclassification(levels, 90 // levels, 45)
        frac = numbers["low_rate_limited"] / 400
        assert abs(frac - p) <= 0.15, (levels, frac, p)


def test_sfb_fig3_rate_limits_the_non_responsive_flow_far_below_reds_share(tmp_path):
    # Short runs (20 s, 4 s warm-up), one seed: the paper's Fig. 3, loosely. SFB
    # holds the 45 Mbit/s flow to a small fraction of what RED lets through, and
    # the TCP flows get the link back.
    table = aqmlab.repro("sfb-fig3", seeds=1, duration="20s", jobs=1, out=tmp_path)
    rows = table.set_index("quantity")
    sfb_nr = rows.loc["SFB: non-responsive throughput", "ours"]
    red_nr = rows.loc["RED: non-responsive throughput", "ours"]
    assert red_nr > 20, red_nr
    assert sfb_nr < 0.1 * red_nr, (sfb_nr, red_nr)
    # SFQ+RED holds it to about one queue's share, 45/46 Mbit/s.
    sfq_nr = rows.loc["SFQ+RED: non-responsive throughput", "ours"]
    assert 0.8 < sfq_nr < 1.2, sfq_nr
    assert bool(rows.loc["RED: mean TCP throughput < half of SFB's", "pass"])
    runs = pd.read_parquet(tmp_path / "sfb-fig3-runs.parquet").set_index("qdisc")
    assert runs.loc["sfb", "tcp_mbps"] > 30 > runs.loc["red", "tcp_mbps"]
    assert (tmp_path / "sfb-fig3.png").is_file()


def test_sfb_table2_takes_each_periods_loss_from_one_runs_series(tmp_path, monkeypatch):
    # One run per seed, and the loss it gives a period is what a run to the
    # period's end measured from its start gives (the method this replaced).
    from aqmlab.repro import sfb

    exp = EXPERIMENTS["sfb-table2"]
    points = exp.build_points()
    assert len(points) == 1 and points[0].scenario["monitor"]["flow_series"] == "10s"
    scenario = {**points[0].scenario, "duration": "30s"}
    one = aqmlab.run(scenario, seed=2)
    unmonitored = {k: v for k, v in scenario.items() if k != "monitor"}
    period = sfb.run_numbers({}, aqmlab.run({**unmonitored, "warmup": "10s"}, seed=2))
    ours = sfb.period_losses(one, 10, 30)
    for k in ("loss_tcp_mbps", "loss_nonresp_mbps", "loss_osc_mbps", "loss_total_mbps"):
        assert ours[f"{k}_10_30"] == pytest.approx(period[k], rel=1e-12), k
    # The 5 Mbit/s flows lose most of what they send; a period past the run's end is NaN.
    assert 3 < ours["loss_osc_mbps_10_30"] < 5.01 and 3 < ours["loss_nonresp_mbps_10_30"] < 5.01
    assert all(v != v for v in sfb.period_losses(one, 30, 50).values())
    with pytest.raises(ValueError, match="does not tile"):
        sfb.period_losses(one, 5, 25)
    # A shortened repro runs once per seed and leaves the periods it does not reach OPEN.
    counter = Counter(monkeypatch)
    table = aqmlab.repro("sfb-table2", seeds=1, duration="35s", jobs=1, out=tmp_path).set_index("quantity")
    assert counter.calls == 1
    assert table.loc["10-30 s: loss, oscillating", "verdict"] != "OPEN"
    assert table.loc["50-70 s: loss, oscillating", "verdict"] == "OPEN"
    assert "ends before this period" in table.loc["30-50 s: loss, total", "note"]


def test_sweeps_share_points_so_they_are_simulated_once():
    fig5 = {_core.run_key(p.scenario, 1) for p in EXPERIMENTS["choke-fig5"].build_points()}
    fig6 = {_core.run_key(p.scenario, 1) for p in EXPERIMENTS["choke-fig6"].build_points()}
    fig8 = {_core.run_key(p.scenario, 1) for p in EXPERIMENTS["choke-fig8"].build_points()}
    assert len(fig5) == 16
    assert fig6 < fig5  # Fig. 6 is Fig. 5's CHOKe half
    assert len(fig8 & fig5) == 1  # drop 2 at 2 Mbit/s is Fig. 5's CHOKe point at 2 Mbit/s


def test_an_experiment_runs_end_to_end_and_writes_csv_and_png(tmp_path):
    out = tmp_path / "out"
    proc = run_cli(
        "repro", "choke-fig4", "--out", str(out), "--seeds", "1", "--duration", "15s", "--jobs", "1", "-q"
    )
    assert proc.returncode == 0, proc.stderr
    table = pd.read_parquet(out / "choke-fig4.parquet")
    assert {"quantity", "source", "paper", "ours", "tolerance", "lo", "hi", "verdict", "pass"} <= set(
        table.columns
    )
    assert len(table) == 4
    assert table["ours"].notna().all()
    # Every row is printed with its verdict.
    printed = [line for line in proc.stdout.splitlines() if line.rstrip().endswith(("PASS", "MISS", "OPEN"))]
    assert len(printed) == len(table)
    assert "runs: 1 simulated, 0 from cache" in proc.stdout
    runs = pd.read_parquet(out / "choke-fig4-runs.parquet")
    assert list(runs["seed"]) == [1]
    assert runs["udp_match_pct_of_drops"].between(0, 100).all()
    with open(out / "choke-fig4.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert len(list((out / "cache").glob("*.parquet"))) == 1
    assert not list(out.glob(".*.partial-*")) and not list((out / "cache").glob(".*.partial-*"))


def test_a_second_run_comes_from_the_cache_and_bad_entries_are_ignored(tmp_path, monkeypatch):
    count = Counter(monkeypatch)
    args = {"out": tmp_path, "seeds": 1, "duration": "10s", "jobs": 1}
    first = aqmlab.repro("choke-fig3", **args)
    assert count.calls == 3 and first.attrs["simulated"] == 3 and first.attrs["cached"] == 0

    second = aqmlab.repro("choke-fig3", **args)
    assert count.calls == 3, "a cached run was simulated again"
    assert second.attrs["simulated"] == 0 and second.attrs["cached"] == 3
    pd.testing.assert_frame_equal(first, second)

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from aqmlab._runner.store import decode

    entries = sorted((tmp_path / "cache").glob("*.parquet"))
    assert len(entries) == 3
    data = entries[0].read_bytes()
    entries[0].write_bytes(data[: len(data) // 2])  # a partial write
    whole = pq.read_table(entries[1])
    only_flows = whole.filter(pc.equal(whole["name"], "flows"))  # reads, but is no whole result
    pq.write_table(only_flows.replace_schema_metadata(whole.schema.metadata), entries[1])
    (tmp_path / "cache" / ".stray.partial-1.parquet").write_bytes(b"{")  # a killed writer's temp file
    third = aqmlab.repro("choke-fig3", **args)
    assert count.calls == 5 and third.attrs["simulated"] == 2 and third.attrs["cached"] == 1
    pd.testing.assert_frame_equal(first, third)
    decode(entries[0])  # rewritten whole

    # Another seed count or duration is another run, not a cache hit.
    aqmlab.repro("choke-fig3", **{**args, "duration": "11s"})
    assert count.calls == 8


def test_the_cache_key_covers_the_scenario_and_the_seed():
    base = _core.load_scenario("choke-fig5")
    k = _core.run_key(base, 1)
    assert k == _core.run_key(_core.load_scenario("choke-fig5"), 1)
    assert k != _core.run_key(base, 2)
    assert k != _core.run_key(with_qdisc(base, candidates=2), 1)
    assert k != _core.run_key(with_flows(base, "udp", rate="2Mbps"), 1)


def test_a_long_duration_is_written_as_it_reads():
    # It was "1e+06s" once, which the scenario parser refuses.
    point = EXPERIMENTS["choke-fig3"].build_points("1000000s")[0]
    assert (point.scenario["duration"], point.scenario["warmup"]) == ("1000000s", "200000s")
    point = EXPERIMENTS["choke-fig3"].build_points("90s")[0]
    assert (point.scenario["duration"], point.scenario["warmup"]) == ("90s", "18s")
    assert _core.shortened({"duration": "1s"}, "2min")["duration"] == "120s"


def test_repro_json_and_csv(tmp_path):
    proc = run_cli(
        "repro", "choke-fig4", "--out", str(tmp_path), "--seeds", "1", "--duration", "15s", "--jobs", "1",
        "--format", "csv", "--json", "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed["experiments"] == ["choke-fig4"] and len(printed["checks"]) == 4
    table = pd.read_csv(tmp_path / "choke-fig4.csv")
    assert list(table["quantity"]) == [c["quantity"] for c in printed["checks"]]


def test_bad_arguments_exit_2():
    assert cli_error("repro", "nonesuch").startswith('no experiment "nonesuch"')
    assert "seeds" in cli_error("repro", "choke-fig3", "--seeds", "0")
    assert "0 is not in 1.." in cli_error("repro", "choke-fig3", "--jobs", "0")
    assert "duration" in cli_error("repro", "choke-fig3", "--duration", "soon")
    assert "name an experiment" in cli_error("repro")
    assert "unexpected argument '--frobnicate'" in cli_error("repro", "choke-fig3", "--frobnicate")
    assert cli_error("repro", "--list", "choke-fig3")
    proc = run_cli("repro", "--help")
    assert proc.returncode == 0 and "aqmlab repro" in proc.stdout
    with pytest.raises(ValueError, match="no experiment"):
        aqmlab.repro("nonesuch")
    with pytest.raises(ValueError, match="seeds"):
        aqmlab.repro("choke-fig3", seeds=0)


def test_a_bounded_check_passes_only_when_its_bounds_lie_in_the_band():
    c = _core.within("share", "Fig. 6", 50, 20, 15, "%")
    assert c.verdict == "MISS" and not c.passed
    c.ours_lo, c.ours_hi = 40, 60
    assert c.verdict == "PASS" and c.passed
    c.ours_lo, c.ours_hi = 5, 36
    assert c.verdict == "OPEN" and not c.passed
    c.ours_hi = 34
    assert c.verdict == "MISS"
    assert _core.trend("rises", "Fig. 6", "increases", None).verdict == "OPEN"
    assert _core.trend("rises", "Fig. 6", "increases", False).verdict == "MISS"
    assert _core.trend("rises", "Fig. 6", "increases", True).verdict == "PASS"


def test_choke_fig3_holds_udp_to_a_fraction_of_the_link():
    # Short runs (30 s, 6 s warm-up), two seeds: the paper's 25% (Fig. 3), loosely.
    table = aqmlab.repro("choke-fig3", seeds=2, duration="30s")
    rows = table.set_index("quantity")
    choke_udp = rows.loc["CHOKe: UDP throughput", "ours"] / 1000
    assert 0.10 <= choke_udp <= 0.40, choke_udp
    assert rows.loc["RED: UDP throughput", "ours"] > 850
    assert rows.loc["DropTail: UDP throughput", "ours"] > 850
    assert rows.loc["CHOKe: all TCP throughput", "ours"] > 500
    assert bool(rows.loc["CHOKe: UDP throughput", "pass"]) == (150 <= choke_udp * 1000 <= 350)


def test_choke_tables_ii_and_iii_theory_to_the_printed_digits_and_the_lab_beside_it(tmp_path, monkeypatch):
    # Quick runs (100,000 arrivals, one seed): the model columns must equal the
    # paper's tables to every printed digit (exact, whatever the run length), and
    # the queue lab must be near the model: within 5% or 0.01 here (a small P_0 is
    # noisy at this length); the experiment's own 2% is for a million arrivals and
    # three seeds (REPRODUCTION.md), and crates/cli's queue_lab tests hold 2% at
    # 400,000.
    table = aqmlab.repro(["choke-table2", "choke-table3"], out=tmp_path, seeds=1, jobs=2, duration="1s")
    theory = table[table["quantity"].str.endswith(", theory")]
    sim = table[table["quantity"].str.endswith(", simulation vs theory")]
    assert len(theory) == len(sim) == 26 + 34, len(theory)  # Table II: 26 numbers, III: 34
    assert (theory["verdict"] == "PASS").all(), theory[theory["verdict"] != "PASS"]
    err = (sim["ours"] - sim["paper_value"]).abs()
    far = err > (0.05 * sim["paper_value"]).clip(lower=0.01)
    assert not far.any(), sim[far][["quantity", "paper_value", "ours"]]
    for name in ("choke-table2.parquet", "choke-table2.png", "choke-table3.parquet", "choke-table3.png"):
        assert (tmp_path / name).is_file(), name
    # Queue-lab runs are cached like network runs: the same call again runs nothing.
    counter = Counter(monkeypatch)
    again = aqmlab.repro(["choke-table2", "choke-table3"], out=tmp_path, seeds=1, jobs=1, duration="1s")
    assert counter.calls == 0
    pd.testing.assert_frame_equal(again, table)


def test_a_peers_values_show_as_a_column_where_it_has_them(tmp_path):
    peer = tmp_path / "ns2.json"
    peer.write_text(
        json.dumps(
            {
                "label": "ns-2.35 (seed 1)",
                "experiments": {"choke-fig3": {"checks": {"RED: UDP throughput": {"text": "990 ± 3"}}}},
            }
        )
    )
    proc = run_cli(
        "repro", "choke-fig3", "--out", str(tmp_path / "out"), "--seeds", "1", "--duration", "10s",
        "--jobs", "1", "-q", "--peer", str(peer),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("quantity"))
    assert "ns-2.35 (seed 1)" in header
    column = header.index("ns-2.35 (seed 1)")
    rows = {line[:30].rstrip(): line for line in lines if line.rstrip().endswith(("PASS", "MISS", "OPEN"))}
    assert rows["RED: UDP throughput"][column:].startswith("990 ± 3")
    assert rows["DropTail: UDP throughput"][column:].startswith(" ")
    table = aqmlab.repro("choke-fig3", seeds=1, duration="10s", jobs=1, peers=[peer])
    assert list(table["peer:ns-2.35 (seed 1)"]) == ["", "", "990 ± 3", "", "", ""]
    # A file without the keys is refused, naming the key.
    peer.write_text(json.dumps({"label": "x", "experiments": {"choke-fig3": {"checks": {"q": {}}}}}))
    assert "experiments.choke-fig3.checks.q.text" in cli_error("repro", "choke-fig3", "--peer", str(peer))


def test_a_peer_without_a_value_in_a_table_adds_no_column():
    row = {"quantity": "q", "source": "s", "paper": "1", "ours_text": "1", "tolerance": "t"}
    table = pd.DataFrame([{**row, "verdict": "PASS", "pass": True}])
    table["experiment"] = "choke-fig3"
    exp = EXPERIMENTS["choke-fig3"]
    empty = _core.with_peer(table, _core.Peer("ns-2.35", {("choke-fig4", "q"): "2"}))
    assert "ns-2.35" not in _core.format_table(exp, empty)
    full = _core.with_peer(table, _core.Peer("ns-2.35", {("choke-fig3", "q"): "2"}))
    assert "ns-2.35" in _core.format_table(exp, full)


def test_a_miss_points_to_its_section_of_reproduction_md():
    from pathlib import Path

    row = {"quantity": "q", "source": "s", "paper": "1", "ours_text": "9", "tolerance": "t"}
    exp = EXPERIMENTS["choke-fig3"]
    passed = pd.DataFrame([{**row, "verdict": "PASS", "pass": True, "experiment": exp.id}])
    assert "REPRODUCTION.md" not in _core.format_table(exp, passed)
    missed = pd.DataFrame([{**row, "verdict": "MISS", "pass": False, "experiment": exp.id}])
    last = _core.format_table(exp, missed).splitlines()[-1]
    assert last.startswith('MISS: REPRODUCTION.md, section "choke-fig3: ...",')
    # Every experiment has that section, its heading starting with its id.
    headings = [
        line[3:]
        for line in (Path(__file__).parents[2] / "REPRODUCTION.md").read_text().splitlines()
        if line.startswith("## ")
    ]
    for eid in EXPERIMENTS:
        assert any(h.startswith(f"{eid}:") for h in headings), eid
    assert "What the verdicts mean" in headings


def test_repro_and_sweep_each_say_what_their_plus_minus_is():
    # repro's "±" is the sd over seeds, sweep's the 95% interval's half-width: each
    # table says which in its heading, so the two are never read as one.
    row = {"quantity": "q", "source": "s", "paper": "1", "ours_text": "9 ± 1", "tolerance": "t"}
    exp = EXPERIMENTS["choke-fig3"]
    table = pd.DataFrame([{**row, "verdict": "PASS", "pass": True, "experiment": exp.id}])
    # (sweep's heading, "mean ± half-width of the 95% interval", is checked on its
    # output in test_campaign.)
    assert "ours (mean ± sd over seeds)" in _core.format_table(exp, table)
