"""The same DropTail dumbbell three ways: Linux's own `pfifo` under `htb`, aqmlab
emulate (user-space DropTail on real Linux TCP) and aqmlab's simulation (needs
root, `ip` and `tc`).

    sudo python3 bench/emulation/kernel.py --bin target/release/aqmlab --rates 10 50 100

The kernel's dumbbell: three network namespaces, senders -- router -- receivers,
joined by veth pairs with segmentation offloads off (`gso_max_segs 1`, so every
skb is one packet and `pfifo`'s limit counts packets as aqmlab's does). The
router's egress towards the receivers is `htb` at the bottleneck rate with a
`pfifo` of `limit` packets under it. The router sits between the hosts because a
qdisc on the senders' own device is throttled by TCP small queues and never fills.
The kernel has no `netem`, so every delay is 0 in all three runs: the round trip
is the queue. Four CUBIC flows, 1500-byte packets.

Per run, over the measured interval: the bottleneck's IP throughput (for the
kernel, `tc`'s byte count less the 14-byte Ethernet header of each packet), the
mean queue in packets and as delay (packets x 1500 bytes / rate: `tc` sampled
every 20 ms for the kernel, every packet's sojourn for aqmlab), and the loss (drops
over packets offered to the queue).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SCENARIO = """
name = "kernel-{mbps}"
duration = "{duration}s"
warmup = "{warmup}s"
qdisc = {{ kind = "droptail", limit = {limit} }}
[topology]
kind = "dumbbell"
access = {{ rate = "10Gbps", delay = "0ms" }}
bottleneck = {{ rate = "{mbps}Mbps", delay = "0ms" }}
[[flows]]
name = "bulk"
kind = "tcp"
count = {flows}
variant = "cubic"
packet_size = 1500
max_window = 100000
start_spread = "0s"
[monitor]
queue_interval = "0s"
"""

# The receiver: accepts `flows` connections, counts what it reads, and prints
# the totals at `warmup` and at `duration` seconds after it started.
RECEIVER = r"""
import json, socket, sys, threading, time
flows, warmup, duration = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
total = [0]
lock = threading.Lock()
def read(c):
    while True:
        b = c.recv(1 << 16)
        if not b:
            return
        with lock:
            total[0] += len(b)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.9.2.2", 5001))
s.listen(64)
print("ready", flush=True)
t0 = time.monotonic()
for _ in range(flows):
    c, _ = s.accept()
    threading.Thread(target=read, args=(c,), daemon=True).start()
time.sleep(max(0.0, warmup - (time.monotonic() - t0)))
at_warmup = total[0]
time.sleep(max(0.0, duration - (time.monotonic() - t0)))
print(json.dumps({"warmup": at_warmup, "end": total[0]}), flush=True)
"""

SENDER = r"""
import socket, sys, time
end = time.monotonic() + float(sys.argv[1])
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
s.connect(("10.9.2.2", 5001))
buf = b"\x5a" * (1 << 16)
s.settimeout(0.05)
while time.monotonic() < end:
    try:
        s.send(buf)
    except (socket.timeout, BlockingIOError):
        pass
    except OSError:
        break  # the run is over and the receiver gone
"""


def sh(*args: str) -> None:
    subprocess.run(args, check=True)


class Dumbbell:
    """senders (10.9.1.1) -- router -- receivers (10.9.2.2), htb + pfifo on the
    router's egress to the receivers. Namespaces are named aqk<pid><role>."""

    def __init__(self, mbps: int, limit: int) -> None:
        pid = os.getpid()
        self.s, self.m, self.r = (f"aqk{pid}{x}" for x in "smr")
        self.made: list[str] = []
        for ns in (self.s, self.m, self.r):
            sh("ip", "netns", "add", ns)
            self.made.append(ns)
        for ns, here, there, peer_ns in ((self.s, "vs0", "vm0", self.m), (self.m, "vm1", "vr0", self.r)):
            sh("ip", "-n", ns, "link", "add", here, "type", "veth", "peer", "name", there, "netns", peer_ns)
        addrs = {
            (self.s, "vs0"): "10.9.1.1/24",
            (self.m, "vm0"): "10.9.1.254/24",
            (self.m, "vm1"): "10.9.2.254/24",
            (self.r, "vr0"): "10.9.2.2/24",
        }
        for (ns, dev), addr in addrs.items():
            sh("ip", "-n", ns, "addr", "add", addr, "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "gso_max_segs", "1", "gso_max_size", "1500", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", self.s, "route", "add", "default", "via", "10.9.1.254")
        sh("ip", "-n", self.r, "route", "add", "default", "via", "10.9.2.254")
        sh("ip", "netns", "exec", self.m, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        for ns in (self.s, self.r):
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1")
        tc = ("tc", "-n", self.m)
        rate = f"{mbps}mbit"
        sh(*tc, "qdisc", "add", "dev", "vm1", "root", "handle", "1:", "htb", "default", "1")
        sh(
            *tc,
            "class",
            "add",
            "dev",
            "vm1",
            "parent",
            "1:",
            "classid",
            "1:1",
            "htb",
            "rate",
            rate,
            "ceil",
            rate,
        )
        sh(*tc, "qdisc", "add", "dev", "vm1", "parent", "1:1", "handle", "10:", "pfifo", "limit", str(limit))

    def pfifo(self) -> dict:
        args = ["tc", "-n", self.m, "-s", "-j", "qdisc", "show", "dev", "vm1"]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        return next(q for q in json.loads(out) if q["kind"] == "pfifo")

    def close(self) -> None:
        for ns in self.made:
            subprocess.run(["ip", "netns", "del", ns], check=False)


def kernel(mbps: int, limit: int, flows: int, duration: float, warmup: float) -> dict:
    d = Dumbbell(mbps, limit)
    procs: list[subprocess.Popen] = []
    try:
        exec_r = ["ip", "netns", "exec", d.r, sys.executable, "-c"]
        rx = subprocess.Popen(
            [*exec_r, RECEIVER, str(flows), str(warmup), str(duration)], stdout=subprocess.PIPE, text=True
        )
        procs.append(rx)
        assert rx.stdout is not None and rx.stdout.readline().strip() == "ready"
        t0 = time.monotonic()
        for _ in range(flows):
            exec_s = ["ip", "netns", "exec", d.s, sys.executable, "-c"]
            procs.append(subprocess.Popen([*exec_s, SENDER, str(duration + 0.5)]))
        time.sleep(max(0.0, warmup - (time.monotonic() - t0)))
        first = d.pfifo()
        samples = []
        while time.monotonic() - t0 < duration:
            samples.append(d.pfifo()["qlen"])
            time.sleep(0.02)
        last = d.pfifo()
        got = json.loads(rx.stdout.readline())
        secs = duration - warmup
        sent = last["packets"] - first["packets"]
        drops = last["drops"] - first["drops"]
        ip_bytes = (last["bytes"] - first["bytes"]) - 14 * sent
        queue = sum(samples) / max(1, len(samples))
        return {
            "throughput": ip_bytes * 8 / secs,
            "goodput_app": (got["end"] - got["warmup"]) * 8 / secs,
            "queue": queue,
            "loss": drops / max(1, sent + drops),
        }
    finally:
        for p in procs:
            p.kill()
            p.wait()
        d.close()


def aqmlab(binary: str, text: str, simulate: bool) -> dict:
    env = dict(os.environ, AQMLAB_EMULATE_ANY_RATE="1")
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        args = [binary, "run" if simulate else "emulate", f.name, "--json"]
        r = json.loads(subprocess.run(args, capture_output=True, text=True, check=True, env=env).stdout)
    finally:
        os.unlink(f.name)
    link = r["links"][0]
    return {
        "throughput": link["throughput_bps"],
        "queue": link["mean_queue_packets"],
        "loss": link["drops_total"] / max(1, link["arrivals"]),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="target/release/aqmlab")
    p.add_argument("--rates", type=int, nargs="+", default=[10, 50, 100])
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--flows", type=int, default=4)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--warmup", type=float, default=3.0)
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root")
    print("| bottleneck | run | throughput Mb/s | mean queue pkts | queue delay ms | loss |")
    print("|---:|---|---:|---:|---:|---:|")
    for mbps in a.rates:
        text = SCENARIO.format(mbps=mbps, duration=a.duration, warmup=a.warmup, limit=a.limit, flows=a.flows)
        runs = (
            ("Linux htb + pfifo", kernel(mbps, a.limit, a.flows, a.duration, a.warmup)),
            ("aqmlab emulate", aqmlab(a.bin, text, False)),
            ("aqmlab simulation", aqmlab(a.bin, text, True)),
        )
        for name, r in runs:
            delay_ms = r["queue"] * 1500 * 8 / (mbps * 1e6) * 1e3
            print(
                f"| {mbps} Mbit/s | {name} | {r['throughput'] / 1e6:.2f} | {r['queue']:.1f} "
                f"| {delay_ms:.2f} | {r['loss']:.4f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
