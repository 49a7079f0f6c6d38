"""Writes the E5 fat-tree scenario (BENCHMARKS.md, "E5: a k=32 fat tree").

A k-ary fat tree of 100 Gbit/s, 1 us links and 200-packet DropTail ports, ECMP,
one 1 MiB Reno flow per host, host ``h{i}`` sending to the host in the pod k/2
pods away (every flow crosses the core). ``python3 bench/fat_tree.py --k 32 >
bench/scenarios/e5_fat_tree.toml`` wrote the committed file; ``--k 16`` gives the
smaller one the set-up figures compare it with. ``--graph`` writes the same tree
as a ``kind = "graph"`` scenario (explicit nodes and links, as a build without
``fat_tree`` reads it; ``--routing shortest`` for one without ECMP).
"""

from __future__ import annotations

import argparse

# 1 MiB of data in 1500-byte packets of 1460 bytes of data (40 bytes of headers).
PACKET = 1500
OBJECT = -(-(1 << 20) // (PACKET - 40))


def graph(k: int, routing: str) -> list[str]:
    """The fat tree's ``[topology]`` as explicit nodes and links, in the order
    ``kind = "fat_tree"`` makes them."""
    half = k // 2
    hosts, edges = k * half * half, k * half
    names = [f"h{i}" for i in range(hosts)] + [f"e{i}" for i in range(edges)]
    names += [f"a{i}" for i in range(edges)] + [f"c{i}" for i in range(half * half)]
    pairs = [(f"h{h}", f"e{h // half}") for h in range(hosts)]
    pairs += [
        (f"e{p * half + x}", f"a{p * half + y}") for p in range(k) for x in range(half) for y in range(half)
    ]
    pairs += [
        (f"a{p * half + y}", f"c{y * half + z}") for p in range(k) for y in range(half) for z in range(half)
    ]
    port = '{ kind = "droptail", limit = 200 }'
    lines = ["[topology]", 'kind = "graph"']
    if routing != "shortest":
        lines.append(f'routing = "{routing}"')
    lines.append("nodes = [" + ", ".join(f'"{n}"' for n in names) + "]")
    lines.append("links = [")
    for a, b in pairs:
        lines.append(
            f'  {{ from = "{a}", to = "{b}", rate = "100Gbps", delay = "1us", qdisc = {port}, '
            f"reverse_qdisc = {port}, monitor = false }},"
        )
    return [*lines, "]", ""]


def scenario(k: int, as_graph: bool = False, routing: str = "ecmp") -> str:
    hosts = k * (k // 2) * (k // 2)
    lines = [
        f"# E5 (Days's benchmark): a k={k} fat tree, {hosts} hosts, 100 Gbit/s 1 us links,",
        "# 200-packet DropTail ports, ECMP, one 1 MiB Reno flow per host to a host in",
        f"# another pod. Written by bench/fat_tree.py --k {k}.",
        f'name = "e5-fat-tree-k{k}"',
        'duration = "5s"',
        "seed = 1",
        "",
    ]
    if as_graph:
        lines += graph(k, routing)
    else:
        lines += [
            "[topology]",
            'kind = "fat_tree"',
            f"k = {k}",
            'rate = "100Gbps"',
            'delay = "1us"',
            f'routing = "{routing}"',
            'qdisc = { kind = "droptail", limit = 200 }',
            "",
        ]
    for h in range(hosts):
        to = (h + hosts // 2) % hosts
        lines.append(
            f'[[flows]]\nname = "f{h}"\nkind = "web"\nvariant = "reno"\nfrom = "h{h}"\n'
            f'to = "h{to}"\npacket_size = {PACKET}\nobject_size = {OBJECT}\n'
            'think = "10s"\nstart_spread = "0s"\n'
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=32)
    p.add_argument("--graph", action="store_true", help="explicit nodes and links")
    p.add_argument("--routing", default="ecmp", choices=["ecmp", "shortest"])
    a = p.parse_args()
    print(scenario(a.k, a.graph, a.routing), end="")


if __name__ == "__main__":
    main()
