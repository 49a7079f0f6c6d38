"""Sweep figures: natural order, one colour per value in every panel, units,
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
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["choke", "red"]
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
