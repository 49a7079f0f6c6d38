"""The aggregate fair queueing paper's experiments (seed 003).

Sun & Shin, *TCP Performance under Aggregate Fair Queueing* (section III's livelock,
sections V-VI's simulations, Figs. 4-8, and section VII-A's aggregation advantage,
eqs. (1)-(3)).

The network of Fig. 3 (``scenarios/aggfq-fig3.toml``, written by :func:`aqmlab.networks.aggfq`):
N = 100 TCP Reno sources, each on its own 64 kbit/s, 10 ms link to one of n = 10
ingress routers IR_i (N/n sources each); IR_i -> CR1 and CR2 -> ER_i at 640 kbit/s,
2 ms; the bottleneck CR1 -> CR2 at 3.2 Mbit/s, 2 ms; each sink on its own 64 kbit/s,
10 ms link from ER_i. A CBR UDP flow at 25% of the bottleneck, weight 10, enters at
CR1 and leaves at CR2 on links of its own (the paper does not say where it enters;
no IR link could carry 800 kbit/s). The flows of IR_i form aggregate i; the UDP flow
is aggregate n + 1. 1000-byte packets; 6 runs of 100 s per point, the first 20 s
discarded. Only CR1 -> CR2's queue changes between schemes; every other link is
DropTail of 50 packets (ns-2's default) and none is ever loaded above its rate.

Schemes (section V): <aggregate FQ, ALQD>, <aggregate FQ, ALQD+>, <per-flow FQ,
ALQD> (``kind = "wfq"``, ``classify = "aggregate" | "flow"``), <FIFO, DropTail>,
<FIFO, RED> (min_th 25%, max_th 75% of the buffer, w_q 0.002; max_p 0.1, ns-2's
default: the paper gives none).

Fairness (section V): each TCP flow's goodput averaged over the runs of a point,
then the coefficient of variation (population standard deviation over mean) of
those averages. The figures are lost from our copy: every check is a statement of
the text, with the threshold that makes "much", "significantly", "comparable" and
"virtually identical" a number fixed (and committed) before any full run; see
REPRODUCTION.md.

``python -m aqmlab.networks --flows 10 --aggregates 10 --bottleneck 3200``
prints the network as a scenario file with other N, n or rates.

The modules: ``_common`` (the network's rates and buffers, the schemes' queues,
what a run is measured by, the fairness index, the plots, the text's words as
numbers), then one per figure group, each declaring its experiments: ``fig4_fig5``,
``fig6``, ``fig7_fig8``, ``livelock`` (section III), ``advantage`` (section
VII-A). :data:`EXPERIMENTS` lists them, in the order ``aqmlab repro --list`` shows.
The names other code uses are re-exported here (``aqmlab.repro.aggfq.qdisc``,
``fairness``, ...).
"""

from __future__ import annotations

from aqmlab.repro.aggfq import advantage, fig4_fig5, fig6, fig7_fig8, livelock
from aqmlab.repro.aggfq._common import (
    BOTTLENECK,
    BOTTLENECK_ENDS,
    BUFFERS,
    CITE,
    COMPARABLE,
    FIFO_SCHEMES,
    FQ_SCHEMES,
    MUCH_BETTER,
    MUCH_LARGER,
    MUCH_WORSE,
    PAPER,
    RATE_DEFAULT,
    RATE_LOW_CONGESTION,
    RATE_UNCONGESTED,
    SCHEME_NAMES,
    SEEDS,
    aggregate_fairness,
    cov,
    fairness,
    qdisc,
    summary,
)
from aqmlab.repro.aggfq.advantage import (
    ADV_CASES,
    ADV_LINK_KBIT,
    ADV_OTHERS,
    ADV_RESERVED,
    ADV_TOL,
    advantage_share,
)
from aqmlab.repro.aggfq.fig4_fig5 import VERY_CLOSE
from aqmlab.repro.aggfq.fig6 import IDENTICAL_COV, IDENTICAL_GOODPUT
from aqmlab.repro.aggfq.fig7_fig8 import (
    ALMOST_SAME,
    COMPARED,
    LONG_AGGREGATE_1,
    LONG_ONE_PER_AGGREGATE,
    MUCH_LOWER,
)
from aqmlab.repro.aggfq.livelock import (
    LIVELOCK_BUFFER,
    SEC3_CBR_KBIT,
    SEC3_LINK_KBIT,
    SHARE_TOL,
    SHUT_DOWN,
    udp_share_kbps,
)

#: The paper's experiments: sections V-VI's figures, then sections III and VII-A.
EXPERIMENTS = (
    fig4_fig5.EXP_FIG4,
    fig4_fig5.EXP_FIG5,
    fig6.EXP_FIG6,
    fig7_fig8.EXP_FIG7,
    fig7_fig8.EXP_FIG8,
    livelock.EXP_LIVELOCK,
    advantage.EXP_ADVANTAGE,
)

__all__ = [
    "ADV_CASES",
    "ADV_LINK_KBIT",
    "ADV_OTHERS",
    "ADV_RESERVED",
    "ADV_TOL",
    "ALMOST_SAME",
    "BOTTLENECK",
    "BOTTLENECK_ENDS",
    "BUFFERS",
    "CITE",
    "COMPARABLE",
    "COMPARED",
    "EXPERIMENTS",
    "FIFO_SCHEMES",
    "FQ_SCHEMES",
    "IDENTICAL_COV",
    "IDENTICAL_GOODPUT",
    "LIVELOCK_BUFFER",
    "LONG_AGGREGATE_1",
    "LONG_ONE_PER_AGGREGATE",
    "MUCH_BETTER",
    "MUCH_LARGER",
    "MUCH_LOWER",
    "MUCH_WORSE",
    "PAPER",
    "RATE_DEFAULT",
    "RATE_LOW_CONGESTION",
    "RATE_UNCONGESTED",
    "SCHEME_NAMES",
    "SEC3_CBR_KBIT",
    "SEC3_LINK_KBIT",
    "SEEDS",
    "SHARE_TOL",
    "SHUT_DOWN",
    "VERY_CLOSE",
    "advantage_share",
    "aggregate_fairness",
    "cov",
    "fairness",
    "qdisc",
    "summary",
    "udp_share_kbps",
]
