"""Scenario generators for networks too large to write by hand.

:func:`aggfq` is the network of Fig. 3 of Sun & Shin, *TCP Performance under
Aggregate Fair Queueing* (N TCP sources behind n ingress routers, two core
routers, n egress routers; 2N + 2n + 4 nodes), as a scenario dict for
:func:`aqmlab.run`; :func:`to_toml` writes it as a scenario file.
``python -m aqmlab.networks --flows 10 --aggregates 10 --bottleneck 3200`` prints it
(``scenarios/aggfq-fig3.toml`` is its output with the defaults).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any


def flow_name(aggregate: int, j: int) -> str:
    """The flow group of the ``j``-th TCP source (from 1) of ``aggregate``."""
    return f"a{aggregate:02d}f{j:02d}"


def telnet_name(aggregate: int, j: int) -> str:
    return f"a{aggregate:02d}t{j:02d}"


def aggfq(
    flows: int | Sequence[int] = 10,
    aggregates: int = 10,
    *,
    bottleneck_kbit: int = 3200,
    access_kbit: int = 64,
    access_delay_ms: float = 10,
    edge_kbit: int | None = None,
    edge_delay_ms: float = 2,
    core_delay_ms: float = 2,
    udp_share: float = 0.25,
    udp_weight: float = 10,
    long_rtt: Sequence[tuple[int, int]] = (),
    long_delay_ms: float = 100,
    telnets: int = 0,
    telnet_object: int = 10,
    telnet_think: str = "2s",
    bottleneck_qdisc: Mapping[str, Any] | None = None,
    buffer: int = 100,
    duration: str = "100s",
    warmup: str = "20s",
    max_window: int = 20,
) -> dict[str, Any]:
    """Fig. 3's network as a scenario dict.

    ``flows``: TCP sources per aggregate (one number, or one per aggregate: Fig. 8(a)
    has 11 and 9); ``aggregates``: n. Rates in kbit/s; the IR and ER links default
    to ``access_kbit`` times the largest aggregate (640 kbit/s). ``long_rtt``: the
    (aggregate, j) sources whose own two links have ``long_delay_ms`` (Fig. 7).
    ``telnets``: on/off sources per aggregate (Fig. 8(b)): TCP sending
    ``telnet_object``-packet objects with ``telnet_think`` pauses between them.
    ``bottleneck_qdisc``: CR1 -> CR2's queue (default <aggregate FQ, ALQD+> of
    ``buffer`` packets)."""
    counts = [int(flows)] * aggregates if isinstance(flows, int) else [int(c) for c in flows]
    if len(counts) != aggregates or min(counts) < 1:
        raise ValueError(f"flows: one positive count per aggregate ({aggregates}), got {flows!r}")
    edge = edge_kbit if edge_kbit is not None else access_kbit * max(c + telnets for c in counts)
    udp_kbit = round(udp_share * bottleneck_kbit)
    udp_link = max(10_000, 4 * udp_kbit)
    long = set(long_rtt)

    def ms(x: float) -> str:
        return f"{x:g}ms"

    def link(a: str, b: str, kbit: int, delay: float, **extra: Any) -> dict[str, Any]:
        return {"from": a, "to": b, "rate": f"{kbit}kbit", "delay": ms(delay), "monitor": False, **extra}

    routers = ["CR1", "CR2"]
    routers += [f"IR{i}" for i in range(1, aggregates + 1)] + [f"ER{i}" for i in range(1, aggregates + 1)]
    nodes = list(routers)
    links = [
        {
            "from": "CR1",
            "to": "CR2",
            "rate": f"{bottleneck_kbit}kbit",
            "delay": ms(core_delay_ms),
            "qdisc": dict(
                bottleneck_qdisc
                or {"kind": "wfq", "classify": "aggregate", "buffer": "alqd_plus", "limit": buffer}
            ),
        }
    ]
    groups: list[dict[str, Any]] = []
    for i, count in enumerate(counts, start=1):
        links.append(link(f"IR{i}", "CR1", edge, edge_delay_ms))
        links.append(link("CR2", f"ER{i}", edge, edge_delay_ms))
        sources = [(flow_name(i, j), False) for j in range(1, count + 1)]
        sources += [(telnet_name(i, j), True) for j in range(1, telnets + 1)]
        for name, is_telnet in sources:
            j = int(name[4:])
            delay = long_delay_ms if (not is_telnet and (i, j) in long) else access_delay_ms
            src, dst = f"s.{name}", f"d.{name}"
            nodes += [src, dst]
            links.append(link(src, f"IR{i}", access_kbit, delay))
            links.append(link(f"ER{i}", dst, access_kbit, delay))
            group: dict[str, Any] = {
                "name": name,
                "kind": "web" if is_telnet else "tcp",
                "variant": "reno",
                "count": 1,
                "from": src,
                "to": dst,
                "aggregate": i,
                "packet_size": 1000,
                "max_window": max_window,
            }
            if is_telnet:
                group.update(object_size=telnet_object, think=telnet_think)
            groups.append(group)
    nodes += ["udp-src", "udp-dst"]
    links.append(link("udp-src", "CR1", udp_link, edge_delay_ms))
    links.append(link("CR2", "udp-dst", udp_link, edge_delay_ms))
    groups.append(
        {
            "name": "udp",
            "kind": "cbr",
            "count": 1,
            "from": "udp-src",
            "to": "udp-dst",
            "rate": f"{udp_kbit}kbit",
            "weight": float(udp_weight),
            "aggregate": aggregates + 1,
            "packet_size": 1000,
        }
    )
    return {
        "name": "aggfq-fig3",
        "duration": duration,
        "warmup": warmup,
        "seed": 1,
        "topology": {"kind": "graph", "nodes": nodes, "links": links},
        "qdisc": {"kind": "droptail", "limit": 50},
        "flows": groups,
    }


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return "[" + ", ".join(_toml_value(x) for x in v) + "]"


def _toml_key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and not k.isdigit() else f'"{k}"'


def to_toml(scenario: Mapping[str, Any], header: str = "") -> str:
    """``scenario`` (as :func:`network` builds it) as a scenario file."""
    lines = [f"# {x}".rstrip() for x in header.splitlines()]
    for k, v in scenario.items():
        if not isinstance(v, (Mapping, list)):
            lines.append(f"{k} = {_toml_value(v)}")
    topo = scenario["topology"]
    lines += ["", "[topology]", f"kind = {_toml_value(topo['kind'])}", "nodes = ["]
    nodes = topo["nodes"]
    lines += [
        "    " + ", ".join(_toml_value(n) for n in nodes[k : k + 8]) + "," for k in range(0, len(nodes), 8)
    ]
    lines += ["]", "links = ["]
    lines += [f"    {_toml_value(lk)}," for lk in topo["links"]]
    lines += ["]", "", "[qdisc]            # every link but CR1 -> CR2"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in scenario["qdisc"].items()]
    for group in scenario["flows"]:
        lines += ["", "[[flows]]"] + [f"{k} = {_toml_value(v)}" for k, v in group.items()]
    return "\n".join(lines) + "\n"


def header(argv: Sequence[str] = ()) -> str:
    """The comment that opens the scenario file; ``argv``: the generator's flags."""
    made = " ".join(["python -m aqmlab.networks", *argv])
    return f"""\
Flows in aggregates and a weighted CBR flow cross the core of Fig. 3 of the aggregate FQ paper.

Sun & Shin, TCP Performance under Aggregate Fair Queueing, section V. Written by
`{made}` (python/aqmlab/networks.py, `aggfq()`); its flags
--flows, --aggregates, --bottleneck, --access... give another N, n or rate.

The paper's network (the defaults): N = 100 TCP Reno sources, 10 per ingress router
IR1-IR10, each on its own 64 kbit/s, 10 ms link; IR_i -> CR1 and CR2 -> ER_i at 640
kbit/s, 2 ms; the bottleneck CR1 -> CR2 at 3.2 Mbit/s, 2 ms; each sink on its own 64
kbit/s, 10 ms link from ER_i. The sources of IR_i are aggregate i (weight: the sum
of its flows', 10). A CBR UDP flow at 25% of the bottleneck (800 kbit/s), weight
10, an aggregate of its own (n + 1), on links into CR1 and out of CR2 (the paper
does not say where it enters; no IR link could carry it). 1000-byte packets. The
bottleneck's queue here is <aggregate FQ, ALQD+> with 100 packets; `aqmlab repro
aggfq` swaps it for each scheme and buffer size. Not in the paper (ns-2's
defaults): TCP window 20 packets, every other link DropTail of 50 packets."""


def main(argv: Sequence[str] | None = None) -> int:
    """Prints Fig. 3's network as a scenario file (``scenarios/aggfq-fig3.toml`` with
    the defaults)."""
    p = argparse.ArgumentParser(
        prog="python -m aqmlab.networks", description="Fig. 3's network of Sun & Shin as a scenario file."
    )
    p.add_argument("--flows", type=int, default=10, help="TCP sources per aggregate (N/n), default 10")
    p.add_argument(
        "--aggregates", type=int, default=10, help="aggregates and ingress routers (n), default 10"
    )
    p.add_argument("--bottleneck", type=int, default=3200, help="CR1 -> CR2, kbit/s (3200)")
    p.add_argument("--access", type=int, default=64, help="source and sink links, kbit/s (64)")
    p.add_argument("--edge", type=int, default=None, help="IR -> CR1, CR2 -> ER, kbit/s (access x N/n)")
    p.add_argument("--udp-share", type=float, default=0.25, help="CBR rate / bottleneck (0.25)")
    p.add_argument("--udp-weight", type=float, default=10, help="the CBR flow's weight (10)")
    p.add_argument("--buffer", type=int, default=100, help="CR1 -> CR2's buffer, packets (100)")
    a = p.parse_args(argv)
    given = list(sys.argv[1:] if argv is None else argv)
    if a.flows < 1 or a.aggregates < 1:
        p.error("--flows and --aggregates must be at least 1")
    s = aggfq(
        a.flows,
        a.aggregates,
        bottleneck_kbit=a.bottleneck,
        access_kbit=a.access,
        edge_kbit=a.edge,
        udp_share=a.udp_share,
        udp_weight=a.udp_weight,
        buffer=a.buffer,
    )
    sys.stdout.write(to_toml(s, header(given)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
