"""L4S from Python: the ECN codepoint and the scalable variants through a dict,
`aqmlab.sweep` and `aqmlab sweep --set`."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab._run import tomllib

from conftest import run_cli


@pytest.fixture
def short_l4s() -> dict:
    """The built-in l4s-dualpi2 scenario, 6 s long."""
    s = tomllib.loads(aqmlab.scenario_text("l4s-dualpi2"))
    s["duration"] = "6s"
    s["warmup"] = "2s"
    return s


def l4s_delay(result, group: str) -> float:
    d = result.delays
    return float(d[(d["group"] == group) & (d["link"] == "left->right")]["mean_s"].iloc[0])


def test_a_dict_chooses_the_codepoint_and_dualpi2_queues_by_it(short_l4s):
    # On ECT(1) the Prague flows take DualPI2's L queue: well under a millisecond.
    r = aqmlab.run(short_l4s)
    assert l4s_delay(r, "l4s") < 0.002
    # On ECT(0) they queue with the classic flows, behind the PI target.
    short_l4s["flows"][0]["ecn"] = "ect0"
    r0 = aqmlab.run(short_l4s)
    assert l4s_delay(r0, "l4s") > 0.005
    short_l4s["flows"][0]["ecn"] = "ect2"
    with pytest.raises(ValueError, match=r'flows\[0\]\.ecn.*"ect0" or "ect1"'):
        aqmlab.run(short_l4s)


def test_a_sweep_reaches_the_codepoint_and_the_variant(short_l4s):
    sw = aqmlab.sweep(short_l4s, {"flows.l4s.ecn": ["ect0", "ect1"], "flows.l4s.variant": ["dctcp"]}, jobs=2)
    assert sorted(sw.runs["flows.l4s.ecn"]) == ["ect0", "ect1"]
    delay = {label["flows.l4s.ecn"]: l4s_delay(r, "l4s") for label, _, r in sw.runs_done}
    assert delay["ect1"] < 0.002 < 0.005 < delay["ect0"]


def test_the_command_line_sweep_takes_ecn_values(tmp_path):
    out = tmp_path / "sw"
    r = run_cli(
        "sweep",
        "l4s-dualpi2",
        "--set",
        "flows.l4s.ecn=ect0,ect1",
        "--duration",
        "4s",
        "--warmup",
        "1s",
        "-q",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    r = run_cli(
        "sweep", "l4s-dualpi2", "--set", "flows.l4s.ecn=ect9", "--duration", "4s", "--warmup", "1s", "-q"
    )
    assert r.returncode != 0 and '"ect0" or "ect1"' in r.stderr
