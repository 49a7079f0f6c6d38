"""The experiments the simulator peers share: each names a dumbbell (flows,
rates, delays, the bottleneck's queue) in the units every simulator parses, and
`scenario_toml` writes it as an aqmlab scenario. `bench/vs_ns3.py` runs
`EXPERIMENTS` in ns-3; `bench/vs_ns2.py` runs them and `NS2_EXPERIMENTS` (the
queues and TCPs ns-2.35 has and ns-3 lacks) in ns-2.35.
"""

from __future__ import annotations

# The experiments.  Rates and delays in the units both simulators parse.
EXPERIMENTS: dict[str, dict] = {
    # CHOKe paper, Fig. 3 (scenarios/choke-fig3.toml): 32 TCP + 1 UDP at 2 Mbps over
    # 1 Mbps, under RED and under DropTail.
    "a-red": dict(
        desc="CHOKe Fig. 3: 32 TCP + 2 Mbps UDP over 1 Mbps, RED(100, 200, limit 300), 100 s",
        tcp=32,
        udp="2Mbps",
        bn_rate="1Mbps",
        bn_delay="1ms",
        access_rate="10Mbps",
        access_delay="1ms",
        queue="red",
        limit=300,
        min_th=100,
        max_th=200,
        duration=100,
        warmup=20,
        max_window=300,
    ),
    "a-droptail": dict(
        desc="CHOKe Fig. 3: 32 TCP + 2 Mbps UDP over 1 Mbps, DropTail(300), 100 s",
        tcp=32,
        udp="2Mbps",
        bn_rate="1Mbps",
        bn_delay="1ms",
        access_rate="10Mbps",
        access_delay="1ms",
        queue="fifo",
        limit=300,
        duration=100,
        warmup=20,
        max_window=300,
    ),
    # SFB paper, Section IV: 400 TCP + 1 UDP at 45 Mbps over 45 Mbps (100 Mbps,
    # 5 ms access; 10 ms bottleneck), RED on a 200-packet buffer.
    "b": dict(
        desc="SFB: 400 TCP + 45 Mbps UDP over 45 Mbps, RED(50, 150, limit 200), 100 s",
        tcp=400,
        udp="45Mbps",
        bn_rate="45Mbps",
        bn_delay="10ms",
        access_rate="100Mbps",
        access_delay="5ms",
        queue="red",
        limit=200,
        min_th=50,
        max_th=150,
        duration=100,
        warmup=20,
        max_window=131,
    ),
    # Scale: 1000 TCP flows over 100 Mbps, DropTail of 1000 packets.
    "c": dict(
        desc="1000 TCP over 100 Mbps (1 Gbps, 1 ms access; 10 ms bottleneck), DropTail(1000), 30 s",
        tcp=1000,
        udp=None,
        bn_rate="100Mbps",
        bn_delay="10ms",
        access_rate="1Gbps",
        access_delay="1ms",
        queue="fifo",
        limit=1000,
        duration=30,
        warmup=10,
        max_window=131,
    ),
    # The smoke test: a few flows for a few seconds.
    "smoke": dict(
        desc="smoke: 4 TCP + 2 Mbps UDP over 10 Mbps, RED(20, 60, limit 100), 10 s",
        tcp=4,
        udp="2Mbps",
        bn_rate="10Mbps",
        bn_delay="10ms",
        access_rate="100Mbps",
        access_delay="2ms",
        queue="red",
        limit=100,
        min_th=20,
        max_th=60,
        duration=10,
        warmup=2,
        max_window=131,
    ),
}


# Issue #14: the CHOKe and SFB experiments, (a) and (b), under FQ-CoDel at ns-3's
# defaults (Linux's but for the quantum and the per-queue MinBytes: see
# scenario_toml), beside ns-3's FqCoDelQueueDisc, with the issue's tolerances.
def _under_fq_codel(base: str, desc: str, **extra) -> dict:
    e = {k: v for k, v in EXPERIMENTS[base].items() if k not in ("min_th", "max_th")}
    return {**e, "desc": desc, "queue": "fq_codel", "limit": 10240, **extra}


_TOLERANCE = dict(udp_share_pp=10, tcp_goodput=0.05)
EXPERIMENTS["a-fq_codel"] = _under_fq_codel(
    "a-red",
    "CHOKe Fig. 3 under FQ-CoDel: 32 TCP + 2 Mbps UDP over 1 Mbps, FQ-CoDel(limit 10240), 100 s",
    tolerance=_TOLERANCE,
)
EXPERIMENTS["b-fq_codel"] = _under_fq_codel(
    "b",
    "SFB under FQ-CoDel: 400 TCP + 45 Mbps UDP over 45 Mbps, FQ-CoDel(limit 10240), 100 s",
    tolerance=_TOLERANCE,
)
# The check that ns-3's TCP goodput gap on a-fq_codel is its spurious timeouts
# (BENCHMARKS.md): a 1 s minimum RTO in both simulators.
EXPERIMENTS["a-fq_codel-rto1s"] = _under_fq_codel(
    "a-red", "CHOKe Fig. 3 under FQ-CoDel, min RTO 1 s in both simulators", min_rto="1s"
)

# Shared by both simulators: RED as ns-2 and ns-3 default it, but with the mean
# packet size set to the real one.
W_Q, MAX_P, MEAN_PKT, PKT = 0.002, 0.1, 1000, 1000


# CoDel, PIE and FQ-CoDel on one network of long-lived NewReno flows, no UDP: 20
# flows over 10 Mbit/s (6 ms; access 100 Mbit/s, 2 ms), 1500-byte packets, each
# qdisc at its defaults with a 1000-packet limit (FQ-CoDel 10240), a 1 s minimum
# RTO in both simulators (ns-3's RTO rule, "Agreement" in BENCHMARKS.md, is then
# out of the way); and 100 flows over 100 Mbit/s. Compared on the bottleneck's
# utilization, loss rate, time-averaged queue and Jain's index, with tolerances
# fixed before the runs.
_AQM_TOLERANCE = dict(utilization_pp=2, loss_rel=0.10, queue_rel=0.10, jain=0.03)


def _aqm_net(queue: str, flows: int, rate: str, access: str, **extra) -> dict:
    limit = 10240 if queue == "fq_codel" else 1000
    return dict(
        desc=f"{flows} NewReno over {rate} (6 ms; {access}, 2 ms access), {queue}(limit {limit}), "
        "min RTO 1 s, 60 s",
        tcp=flows,
        udp=None,
        bn_rate=rate,
        bn_delay="6ms",
        access_rate=access,
        access_delay="2ms",
        queue=queue,
        limit=limit,
        duration=60,
        warmup=20,
        max_window=1000,
        min_rto="1s",
        **{"pkt": 1500, "aqm_tolerance": _AQM_TOLERANCE, **extra},
    )


for _q in ("codel", "pie", "fq_codel"):
    EXPERIMENTS[f"{_q}-20"] = _aqm_net(_q, 20, "10Mbps", "100Mbps")
    EXPERIMENTS[f"{_q}-100"] = _aqm_net(_q, 100, "100Mbps", "1Gbps")
    # The same with 1000-byte packets (BENCHMARKS.md: the packet size moves
    # CoDel's standing queue by a third).
    EXPERIMENTS[f"{_q}-20-pkt1000"] = _aqm_net(_q, 20, "10Mbps", "100Mbps", pkt=1000)


# ---- ns-2.35's baselines beyond ns-3's: GRED, REM, DRR, Reno and SACK ----------------


def _like(base: str, desc: str, **changes) -> dict:
    e = {k: v for k, v in EXPERIMENTS[base].items() if k != "tolerance"}
    return {**e, "desc": desc, **changes}


#: The Nonlinear RED paper's network (scenarios/sfred-nlred-fig12.toml): N Reno
#: flows, 10 Mbps and 20 ms at the bottleneck, 100 Mbps and 5 ms access, a
#: 120-packet buffer, window 200, starts spread over 5 s, 200 s with 100 s of
#: warm-up.
_NLRED = dict(
    udp=None,
    bn_rate="10Mbps",
    bn_delay="20ms",
    access_rate="100Mbps",
    access_delay="5ms",
    limit=120,
    min_th=5,
    max_th=15,
    duration=200,
    warmup=100,
    max_window=200,
    variant="reno",
    start_spread="5s",
)
#: Ten NewReno flows over 10 Mbps with a 20 ms round trip: a plain dumbbell.
_TEN = dict(
    tcp=10,
    udp=None,
    bn_rate="10Mbps",
    bn_delay="8ms",
    access_rate="100Mbps",
    access_delay="1ms",
    limit=100,
    min_th=20,
    max_th=60,
    duration=60,
    warmup=10,
    max_window=1000,
)

NS2_EXPERIMENTS: dict[str, dict] = {
    "a-drr": _like(
        "a-red",
        "CHOKe Fig. 3 under DRR: 32 TCP + 2 Mbps UDP over 1 Mbps, DRR per flow (300 packets, LQD)",
        queue="drr",
        quantum=1000,
    ),
    "ten-droptail": dict(_TEN, desc="10 NewReno over 10 Mbps, 20 ms RTT, DropTail(100), 60 s", queue="fifo"),
    "ten-red": dict(
        _TEN, desc="10 NewReno over 10 Mbps, 20 ms RTT, RED(20, 60, limit 100), 60 s", queue="red"
    ),
    "ten-gred": dict(
        _TEN, desc="10 NewReno over 10 Mbps, 20 ms RTT, gentle RED(20, 60, limit 100), 60 s", queue="gred"
    ),
    "ten-rem": dict(
        _TEN, desc="10 NewReno over 10 Mbps, 20 ms RTT, REM at ns-2's defaults (limit 100), 60 s", queue="rem"
    ),
    "ten-reno": dict(
        _TEN,
        desc="10 Reno over 10 Mbps, 20 ms RTT, RED(20, 60, limit 100), 60 s",
        queue="red",
        variant="reno",
    ),
    "ten-sack": dict(
        _TEN,
        desc="10 SACK over 10 Mbps, 20 ms RTT, RED(20, 60, limit 100), 60 s",
        queue="red",
        variant="sack",
    ),
    "ten-red-ecn": dict(
        _TEN,
        desc="10 NewReno with ECN over 10 Mbps, 20 ms RTT, RED(20, 60, limit 100) marking, 60 s",
        queue="red",
        ecn=True,
    ),
}
for _n in (5, 30, 120):
    NS2_EXPERIMENTS[f"nlred-droptail-n{_n}"] = dict(
        _NLRED,
        tcp=_n,
        queue="fifo",
        desc=f"Nonlinear RED Fig. 11: {_n} Reno over 10 Mbps, DropTail(120), 200 s",
    )
    NS2_EXPERIMENTS[f"nlred-gred-n{_n}"] = dict(
        _NLRED,
        tcp=_n,
        queue="gred",
        desc=f"Nonlinear RED Figs. 19-20: {_n} Reno, gentle RED(5, 15, limit 120), 200 s",
    )
    NS2_EXPERIMENTS[f"nlred-rem-n{_n}"] = dict(
        _NLRED,
        tcp=_n,
        queue="rem",
        desc=f"Nonlinear RED Figs. 19-20: {_n} Reno, REM at ns-2's defaults (limit 120), 200 s",
    )


def scenario_toml(
    name: str, e: dict, writer: str = "bench/vs_ns3.py", peer: str = "bench/ns3/aqm_bench.cc"
) -> str:
    """The aqmlab scenario of experiment `name`: keys an experiment leaves out are
    not written, so the ns-3 experiments' files stay as they were."""
    queue = e["queue"]
    kind = {
        "red": "red",
        "gred": "red",
        "fifo": "droptail",
        "fq_codel": "fq_codel",
        "rem": "rem",
        "drr": "drr",
        "codel": "codel",
        "pie": "pie",
    }[queue]
    q = [f'kind = "{kind}"', f"limit = {e['limit']}"]
    if queue in ("red", "gred"):
        q += [
            f"min_th = {e['min_th']}",
            f"max_th = {e['max_th']}",
            f"w_q = {W_Q}",
            f"max_p = {MAX_P}",
            f"mean_pkt_size = {MEAN_PKT}",
            "wait = true",
            f"gentle = {'true' if queue == 'gred' else 'false'}",
        ]
        if e.get("ecn"):
            q.append("ecn = true")
    if queue == "drr":
        q += ['classify = "flow"', 'buffer = "lqd"', f"quantum = {e.get('quantum', 1514)}"]
    if queue == "fq_codel":
        # ns-3's FqCoDelQueueDisc: the quantum is the device's MTU (1500, Linux's
        # 1514) and each flow queue's CoDel keeps at least MinBytes = 1500, which
        # is aqmlab's per-queue rule with mtu 1499 (docs/qdiscs.md, FQ-CoDel).
        # Neither TCP is ECN-capable here, so ECN (on in both) changes nothing.
        q += ["quantum = 1500", "mtu = 1499", "per_flow_mtu = true"]
    if queue == "codel":
        # ns-3's CoDelQueueDisc: no drop while fewer than MinBytes = 1500 bytes
        # remain, which is Linux's "at most mtu" with mtu = 1499.
        q += ["mtu = 1499"]
    if queue == "pie":
        # ns-3's PieQueueDisc in packets: no early drop while at most 2 packets are
        # queued, which is aqmlab's "at most 2 mtu" with mtu = the packet size.
        q += [f"mtu = {e.get('pkt', PKT)}"]
    lines = [
        f"# Written by {writer}: {e['desc']}.",
        f"# The {'ns-3' if 'ns3' in peer else 'ns-2'} peer is {peer} with the same parameters.",
        f'name = "bench-{name}"',
        f'duration = "{e["duration"]}s"',
        f'warmup = "{e["warmup"]}s"',
        "seed = 1",
        "",
        "[topology]",
        'kind = "dumbbell"',
        f'access = {{ rate = "{e["access_rate"]}", delay = "{e["access_delay"]}" }}',
        f'bottleneck = {{ rate = "{e["bn_rate"]}", delay = "{e["bn_delay"]}" }}',
        "",
        "[qdisc]",
        *q,
        "",
        "[[flows]]",
        'name = "tcp"',
        'kind = "tcp"',
        f'variant = "{e.get("variant", "newreno")}"',
        f"count = {e['tcp']}",
        f"packet_size = {e.get('pkt', PKT)}",
        f"max_window = {e['max_window']}",
        f'min_rto = "{e.get("min_rto", "200ms")}"',
    ]
    if e.get("ecn"):
        lines.append("ecn = true")
    if "start_spread" in e:
        lines.append(f'start_spread = "{e["start_spread"]}"')
    if e["udp"]:
        lines += [
            "",
            "[[flows]]",
            'name = "udp"',
            'kind = "cbr"',
            f'rate = "{e["udp"]}"',
            "count = 1",
            f"packet_size = {PKT}",
        ]
    return "\n".join(lines) + "\n"
