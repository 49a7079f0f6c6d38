"""The CHOKe paper's model tables (seed 002, section IV): theory and simulation.

Pan, Prabhakar & Psounis, *CHOKe*, INFOCOM 2000. Table II compares front CHOKe's
closed form, p_i = lambda_i / (mu + 2 lambda_i) and T_i = mu p_i, with a simulation
of N Poisson flows into one FIFO with exponential service; Table III gives the
shares of back CHOKe with a memory of the M most recently admitted flow ids (the
stationary distribution of a Markov chain over ordered M-tuples).

Each row here is one run of ``aqmlab queue-lab`` per seed (docs/models.md): the
real ``aqm`` CHOKe qdisc with the front candidate for Table II, the ``mloc`` queue
(the paper's memory rule in front of a FIFO) for Table III, with the models
(``crates/models``, also ``aqmlab model choke-front`` / ``choke-back``) computed in
the same run and reported beside. Two checks per number:

- **theory against the paper's table**, to the printed digits: the model, rounded
  as the paper prints it (3 decimals in Table II, 4 in Table III), equals the
  paper's value; the band is half a unit of the last printed digit;
- **simulation against theory**, within 2% (issue #4's bound): the mean over
  seeds of the simulated value. A million arrivals per run; over seeds 1-20 the
  worst single-run error of these quantities is 1.5% at 400,000 arrivals
  (docs/models.md), so the mean of three runs of a million sits well inside.

Table III's simulations serve at mu = 2 x the total arrival rate: the shares do not
depend on mu (the paper's point), but the queue must be stable, and with M = 0 every
arrival is admitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import QUEUE_LAB, Check, Experiment, Point, band, within
from aqmlab.repro._helpers import mean_sd, pyplot, save

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result

PAPER = "choke"
CITE = "Pan et al. 2000"
PACKETS = 1_000_000

#: Table II (mu = 1): rates, then the paper's simulation and theory columns, each
#: (P_0, T_1, T_2[, T_3]).
TABLE_II: list[tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]] = [
    ((0.5, 1), (0.416, 0.251, 0.333), (0.417, 0.250, 0.333)),
    ((1, 2), (0.267, 0.333, 0.401), (0.267, 0.333, 0.400)),
    ((2, 3), (0.173, 0.399, 0.428), (0.171, 0.400, 0.429)),
    ((3, 4), (0.128, 0.428, 0.444), (0.127, 0.429, 0.444)),
    ((3, 5), (0.117, 0.429, 0.455), (0.117, 0.429, 0.455)),
    ((3, 6), (0.109, 0.429, 0.462), (0.110, 0.429, 0.462)),
    ((0.3, 0.6, 0.9), (0.219, 0.188, 0.274, 0.319), (0.218, 0.188, 0.273, 0.321)),
    ((0.5, 1, 1.5), (0.047, 0.253, 0.328, 0.373), (0.042, 0.250, 0.333, 0.375)),
]

#: Table III: memory M, rates, the paper's T_i (shares of the admitted packets).
TABLE_III: list[tuple[int, tuple[float, ...], tuple[float, ...]]] = [
    (0, (1, 1, 1, 7), (0.1, 0.1, 0.1, 0.7)),
    (1, (1, 1, 1, 7), (0.1875, 0.1875, 0.1875, 0.4375)),
    (2, (1, 1, 1, 7), (0.2273, 0.2273, 0.2273, 0.3182)),
    (3, (1, 1, 1, 7), (0.25, 0.25, 0.25, 0.25)),
    (1, (1, 2, 3, 4), (0.1286, 0.2286, 0.3000, 0.3429)),
    (2, (1, 2, 3, 4), (0.1733, 0.2533, 0.2800, 0.2933)),
    (3, (1, 2, 3, 4, 5), (0.1405, 0.1953, 0.2135, 0.2226, 0.2281)),
    (3, (1, 3, 5, 7, 9), (0.1101, 0.2034, 0.2220, 0.2300, 0.2345)),
]

SIM_TOLERANCE = 0.02


def _rates_text(rates: tuple[float, ...]) -> str:
    return ", ".join(f"{r:g}" for r in rates)


def _printed_digits_check(quantity: str, source: str, paper: float, model: float, decimals: int) -> Check:
    """The model rounded as the paper prints it must equal the paper's value: a band
    of half a unit of the last printed digit, closed, so that an exact tie rounds
    up as the paper's does (0.3 / 1.6 = 0.1875 is printed 0.188; in floating point
    it is 0.18749999999999997, hence the 1e-9)."""
    half = 0.5 * 10.0**-decimals
    return band(
        f"{quantity}, theory",
        source,
        f"{paper:.{decimals}f}",
        model,
        paper - half - 1e-9,
        paper + half + 1e-9,
        "",
        f"±{half:g} (printed digits)",
        paper_value=paper,
        note=f"model {model:.6f}",
    )


def _sim_check(quantity: str, source: str, model: float, runs: pd.DataFrame, row: int, column: str) -> Check:
    mean, sd = mean_sd(runs, column, row=row)
    return within(
        f"{quantity}, simulation vs theory",
        source,
        model,
        mean,
        SIM_TOLERANCE,
        "",
        relative=True,
        sd=sd,
        paper_text=f"theory {model:.4f}",
    )


# ---- Table II: front CHOKe ------------------------------------------------------


def _table2_points(_bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return [
        Point(
            {"row": i + 1, "rates": _rates_text(rates)},
            {
                QUEUE_LAB: {
                    "qdisc": "choke",
                    "candidate": "front",
                    "mu": 1.0,
                    "rates": list(rates),
                    "packets": PACKETS,
                }
            },
        )
        for i, (rates, _, _) in enumerate(TABLE_II)
    ]


def _lab_numbers(result: Result, share: str) -> dict[str, float]:
    """P_0 and per-flow ``share`` (throughput or share of departures), simulated and
    from the model the lab prints beside them."""
    d = result.data
    out = {"p0": d["p0"], "p0_model": d["theory"]["p0"]}
    for i, (sim, th) in enumerate(zip(d["flows"], d["theory"]["flows"]), start=1):
        out[f"t{i}"] = sim[share]
        out[f"t{i}_model"] = th[share]
    return out


def _table2_measure(_label: Mapping[str, Any], result: Result) -> dict[str, float]:
    return _lab_numbers(result, "throughput")


def _table2_checks(runs: pd.DataFrame) -> list[Check]:
    checks = []
    for i, (rates, _, theory) in enumerate(TABLE_II, start=1):
        src = f"{CITE}, Table II"
        first = runs[runs["row"] == i].iloc[0]
        names = ["P0"] + [f"T{k}" for k in range(1, len(rates) + 1)]
        columns = ["p0"] + [f"t{k}" for k in range(1, len(rates) + 1)]
        for name, column, paper in zip(names, columns, theory):
            quantity = f"rates {_rates_text(rates)}: {name}"
            model = float(first[f"{column}_model"])
            checks.append(_printed_digits_check(quantity, src, paper, model, 3))
            checks.append(_sim_check(quantity, src, model, runs, i, column))
    return checks


def _table_plot(
    runs: pd.DataFrame, path: Path, title: str, paper_rows: list[tuple[str, tuple[float, ...]]]
) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(11, 4.8))
    xs, paper_y, sim_y, ticks, groups = [], [], [], [], []
    x = 0
    for row, (label, paper) in enumerate(paper_rows, start=1):
        start = x
        for k, value in enumerate(paper, start=1):
            mean, _ = mean_sd(runs, f"t{k}", row=row)
            xs.append(x)
            paper_y.append(value)
            sim_y.append(mean)
            ticks.append(f"T{k}")
            x += 1
        groups.append(((start + x - 1) / 2, label))
        x += 1
    ax.bar([v - 0.2 for v in xs], paper_y, width=0.4, label="paper")
    ax.bar([v + 0.2 for v in xs], sim_y, width=0.4, label="aqmlab queue lab (mean over seeds)")
    ax.set_xticks(xs)
    ax.set_xticklabels(ticks, fontsize=7)
    for center, label in groups:
        ax.annotate(
            label,
            (center, 0),
            xytext=(0, -22),
            textcoords="offset points",
            ha="center",
            fontsize=7,
            xycoords=("data", "axes fraction"),
        )
    ax.set_ylabel("throughput / share")
    ax.set_title(title)
    ax.legend()
    save(fig, path, dpi=120)


def _table2_plot(runs: pd.DataFrame, path: Path) -> None:
    rows = [(_rates_text(r), t[1:]) for r, _, t in TABLE_II]
    _table_plot(runs, path, "Front CHOKe (Table II): throughputs, mu = 1", rows)


EXP_TABLE2 = Experiment(
    id="choke-table2",
    paper=PAPER,
    title="Front CHOKe: the closed form against the queue lab's real qdisc",
    source="Table II, section IV-A",
    scenarios=(),
    points=_table2_points,
    measure=_table2_measure,
    checks=_table2_checks,
    plot=_table2_plot,
    seeds=3,
    notes="Poisson flows, one FIFO, exponential service (mu = 1), the real CHOKe, front candidate",
)


# ---- Table III: back CHOKe with memory M ------------------------------------------


def _table3_points(_bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    return [
        Point(
            {"row": i + 1, "memory": memory, "rates": _rates_text(rates)},
            {
                QUEUE_LAB: {
                    "qdisc": "mloc",
                    "memory": memory,
                    "mu": 2.0 * sum(rates),
                    "rates": list(rates),
                    "packets": PACKETS,
                }
            },
        )
        for i, (memory, rates, _) in enumerate(TABLE_III)
    ]


def _table3_measure(_label: Mapping[str, Any], result: Result) -> dict[str, float]:
    return _lab_numbers(result, "share")


def _table3_checks(runs: pd.DataFrame) -> list[Check]:
    checks = []
    for i, (memory, rates, paper) in enumerate(TABLE_III, start=1):
        src = f"{CITE}, Table III"
        first = runs[runs["row"] == i].iloc[0]
        for k, value in enumerate(paper, start=1):
            quantity = f"M = {memory}, rates {_rates_text(rates)}: T{k}"
            model = float(first[f"t{k}_model"])
            checks.append(_printed_digits_check(quantity, src, value, model, 4))
            checks.append(_sim_check(quantity, src, model, runs, i, f"t{k}"))
    return checks


def _table3_plot(runs: pd.DataFrame, path: Path) -> None:
    rows = [(f"M={m}: {_rates_text(r)}", t) for m, r, t in TABLE_III]
    _table_plot(runs, path, "Back CHOKe with memory M (Table III): shares", rows)


EXP_TABLE3 = Experiment(
    id="choke-table3",
    paper=PAPER,
    title="Back CHOKe with memory M: the Markov chain against the queue lab",
    source="Table III, section IV-B",
    scenarios=(),
    points=_table3_points,
    measure=_table3_measure,
    checks=_table3_checks,
    plot=_table3_plot,
    seeds=3,
    notes="the paper's memory rule (mloc) in front of a FIFO served at mu = 2 x the total rate",
)

#: Section IV's tables, in the paper's order.
EXPERIMENTS = (EXP_TABLE2, EXP_TABLE3)
