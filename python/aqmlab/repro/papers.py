"""The reproduced papers, written down: :data:`PAPERS` in the order ``aqmlab repro
--list`` shows them (the order they were reproduced in), each a module whose
``EXPERIMENTS`` lists its own, and :data:`EXPERIMENTS`, all of them by id.

A new paper's module or package is added to :data:`PAPERS`; nothing registers
itself when imported.
"""

from __future__ import annotations

from aqmlab.repro import aggfq, breathe, cake, choke, sfb, sfred_nlred
from aqmlab.repro._core import index

PAPERS = (choke, sfb, aggfq, breathe, sfred_nlred, cake)

#: Every experiment, by id: the papers' in the order of :data:`PAPERS`.
EXPERIMENTS = index(e for paper in PAPERS for e in paper.EXPERIMENTS)
