"""Probes in the figures: `aqmlab plot RUN`'s probe panel draws the flows and
groups tables' RTT quantiles (in ms) beside the base RTT, and only when the run
has probes; `aqmlab plot SWEEP`'s default panels take each probe group's p99 RTT."""

from __future__ import annotations

from argparse import Namespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import aqmlab
from aqmlab import plot, plot_sweep
from aqmlab._run import tomllib

from conftest import ROOT, run_cli

RRUL = ROOT / "scenarios" / "rrul-like.toml"
QUANTILES = ["probe_rtt_p50_s", "probe_rtt_p95_s", "probe_rtt_p99_s", "probe_rtt_max_s"]
#: The panels of a run that records every kind but has no probes, as before probes were drawn.
OLD_KINDS = ("queue", "throughput", "goodput", "delay")


def _rrul(probes: int | None = 1, monitor: bool = True) -> dict:
    """rrul-like, 3 s (1 s measured): ``probes`` VoIP probe flows (None: no probe group)."""
    with open(RRUL, "rb") as f:
        s = tomllib.load(f)
    s["duration"], s["warmup"] = "3s", "1s"
    if monitor:
        s["monitor"] = {"flow_series": "500ms", "delays": True}
    voip = next(g for g in s["flows"] if g["kind"] == "probe")
    if probes is None:
        s["flows"].remove(voip)
    else:
        voip["count"] = probes
    return s


@pytest.fixture(scope="module")
def probed():
    return aqmlab.run(_rrul())


@pytest.fixture(scope="module")
def unprobed():
    return aqmlab.run(_rrul(None))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def lines_by_label(ax) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {ln.get_label(): (np.asarray(ln.get_xdata()), np.asarray(ln.get_ydata())) for ln in ax.lines}


def test_the_probe_panel_is_the_groups_quantiles_in_ms_above_the_base_rtt(probed):
    ax = plot.probe_rtt(probed)
    voip = probed.groups.set_index("group").loc["voip"]
    assert voip["probe_echoed"] > 0
    sent, lost = int(voip["probe_sent"]), int(voip["probe_lost"])
    lines = lines_by_label(ax)
    label = f"voip, {lost} of {sent} lost"
    assert sorted(lines) == sorted([label, "_base RTT of voip", "base RTT"])
    x, y = lines[label]
    np.testing.assert_array_equal(x, [0, 1, 2, 3])
    np.testing.assert_allclose(y, voip[QUANTILES].to_numpy(dtype=float) * 1e3, rtol=1e-12)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["p50", "p95", "p99", "max"]
    # The base RTT, a horizontal line in the group's colour: the flows table's.
    flows = probed.flows
    base = flows.loc[flows["group"] == "voip", "base_rtt_s"].min() * 1e3
    _, base_y = lines["_base RTT of voip"]
    np.testing.assert_allclose(base_y, [base, base])
    colour = plot.group_colours(probed)["voip"]
    assert {ln.get_color() for ln in ax.lines if "voip" in ln.get_label()} == {colour}
    # Every probe's RTT is its base RTT and more; the quantiles rise.
    assert np.all(np.diff(y) >= 0) and y[0] >= base
    assert ax.get_ylabel() == "probe RTT (ms)" and ax.get_title() == "Probe RTT"
    # The table it drew from.
    table = plot.probe_table(probed)
    assert list(table.index) == ["voip"]
    np.testing.assert_allclose(table.loc["voip", QUANTILES].to_numpy(dtype=float) * 1e3, y)
    assert table.loc["voip", "base_rtt_s"] * 1e3 == pytest.approx(base)


def test_a_group_of_few_probe_flows_is_drawn_flow_by_flow():
    r = aqmlab.run(_rrul(probes=2, monitor=False))
    flows = r.flows[r.flows["kind"] == "probe"].set_index("id")
    assert len(flows) == 2
    lines = lines_by_label(plot.probe_rtt(r))
    for flow, row in flows.iterrows():
        label = f"flow {flow} (voip), {int(row['probe_lost'])} of {int(row['probe_sent'])} lost"
        np.testing.assert_allclose(lines[label][1], row[QUANTILES].to_numpy(dtype=float) * 1e3, rtol=1e-12)
        np.testing.assert_allclose(lines[f"_base RTT of flow {flow} (voip)"][1], row["base_rtt_s"] * 1e3)
    # By group: the group's quantiles, pooled over both flows.
    voip = r.groups.set_index("group").loc["voip"]
    lines = lines_by_label(plot.probe_rtt(r, by="group"))
    label = f"voip, {int(voip['probe_lost'])} of {int(voip['probe_sent'])} lost"
    np.testing.assert_allclose(lines[label][1], voip[QUANTILES].to_numpy(dtype=float) * 1e3, rtol=1e-12)
    with pytest.raises(ValueError, match='by = "kind" must be "flow" or "group"'):
        plot.probe_rtt(r, by="kind")


def test_the_probe_panel_is_a_default_only_when_the_run_has_probes(probed, unprobed):
    assert plot.default_kinds(unprobed) == OLD_KINDS
    assert plot.default_kinds(probed) == (*OLD_KINDS, "probe")
    titles = [ax.get_title() for ax in plot.figure(unprobed).axes]
    assert titles == [
        "Queue length",
        "Throughput across left->right",
        "Goodput per flow (measured interval)",
        "Queueing delay",
    ]
    fig = plot.figure(probed)
    assert [ax.get_title() for ax in fig.axes] == [*titles, "Probe RTT"]
    # The probe panel alone.
    (ax,) = plot.figure(probed, ["probe"]).axes
    assert ax.get_ylabel() == "probe RTT (ms)"


def test_asking_for_probes_of_a_run_without_says_what_to_add(unprobed):
    reason = plot.missing(unprobed, "probe")
    assert reason is not None and reason.startswith("this run has no probe flows")
    assert 'kind = "probe"' in reason
    for draw in (plot.probe_rtt, plot.probe_table, lambda r: plot.figure(r, ["probe"])):
        with pytest.raises(plot.NotRecorded, match=r'no probe flows: add a flow group of kind = "probe"'):
            draw(unprobed)


def test_the_command_draws_probes_with_all_and_by_name(tmp_path, capsys):
    probed_dir, unprobed_dir = tmp_path / "probed", tmp_path / "unprobed"
    args = ("--duration", "3s", "--warmup", "1s", "-q")
    assert run_cli("run", str(RRUL), "--out", str(probed_dir), *args).returncode == 0
    no_voip = RRUL.read_text().split('[[flows]]\nname = "voip"')[0]
    (tmp_path / "bulk.toml").write_text(no_voip)
    assert run_cli("run", str(tmp_path / "bulk.toml"), "--out", str(unprobed_dir), *args).returncode == 0
    # --kind all: no note for the probe panel of a run without probes.
    for folder in (probed_dir, unprobed_dir):
        proc = run_cli("plot", str(folder))
        assert proc.returncode == 0, proc.stderr
        notes = proc.stderr.splitlines()
        assert len(notes) == 2 and not any("probe" in n for n in notes), notes
    # By name (as the command hands `--kind probe` to Python).
    out = tmp_path / "p.png"
    assert plot.main(Namespace(dir=str(probed_dir), out=str(out), kind="probe")) == 0
    assert out.read_bytes()[:4] == b"\x89PNG" and capsys.readouterr().out.strip() == str(out)
    with pytest.raises(plot.NotRecorded, match="no probe flows"):
        plot.main(Namespace(dir=str(unprobed_dir), out=str(tmp_path / "q.png"), kind="probe"))
    assert not (tmp_path / "q.png").exists()


# ---- a sweep's default panels ---------------------------------------------------------------

GOODPUTS = ["bulk_goodput_bps", "voip_goodput_bps", "goodput_bps"]
JAIN = ["jain_tcp", "jain_all"]


def _old_default_metrics(names):
    """default_metrics before probes: what a sweep without them must still draw."""
    goodputs = [m for m in names if m.endswith("_goodput_bps")]
    rest = [m for m in ("delay_p95_s", "jain_tcp", "jain_all") if m in names]
    return (goodputs[: max(1, plot_sweep.MAX_PANELS - len(rest))] + rest)[: plot_sweep.MAX_PANELS]


def _probe_metrics(group: str) -> list[str]:
    return [*(f"{group}_probe_rtt_{q}_s" for q in ("mean", "p50", "p95", "p99")), f"{group}_probe_lost"]


def test_a_sweeps_default_panels_take_each_probe_groups_p99():
    names = [*GOODPUTS, "delay_p95_s", *_probe_metrics("voip"), *JAIN]
    # The probe group's p99 in place of its goodput, after the delay, before Jain.
    assert plot_sweep.default_metrics(names) == [
        "bulk_goodput_bps",
        "delay_p95_s",
        "voip_probe_rtt_p99_s",
        "jain_tcp",
        "jain_all",
    ]
    # Three probe groups: the first two, as given; at most MAX_PANELS, Jain giving way.
    names = ["b_goodput_bps", "a_goodput_bps", "delay_p95_s"]
    names += [m for g in ("ping", "voip", "game") for m in _probe_metrics(g)] + JAIN
    assert plot_sweep.default_metrics(names) == [
        "b_goodput_bps",
        "delay_p95_s",
        "ping_probe_rtt_p99_s",
        "voip_probe_rtt_p99_s",
        "jain_tcp",
    ]
    assert len(plot_sweep.default_metrics(names)) == plot_sweep.MAX_PANELS
    # Without delays, room for both Jain indices.
    assert plot_sweep.default_metrics([*GOODPUTS, *_probe_metrics("voip"), *JAIN]) == [
        "bulk_goodput_bps",
        "voip_probe_rtt_p99_s",
        *JAIN,
    ]
    # Without probes, what it drew before.
    for names in (
        [*GOODPUTS, "delay_p95_s", *JAIN],
        ["tcp_goodput_bps", "udp_goodput_bps", *JAIN],
        [f"g{i}_goodput_bps" for i in range(7)] + ["delay_p95_s", *JAIN],
        ["delay_p95_s", *JAIN],
    ):
        assert plot_sweep.default_metrics(names) == _old_default_metrics(names), names


def test_a_sweeps_probe_panel_is_the_stats_p99_in_ms(tmp_path):
    sw = aqmlab.sweep(_rrul(monitor=False), {"qdisc.kind": ["droptail", "fq_codel"]}, seeds=2, jobs=1)
    names = list(dict.fromkeys(sw.stats["metric"]))
    assert "voip_probe_rtt_p99_s" in plot_sweep.default_metrics(names)
    sw.write(tmp_path / "sw")
    fig = plot_sweep.figure(tmp_path / "sw")
    (ax,) = [ax for ax in fig.axes if ax.get_ylabel() == "voip probe RTT, p99 (ms)"]
    stats = sw.stats[sw.stats["metric"] == "voip_probe_rtt_p99_s"].set_index("qdisc.kind")
    line = ax.containers[0].lines[0]  # the means; the rest are the error bars
    np.testing.assert_allclose(
        line.get_ydata(), stats.loc[["droptail", "fq_codel"], "mean"].to_numpy() * 1e3, rtol=1e-12
    )
