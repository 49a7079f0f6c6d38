"""aqmlab.emulate and the pip-installed `aqmlab emulate`: the same Result and
tables as a simulated run, on real Linux TCP (needs root and /dev/net/tun)."""

from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest

import aqmlab

from conftest import run_cli

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0 or not pathlib.Path("/dev/net/tun").exists(),
    reason="emulation needs Linux, root and /dev/net/tun",
)

SMALL = {
    "name": "small",
    "duration": "2s",
    "warmup": "500ms",
    "qdisc": {"kind": "choke", "limit": 100, "min_th": 20, "max_th": 60},
    "topology": {
        "kind": "dumbbell",
        "access": {"rate": "100Mbps", "delay": "1ms"},
        "bottleneck": {"rate": "10Mbps", "delay": "5ms"},
    },
    "flows": [
        {"name": "tcp", "kind": "tcp", "count": 2, "variant": "cubic", "start_spread": "0s"},
        {"name": "udp", "kind": "cbr", "rate": "4Mbps"},
    ],
}


def test_emulate_returns_the_tables_of_run_with_the_run_marked_emulated():
    emulated = aqmlab.emulate(SMALL)
    simulated = aqmlab.run(SMALL)
    assert emulated.table_names == simulated.table_names
    for name in emulated.table_names:
        assert emulated.arrow(name).schema == simulated.arrow(name).schema, name
    run = emulated.arrow("run").to_pylist()[0]
    assert run["emulated"] is True
    assert simulated.arrow("run").to_pylist()[0]["emulated"] is False
    assert run["lateness_p99_s"] >= 0
    assert emulated.links.iloc[0]["qdisc"] == "choke"
    assert emulated.groups.set_index("group").loc["udp", "goodput_bps"] > 0


def test_a_graph_is_refused_with_the_clis_message():
    graph = dict(
        SMALL,
        topology={
            "kind": "graph",
            "nodes": ["a", "b"],
            "links": [{"from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms"}],
        },
        flows=[{"name": "tcp", "kind": "tcp", "from": "a", "to": "b"}],
    )
    with pytest.raises(ValueError, match="dumbbells only"):
        aqmlab.emulate(graph)


def test_the_pip_installed_command_compares(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        'name = "small"\nduration = "2s"\nwarmup = "500ms"\n'
        'qdisc = { kind = "droptail", limit = 50 }\n'
        'flows = [{ name = "tcp", kind = "tcp", count = 2, variant = "cubic" }]\n'
        '[topology]\nkind = "dumbbell"\naccess = { rate = "100Mbps", delay = "1ms" }\n'
        'bottleneck = { rate = "10Mbps", delay = "5ms" }\n'
    )
    proc = run_cli("emulate", str(path), "--compare", "--json")
    assert proc.returncode == 0, proc.stderr
    both = json.loads(proc.stdout)
    assert set(both) == {"simulated", "emulated"}
    assert "emulation" in both["emulated"] and "emulation" not in both["simulated"]
    proc = run_cli("emulate", str(path), "--compare")
    assert proc.returncode == 0, proc.stderr
    assert "simulated" in proc.stdout and "udp share" in proc.stdout


def test_bbr_is_emulated_and_simulated():
    flow = {"name": "tcp", "kind": "tcp", "count": 2, "variant": "bbr", "start_spread": "0s"}
    bbr = dict(SMALL, flows=[flow])
    assert aqmlab.run(bbr).links.iloc[0]["utilization"] > 0.9
    emulated = aqmlab.emulate(bbr)
    assert emulated.links.iloc[0]["utilization"] > 0.9
    assert (emulated.flows["goodput_bps"] > 0).all()


def test_the_emulated_flows_count_timeouts_and_fast_recoveries():
    # Eight flows and a CBR flow at twice the link under FQ-CoDel: Linux's TCP
    # recovers (and, without SACK, times out) many times in two seconds.
    busy = dict(
        SMALL,
        qdisc={"kind": "fq_codel"},
        flows=[
            {"name": "tcp", "kind": "tcp", "count": 8, "start_spread": "0s"},
            {"name": "udp", "kind": "cbr", "rate": "20Mbps"},
        ],
    )
    flows = aqmlab.emulate(busy).flows
    tcp = flows[flows["kind"] == "tcp"]
    assert tcp["timeouts"].sum() > 0
    assert tcp["fast_recoveries"].sum() > 0


def test_a_run_that_did_not_keep_time_warns_and_strict_raises(monkeypatch):
    # 100 Gbit/s: a packet time of 120 ns, shorter than one write to a TUN device.
    monkeypatch.setenv("AQMLAB_EMULATE_ANY_RATE", "1")
    fast = dict(SMALL, duration="1s", warmup="0s")
    fast["topology"] = dict(SMALL["topology"], bottleneck={"rate": "100Gbps", "delay": "5ms"})
    with pytest.warns(RuntimeWarning, match="time was not kept"):
        r = aqmlab.emulate(fast)
    run = r.arrow("run").to_pylist()[0]
    assert run["kept_time"] is False and run["late_share"] > 0.01
    with pytest.raises(RuntimeError, match="did not keep time"):
        aqmlab.emulate(fast, strict=True)


def test_the_pip_installed_command_takes_set_and_strict(tmp_path, monkeypatch):
    path = tmp_path / "s.toml"
    path.write_text(
        'name = "small"\nduration = "1s"\nwarmup = "0s"\n'
        'qdisc = { kind = "droptail", limit = 50 }\n'
        'flows = [{ name = "tcp", kind = "tcp", count = 2, variant = "cubic" }]\n'
        '[topology]\nkind = "dumbbell"\naccess = { rate = "100Mbps", delay = "1ms" }\n'
        'bottleneck = { rate = "10Mbps", delay = "5ms" }\n'
    )
    out = tmp_path / "out"
    proc = run_cli("emulate", str(path), "--set", "qdisc.kind=pie", "--json", "-q", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["links"][0]["qdisc"] == "pie"
    assert aqmlab.Result.read(out).links["qdisc.kind"].tolist()[0] == "pie"
    # A 100 Gbit/s bottleneck cannot keep time: --strict exits 1 and writes nothing.
    monkeypatch.setenv("AQMLAB_EMULATE_ANY_RATE", "1")
    strict = tmp_path / "strict"
    proc = run_cli("emulate", str(path), "--set", "topology.bottleneck.rate=100Gbps", "--strict", "-q",
                   "--out", str(strict))  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "--strict: the emulation did not keep time" in proc.stderr
    assert not strict.exists() or not any(strict.iterdir())


def test_a_sweep_of_emulated_runs_is_stored_apart_and_resumes(tmp_path):
    grid = {"qdisc.kind": ["droptail", "pie"]}
    # A slower bottleneck than SMALL's: a packet time of 3.2 ms that a busy CI
    # machine keeps, for a sweep is strict and this test is about the store.
    topology = dict(SMALL["topology"], bottleneck={"rate": "2500kbit", "delay": "5ms"})
    flows = [SMALL["flows"][0], dict(SMALL["flows"][1], rate="1Mbps")]
    small = dict(SMALL, duration="1s", warmup="300ms", topology=topology, flows=flows)
    emulated = aqmlab.sweep(small, grid, seeds=1, emulate=True, cache_dir=tmp_path)
    assert emulated.simulated == 2 and not emulated.failed
    assert list(emulated.runs["qdisc.kind"]) == ["droptail", "pie"]
    assert (emulated.groups["goodput_bps"] > 0).all()
    # Stored: the same sweep again emulates nothing; a simulated sweep of the
    # same points in the same store takes none of the emulated runs.
    again = aqmlab.sweep(small, grid, seeds=1, emulate=True, cache_dir=tmp_path)
    assert (again.simulated, again.cached) == (0, 2)
    simulated = aqmlab.sweep(small, grid, seeds=1, cache_dir=tmp_path)
    assert simulated.simulated == 2
    with pytest.raises(ValueError, match=r"topology\.kind"):
        graph = dict(small, topology={"kind": "graph", "nodes": ["a", "b"], "links": [
            {"from": "a", "to": "b", "rate": "10Mbps", "delay": "5ms"}]},
            flows=[{"name": "t", "kind": "tcp", "from": "a", "to": "b"}])  # fmt: skip
        aqmlab.sweep(graph, emulate=True)
    with pytest.raises(ValueError, match="one at a time"):
        aqmlab.sweep(small, emulate=True, jobs=2)


def test_a_program_runs_through_the_emulated_path_as_a_flow_of_its_group():
    """``app=`` and ``command=``: a Python client in the senders' namespace sends to
    a server in the receivers'; its connection is the group's first flow."""
    server = (
        "python3 -c 'import socket\n"
        "s = socket.socket()\n"
        "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        's.bind(("198.19.0.1", 6000))\n'
        "s.listen()\n"
        "c, _ = s.accept()\n"
        "while c.recv(1 << 16): pass'"
    )
    client = (
        "import socket, time\n"
        "while True:\n"
        "    try:\n"
        '        c = socket.create_connection(("198.19.0.1", 6000)); break\n'
        "    except OSError: time.sleep(0.05)\n"
        'while True: c.sendall(b"x" * 65536)\n'
    )
    scenario = dict(SMALL, flows=[{"name": "app", "kind": "tcp", "count": 1}])
    r = aqmlab.emulate(scenario, app="app", command=["python3", "-c", client], receiver_command=server)
    flows = r.flows
    assert list(flows["group"]) == ["app"]
    assert flows["delivered"].iloc[0] > 100
    assert r.links["utilization"].iloc[0] > 0.8


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"app": 3, "command": ["true"]}, "app = 3"),
        ({"app": "app", "command": "true"}, "command = 'true'"),
        ({"app": "app", "command": ["true", 1]}, "command = "),
        ({"app": "app", "receiver_command": ["true"]}, "receiver_command = "),
        ({"command": ["true"]}, "needs app="),
        ({"app": "app"}, "needs a command"),
        ({"app": "nope", "command": ["true"]}, 'no flow group named "nope"'),
    ],
)
def test_emulate_checks_its_programs_before_anything_starts(kwargs, needle):
    scenario = dict(SMALL, flows=[{"name": "app", "kind": "tcp", "count": 1}])
    with pytest.raises(ValueError, match=needle):
        aqmlab.emulate(scenario, **kwargs)


def test_calibrate_from_the_python_command_keeps_what_it_prints(tmp_path, monkeypatch):
    proc = run_cli("emulate", "--calibrate", "s.toml")
    assert proc.returncode == 2 and "cannot be used with" in proc.stderr
    kept = tmp_path / "calibration.json"
    monkeypatch.setenv("AQMLAB_EMULATE_CALIBRATION", str(kept))
    proc = run_cli("emulate", "--calibrate", "--duration", "100ms", "--json")
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed == json.loads(kept.read_text())
    assert [s["rate_bps"] for s in printed["steps"]][:1] == [10_000_000]
    # Each rate's line as it was measured.
    assert sum("Mbit/s" in line for line in proc.stderr.splitlines()) == len(printed["steps"])
