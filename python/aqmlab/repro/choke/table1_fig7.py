"""CHOKe paper, Table I and Fig. 7 (section III-B): each flow's throughput at each
link of a chain of five routers (``scenarios/choke-table1.toml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, within
from aqmlab.repro._helpers import pyplot, save
from aqmlab.repro.choke._common import CITE, PAPER

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


# ---- Table I: five routers in a chain ---------------------------------------------

#: Table I, kbit/s: flow id -> (R2-R3, R3-R4, R4-R5); None where the flow is absent.
TABLE1 = {
    0: (107.715, None, None), 1: (117.993, None, None), 2: (108.149, None, None),
    3: (114.630, None, None), 4: (114.277, None, None),
    5: (33.654, 32.244, None), 6: (34.603, 33.328, None), 7: (33.464, 31.674, None),
    8: (35.715, 34.576, None), 9: (33.789, 32.569, None), 10: (34.088, 32.216, None),
    11: (37.396, 36.094, None), 12: (37.884, 36.637, None), 13: (33.979, 32.488, None),
    14: (35.010, 33.193, None),
    15: (33.898, 32.352, 32.352), 16: (33.518, 31.837, 31.837), 17: (34.169, 32.569, 32.569),
    18: (34.820, 32.949, 32.949), 19: (34.820, 33.437, 33.437), 20: (35.362, 34.359, 34.359),
    21: (35.823, 34.494, 34.494), 22: (34.955, 33.138, 33.138), 23: (33.816, 32.379, 32.379),
    24: (36.013, 34.522, 34.522), 25: (740.311, 332.854, 332.854),
}  # fmt: skip
TABLE1_LINKS = ("R2->R3", "R3->R4", "R4->R5")
TABLE1_GROUPS = (  # (name, flow ids)
    ("TCP 0-4", range(0, 5)),
    ("TCP 5-14", range(5, 15)),
    ("TCP 15-24", range(15, 25)),
    ("UDP 25", range(25, 26)),
)


def _table1_points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return [Point({"topology": "chain"}, bases["choke-table1"])]


def _table1_measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    lf = result.link_flows
    out: dict[str, float] = {}
    for _, row in lf.iterrows():
        if row["link"] in TABLE1_LINKS:
            out[f"f{int(row['flow'])}@{row['link']}"] = float(row["throughput_bps"]) / 1e3
    return out


def _table1_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Table I"
    checks = []
    for name, ids in TABLE1_GROUPS:
        for li, link in enumerate(TABLE1_LINKS):
            paper = [TABLE1[i][li] for i in ids]
            if paper[0] is None:
                continue
            cols = [f"f{i}@{link}" for i in ids]
            per_seed = runs[cols].mean(axis=1)
            what = "throughput" if len(paper) == 1 else "mean throughput per flow"
            checks.append(
                within(
                    f"{name}: {what} on {link}",
                    src,
                    sum(paper) / len(paper),
                    float(per_seed.mean()),
                    0.2,
                    "kbit/s",
                    relative=True,
                    sd=float(per_seed.std(ddof=1)) if len(runs) > 1 else None,
                )
            )
    return checks


def _table1_flows(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    import pandas as pd

    rows = []
    for fid, paper in TABLE1.items():
        row: dict[str, Any] = {"flow": fid}
        for li, link in enumerate(TABLE1_LINKS):
            col = f"f{fid}@{link}"
            row[f"paper {link}"] = paper[li]
            row[f"ours {link}"] = round(float(runs[col].mean()), 3) if col in runs and paper[li] else None
        rows.append(row)
    return {"flows": pd.DataFrame(rows).set_index("flow")}


def _table1_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for li, (ax, link) in enumerate(zip(axes, TABLE1_LINKS)):
        ids = [i for i, p in TABLE1.items() if p[li] is not None]
        ours = [runs[f"f{i}@{link}"].mean() for i in ids]
        ax.bar(ids, ours, label="ours")
        ax.plot(ids, [TABLE1[i][li] for i in ids], "k*", label="paper")
        ax.set_yscale("log")
        ax.set_title(link)
        ax.set_xlabel("flow (25 = UDP)")
    axes[0].set_ylabel("throughput (kbit/s)")
    axes[0].legend()
    fig.suptitle("CHOKe Table I: throughput of each flow on each link")
    save(fig, path)


EXP_TABLE1 = Experiment(
    id="choke-table1",
    paper=PAPER,
    title="Each flow's throughput at each link of a five-router chain",
    source="Table I and Fig. 7, section III-B",
    scenarios=("choke-table1",),
    points=_table1_points,
    measure=_table1_measure,
    checks=_table1_checks,
    plot=_table1_plot,
    extra_tables=_table1_flows,
)
