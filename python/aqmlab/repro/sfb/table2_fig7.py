"""SFB paper, Table II and Fig. 7: a non-responsive flow and an oscillating one;
each period's loss from one run's per-flow series.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, within
from aqmlab.repro._helpers import mean_sd, rate, with_flows, with_qdisc
from aqmlab.repro.sfb._common import (
    BOTTLENECK_ENDS,
    CITE,
    PACKET_BITS,
    PAPER,
    QDISCS,
    flow_panels,
    run_numbers,
)

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


# ---- Table II and Fig. 7: the oscillating flow --------------------------------------

PERIODS = ((10, 30), (30, 50), (50, 70))
TABLE2 = {  # period -> (TCP, non-responsive, oscillating, total) loss in Mbit/s
    (10, 30): (0.402, 4.866, 4.871, 10.139),
    (30, 50): (0.358, 4.849, 0.025, 5.232),
    (50, 70): (0.260, 4.898, 4.845, 10.003),
}
#: The per-flow series' interval: every period's ends are multiples of it.
SERIES_S = 10


def table2_scenario(base: Mapping[str, Any]) -> dict[str, Any]:
    """One 5 Mbit/s non-responsive flow (n2 -> n7) and the oscillating flow (n1 ->
    n8): 5 Mbit/s from 10 to 30 s and from 50 to 70 s, 0.1 Mbit/s otherwise. Each
    flow's drops are recorded per 10 s (``[monitor] flow_series``) at the monitored
    link directions, A->B and B->A, so one run gives every period's loss."""
    s = with_qdisc(with_flows(base, "nonresp", rate=rate(5.0)), QDISCS["sfb"], link=BOTTLENECK_ENDS)
    low, high = rate(0.1), rate(5.0)
    s["flows"].append(
        {
            "name": "osc",
            "kind": "cbr",
            "rate": low,
            "count": 1,
            "from": "n1",
            "to": "n8",
            "packet_size": 1000,
            "schedule": [
                {"at": "10s", "rate": high},
                {"at": "30s", "rate": low},
                {"at": "50s", "rate": high},
                {"at": "70s", "rate": low},
            ],
        }
    )
    s["monitor"] = {**s.get("monitor", {}), "flow_series": f"{SERIES_S}s"}
    return s


def period_losses(result: Result, t0: float, t1: float) -> dict[str, float]:
    """Loss (Mbit/s of dropped packets) of the TCP, non-responsive and oscillating
    flows and in total over [t0, t1), from the run's per-flow series (``t0`` and
    ``t1`` multiples of its interval); NaN when the run ends before ``t1``."""
    import numpy as np

    keys = ("loss_tcp_mbps", "loss_nonresp_mbps", "loss_osc_mbps", "loss_total_mbps")
    names = [f"{k}_{t0:g}_{t1:g}" for k in keys]
    if float(result.run["duration_s"].iloc[0]) < t1 - 1e-9:
        return dict.fromkeys(names, float("nan"))
    fs = result.flow_series
    if fs.empty:
        raise ValueError("period_losses needs [monitor] flow_series (table2_scenario sets it)")
    period = round(float(fs["dt_s"].max()) * 1e9)
    if round(t0 * 1e9) % period or round(t1 * 1e9) % period:
        raise ValueError(f"period {t0:g}-{t1:g} s does not tile the series' {period / 1e9:g} s intervals")
    # Interval starts in whole nanoseconds, so 30.000000001 s is not "before 30 s".
    start = np.rint(fs["t_s"].to_numpy(dtype=float) * 1e9)
    inside = fs[(start >= round(t0 * 1e9)) & (start < round(t1 * 1e9))]
    flows = result.flows.set_index("id")
    drops = inside.groupby("flow")["drops"].sum().reindex(flows.index, fill_value=0)
    loss = drops.astype(float) * PACKET_BITS / (t1 - t0) / 1e6
    values = (
        loss[flows["kind"] == "tcp"].sum(),
        loss[flows["group"] == "nonresp"].sum(),
        loss[flows["group"] == "osc"].sum(),
        loss.sum(),
    )
    return {n: float(v) for n, v in zip(names, values)}


def _table2_numbers(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    """The whole measured run's numbers (Fig. 7: 20-100 s) and each period's loss."""
    out = run_numbers(label, result)
    for t0, t1 in PERIODS:
        out.update(period_losses(result, t0, t1))
    return out


def _table2_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    # One run per seed: the periods come from its series, Fig. 7 from its totals.
    return [Point({"qdisc": "sfb"}, table2_scenario(bases["sfb-fig2b"]))]


def _table2_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Table II"
    checks = []
    cols = ("loss_tcp_mbps", "loss_nonresp_mbps", "loss_osc_mbps", "loss_total_mbps")
    names = ("TCP flows", "non-responsive", "oscillating", "total")
    tols = (0.3, 0.15, 0.15, 0.5)
    for (t0, t1), paper in TABLE2.items():
        for col, name, p, tol in zip(cols, names, paper, tols):
            m, sd = mean_sd(runs, f"{col}_{t0:g}_{t1:g}")
            note = "the run ends before this period (--duration)" if m != m else ""
            checks.append(within(f"{t0}-{t1} s: loss, {name}", src, p, m, tol, "Mbit/s", sd=sd, note=note))
    m, sd = mean_sd(runs, "nonresp_mbps")
    checks.append(
        within("Fig. 7: non-responsive throughput", f"{CITE}, Fig. 7", 0.23, m, 0.1, "Mbit/s", sd=sd)
    )
    return checks


def _table2_plot(runs: pd.DataFrame, path: Path) -> None:
    flow_panels(runs, path, [("Fig. 7 (20-100 s)", {})], "SFB Fig. 7 / Table II: oscillating flow")


EXP_TABLE2 = Experiment(
    id="sfb-table2",
    paper=PAPER,
    title="Loss per period with one non-responsive and one oscillating flow (and Fig. 7)",
    source="Table II, Fig. 7, section III-D",
    scenarios=("sfb-fig2b",),
    points=_table2_points,
    measure=_table2_numbers,
    checks=_table2_checks,
    plot=_table2_plot,
    seeds=3,
    notes="One run per seed: each period's loss from its per-flow series (10 s), "
    "Fig. 7 from the run's totals; a period beyond a shortened run (--duration) is OPEN.",
)
