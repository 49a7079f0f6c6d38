"""An aqmlab scenario (the dict its TOML file holds) as an ns-2.35 network: the spec
file `peer.tcl` reads.

`spec(scenario, seed)` returns the spec's text and what the results need to read it
back (flows, monitored links, the measured interval). What ns-2.35 cannot run as
aqmlab does raises `Unsupported` with the reason, so a caller can skip that point
and say why. bench/ns2/README.md lists what is matched and what is not.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

#: aqmlab's TCP model where the scenario says nothing (crates/sim/src/tcp/mod.rs,
#: docs/tcp.md), in ns-2's Agent/TCP variables. Every one of them differs from
#: ns-2.35's own default, which is why each is set.
TCP_MATCHED = {
    "windowInit_": 1,  # aqmlab initial_window 1; ns-2.35: 2
    "syn_": "false",  # no handshake; ns-2.35 sends a SYN first
    "minrto_": 0.2,  # aqmlab min_rto 200 ms; ns-2.35: 0.2 as well, 1999's ns-2: none
    "maxrto_": 60,  # aqmlab max_rto 60 s
    "rtxcur_init_": 1.0,  # aqmlab initial_rto 1 s; ns-2.35: 3 s
    "tcpTick_": 0.001,  # aqmlab granularity 1 ms; ns-2.35: 10 ms
    "singledup_": 0,  # limited transmit off; ns-2.35: on
    "delay_growth_": "true",
    "maxburst_": 0,
    "overhead_": 0,
    "tcpip_base_hdr_size_": 40,  # aqmlab's packet_size counts 40 B of headers
    "timestamps_": "false",
    "ts_option_size_": 0,
    "ecn_": 0,
    # aqmlab's reno_bugfix (on by default) is ns-2's bugFix_: no second fast
    # retransmit until the ACK passes the highest packet sent at the first.
    "bugFix_": "true",
    "newreno_changes_": 0,
    # aqmlab's NewReno is impatient by default (newreno_timer; RFC 6582), as
    # ns-2.35's newreno_changes1_ 1.
    "newreno_changes1_": 1,
    "partial_window_deflation_": 1,
}

#: aqmlab `newreno_timer` (when the scenario names it) -> ns-2's newreno_changes1_.
NEWRENO_TIMER = {"slow_but_steady": 0, "impatient": 1}

VARIANTS = {"reno": "Reno", "newreno": "Newreno", "sack": "Sack1"}

#: aqmlab's defaults for the keys the translation reads (README.md, docs/qdiscs.md).
DROPTAIL_LIMIT = 1000
FLOW_DEFAULTS = {"packet_size": 1000, "start": "0s", "start_spread": "1s", "count": 1}
TCP_DEFAULTS = {
    "variant": "newreno",
    "max_window": 131,
    "initial_window": 1,
    "min_rto": "200ms",
    "delayed_ack": False,
    "delack_timeout": "100ms",
    "limited_transmit": False,
    "ecn": False,
}
RED_DEFAULTS = {
    "limit": 1000,
    "min_th": 5,
    "max_th": 15,
    "max_p": 0.1,
    "w_q": 0.002,
    "mean_pkt_size": 500,
    "wait": True,
    "ecn": False,
    "gentle": False,
    "adaptive": False,
    "byte_mode": False,
}
REM_DEFAULTS = {
    "limit": 50,
    "gamma": 0.001,
    "phi": 1.001,
    "alpha": 0.1,
    "b0": 20.0,
    "update_interval": "2ms",
    "in_weight": 1.0,
    "mean_pkt_size": 1000,
    "byte_mode": False,
    "ecn": False,
}


class Unsupported(Exception):
    """ns-2.35 has no matching model of this part of the scenario."""


@dataclass
class Flow:
    id: int
    group: str
    kind: str  # "tcp" or "cbr"
    packet_size: int


@dataclass
class Spec:
    text: str
    duration: float
    warmup: float
    flows: list[Flow]
    links: dict[str, float] = field(default_factory=dict)  # monitored: name -> rate (bit/s)
    notes: list[str] = field(default_factory=list)


# ---- units ------------------------------------------------------------------------


def seconds(text: str) -> float:
    from aqmlab import _aqmlab

    return _aqmlab.parse_duration(str(text)) / 1e9


def bps(text: str) -> int:
    from aqmlab import _aqmlab

    return _aqmlab.parse_rate(str(text))


def ns_rate(text: str) -> str:
    return f"{bps(text)}b"


def ns_delay(text: str) -> str:
    return f"{seconds(text)!r}s"


def tcl_bool(b: Any) -> str:
    return "true" if b else "false"


# ---- queues -----------------------------------------------------------------------


def queue(q: dict[str, Any] | None, packet_size: int, nflows: int) -> tuple[str, list[Any]]:
    """(ns-2 queue class, [variable, value, ...]) for the aqmlab qdisc table `q`."""
    if q is None:
        q = {"kind": "droptail"}
    kind = q.get("kind")
    if "tc" in q:
        raise Unsupported("a qdisc given as a tc line")
    if kind == "droptail":
        _known(q, {"limit", "drop"})
        # ns-2.35's DropTail drops an arrival once length + 1 >= limit_: it holds
        # limit_ - 1 packets besides the one being sent, as aqmlab's limit counts.
        limit = q.get("limit", DROPTAIL_LIMIT)
        front = q.get("drop", "tail") == "front"
        return "DropTail", ["limit_", limit + 1, "drop_front_", tcl_bool(front), "queue_in_bytes_", "false"]
    if kind == "red":
        p = {**RED_DEFAULTS, **q}
        _known(q, set(RED_DEFAULTS) | {"adapt_interval"})
        if p["adaptive"]:
            raise Unsupported("RED adaptive = true (ns-2's adaptive_ also adapts its thresholds' use)")
        if p["byte_mode"]:
            raise Unsupported("RED byte_mode = true (ns-2's byte mode also limits the queue in bytes)")
        return "RED", [
            # ns-2.35's RED holds limit_ packets besides the one being sent.
            "limit_", p["limit"],
            "bytes_", "false",
            "queue_in_bytes_", "false",
            "thresh_", p["min_th"],
            "maxthresh_", p["max_th"],
            "q_weight_", p["w_q"],
            "linterm_", 1.0 / p["max_p"],
            "mark_p_", p["max_p"],
            "use_mark_p_", "false",
            "gentle_", tcl_bool(p["gentle"]),
            "wait_", tcl_bool(p["wait"]),
            "setbit_", tcl_bool(p["ecn"]),
            "mean_pktsize_", p["mean_pkt_size"],
            "drop_tail_", "true",
            "drop_front_", "false",
            "drop_rand_", "false",
            "cautious_", 0,
            "adaptive_", 0,
            "summarystats_", "false",
        ]  # fmt: skip
    if kind == "rem":
        p = {**REM_DEFAULTS, **q}
        _known(q, set(REM_DEFAULTS))
        if p["alpha"] != 0.1:
            raise Unsupported("REM alpha other than 0.1 (written into ns-2's rem.cc)")
        if p["ecn"]:
            raise Unsupported("REM with ecn (ns-2 marks at dequeue and spares non-ECN packets)")
        return "REM", [
            "limit_", p["limit"] + 1,  # ns-2's qlim_ counts the packet being sent
            "gamma_", p["gamma"],
            "phi_", p["phi"],
            "inw_", p["in_weight"],
            "pupdtime_", seconds(p["update_interval"]),
            "pbo_", p["b0"],
            "mean_pktsize_", p["mean_pkt_size"],
            "markpkts_", "false",
            "qib_", tcl_bool(p["byte_mode"]),
        ]  # fmt: skip
    if kind == "drr":
        _known(q, {"classify", "buffer", "limit", "quantum"})
        if q.get("classify", "flow") != "flow":
            raise Unsupported("DRR per aggregate (ns-2's DRR classifies by address only)")
        if q.get("buffer", "lqd") != "lqd":
            raise Unsupported(f"DRR buffer = {q['buffer']!r} (ns-2's DRR drops from the longest queue)")
        limit = q.get("limit", 1000)
        # ns-2's DRR limits bytes (blimit_) and drops from the longest queue;
        # mask_ 0 classifies by full address (node and port: one flow per class),
        # and enough buckets_ that no two flows hash together.
        return "DRR", [
            "limit_", limit,
            "blimit_", limit * packet_size,
            "quantum_", q.get("quantum", 1514),
            "buckets_", max(64, 8 * nflows),
            "mask_", 0,
        ]  # fmt: skip
    if kind == "sfq":
        raise Unsupported(
            "SFQ: ns-2's Queue/SFQ hashes address pairs with no key, serves packet by packet and "
            "drops arrivals by a share rule; aqmlab's is Linux's (keyed hash, byte quantum, "
            "longest-queue drop)"
        )
    if kind == "wfq":
        raise Unsupported(
            "WFQ: ns-2's Queue/FQ has a private queue per flow, at most 32 flows, and no shared "
            "buffer manager"
        )
    raise Unsupported(f"qdisc kind {kind!r} (not in ns-2.35)")


def _known(q: dict[str, Any], keys: set[str]) -> None:
    extra = set(q) - keys - {"kind"}
    if extra:
        raise Unsupported(f"{q['kind']} keys {sorted(extra)} have no ns-2 counterpart here")


# ---- flows ------------------------------------------------------------------------


def tcp_vars(g: dict[str, Any], overrides: dict[str, Any] | None = None) -> list[Any]:
    p = {**FLOW_DEFAULTS, **TCP_DEFAULTS, **g}
    for key in ("counting", "hystart", "weight"):
        if (
            key in g
            and not (key == "counting" and g[key] == "packet")
            and not (key == "weight" and g[key] == 1)
        ):
            raise Unsupported(f"TCP {key} = {g[key]!r}")
    if p["variant"] not in VARIANTS:
        raise Unsupported(f"TCP variant {p['variant']!r} (ns-2.35 has Reno, NewReno and SACK of ours)")
    v = dict(TCP_MATCHED)
    v.update(
        packetSize_=p["packet_size"] - 40,
        window_=p["max_window"],
        windowInit_=p["initial_window"],
        minrto_=seconds(p["min_rto"]),
        singledup_=1 if p["limited_transmit"] else 0,
        ecn_=1 if p["ecn"] else 0,
    )
    if "newreno_timer" in g:
        v["newreno_changes1_"] = NEWRENO_TIMER[g["newreno_timer"]]
    if "reno_bugfix" in g:
        v["bugFix_"] = "true" if g["reno_bugfix"] else "false"
    v.update(overrides or {})
    if p["variant"] != "newreno":  # variables only Agent/TCP/Newreno has
        for k in ("newreno_changes_", "newreno_changes1_", "partial_window_deflation_"):
            del v[k]
    sink = "TCPSink/Sack1" if p["variant"] == "sack" else "TCPSink"
    if p["delayed_ack"]:
        sink += "/DelAck"
    out: list[Any] = ["variant", VARIANTS[p["variant"]], "sink", sink]
    out += ["delack_interval", seconds(p["delack_timeout"])]
    for k, x in v.items():
        out += [k, x]
    return out


def _starts(groups: list[dict[str, Any]], seed: int) -> list[float]:
    """Each flow's start: `start` plus a uniform draw in `start_spread`, from a
    generator seeded by the run's seed (ns-2's and aqmlab's draws differ, so seed k
    here is not seed k there: compare means over seeds)."""
    rng = random.Random(seed * 7919 + 17)
    out = []
    for g in groups:
        p = {**FLOW_DEFAULTS, **g}
        for _ in range(int(p["count"])):
            out.append(seconds(p["start"]) + rng.uniform(0, seconds(p["start_spread"])))
    return out


# ---- the network ------------------------------------------------------------------


def spec(scenario: dict[str, Any], seed: int, tcp: dict[str, Any] | None = None) -> Spec:
    """The ns-2 spec of `scenario` run with `seed`; `Unsupported` if ns-2 cannot.
    `tcp` overrides Agent/TCP variables (a diagnostic: what moves ns-2 toward
    aqmlab), e.g. {"maxrto_": 12.8}."""
    s = scenario
    duration, warmup = seconds(s["duration"]), seconds(s.get("warmup", "0s"))
    groups = list(s["flows"])
    nflows = sum(int(g.get("count", 1)) for g in groups)
    sizes = {int(g.get("packet_size", 1000)) for g in groups}
    psize = max(sizes)
    lines = []
    mon = s.get("monitor", {})
    qi = seconds(mon.get("queue_interval", "100ms"))
    series = seconds(mon["flow_series"]) if "flow_series" in mon else 0
    lines.append(
        f"run duration {duration!r} warmup {warmup!r} seed {seed} queue_interval {qi!r} series {series!r}"
    )
    flows: list[Flow] = []
    links: dict[str, float] = {}
    ends: list[tuple[str, str]] = []
    topo = s["topology"]
    kind = topo.get("kind", "dumbbell")

    def link(a: str, b: str, rate: str, delay: str, q: dict[str, Any] | None, monitor: bool) -> None:
        cls, vars_ = queue(q, psize, nflows)
        qvars = " ".join(map(str, vars_))
        lines.append(f"link {a} {b} {ns_rate(rate)} {ns_delay(delay)} {cls} {{{qvars}}} {int(monitor)}")
        if monitor:
            links[f"{a}->{b}"] = float(bps(rate))

    if kind == "dumbbell":
        lines += ["node left", "node right"]
        bn, acc = topo["bottleneck"], topo["access"]
        link("left", "right", bn["rate"], bn["delay"], s.get("qdisc"), True)
        link("right", "left", bn["rate"], bn["delay"], topo.get("reverse_qdisc"), True)
        i = 0
        for g in groups:
            rate = g.get("access_rate", acc["rate"])
            delay = g.get("access_delay", acc["delay"])
            for _ in range(int(g.get("count", 1))):
                sn, rn = f"s{i}", f"r{i}"
                lines += [f"node {sn}", f"node {rn}"]
                link(sn, "left", rate, delay, None, False)
                link("left", sn, rate, delay, None, False)
                link("right", rn, rate, delay, None, False)
                link(rn, "right", rate, delay, None, False)
                ends.append((sn, rn))
                i += 1
    elif kind == "graph":
        lines += [f"node {n}" for n in topo["nodes"]]
        for lk in topo["links"]:
            mon_l = lk.get("monitor", True)
            link(lk["from"], lk["to"], lk["rate"], lk["delay"], lk.get("qdisc", s.get("qdisc")), mon_l)
            link(lk["to"], lk["from"], lk["rate"], lk["delay"], lk.get("reverse_qdisc"), mon_l)
        for g in groups:
            ends += [(g["from"], g["to"])] * int(g.get("count", 1))
    else:
        raise Unsupported(f"topology kind {kind!r}")

    starts = _starts(groups, seed)
    fid = 0
    for g in groups:
        gk = g.get("kind", "tcp")
        size = int(g.get("packet_size", 1000))
        stop = f"{seconds(g['stop'])!r}" if "stop" in g else ""
        for _ in range(int(g.get("count", 1))):
            src, dst = ends[fid]
            t0 = f"{starts[fid]!r}"
            if gk == "tcp":
                vars_ = tcp_vars(g, tcp)
                lines.append(f'tcp {fid} {src} {dst} {t0} "{stop}" {{{" ".join(map(str, vars_))}}}')
                flows.append(Flow(fid, g["name"], "tcp", size))
            elif gk == "cbr":
                if g.get("ecn"):
                    raise Unsupported("ECN-capable CBR (ns-2's UDP agent sends no ECT)")
                lines.append(f'cbr {fid} {src} {dst} {t0} "{stop}" {ns_rate(g["rate"])} {size}')
                for step in g.get("schedule", []):
                    lines.append(f"rate {fid} {seconds(step['at'])!r} {ns_rate(step['rate'])}")
                flows.append(Flow(fid, g["name"], "cbr", size))
            else:
                raise Unsupported(f"flow kind {gk!r} (only long-lived TCP and CBR are translated)")
            fid += 1
    return Spec("\n".join(lines) + "\n", duration, warmup, flows, links)
