"""What the CHOKe paper's experiments share: the network's constants, the sweeps'
rates, each scheme's queue, and what a run is measured by at the bottleneck
(per-flow throughput, drops by reason, the queue). The package's docstring gives
the setup; the statistics over seeds and the plotting are
:mod:`aqmlab.repro._helpers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aqmlab.repro._helpers import pct

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result


PAPER = "choke"
CITE = "Pan et al. 2000"
BOTTLENECK = "left->right"
LINK_KBPS = 1000.0

#: UDP rates of the Fig. 5/6 sweep, Mbit/s (100 kbit/s to 10 Mbit/s, section III-A;
#: the paper's points are not listed, so a log-spaced set including every rate the
#: text quotes a number for: 0.1, 0.5, 1, 3 and 10).
FIG5_RATES = (0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)

#: Rate of each of the five UDP flows in the Fig. 9/10 sweep, Mbit/s (the paper's
#: axis is not in our copy; assumed per flow).
FIG9_RATES = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0)

# ns-2's RED defaults of the time, for the parameters the paper does not state.
RED_DEFAULTS = {"max_p": 0.1, "w_q": 0.002, "mean_pkt_size": 1000}


def qdisc(kind: str, min_th: int, max_th: int, **extra: Any) -> dict[str, Any]:
    """The bottleneck queue of ``kind`` (``droptail``, ``red`` or ``choke``) with
    the given thresholds, on the 300-packet buffer."""
    if kind == "droptail":
        return {"kind": "droptail", "limit": 300}
    q = {"kind": kind, "limit": 300, "min_th": min_th, "max_th": max_th, **RED_DEFAULTS}
    if kind == "choke":
        q["candidates"] = 1
    q.update(extra)
    return q


# ---- measurements -----------------------------------------------------------------


def link_by_flow(result: Result, link: str = BOTTLENECK) -> pd.DataFrame:
    """Per-flow rows of ``link``: throughput (kbit/s), packets across it, group,
    kind, drops by reason."""
    lf = result.link_flows
    lf = lf[lf["link"] == link].set_index("flow")
    flows = result.flows.set_index("id")
    out = flows.copy()
    out["kbps"] = lf["throughput_bps"].reindex(flows.index).fillna(0.0) / 1e3
    out["tx"] = lf["packets"].reindex(flows.index).fillna(0).astype(int)
    out["queued"] = lf["mean_queue_packets"].reindex(flows.index).fillna(0.0)
    return out


def bottleneck_numbers(result: Result) -> dict[str, float]:
    """Throughput, drops by reason and the queue at the bottleneck, per protocol."""
    f = link_by_flow(result)
    udp = f[f["kind"] == "cbr"]
    tcp = f[f["kind"] == "tcp"]
    link = result.links.set_index("name").loc[BOTTLENECK]
    udp_sent = float(udp["sent"].sum())
    return {
        "udp_kbps": float(udp["kbps"].sum()),
        "tcp_kbps": float(tcp["kbps"].sum()),
        "tcp_mean_kbps": float(tcp["kbps"].mean()),
        "udp_flow_max_kbps": float(udp["kbps"].max()),
        "tcp_flow_max_kbps": float(tcp["kbps"].max()),
        "udp_drop_pct": 100 * float(udp["drops_total"].sum()) / udp_sent if udp_sent else float("nan"),
        "udp_match_pct_of_drops": pct(udp["drops_choke_match"].sum(), udp["drops_total"].sum()),
        "tcp_match_pct_of_drops": pct(tcp["drops_choke_match"].sum(), tcp["drops_total"].sum()),
        "mean_queue": float(link["mean_queue_packets"]),
        "utilization": float(link["utilization"]),
        # The UDP flows' share of the time-averaged queue (measured per flow).
        "udp_qshare": pct(udp["queued"].sum(), link["mean_queue_packets"]) / 100,
    }


def measure_bottleneck(label: Mapping[str, Any], result: Result) -> dict[str, float]:
    """An experiment's ``measure``: :func:`bottleneck_numbers`."""
    return bottleneck_numbers(result)
