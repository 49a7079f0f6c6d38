"""Sweep figures: the sweep's order, one colour per value in every panel, units,
intervals drawn from the stats table, and `aqmlab plot SWEEP_DIR`."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

import aqmlab
from aqmlab import plot_sweep
from aqmlab._run import tomllib

from conftest import CHOKE_FIG3, run_cli


def test_natural_order_puts_udp10k_before_udp100k_and_2mbps_before_10mbps():
    names = ["udp100k", "udp10k", "udp1k", "tcp", "udp2k"]
    assert sorted(names, key=plot_sweep.natural_key) == ["tcp", "udp1k", "udp2k", "udp10k", "udp100k"]
    rates = ["10Mbps", "500kbps", "2Mbps", "0.1Mbps"]
    assert sorted(rates, key=plot_sweep.natural_key) == ["0.1Mbps", "500kbps", "2Mbps", "10Mbps"]
    assert sorted([10, 2.5, 1], key=plot_sweep.natural_key) == [1, 2.5, 10]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    with open(CHOKE_FIG3, "rb") as f:
        s = tomllib.load(f)
    s["duration"], s["warmup"] = "3s", "1s"
    grid = {"qdisc.max_th": [150, 200, 250], "qdisc.kind": ["red", "choke"]}
    sw = aqmlab.sweep(s, grid, seeds=3, jobs=1)
    out = tmp_path_factory.mktemp("sweep")
    sw.write(out)
    return sw, out


def test_a_line_and_band_per_hue_from_the_stats_table(swept):
    sw, _ = swept
    ax = plot_sweep.sweep(sw, x="qdisc.max_th", y="tcp_goodput_bps", hue="qdisc.kind")
    assert ax.get_ylabel() == "tcp goodput (Mbit/s)" and ax.get_xlabel() == "qdisc.max_th"
    # In the grid's order (red, choke), not alphabetical.
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["red", "choke"]
    stats = sw.stats[(sw.stats["metric"] == "tcp_goodput_bps") & (sw.stats["qdisc.kind"] == "red")]
    red = next(line for line in ax.get_lines() if line.get_label() == "red")
    assert list(red.get_xdata()) == [150, 200, 250]
    assert list(red.get_ydata()) == pytest.approx((stats.sort_values("qdisc.max_th")["mean"] / 1e6).tolist())
    # The band spans the interval.
    band = ax.collections[[line.get_label() for line in ax.get_lines()].index("red")]
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(stats["ci_low"].min() / 1e6)
    assert ys.max() == pytest.approx(stats["ci_high"].max() / 1e6)


def test_each_value_keeps_its_colour_in_every_panel(swept):
    _, out = swept
    fig = plot_sweep.figure(out, x="qdisc.max_th", hue="qdisc.kind")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 4
    colours = [{line.get_label(): line.get_color() for line in ax.get_lines()} for ax in panels]
    assert all(c == colours[0] for c in colours) and colours[0]["red"] != colours[0]["choke"]


def test_a_key_left_out_or_an_unknown_metric_is_an_error(swept):
    sw, _ = swept
    with pytest.raises(ValueError, match=r"'qdisc.kind' has several values; give it as hue"):
        plot_sweep.sweep(sw, x="qdisc.max_th", y="jain_tcp")
    with pytest.raises(ValueError, match=r"y='goodput' is no metric of the sweep"):
        plot_sweep.sweep(sw, x="qdisc.max_th", y="goodput", hue="qdisc.kind")
    with pytest.raises(ValueError, match=r"x='rate' is not a key"):
        plot_sweep.sweep(sw, x="rate", y="jain_tcp", hue="qdisc.kind")

    from aqmlab import plot

    assert plot.sweep is plot_sweep.sweep


def test_cli_plots_a_sweep_folder(swept, tmp_path):
    _, out = swept
    proc = run_cli("plot", str(out), "--out", str(tmp_path / "f.png"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


# ---- one run's figure: group colours, many flows, TCP's state -------------------------------


def _groups_run(tcp: int = 24, trace: bool = False):
    s = {
        "name": "groups",
        "duration": "3s",
        "warmup": "1s",
        "topology": {
            "kind": "dumbbell",
            "access": {"rate": "1Gbps", "delay": "1ms"},
            "bottleneck": {"rate": "20Mbps", "delay": "5ms"},
        },
        "qdisc": {"kind": "fq_codel"},
        "monitor": {"flow_series": "500ms", **({"tcp_trace": "100ms"} if trace else {})},
        "flows": [
            {"name": "udp100k", "kind": "cbr", "rate": "100kbit", "count": 3},
            {"name": "tcp", "kind": "tcp", "count": tcp},
            {"name": "udp10k", "kind": "cbr", "rate": "10kbit", "count": 3},
        ],
    }
    return aqmlab.run(s)


def test_a_group_keeps_its_colour_in_every_panel_and_groups_are_in_natural_order():
    from aqmlab import plot

    fig = plot.figure(_groups_run(), ["throughput", "goodput"])
    through, good = fig.axes[:2]
    lines = {line.get_label().removesuffix(" (total)"): line.get_color() for line in through.get_lines()}
    bars = {c.get_label(): c.patches[0].get_facecolor() for c in good.containers}
    assert list(bars) == ["tcp", "udp10k", "udp100k"]
    assert [k for k in lines if k in bars] == ["tcp", "udp10k", "udp100k"]
    for group in bars:
        assert matplotlib.colors.to_rgba(lines[group]) == bars[group]


def test_goodput_of_many_flows_is_a_cdf_per_group(monkeypatch):
    from aqmlab import plot

    monkeypatch.setattr(plot, "MAX_BARS", 20)
    result = _groups_run(tcp=30)
    ax = plot.goodput(result)
    assert not ax.containers  # no bars
    assert "CDF" in ax.get_ylabel() and "36 flows" in ax.get_title()
    steps = {line.get_label(): line for line in ax.get_lines() if "flows)" in line.get_label()}
    assert list(steps) == ["tcp (30 flows)", "udp10k (3 flows)", "udp100k (3 flows)"]
    tcp = steps["tcp (30 flows)"]
    goodputs = sorted(result.flows[result.flows["group"] == "tcp"]["goodput_bps"] / 1e6)
    assert list(tcp.get_xdata()[1:]) == pytest.approx(goodputs)
    assert tcp.get_ydata()[-1] == 1.0


def test_tcp_trace_draws_cwnd_and_rtt_per_flow_in_its_groups_colour():
    from aqmlab import plot

    result = _groups_run(tcp=16, trace=True)
    fig = plot.tcp_trace(result)
    cwnd, rtt = fig.axes[:2]
    assert cwnd.get_ylabel() == "cwnd (packets)" and rtt.get_ylabel() == "smoothed RTT (ms)"
    assert len(cwnd.get_lines()) == plot.MAX_LINES == len(rtt.get_lines())
    colour = plot.group_colours(result)["tcp"]
    assert all(line.get_color() == colour for line in cwnd.get_lines())
    with pytest.raises(plot.NotRecorded, match="tcp_trace"):
        plot.tcp_trace(_groups_run(tcp=2))


def test_categories_keep_the_order_the_sweep_gave_and_numbers_their_own():
    import pandas as pd

    rows = [
        {"k": k, "r": r, "metric": "jain_tcp", "n": 2, "mean": 0.5, "sd": 0.1, "ci_low": 0.4, "ci_high": 0.6}
        for k in ["sfb", "choke", "red"]
        for r in [10, 2]
    ]
    stats = pd.DataFrame(rows)
    ax = plot_sweep.sweep(stats, x="k", y="jain_tcp", hue="r")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["sfb", "choke", "red"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["10", "2"]
    ax = plot_sweep.sweep(stats, x="r", y="jain_tcp", hue="k")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["sfb", "choke", "red"]
    assert list(ax.get_lines()[0].get_xdata()) == [2, 10]  # a line runs left to right
