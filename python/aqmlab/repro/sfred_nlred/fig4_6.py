"""SFRED / NLRED paper, Figs. 4-6 and Table 1 (section 3.1): two FTP and 30 web-like
flows for 2000 s; FTP throughput and web transfer delay.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from aqmlab.repro._core import Check, Experiment, band, trend
from aqmlab.repro._helpers import mean_sd, pyplot, save, select
from aqmlab.repro.sfred_nlred._common import CITE, FAIR_SCHEMES, FIG1, NAMES, PAPER, fair_measure, fair_points

if TYPE_CHECKING:
    import pandas as pd


# Figs. 4-6 and Table 1: two FTP flows and 30 web-like flows for 2000 s.


def _fig4_checks(runs: pd.DataFrame) -> list[Check]:
    src = f"{CITE}, Figs. 4-5 / 3.1"
    dev = {s: mean_sd(runs, "ftp_dev_from_fair", scheme=s)[0] for s in FAIR_SCHEMES}
    checks = [
        trend(
            "SFRED keeps the FTP flows closer to the fair rate than RED",
            src,
            "SFRED enables much more efficient fair bandwidth allocation than RED",
            dev["mrul"] < dev["red"],
            note="mean |x - fair| / fair of the 10 s averages: "
            + ", ".join(f"{NAMES[s]} {v:.2f}" for s, v in dev.items()),
        )
    ]
    src = f"{CITE}, Fig. 6 / 3.1"
    within2, sd = mean_sd(runs, "web_within_2s", scheme="mrul")
    red_within2, _ = mean_sd(runs, "web_within_2s", scheme="red")
    checks.append(
        band(
            "SFRED: web transfers finished within 2 s",
            src,
            "most of the transmissions finish in 2 s",
            within2,
            0.5,
            1.0,
            "fraction",
            ">= 0.5 ('most')",
            sd=sd,
        )
    )
    checks.append(
        trend(
            "SFRED: more web transfers within 2 s than RED",
            src,
            "transfer delay more stable under SFRED than RED",
            within2 > red_within2,
            note=f"SFRED {within2:.2f}, RED {red_within2:.2f}",
        )
    )
    src = f"{CITE}, Table 1 / 3.1"
    for col, what in (("web_mean_s", "mean"), ("web_var_s2", "variance")):
        s, _ = mean_sd(runs, col, scheme="mrul")
        r, _ = mean_sd(runs, col, scheme="red")
        checks.append(
            trend(
                f"SFRED: lower {what} of the web transfer delay than RED",
                src,
                f"SFRED performs better in {what} (Table 1's values lost)",
                s < r,
                note=f"SFRED {s:.3g}, RED {r:.3g}, LRU-RED {mean_sd(runs, col, scheme='lru_red')[0]:.3g}",
            )
        )
    return checks


def _fig4_plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for scheme in FAIR_SCHEMES:
        row = select(runs, scheme=scheme, seed=1).iloc[0]
        cols = sorted(
            (c for c in runs.columns if c.startswith("ftp1_t")), key=lambda c: int(c.split("_t")[1])
        )
        t = [int(c.split("_t")[1]) + 5 for c in cols]
        for g, ls in (("ftp1", "-"), ("ftp2", ":")):
            axes[0].plot(
                t, [row[c.replace("ftp1", g)] for c in cols], ls, lw=0.8, label=f"{NAMES[scheme]} {g}"
            )
        cdf = [c for c in runs.columns if c.startswith("cdf_")]
        xs = [float(c[4:]) for c in cdf]
        ys = select(runs, scheme=scheme)[cdf].mean()
        axes[1].plot(xs, ys.values, marker="o", label=NAMES[scheme])
    axes[0].axhline(float(runs["fair_kbps"].iloc[0]), ls="-.", color="k", label="fair rate")
    axes[0].set_xlabel("time (s)")
    axes[0].set_ylabel("FTP throughput, 10 s averages (kbit/s)")
    axes[0].set_title("Figs. 4-5: 2 FTP + 30 web flows (seed 1)")
    axes[0].legend(fontsize=7)
    axes[1].set_xlabel("web object transfer delay (s)")
    axes[1].set_ylabel("CDF (mean over seeds)")
    axes[1].set_title("Fig. 6")
    axes[1].legend()
    save(fig, path)


def _fig4_table(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    cols = ["web_mean_s", "web_var_s2", "web_within_2s", "web_objects", "ftp1_kbps", "ftp2_kbps"]
    return {"table1": runs.groupby("scheme")[cols].mean()}


EXP_FIG4_6 = Experiment(
    id="sfred-nlred-fig4-6",
    paper=PAPER,
    title="Two FTP and 30 web-like flows: FTP throughput, web transfer delay",
    source="Figs. 4-6 and Table 1, section 3.1",
    scenarios=(FIG1,),
    points=lambda bases: fair_points(bases, web=True),
    measure=fair_measure,
    checks=_fig4_checks,
    plot=_fig4_plot,
    seeds=3,
    extra_tables=_fig4_table,
)
