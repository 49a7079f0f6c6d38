"""aqmlab.plot and `aqmlab plot`: the figures show the tables' numbers.

Each test reads back what a function drew (the lines' and bars' data) and holds
it to the table it came from, on the Agg backend."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import aqmlab
from aqmlab import plot
from aqmlab.result import Result

from conftest import run_cli

#: Three TCP flows and a 0.3 Mbit/s CBR flow through RED on a 1 Mbit/s link,
#: with every observer a figure needs.
SCENARIO = """\
name = "plot-test"
duration = "6s"
warmup = "2s"
seed = 3

[topology]
kind = "dumbbell"
access = { rate = "10Mbps", delay = "1ms" }
bottleneck = { rate = "1Mbps", delay = "10ms" }

[qdisc]
kind = "red"
limit = 100
min_th = 20
max_th = 60

[[flows]]
name = "tcp"
kind = "tcp"
count = 3

[[flows]]
name = "udp"
kind = "cbr"
rate = "0.3Mbps"
count = 1

[monitor]
flow_series = "500ms"
delays = true
"""
#: The same run with every optional observer off and no queue samples.
BARE = SCENARIO.replace('flow_series = "500ms"\ndelays = true', 'queue_interval = "0s"')


def scenario_file(folder: Path, text: str = SCENARIO) -> Path:
    path = folder / "scenario.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> Result:
    return aqmlab.run(str(scenario_file(tmp_path_factory.mktemp("scenario"))))


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> Result:
    return aqmlab.run(str(scenario_file(tmp_path_factory.mktemp("bare"), BARE)))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def lines_by_label(ax) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {ln.get_label(): (np.asarray(ln.get_xdata()), np.asarray(ln.get_ydata())) for ln in ax.lines}


def test_the_queue_lines_are_the_sampled_queue(result):
    ax = plot.queue_length(result)
    q = result.queue
    lines = lines_by_label(ax)
    assert sorted(lines) == sorted(set(q["link"]))
    for link, (x, y) in lines.items():
        s = q[q["link"] == link]
        np.testing.assert_array_equal(x, s["t_s"].to_numpy())
        np.testing.assert_array_equal(y, s["packets"].to_numpy(dtype=float))
    # The bottleneck queued something; its samples span the run, warm-up included.
    x, y = lines["left->right"]
    assert y.max() > 0 and x[0] < 2.0 < x[-1]
    assert ax.get_xlabel() == "time (s)" and ax.get_ylabel() == "queue length (packets)"
    # In bytes, one link, on a given Axes.
    _, ax2 = plt.subplots()
    assert plot.queue_length(result, ax2, link="bottleneck", unit="bytes") is ax2
    (x, y), s = lines_by_label(ax2)["left->right"], q[q["link"] == "left->right"]
    np.testing.assert_allclose(y, s["bytes"].to_numpy() / 1e3)
    assert ax2.get_ylabel() == "queue length (kB)"


def test_the_throughput_lines_are_the_flow_series(result):
    ax = plot.throughput(result)
    assert ax.get_ylabel() == "throughput (Mbit/s)" and "left->right" in ax.get_title()
    fs = result.flow_series
    fs = fs[fs["link"] == "left->right"]
    lines = lines_by_label(ax)
    assert sorted(lines) == ["flow 0 (tcp)", "flow 1 (tcp)", "flow 2 (tcp)", "flow 3 (udp)"]
    period = 0.5
    for flow in range(4):
        x, y = lines[f"flow {flow} ({'udp' if flow == 3 else 'tcp'})"]
        # One point per interval of the whole run, at its middle.
        np.testing.assert_allclose(x, np.arange(12) * period + period / 2)
        rows = fs[fs["flow"] == flow].set_index(np.rint(fs.loc[fs["flow"] == flow, "t_s"] / period))
        for i in range(12):
            expected = rows.loc[i, "throughput_bps"] / 1e6 if i in rows.index else 0.0
            assert y[i] == pytest.approx(expected, rel=1e-12), (flow, i)
    # Together no more than the 1 Mbit/s link in any interval, and over the
    # measured interval (2-6 s) the link's throughput.
    total = sum(y for _, y in lines.values())
    assert total.max() <= 1.0 + 1e-9
    link = result.links.set_index("name").loc["left->right"]
    assert total[4:].mean() == pytest.approx(link["throughput_bps"] / 1e6, rel=1e-6)


def test_throughput_by_group_is_the_groups_total(result):
    per_flow = plot.throughput_table(result, by="flow")
    per_group = plot.throughput_table(result, by="group")
    np.testing.assert_allclose(per_group["tcp"], per_flow[[0, 1, 2]].sum(axis=1))
    np.testing.assert_allclose(per_group["udp"], per_flow[3])
    ax = plot.throughput(result, by="group")
    assert sorted(lines_by_label(ax)) == ["tcp (total)", "udp (total)"]
    # Picked flows, by id.
    ax = plot.throughput(result, flows=[3])
    assert list(lines_by_label(ax)) == ["flow 3 (udp)"]
    with pytest.raises(ValueError, match=r"flows = \[7\]: no such flow \(ids 0-3\)"):
        plot.throughput(result, flows=[3, 7])
    with pytest.raises(plot.NotRecorded, match=r'link "nowhere".*left->right'):
        plot.throughput(result, link="nowhere")


def test_the_goodput_bars_are_the_flows_table(result):
    ax = plot.goodput(result)
    f = result.flows.set_index("id")
    heights = {}
    for container in ax.containers:
        for bar in container:
            heights[round(bar.get_x() + bar.get_width() / 2)] = bar.get_height()
    assert heights == pytest.approx((f["goodput_bps"] / 1e6).to_dict(), rel=1e-12)
    x, y = lines_by_label(ax)["max-min fair share"]
    np.testing.assert_allclose(y, f.loc[x, "fair_share_bps"] / 1e6)
    assert ax.get_ylabel() == "goodput (Mbit/s)"
    assert sorted(c.get_label() for c in ax.containers) == ["tcp", "udp"]


def test_the_delay_cdf_is_the_histogram_cumulated(result):
    ax = plot.delay_cdf(result, link="left->right")
    assert ax.get_xlabel() == "queueing delay (ms)"
    ((x, y),) = lines_by_label(ax).values()
    assert np.all(np.diff(y) >= 0) and np.all(np.diff(x) >= 0)
    assert y[0] == 0.0 and y[-1] == pytest.approx(1.0, abs=1e-12)
    # At each bucket's high edge, the fraction of packets in it and below.
    h = result.delay_histogram
    h = h[(h["link"] == "left->right") & h["group"].isna()].sort_values("lo_s")
    cum = h["count"].cumsum().to_numpy() / h["count"].sum()
    np.testing.assert_allclose(y[1::2], cum)
    np.testing.assert_allclose(x[1::2], h["hi_s"].to_numpy() * 1e3)
    # The curve crosses one half at the median the delays table gives (to a bucket).
    d = result.delays
    p50 = d[(d["link"] == "left->right") & d["group"].isna()]["p50_s"].iloc[0] * 1e3
    assert np.interp(0.5, y, x) == pytest.approx(p50, rel=0.02)
    # Per group: one more line per group that crossed the queue.
    ax = plot.delay_cdf(result, link="left->right", by_group=True)
    assert sorted(lines_by_label(ax)) == ["left->right", "left->right, tcp", "left->right, udp"]


def test_a_figure_the_run_did_not_record_says_what_to_switch_on(bare):
    with pytest.raises(plot.NotRecorded, match=r'\[monitor\] flow_series = "1s"'):
        plot.throughput(bare)
    with pytest.raises(plot.NotRecorded, match=r"\[monitor\] delays = true"):
        plot.delay_cdf(bare)
    with pytest.raises(plot.NotRecorded, match=r"\[monitor\] queue_interval"):
        plot.queue_length(bare)
    assert isinstance(plot.NotRecorded("x"), ValueError)
    assert plot.missing(bare, "goodput") is None
    plot.goodput(bare)  # the flows table is always there


def test_a_figure_has_a_panel_per_kind(result):
    fig = plot.figure(result)
    assert [ax.get_title() for ax in fig.axes] == [
        "Queue length",
        "Throughput across left->right",
        "Goodput per flow (measured interval)",
        "Queueing delay",
    ]
    with pytest.raises(ValueError, match="must be one of"):
        plot.figure(result, ["cwnd"])


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_run_folder_reads_back_as_its_result(result, tmp_path, fmt):
    out = tmp_path / "run"
    proc = run_cli("run", str(scenario_file(tmp_path)), "--out", str(out), "--format", fmt, "-q")
    assert proc.returncode == 0, proc.stderr
    back = Result.read(out)
    assert back.table_names == result.table_names
    for name in ("flows", "queue", "flow_series", "delay_histogram"):
        pd.testing.assert_frame_equal(
            getattr(back, name), getattr(result, name), check_dtype=fmt == "parquet", obj=name
        )
    # The figures drawn from the folder are the result's.
    for draw in (plot.queue_length, plot.throughput, plot.delay_cdf):
        ours, theirs = lines_by_label(draw(back)), lines_by_label(draw(result))
        assert ours.keys() == theirs.keys()
        for k in ours:
            np.testing.assert_allclose(ours[k][1], theirs[k][1])


def test_the_command_saves_the_figure(tmp_path):
    out = tmp_path / "run"
    assert run_cli("run", str(scenario_file(tmp_path)), "--out", str(out), "-q").returncode == 0
    proc = run_cli("plot", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out / "plot-all.png") and proc.stderr == ""
    assert (out / "plot-all.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    proc = run_cli("plot", str(out), "--kind", "delay", "--out", str(tmp_path / "d.svg"))
    assert proc.returncode == 0, proc.stderr
    assert b"<svg" in (tmp_path / "d.svg").read_bytes()[:400]


def test_the_command_says_what_is_missing(tmp_path):
    out = tmp_path / "bare"
    assert run_cli("run", str(scenario_file(tmp_path, BARE)), "--out", str(out), "-q").returncode == 0
    # Asked for by name: an error naming the [monitor] key.
    proc = run_cli("plot", str(out), "--kind", "throughput")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert 'flow_series = "1s"' in proc.stderr
    assert not list(out.glob("plot-*"))
    # All: what there is, and a note for each panel left out.
    proc = run_cli("plot", str(out))
    assert proc.returncode == 0, proc.stderr
    notes = proc.stderr.splitlines()
    assert [n.split(":")[0] for n in notes] == ["note"] * 3
    assert any("delays = true" in n for n in notes) and any("queue_interval" in n for n in notes)
    assert (out / "plot-all.png").is_file()


def test_a_folder_that_is_not_a_run_is_a_usage_error(tmp_path):
    proc = run_cli("plot", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "no such folder" in proc.stderr
    proc = run_cli("plot", str(tmp_path))
    assert proc.returncode == 2 and "not the output of `aqmlab run --out`" in proc.stderr
    (tmp_path / "runs.parquet").write_bytes(b"")
    assert "a sweep's tables" in run_cli("plot", str(tmp_path)).stderr
    # Tables without summary.json: a run that did not finish.
    out = tmp_path / "run"
    assert run_cli("run", str(scenario_file(tmp_path)), "--out", str(out), "-q").returncode == 0
    (out / "summary.json").unlink()
    proc = run_cli("plot", str(out))
    assert proc.returncode == 2 and "did not finish" in proc.stderr


def test_many_flows_are_drawn_by_group_then_by_kind(tmp_path):
    # 13 one-flow UDP groups and 3 TCP flows: 16 flows, 14 groups, 2 kinds.
    udp = "".join(
        f'[[flows]]\nname = "u{i}"\nkind = "cbr"\nrate = "20kbit"\ncount = 1\n\n' for i in range(13)
    )
    text = SCENARIO.replace('[[flows]]\nname = "udp"\nkind = "cbr"\nrate = "0.3Mbps"\ncount = 1\n\n', udp)
    r = aqmlab.run(str(scenario_file(tmp_path, text)))
    assert len(r.flows) == 16 and r.flows["group"].nunique() == 14
    ax = plot.throughput(r)
    assert sorted(lines_by_label(ax)) == ["cbr (total)", "tcp (total)"]
    kinds = plot.throughput_table(r, by="kind")
    np.testing.assert_allclose(kinds.sum(axis=1), plot.throughput_table(r, by="flow").sum(axis=1))
    assert sorted(c.get_label() for c in plot.goodput(r).containers) == ["cbr", "tcp"]
