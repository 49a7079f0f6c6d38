"""Per-host fairness under CAKE's isolation modes and the seed papers' schemes.

Høiland-Jørgensen, Täht & Morton, *Piece of CAKE: A Comprehensive Queue
Management Solution for Home Gateways*, LANCS 2018, with tc-cake(8) for what
each isolation mode promises. Not a seed paper: the question the seed papers
would ask of a home router today.

One network (``scenarios/cake-hosts.toml``): host "many" runs 30 bulk CUBIC
flows, host "one" a single one, host "udp" an unresponsive 10 Mbit/s CBR stream,
all through a 20 Mbit/s bottleneck (28 ms base RTT, 1500-byte packets) to
servers of their own. Three hosts, so a third of the link each is per-host fair;
per-flow fair is a 32nd per flow, 30 of them the busy host's.

Schemes: DropTail (100 packets, two BDPs), FQ-CoDel, SFB, CHOKe and AFD at their
defaults; CAKE shaped at the link's rate (as the paper's routers ran it) with
``flows``, ``srchost``, ``dual-srchost`` and ``triple-isolate``. The paper states
no numbers for this set-up; the checks hold each mode to what tc-cake(8) says it
does and COBALT to what the paper says BLUE is for. Every tolerance was fixed
before the first run of the experiment (after one smoke run of the scenario;
REPRODUCTION.md says what it showed).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.repro._core import Check, Experiment, Point, within
from aqmlab.repro._core import trend as trend_check
from aqmlab.repro._helpers import mean_sd, pyplot, save, with_qdisc

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result

PAPER = "cake"
CITE = "Høiland-Jørgensen et al. 2018"
MAN = "tc-cake(8)"
BOTTLENECK = "left->right"
HOSTS = ("many", "one", "udp")
#: Flows per host: what per-flow fairness divides the link by.
FLOWS = {"many": 30, "one": 1, "udp": 1}

CAKE = {"kind": "cake", "bandwidth": "20Mbit"}
#: The schemes: label -> the bottleneck's qdisc.
SCHEMES: dict[str, dict[str, Any]] = {
    "droptail": {"kind": "droptail", "limit": 100},
    "fq_codel": {"kind": "fq_codel"},
    "sfb": {"kind": "sfb"},
    "choke": {"kind": "choke"},
    "afd": {"kind": "afd"},
    "cake-flows": {**CAKE, "isolation": "flows"},
    "cake-srchost": {**CAKE, "isolation": "srchost"},
    "cake-dual-srchost": {**CAKE, "isolation": "dual-srchost"},
    "cake-triple-isolate": {**CAKE, "isolation": "triple-isolate"},
}
NAMES = {
    "droptail": "DropTail",
    "fq_codel": "FQ-CoDel",
    "sfb": "SFB",
    "choke": "CHOKe",
    "afd": "AFD",
    "cake-flows": "CAKE flows",
    "cake-srchost": "CAKE srchost",
    "cake-dual-srchost": "CAKE dual-srchost",
    "cake-triple-isolate": "CAKE triple-isolate",
}


def _points(bases: Mapping[str, dict[str, Any]]) -> list[Point]:
    base = bases["cake-hosts"]
    return [Point({"qdisc": label}, with_qdisc(base, q)) for label, q in SCHEMES.items()]


def _measure(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    hosts = result.hosts
    senders = hosts[hosts["role"] == "sender"].set_index("host")
    flows = result.flows
    udp = flows[flows["group"] == "udp"]
    link = result.links.set_index("name").loc[BOTTLENECK]
    out = {f"share_{h}": float(senders.loc[h, "share"]) for h in HOSTS}
    out.update({f"{h}_mbps": float(senders.loc[h, "goodput_bps"]) / 1e6 for h in HOSTS})
    out["jain_hosts"] = float(result.fairness["hosts"]["jain"])
    out["jain_many"] = float(senders.loc["many", "jain"])
    out["utilization"] = float(link["utilization"])
    out["mean_queue_packets"] = float(link["mean_queue_packets"])
    out["udp_unresponsive_drops"] = float(udp["drops_unresponsive"].sum())
    return out


def _checks(runs: pd.DataFrame) -> list[Check]:
    checks: list[Check] = []
    third = 1 / 3
    # tc-cake(8): dual-srchost "fairness is applied first over source addresses,
    # then over individual flows"; triple-isolate over source and destination
    # addresses first. Each flow here has a destination of its own, so both come
    # to a third of the link per sending host.
    for label in ("cake-dual-srchost", "cake-triple-isolate"):
        src = f"{MAN}, {label.removeprefix('cake-')}"
        for h in HOSTS:
            m, sd = mean_sd(runs, f"share_{h}", qdisc=label)
            checks.append(
                within(
                    f"{NAMES[label]}: host {h}'s share",
                    src,
                    third,
                    m,
                    0.05,
                    "",
                    sd=sd,
                    paper_text="1/3 (fair between hosts first)",
                )
            )
    # srchost: one queue per source host, so a third each as well.
    m, sd = mean_sd(runs, "share_one", qdisc="cake-srchost")
    checks.append(
        within("CAKE srchost: host one's share", f"{MAN}, srchost", third, m, 0.05, "", sd=sd,
               paper_text="1/3 (a queue per source host)")
    )  # fmt: skip
    # flows (and FQ-CoDel, which the paper sets CAKE's host isolation against):
    # per-flow fairness, so host many takes 30 shares of 32.
    for label in ("cake-flows", "fq_codel"):
        src = f"{MAN}, flows" if label == "cake-flows" else f"{CITE}, FQ-CoDel: flow isolation only"
        m, sd = mean_sd(runs, "share_many", qdisc=label)
        checks.append(
            within(f"{NAMES[label]}: host many's share", src, 30 / 32, m, 0.05, "", sd=sd,
                   paper_text="30/32 (fair between flows)")
        )  # fmt: skip
        m, sd = mean_sd(runs, "share_one", qdisc=label)
        checks.append(
            within(f"{NAMES[label]}: host one's share", src, 1 / 32, m, 0.02, "", sd=sd,
                   paper_text="1/32 (fair between flows)")
        )  # fmt: skip
    # COBALT: BLUE is there for the flows CoDel's law does not slow down.
    src = f"{CITE}, COBALT"
    drops = mean_sd(runs, "udp_unresponsive_drops", qdisc="cake-flows")[0]
    checks.append(
        trend_check(
            "CAKE flows: BLUE drops the unresponsive flow",
            src,
            "BLUE handles unresponsive flows",
            drops > 0,
            note=f"{drops:.0f} drops for unresponsiveness a run",
        )
    )
    cake_q = mean_sd(runs, "mean_queue_packets", qdisc="cake-flows")[0]
    codel_q = mean_sd(runs, "mean_queue_packets", qdisc="fq_codel")[0]
    checks.append(
        trend_check(
            "CAKE flows' queue below half FQ-CoDel's",
            src,
            "COBALT holds an unresponsive flow down where CoDel alone does not",
            cake_q < codel_q / 2,
            note=f"mean queue {cake_q:.0f} against {codel_q:.0f} packets",
        )
    )
    return checks


def _table(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    import pandas as pd

    cols = [*(f"share_{h}" for h in HOSTS), "jain_hosts", "jain_many", "utilization",
            "mean_queue_packets", "udp_unresponsive_drops"]  # fmt: skip
    table = runs.groupby("qdisc")[cols].mean().reindex(list(SCHEMES)).round(3)
    table.index = pd.Index([NAMES[k] for k in table.index], name="scheme")
    return {"schemes": table}


def _plot(runs: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    order = list(SCHEMES)
    g = runs.groupby("qdisc")
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.5))
    x = range(len(order))
    bottom = [0.0] * len(order)
    for h in HOSTS:
        vals = g[f"share_{h}"].mean().reindex(order).to_list()
        ax.bar(list(x), vals, bottom=bottom, label=f"host {h} ({FLOWS[h]} flow{'s' * (FLOWS[h] > 1)})")
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.axhline(1 / 3, color="k", lw=0.8, ls="--")
    ax.axhline(2 / 3, color="k", lw=0.8, ls="--")
    ax.set_xticks(list(x), [NAMES[k] for k in order], rotation=35, ha="right")
    ax.set_ylabel("share of the hosts' goodput")
    ax.set_ylim(0, 1.2)  # the legend above the bars
    ax.set_title("each host's share (dashed: thirds)")
    ax.legend(fontsize=8, loc="upper center", ncol=3)
    bx.bar(list(x), g["mean_queue_packets"].mean().reindex(order))
    bx.set_yscale("log")
    bx.set_xticks(list(x), [NAMES[k] for k in order], rotation=35, ha="right")
    bx.set_ylabel("mean queue at the bottleneck (packets)")
    bx.set_title("the queue an unresponsive flow builds")
    fig.suptitle("Per-host fairness: 30 flows, 1 flow and a 10 Mbit/s CBR over 20 Mbit/s")
    save(fig, path)


EXP_HOSTS = Experiment(
    id="cake-hosts",
    paper=PAPER,
    title="Per-host fairness: a host of 30 flows, a host of one and an unresponsive host",
    source="tc-cake(8) isolation modes; COBALT (section on AQM)",
    scenarios=("cake-hosts",),
    points=_points,
    measure=_measure,
    checks=_checks,
    plot=_plot,
    seeds=3,
    extra_tables=_table,
)

EXPERIMENTS = (EXP_HOSTS,)
