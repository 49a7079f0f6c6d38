"""Results pickle (as their Arrow IPC bytes), rebuild their frames, compare equal
across replays, and print usefully."""

from __future__ import annotations

import pickle

import pytest

import aqmlab


@pytest.fixture(scope="module")
def result():
    return aqmlab.run("choke-fig3", duration="22s", warmup="2s")


def test_pickle_round_trips(result):
    _ = result.flows  # a cached frame is not what gets pickled
    data = pickle.dumps(result)
    ipc = sum(len(result._ipc[name]) for name in result.table_names)
    assert len(data) < ipc + 1000  # the Arrow bytes and little else
    back = pickle.loads(data)
    assert back == result
    assert back.summary == result.summary
    assert back.flows.equals(result.flows)
    assert back.queue.equals(result.queue)
    assert back.link_flows.equals(result.link_flows)


def test_ipc_round_trips(result):
    assert aqmlab.Result.from_ipc(result.to_ipc()) == result
    with pytest.raises(ValueError):
        aqmlab.Result.from_ipc(b"not arrow")


def test_a_replay_is_equal_and_another_seed_is_not(result):
    again = aqmlab.run("choke-fig3", duration="22s", warmup="2s")
    assert again == result and hash(again) == hash(result)
    assert again.run.loc[0, "events"] == result.run.loc[0, "events"]
    assert aqmlab.run("choke-fig3", duration="22s", warmup="2s", seed=2) != result


def test_every_table_of_the_schema_is_a_property(result):
    from aqmlab import _aqmlab

    assert result.table_names == _aqmlab.table_names()
    for name in result.table_names:
        assert hasattr(aqmlab.Result, name), name
        assert result.arrow(name).num_rows == len(getattr(result, name)) or name == "fairness"


def test_links_carry_drops_and_marks_by_reason(result):
    from aqmlab import _aqmlab

    links = result.links
    for prefix in ("drops", "marks"):
        columns = [f"{prefix}_{r}" for r in _aqmlab.drop_reasons()]
        assert set(columns) <= set(links.columns)
        assert (links[columns].sum(axis=1) == links[f"{prefix}_total"]).all()


def test_summary_is_a_fresh_dict(result):
    s = result.summary
    s["scenario"] = "changed"
    assert result.summary["scenario"] == "choke-fig3"


def test_repr_names_the_run(result):
    text = repr(result)
    assert text.startswith("<aqmlab.Result 'choke-fig3' seed=1")
    assert "group udp: 1 x cbr" in text
    assert "link left->right: red" in text


def test_groups_name_each_group_in_a_column_as_a_sweeps_do(result):
    # A column, as in Sweep.groups and every other table: runs' tables concatenate.
    assert list(result.groups.columns[:4]) == ["scenario", "seed", "group", "kind"]
    assert sorted(result.groups["group"]) == ["tcp", "udp"]
    assert list(result.groups.index) == [0, 1]
    assert result.fairness["all"]["n"] == 33


def test_monitor_tables_reach_python():
    """The [monitor] observers' tables: a CBR flow's series is its rate, and the
    delay quantiles of a saturated DropTail are its full-queue wait."""
    import aqmlab

    scenario = {
        "name": "observed",
        "duration": "6s",
        "warmup": "1s",
        "topology": {
            "kind": "dumbbell",
            "access": {"rate": "100Mbps", "delay": "1ms"},
            "bottleneck": {"rate": "2Mbps", "delay": "5ms"},
        },
        "qdisc": {"kind": "droptail", "limit": 50},
        "monitor": {"flow_series": "1s", "tcp_trace": "500ms", "delays": True, "events": True},
        "flows": [
            {"name": "cbr", "kind": "cbr", "rate": "4Mbps", "start_spread": "0s"},
            {"name": "tcp", "kind": "tcp", "count": 2},
        ],
    }
    r = aqmlab.run(scenario)
    series = r.flow_series
    assert {"link", "t_s", "dt_s", "flow", "packets", "bytes", "throughput_bps"} <= set(series.columns)
    bottleneck = series[(series.link == "left->right") & (series.t_s >= 1.0)]
    link = r.links.set_index("name").loc["left->right"]
    assert abs(bottleneck.bytes.sum() * 8 / 5.0 - link.throughput_bps) < 1e-6 * link.throughput_bps
    assert len(r.tcp_trace) == 2 * 12
    d = r.delays
    overall = d[(d.link == "left->right") & d.group.isna()].iloc[0]
    # 50 packets of 1000 bytes at 2 Mbit/s ahead of most arrivals: about 0.2 s.
    assert 0.15 < overall.p50_s <= overall.p90_s <= overall.p99_s <= overall.max_s < 0.21
    hist = r.delay_histogram
    assert hist[(hist.link == "left->right") & hist.group.isna()]["count"].sum() == overall["count"]
    events = r.events
    measured = events[(events.link == "left->right") & (events.t_s >= 1.0) & ~events.mark]
    assert len(measured) == link.drops_total
    assert r.summary["delays"][0]["link"] == "left->right"


def test_fq_codels_full_queue_drops_are_push_outs_from_the_fattest_queues_head():
    # docs/qdiscs.md, FQ-CoDel: the victims of a full queue are queued packets, so
    # `push_out`; `overflow` is only an arrival that was itself the victim. Linux's
    # `drop_overlimit` is the two summed.
    r = aqmlab.run("choke-fig3", duration="5s", warmup="1s", qdisc={"kind": "fq_codel", "limit": 20})
    link = r.links.set_index("name").loc["left->right"]
    assert link["drops_push_out"] > 100
    assert link["drops_overflow"] < link["drops_push_out"] / 10
    # The flood (UDP) has the fattest queue and loses most of them.
    flows = r.flows.set_index("group")
    assert flows.loc["udp", "drops_push_out"] > flows.loc["tcp", "drops_push_out"].sum()
