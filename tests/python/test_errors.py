"""Bad scenarios and arguments raise ValueError with the message the CLI prints."""

from __future__ import annotations

import pytest

import aqmlab

from conftest import CHOKE_FIG3, cli_error, run_cli


def write(tmp_path, text: str, name: str = "bad.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def raised(*args, **kwargs) -> str:
    with pytest.raises(ValueError) as info:
        aqmlab.run(*args, **kwargs)
    return str(info.value)


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.strip() == needle)


def test_unknown_key_names_the_key_and_its_line(tmp_path, choke_text):
    text = choke_text.replace("max_th = 200", "max_th = 200\nmax_thresh = 3")
    path = write(tmp_path, text)
    message = raised(path)
    assert message == cli_error("run", path)
    assert message.startswith(f"{path}:{line_of(text, 'max_thresh = 3')}: ")
    assert "unknown field `max_thresh`" in message


def test_negative_rate(tmp_path, choke_text):
    text = choke_text.replace('rate = "2Mbps"', 'rate = "-2Mbps"')
    path = write(tmp_path, text)
    message = raised(path)
    assert message == cli_error("run", path)
    line = line_of(text, 'rate = "-2Mbps"')
    assert message.startswith(f"{path}:{line}: ")
    assert "-2Mbps" in message and "must not be negative" in message


def test_min_th_above_max_th(tmp_path, choke_text):
    text = choke_text.replace("min_th = 100", "min_th = 250")
    path = write(tmp_path, text)
    message = raised(path)
    assert message == cli_error("run", path)
    assert message == f"{path}:{line_of(text, 'min_th = 250')}: qdisc.min_th = 250 must be below max_th = 200"


def test_missing_file():
    message = raised("no/such/scenario.toml")
    assert message == cli_error("run", "no/such/scenario.toml")
    assert message.startswith("no/such/scenario.toml: cannot read scenario file")
    # With overrides the file is read in Python, with the same message.
    assert raised("no/such/scenario.toml", warmup="1s") == message


def test_unknown_builtin_name():
    message = raised("no-such-builtin")
    assert message == cli_error("run", "no-such-builtin")
    assert '"no-such-builtin"' in message
    assert raised("no-such-builtin", warmup="1s") == message


def test_bad_duration_argument():
    message = raised("choke-fig3", duration="5 parsecs")
    assert message == cli_error("run", "choke-fig3", "--duration", "5 parsecs")
    assert "parsecs" in message


def test_duration_not_longer_than_the_warmup_names_warmup():
    message = raised("choke-fig3", duration="10s")
    assert message == cli_error("run", "choke-fig3", "--duration", "10s")
    assert message == (
        "--duration 10s is not longer than the scenario's warm-up (20s), after which a run is "
        "measured: give a shorter --warmup too, e.g. --warmup 2s"
    )
    # As suggested, it runs.
    assert run_cli("run", "choke-fig3", "--duration", "10s", "--warmup", "2s", "-q").returncode == 0
    message = raised("choke-fig3", duration="10s", warmup="10s")
    assert message == cli_error("run", "choke-fig3", "--duration", "10s", "--warmup", "10s")
    assert message == "--warmup 10s must be shorter than --duration 10s"
    message = raised("choke-fig3", warmup="200s")
    assert message == cli_error("run", "choke-fig3", "--warmup", "200s")
    assert message.startswith("--warmup 200s must be shorter than the scenario's duration (100s)")
    message = raised("choke-fig3", warmup="soon")
    assert message == cli_error("run", "choke-fig3", "--warmup", "soon")
    assert message.startswith("--warmup: duration 'soon' has no number")


def test_tcs_byte_rate_spellings_are_refused_with_what_to_write(tmp_path, choke_text):
    text = choke_text.replace('rate = "2Mbps"', 'rate = "8kbps"')
    path = write(tmp_path, text)
    message = raised(path)
    assert message == cli_error("run", path)
    assert message.endswith(
        "rate '8kbps': 'kbps' is bytes per second to tc but bits per second to ns-3, so it is not "
        "accepted; write '8kbit' for bits, or '64kbit' or '8KBps' for bytes per second"
    )


@pytest.mark.parametrize("seed", ["x", -1, 1.5, True, 2**64])
def test_bad_seed(seed):
    message = raised("choke-fig3", seed=seed)
    assert message.startswith("seed")
    assert repr(seed) in message or str(seed) in message


def test_the_cli_rejects_a_bad_seed_too():
    proc = run_cli("run", "choke-fig3", "--seed", "x")
    assert proc.returncode == 2
    assert "'x'" in proc.stderr and "--seed" in proc.stderr


def test_bad_duration_type():
    assert "duration" in raised("choke-fig3", duration=30)
    assert "warmup" in raised("choke-fig3", warmup=5)


def test_bad_scenario_type():
    assert "scenario must be" in raised(42)


def test_dict_errors_name_the_key_without_a_line():
    scenario = {"name": "d", "duration": "1s", "topology": {"kind": "dumbbell"}, "flows": []}
    message = raised(scenario)
    assert message.startswith("<dict>: ")
    assert "access" in message  # the first thing missing


def test_overrides_are_checked_like_the_file(choke_text):
    assert raised("choke-fig3", colour="red").startswith("<dict>: unknown field `colour`")
    message = raised("choke-fig3", qdisc={"kind": "red", "min_th": 250, "max_th": 200})
    assert message == "<dict>: qdisc.min_th = 250 must be below max_th = 200"
    message = raised("choke-fig3", qdisc={"kind": "fancy"})
    assert "fancy" in message


def test_a_value_json_cannot_hold():
    assert "cannot hold" in raised("choke-fig3", description=object())


def test_the_cli_exits_0_on_success_and_2_on_a_bad_file(tmp_path):
    assert run_cli("run", str(CHOKE_FIG3), "--duration", "21s", "--quiet").returncode == 0
    bad = write(tmp_path, "name = ")
    proc = run_cli("run", bad)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {bad}:1: ")
    assert raised(bad) == proc.stderr.removeprefix("error: ").rstrip("\n")


def test_qdisc_keys_come_from_the_registry():
    assert {"min_th", "max_th", "limit"} <= set(aqmlab.qdisc_keys("red"))
    assert aqmlab.qdisc_keys("droptail") == ["limit", "drop"]
    assert "kind" not in aqmlab.qdisc_keys("fq_codel")
    with pytest.raises(ValueError, match=r'no qdisc kind "fq_magic"'):
        aqmlab.qdisc_keys("fq_magic")


def _dumbbell(**changes) -> dict:
    scenario = {
        "name": "d",
        "duration": "2s",
        "topology": {
            "kind": "dumbbell",
            "access": {"rate": "10Mbps", "delay": "1ms"},
            "bottleneck": {"rate": "1Mbps", "delay": "1ms"},
        },
        "flows": [{"name": "t", "kind": "tcp"}],
    }
    scenario.update(changes)
    return scenario


def test_edge_inputs_are_clean_errors_that_name_their_key():
    # An array where a table belongs, a qdisc limit past its bound, a window past
    # its bound, more flows than the event queue names: each a ValueError naming
    # the key, before anything is built or allocated.
    topology = _dumbbell()["topology"] | {"bottleneck": ["1Mbps", "1ms"]}
    assert raised(_dumbbell(topology=topology)).startswith(
        '<dict>: topology.bottleneck = ["1Mbps", "1ms"] must be a table'
    )
    for kind in ("codel", "fq_codel", "pie", "wfq", "drr"):
        message = raised(_dumbbell(qdisc={"kind": kind, "limit": 4294967295}))
        assert message.startswith("<dict>: qdisc.limit = 4294967295 must be at most 16777216"), message
    flows = [{"name": "t", "kind": "tcp", "initial_window": 10**9, "max_window": 10**9}]
    assert "max_window = 1000000000 must be from 1 to 1048576 packets" in raised(_dumbbell(flows=flows))
    flows = [{"name": "t", "kind": "tcp", "count": 4_000_000_000}]
    assert "count = 4000000000 brings the flows in all to 4000000000" in raised(_dumbbell(flows=flows))


def test_a_sweep_over_kinds_drops_the_keys_the_new_kind_does_not_take():
    # sfq's table: limit and divisor; red takes limit but not divisor.
    flows = [{"name": "t", "kind": "tcp", "count": 4}, {"name": "u", "kind": "cbr", "rate": "2Mbps"}]
    base = _dumbbell(qdisc={"kind": "sfq", "limit": 50, "divisor": 16}, flows=flows)
    sweep = aqmlab.sweep(base, {"qdisc.kind": ["sfq", "red"]}, jobs=1, duration="1s")
    assert sorted(sweep.runs["qdisc.kind"]) == ["red", "sfq"]


def test_a_sweep_points_error_names_the_file_not_a_dict(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(aqmlab.scenario_text("choke-fig3"))
    with pytest.raises(ValueError) as e:
        aqmlab.sweep(str(path), {"qdisc.limit": [0]}, duration="0.3s", warmup="0.1s")
    message = str(e.value)
    assert "<dict>" not in message, message
    assert message.startswith(f"sweep point qdisc.limit=0: {path} with it: "), message
    assert "limit" in message
