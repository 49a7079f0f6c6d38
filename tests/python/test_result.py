"""Results pickle (as their JSON text), rebuild their frames, and print usefully."""

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
    assert len(data) < 2 * len(result.to_json()) + 200
    back = pickle.loads(data)
    assert back == result
    assert back.summary == result.summary
    assert back.flows.equals(result.flows)
    assert back.queue.equals(result.queue)
    assert back.link_flows.equals(result.link_flows)


def test_json_round_trips(result):
    assert aqmlab.Result.from_json(result.to_json()) == result


def test_summary_is_a_fresh_dict(result):
    s = result.summary
    s["scenario"] = "changed"
    assert result.summary["scenario"] == "choke-fig3"


def test_repr_names_the_run(result):
    text = repr(result)
    assert text.startswith("<aqmlab.Result 'choke-fig3' seed=1")
    assert "group udp: 1 x cbr" in text
    assert "link left->right: red" in text


def test_groups_indexed_by_name(result):
    assert result.groups.index.name == "group"
    assert sorted(result.groups.index) == ["tcp", "udp"]
    assert result.fairness["all"]["n"] == 33
