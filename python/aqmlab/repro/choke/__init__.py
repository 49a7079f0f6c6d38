"""The CHOKe paper's experiments (seed 002).

Pan, Prabhakar & Psounis, *CHOKe: a stateless active queue management scheme for
approximating fair bandwidth allocation*, INFOCOM 2000, section III (Figs. 3-10 and
Table I; section IV-C adds three drop percentages of Fig. 5).

The network of Fig. 2 (``scenarios/choke-fig3.toml``, ``choke-fig5.toml``,
``choke-fig9.toml``): m TCP and n UDP sources on 10 Mbps access links, a 1 Mbps
bottleneck, 1 ms on every link, TCP max window 300, 1000-byte packets, a
300-packet buffer. Fig. 7's chain of five routers is ``choke-table1.toml``.
Parameters the paper leaves out are ns-2's defaults of the time (max_p 0.1, w_q
0.002); each is written in the scenario files and in REPRODUCTION.md.

Every tolerance below was fixed before looking at our numbers; REPRODUCTION.md
gives the reasons.

The modules: ``_common`` (the network, the sweeps' rates, the schemes' queues, what
a run is measured by), then one per figure group, each declaring its experiments:
``fig3``, ``fig4``, ``fig5_fig6``, ``table1_fig7``, ``fig8``, ``fig9_fig10``.
Tables II and III (the models of section IV) are :mod:`aqmlab.repro.choke_models`.
:data:`EXPERIMENTS` lists them all, in the order ``aqmlab repro --list`` shows. The
names other code uses are re-exported here (``aqmlab.repro.choke.FIG5_RATES``, ...).
"""

from __future__ import annotations

from aqmlab.repro import choke_models
from aqmlab.repro._helpers import rate
from aqmlab.repro.choke import fig3, fig4, fig5_fig6, fig8, fig9_fig10, table1_fig7
from aqmlab.repro.choke._common import (
    BOTTLENECK,
    CITE,
    FIG5_RATES,
    FIG9_RATES,
    LINK_KBPS,
    PAPER,
    RED_DEFAULTS,
)
from aqmlab.repro.choke.fig5_fig6 import FIG5_DROPS
from aqmlab.repro.choke.fig8 import FIG8_CANDIDATES
from aqmlab.repro.choke.fig9_fig10 import FIG9_VARIANTS
from aqmlab.repro.choke.table1_fig7 import TABLE1, TABLE1_GROUPS, TABLE1_LINKS

#: The paper's experiments, in the order of its figures and tables.
EXPERIMENTS = (
    fig3.EXP_FIG3,
    fig4.EXP_FIG4,
    fig5_fig6.EXP_FIG5,
    fig5_fig6.EXP_FIG6,
    table1_fig7.EXP_TABLE1,
    fig8.EXP_FIG8,
    fig9_fig10.EXP_FIG9,
    fig9_fig10.EXP_FIG10,
    *choke_models.EXPERIMENTS,
)

__all__ = [
    "BOTTLENECK",
    "CITE",
    "EXPERIMENTS",
    "FIG5_DROPS",
    "FIG5_RATES",
    "FIG8_CANDIDATES",
    "FIG9_RATES",
    "FIG9_VARIANTS",
    "LINK_KBPS",
    "PAPER",
    "RED_DEFAULTS",
    "TABLE1",
    "TABLE1_GROUPS",
    "TABLE1_LINKS",
    "rate",
]
