"""The SFRED / NLRED paper's experiments (seed 004): registered under one paper
name, each point a valid scenario with the scheme where the paper puts it, and
the checks computed end to end on short runs."""

from __future__ import annotations

import aqmlab
from aqmlab.repro import EXPERIMENTS, resolve
from aqmlab.repro import sfred_nlred as S

IDS = [
    "sfred-nlred-fig11",
    "sfred-nlred-fig13-16",
    "sfred-nlred-fig17-18",
    "sfred-nlred-fig19-20",
    "sfred-nlred-fig21",
    "sfred-nlred-fig2-3",
    "sfred-nlred-fig4-6",
    "sfred-nlred-fig7-8",
]


def test_every_experiment_is_registered_under_the_paper():
    assert [e.id for e in resolve("sfred-nlred")] == IDS
    for name in ("sfred-nlred-fig1", "sfred-nlred-fig12"):
        assert aqmlab.scenario_text(name), name  # a built-in too (needs a rebuild)


def test_the_grid_is_two_schemes_by_eight_max_p_by_twelve_n_on_shortened_runs():
    points = EXPERIMENTS["sfred-nlred-fig13-16"].build_points()
    assert len(points) == 2 * 8 * 12
    kinds = {
        (p.label["scheme"], p.scenario["qdisc"]["kind"], p.scenario["qdisc"].get("gentle")) for p in points
    }
    assert kinds == {("gred", "red", True), ("nlred", "nlred", None)}
    assert {p.scenario["duration"] for p in points} == {S.GRID_DURATION}
    assert {p.scenario["qdisc"]["limit"] for p in points} == {120}


def test_fig21_runs_rem_in_byte_mode_with_a_window_above_the_bdp():
    for p in EXPERIMENTS["sfred-nlred-fig21"].build_points():
        flow = p.scenario["flows"][0]
        assert flow["packet_size"] == p.label["size"]
        assert flow["max_window"] * flow["packet_size"] >= 200_000
        if p.label["scheme"] == "rem":
            assert p.scenario["qdisc"] == {"kind": "rem", "limit": 120, "byte_mode": True}


def test_section_3_puts_the_scheme_on_g0_g1_only():
    for exp_id in ("sfred-nlred-fig2-3", "sfred-nlred-fig4-6", "sfred-nlred-fig7-8"):
        for p in EXPERIMENTS[exp_id].build_points():
            links = {(lk["from"], lk["to"]): lk for lk in p.scenario["topology"]["links"]}
            assert links[("G0", "G1")]["qdisc"]["kind"] == p.label["scheme"]
            assert all("qdisc" not in lk for k, lk in links.items() if k != ("G0", "G1"))
            assert p.scenario["qdisc"]["kind"] == "droptail"


def test_the_cbr_experiment_end_to_end_on_short_runs(tmp_path):
    table = aqmlab.repro("sfred-nlred-fig7-8", seeds=1, duration="60s", jobs=1, out=tmp_path)
    assert len(table) == 4
    assert set(table["verdict"]) <= {"PASS", "MISS", "OPEN"}
    runs = EXPERIMENTS["sfred-nlred-fig7-8"]
    assert runs.id == "sfred-nlred-fig7-8"
    assert (tmp_path / "sfred-nlred-fig7-8.png").is_file()
