"""The SFB paper's experiments (seed 000).

Feng, Kandlur, Saha & Shin, *Stochastic Fair Blue: A Queue Management Algorithm for
Enforcing Fairness*, INFOCOM 2001, section III (Tables I-II, Figs. 3-8; eq. (1) is
also ``aqmlab model sfb-misclass``).

The network of Fig. 2(b) (``scenarios/sfb-fig2b.toml``: every link 10 ms, as
section III-B sets it; ``scenarios/sfb-fig8.toml``: the figure's own delays). 400
TCP flows from n0-n4 to n5-n9 and non-responsive CBR flows share the 45 Mbps link
A->B, the bottleneck. SFB: 2 x 23 bins, bin size 13, 200 KB (200 packets of 1000
bytes), rate limit 0.16 Mbps. RED and SFRED (the compared schemes) get the same 200
packets; RED's other parameters are not in the paper: ns-2's defaults of the time
(min_th 5, max_th 15, max_p 0.1, w_q 0.002). SFQ with RED per bin, the paper's
fourth scheme (Table I, Fig. 3(d)): 46 queues of 9 packets (414 KB), RED in each
with min_th 2 and max_th 8 packets (2 KB / 8 KB), ns-2's max_p and w_q, packet
round robin (quantum = the 1000-byte packet); ``sfq_bin`` gives a flow's queue.

ECN: the TCP flows are ECN-capable and every scheme (SFB, RED, SFRED, SFQ+RED) marks them
instead of dropping them early; forced, overflow and rate-limit drops stay drops,
and the CBR flows (not ECN-capable) are always dropped. The setup (III-B) does not
mention ECN, but the paper's schemes are marking schemes: BLUE "uses a single
marking probability to mark packets (using ECN)" (section I), SFB's Fig. 1 says
"Mark/drop with probability pmin", SFRED applies Adaptive RED's max_p "just as
BLUE's marking probability can be used in SFB" (III-A); Table I's TCP loss of 0.01
Mbit/s for 400 flows under SFB is impossible if SFB's signal is a drop; and ECN is
a property of the TCP sources, which the paper keeps while it swaps the queue, so
RED and SFRED saw ECN-capable packets too (ns-2's RED marks them when asked,
``setbit_``). ``without_ecn`` turns it off, for comparison.

Fig. 4 (eq. (1) against M for 90 and 900 bins) is measured here too, with
open-loop traffic through the real qdisc (``scenarios/sfb-fig4.toml``).

Every tolerance below was fixed before looking at our numbers; REPRODUCTION.md
gives the reasons.

The modules: ``_common`` (the network, the schemes' queues, eq. (1), what a run is
measured by), then one per figure group, each declaring its experiments:
``table1_fig3``, ``fig4``, ``fig5_fig6``, ``table2_fig7``, ``fig8``.
:data:`EXPERIMENTS` lists them, in the order ``aqmlab repro --list`` shows. The
names other code uses are re-exported here (``aqmlab.repro.sfb.sfq_bin``, ...).
"""

from __future__ import annotations

from aqmlab.repro._helpers import rate
from aqmlab.repro.sfb import fig4, fig5_fig6, fig8, table1_fig3, table2_fig7
from aqmlab.repro.sfb._common import (
    BOTTLENECK,
    BOTTLENECK_ENDS,
    CITE,
    FIG8_LEFT_MS,
    FIG8_RIGHT_MS,
    LINK_MBPS,
    N_TCP,
    NAMES,
    PACKET_BITS,
    PAPER,
    QDISCS,
    misclassification,
    run_numbers,
    sfb,
    sfq_bin,
    without_ecn,
)
from aqmlab.repro.sfb.fig4 import (
    EQ1_QUOTED,
    FIG4_HASH_SEEDS,
    FIG4_LEVELS,
    FIG4_LOW,
    FIG4_M,
    fig4_numbers,
    fig4_scenario,
    sfb_bins,
)
from aqmlab.repro.sfb.fig5_fig6 import HASH_SEEDS
from aqmlab.repro.sfb.table1_fig3 import FIG3_NONRESP, TABLE1, table1_diagnostic
from aqmlab.repro.sfb.table2_fig7 import PERIODS, SERIES_S, TABLE2, period_losses, table2_scenario

#: The paper's experiments, in the order of its tables and figures.
EXPERIMENTS = (
    table1_fig3.EXP_TABLE1,
    table1_fig3.EXP_FIG3,
    fig4.EXP_FIG4,
    fig5_fig6.EXP_FIG5,
    fig5_fig6.EXP_FIG6,
    table2_fig7.EXP_TABLE2,
    fig8.EXP_FIG8,
)

__all__ = [
    "BOTTLENECK",
    "BOTTLENECK_ENDS",
    "CITE",
    "EQ1_QUOTED",
    "EXPERIMENTS",
    "FIG3_NONRESP",
    "FIG4_HASH_SEEDS",
    "FIG4_LEVELS",
    "FIG4_LOW",
    "FIG4_M",
    "FIG8_LEFT_MS",
    "FIG8_RIGHT_MS",
    "HASH_SEEDS",
    "LINK_MBPS",
    "NAMES",
    "N_TCP",
    "PACKET_BITS",
    "PAPER",
    "PERIODS",
    "QDISCS",
    "SERIES_S",
    "TABLE1",
    "TABLE2",
    "fig4_numbers",
    "fig4_scenario",
    "misclassification",
    "period_losses",
    "rate",
    "run_numbers",
    "sfb",
    "sfb_bins",
    "sfq_bin",
    "table1_diagnostic",
    "table2_scenario",
    "without_ecn",
]
