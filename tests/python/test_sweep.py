"""aqmlab.sweep and `aqmlab sweep`: grids of points and seeds, run in parallel."""

from __future__ import annotations

import json

import pytest

import aqmlab
from aqmlab._run import tomllib
from aqmlab._sweep import assign, parse_assignment, set_path

from conftest import CHOKE_FIG3, run_cli


@pytest.fixture
def short_fig3() -> dict:
    """The CHOKe Fig. 3 scenario (32 TCP + 2 Mbps UDP over 1 Mbps), 12 s long."""
    with open(CHOKE_FIG3, "rb") as f:
        s = tomllib.load(f)
    s["duration"] = "12s"
    s["warmup"] = "4s"
    return s


# ---- keys and values -----------------------------------------------------------------


def test_set_path_reaches_tables_list_entries_by_name_and_new_keys(short_fig3):
    s = set_path(short_fig3, "qdisc.kind", "choke")
    assert s["qdisc"]["kind"] == "choke" and short_fig3["qdisc"]["kind"] == "red"  # a copy
    s = set_path(s, "flows.udp.rate", "5Mbps")
    assert [f["rate"] for f in s["flows"] if f["name"] == "udp"] == ["5Mbps"]
    s = set_path(s, "flows.0.count", 4)
    assert s["flows"][0]["count"] == 4
    s = set_path(s, "qdisc.ecn", True)  # a key the file leaves at its default
    assert s["qdisc"]["ecn"] is True
    s = set_path(s, "topology.bottleneck.rate", "2Mbps")
    assert s["topology"]["bottleneck"] == {"rate": "2Mbps", "delay": "1ms"}


def test_a_sweep_point_is_made_by_the_rules_of_run_set(short_fig3):
    # One implementation (the extension's): a new kind keeps the [qdisc] keys it
    # takes and those given, and every integer a scenario holds survives.
    base = dict(short_fig3, seed=2**63 + 5)
    base["qdisc"] = dict(base["qdisc"], w_q=0.002, max_p=0.1)
    point = assign(base, {"qdisc.kind": "codel", "qdisc.target": "5ms"})
    assert point["qdisc"] == {"kind": "codel", "target": "5ms"} | {
        k: v for k, v in base["qdisc"].items() if k in aqmlab.qdisc_keys("codel") and k != "kind"
    }
    assert point["seed"] == 2**63 + 5
    assert base["qdisc"]["kind"] == "red"  # a copy


def test_set_path_names_what_is_missing(short_fig3):
    with pytest.raises(ValueError, match=r"flows has no entry named 'udpx' \(entries: 'tcp', 'udp'\)"):
        set_path(short_fig3, "flows.udpx.rate", "1Mbps")
    with pytest.raises(ValueError, match="not a table"):
        set_path(short_fig3, "qdisc.kind.x", 1)
    with pytest.raises(ValueError, match="empty step"):
        set_path(short_fig3, "qdisc..kind", 1)


def test_parse_assignment_reads_toml_values_and_bare_words():
    assert parse_assignment("qdisc.kind=red,choke") == ("qdisc.kind", ["red", "choke"])
    assert parse_assignment("qdisc.max_th = 60, 90") == ("qdisc.max_th", [60, 90])
    assert parse_assignment("flows.udp.rate=0.1Mbps,2Mbps") == ("flows.udp.rate", ["0.1Mbps", "2Mbps"])
    key, values = parse_assignment('qdisc={kind="droptail", limit=300},{kind="sfb"},"a,b"')
    assert key == "qdisc"
    assert values == [{"kind": "droptail", "limit": 300}, {"kind": "sfb"}, "a,b"]
    assert parse_assignment("qdisc.ecn=true,false")[1] == [True, False]
    for bad in ("qdisc.kind", "=red", "qdisc.kind=red,,choke", "qdisc.kind="):
        with pytest.raises(ValueError, match="--set"):
            parse_assignment(bad)


# ---- running ----------------------------------------------------------------------------


def test_sweep_labels_every_run_and_applies_the_grid(short_fig3):
    sw = aqmlab.sweep(short_fig3, {"qdisc.kind": ["red", "choke"]}, seeds=2, jobs=2)
    runs = sw.runs
    assert list(runs.columns[:3]) == ["scenario", "qdisc.kind", "seed"]
    assert sorted(zip(runs["qdisc.kind"], runs["seed"])) == [
        ("choke", 1),
        ("choke", 2),
        ("red", 1),
        ("red", 2),
    ]
    # The grid really changed the qdisc: CHOKe holds the 2 Mbps UDP flow to a
    # fraction of the 1 Mbps link, RED lets it take most of it.
    udp = runs.groupby("qdisc.kind")["udp_goodput_bps"].mean()
    assert udp["red"] > 0.8e6
    assert udp["choke"] < 0.5e6
    for kind, links in sw.links.groupby("qdisc.kind"):
        assert kind in set(links["qdisc"])  # the bottleneck's forward direction
    assert len(sw.flows) == 4 * 33
    assert set(sw.groups["group"]) == {"tcp", "udp"}


def test_a_point_equals_the_single_run_with_that_override(short_fig3):
    sw = aqmlab.sweep(short_fig3, {"flows.udp.rate": ["1Mbps"]}, seeds=[7], jobs=1)
    [(_, seed, result)] = sw.runs_done
    alone = aqmlab.run(set_path(short_fig3, "flows.udp.rate", "1Mbps"), seed=7)
    assert seed == 7 and result == alone


def test_tables_do_not_depend_on_the_number_of_workers(short_fig3):
    grid = {"qdisc.kind": ["red", "choke"], "flows.udp.rate": ["1Mbps", "3Mbps"]}
    one = aqmlab.sweep(short_fig3, grid, seeds=2, jobs=1)
    two = aqmlab.sweep(short_fig3, grid, seeds=2, jobs=2)
    assert one.runs.equals(two.runs)
    assert one.flows.equals(two.flows)


def test_a_bad_point_is_reported_before_any_run(short_fig3, tmp_path):
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match=r"^sweep point qdisc.kind=nonsense: .*nonsense"):
        aqmlab.sweep(short_fig3, {"qdisc.kind": ["red", "nonsense"]}, cache_dir=cache)
    assert not cache.exists() or not any(cache.iterdir())


def test_switching_the_kind_drops_the_keys_the_new_kind_does_not_take(short_fig3):
    # choke-fig3's RED table has limit, min_th and max_th; FQ-CoDel takes only limit.
    sw = aqmlab.sweep(short_fig3, {"qdisc.kind": ["red", "fq_codel"]})
    fq = next(r for label, _, r in sw.runs_done if label["qdisc.kind"] == "fq_codel")
    assert fq.summary["links"][0]["qdisc"] == "fq_codel"
    table = {**short_fig3["qdisc"], "kind": "fq_codel"}
    del table["min_th"], table["max_th"]
    assert fq.summary == aqmlab.run({**short_fig3, "qdisc": table}).summary | {
        "wall_seconds": fq.summary["wall_seconds"]
    }
    # A key the sweep sets itself is never dropped: its error stands.
    with pytest.raises(ValueError, match=r"unknown field `min_th`"):
        aqmlab.sweep(short_fig3, {"qdisc.kind": ["fq_codel"], "qdisc.min_th": [5]})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seeds": 0}, "seeds = 0 must be between 1 and"),
        ({"seeds": [1, 1]}, "repeat a seed"),
        ({"seeds": [-1]}, "seed -1 must be an integer"),
        ({"jobs": 0}, "jobs = 0 must be an integer >= 1"),
        ({"grid": {"qdisc.kind": "red"}}, "must be a list of values"),
        ({"grid": {"qdisc.kind": []}}, "is empty"),
        ({"duration": 30}, "duration must be a string"),
        ({"warmup": "12s"}, "--warmup 12s must be shorter than the scenario's duration"),
        ({"duration": "4s"}, "--duration 4s is not longer than the scenario's warm-up"),
    ],
)
def test_bad_arguments_raise_value_error(short_fig3, kwargs, message):
    kwargs.setdefault("grid", {})
    with pytest.raises(ValueError, match=message):
        aqmlab.sweep(short_fig3, **kwargs)


def test_the_cache_makes_a_repeated_sweep_free(short_fig3, tmp_path):
    first = aqmlab.sweep(short_fig3, {"qdisc.kind": ["choke"]}, seeds=2, cache_dir=tmp_path)
    again = aqmlab.sweep(short_fig3, {"qdisc.kind": ["choke"]}, seeds=2, cache_dir=tmp_path)
    assert (first.simulated, first.cached) == (2, 0)
    assert (again.simulated, again.cached) == (0, 2)
    assert first.runs.equals(again.runs)


# ---- the command line ---------------------------------------------------------------------


def test_warmup_replaces_the_scenarios(short_fig3):
    sw = aqmlab.sweep(short_fig3, {"qdisc.kind": ["choke"]}, warmup="2s", jobs=1)
    [(_, _, result)] = sw.runs_done
    assert result.run.loc[0, "warmup_s"] == pytest.approx(2.0)
    assert result == aqmlab.run(set_path(short_fig3, "qdisc.kind", "choke"), warmup="2s")


def test_cli_writes_labelled_tables(tmp_path):
    import pandas as pd
    import polars as pl

    out = tmp_path / "out"
    proc = run_cli(
        "sweep",
        str(CHOKE_FIG3),
        "--set",
        "qdisc.kind=red,choke",
        "--seeds",
        "2",
        "--duration",
        "25s",
        "--out",
        str(out),
        "-q",
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 runs (4 simulated, 0 from cache)" in proc.stdout
    names = sorted(p.name for p in out.iterdir())
    tables = ["flows.parquet", "groups.parquet", "links.parquet", "runs.parquet"]
    assert names == [
        ".aqmlab-files",
        "cache",
        *tables[:2],
        "hosts.parquet",
        tables[2],
        "paired.parquet",
        "runs.parquet",
        "stats.parquet",
        "summary.json",
    ]
    runs = pd.read_parquet(out / "runs.parquet")
    assert list(runs.columns[:3]) == ["scenario", "qdisc.kind", "seed"] and "udp_goodput_bps" in runs.columns
    assert len(runs) == 4
    for name in tables:
        assert len(pl.read_parquet(out / name)) == len(pd.read_parquet(out / name)) > 0, name
    # No group names a host: the table is there, empty, with its columns.
    assert list(pd.read_parquet(out / "hosts.parquet").columns[-3:]) == ["drops_total", "marks", "jain"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs"] == 4 and summary["keys"] == ["qdisc.kind"]
    # No temporary file is left behind.
    assert not [p for p in out.iterdir() if p.name.startswith(".") and p.name != ".aqmlab-files"]

    # Again as CSV, with --json: the Parquet tables of the first sweep go, the
    # runs come from the cache, and stdout is one JSON object.
    proc = run_cli(
        "sweep", str(CHOKE_FIG3), "--set", "qdisc.kind=red,choke", "--seeds", "2", "--duration", "25s",
        "--out", str(out), "--format", "csv", "--json", "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert (printed["simulated"], printed["cached"]) == (0, 4)
    assert [(r["qdisc.kind"], r["seed"]) for r in printed["runs"]] == list(
        zip(runs["qdisc.kind"], runs["seed"])
    )
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        ".aqmlab-files",
        "cache",
        "flows.csv",
        "groups.csv",
        "hosts.csv",
        "links.csv",
        "paired.csv",
        "runs.csv",
        "stats.csv",
        "summary.json",
    ]
    assert pd.read_csv(out / "runs.csv")["udp_goodput_bps"].tolist() == pytest.approx(
        runs["udp_goodput_bps"].tolist()
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "qdisc.kind"], "expected KEY=VALUE"),
        (["--set", "flows.nope.rate=1Mbps"], "no entry named 'nope'"),
        (["--set", "qdisc.kind=red", "--set", "qdisc.kind=choke"], "given twice"),
        (["--seed-list", "1,x"], "'x' is not an integer"),
        (["--duration", "soon"], "soon"),
        (["--set", "qdisc.limit=-3"], "sweep point qdisc.limit=-3"),
    ],
)
def test_cli_bad_arguments_exit_2_with_one_line(args, message, tmp_path):
    proc = run_cli("sweep", str(CHOKE_FIG3), "--out", str(tmp_path / "o"), "-q", *args)
    assert proc.returncode == 2, proc
    assert proc.stderr.startswith("error: ") and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o" / "runs.parquet").exists()


# ---- keys that name a column, or change nothing ------------------------------------------


def test_a_key_that_names_a_column_gets_a_column_of_its_own(short_fig3):
    # `qdisc` is also the links table's column (each link's kind): once a
    # "cannot insert qdisc, already exists" after every run had finished.
    tables = [{"kind": "droptail", "limit": 300}, {"kind": "sfb"}]
    sw = aqmlab.sweep(short_fig3, {"qdisc": tables}, jobs=1)
    assert sw.columns == {"qdisc": "set.qdisc"}
    links = sw.links
    assert list(links.columns[:3]) == ["scenario", "set.qdisc", "seed"]
    assert set(links["qdisc"]) == {"droptail", "sfb"}  # the table's own column, intact
    assert sorted(set(sw.runs["set.qdisc"])) == sorted(json.dumps(t, sort_keys=True) for t in tables)
    assert len(sw.flows) == 2 * 33 and len(sw.groups) == 4


def test_the_help_texts_whole_table_example_runs(tmp_path):
    proc = run_cli(
        "sweep",
        str(CHOKE_FIG3),
        "--duration",
        "12s",
        "--warmup",
        "4s",
        "--set",
        'qdisc={kind="droptail", limit=300},{kind="sfb"}',
        "--out",
        str(tmp_path / "o"),
        "-q",
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "links.parquet").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "seed=1,2"], "sweep key 'seed' changes no run: each run's seed is one of the sweep's"),
        (["--set", "name=a,b"], "sweep key 'name' changes no run: the scenario's name labels the results"),
        (
            ["--set", "description=a,b", "--set", "qdisc.max_p=0.1,0.2"],
            "sweep key 'description' changes no run",
        ),
    ],
)
def test_a_key_that_changes_no_run_is_refused_before_any_run(args, message, tmp_path):
    out = str(tmp_path / "o")
    proc = run_cli("sweep", str(CHOKE_FIG3), "--duration", "100000s", "--out", out, "-q", *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {message}"), proc.stderr
    assert not (tmp_path / "o" / "cache").exists()


def test_a_qdisc_no_link_uses_is_refused_and_one_on_idle_links_is_warned_about():
    graph = {
        "name": "g",
        "duration": "4s",
        "warmup": "1s",
        "topology": {
            "kind": "graph",
            "nodes": ["a", "b", "c"],
            "links": [
                {"from": "a", "to": "b", "rate": "100Mbps", "delay": "1ms"},
                {"from": "b", "to": "c", "rate": "1Mbps", "delay": "1ms", "qdisc": {"kind": "sfb"}},
            ],
        },
        "qdisc": {"kind": "droptail"},
        "flows": [{"name": "t", "kind": "tcp", "from": "a", "to": "c", "count": 2}],
    }
    # [qdisc] reaches a -> b only, which never queues (100 Mbit/s into 1): the
    # rows come out identical, as in sfb-fig2b.
    warned = r"sweep key 'qdisc.kind' changed no result: .*links\[1\] \(b->c\)"
    with pytest.warns(RuntimeWarning, match=warned):
        sw = aqmlab.sweep(graph, {"qdisc.kind": ["red", "choke"]}, jobs=1)
    assert len(sw.warnings) == 1
    # With a qdisc on every link, [qdisc] reaches none: refused before running.
    graph["topology"]["links"][0]["qdisc"] = {"kind": "droptail"}
    with pytest.raises(ValueError, match=r"sweep key 'qdisc\.kind' changes no run: every link of this graph"):
        aqmlab.sweep(graph, {"qdisc.kind": ["red", "choke"]}, jobs=1)
    # An axis that does change the runs is not warned about.
    sw = aqmlab.sweep(graph, {"topology.links.1.qdisc.kind": ["sfb", "droptail"]}, jobs=1)
    assert sw.warnings == []
