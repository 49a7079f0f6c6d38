"""A round of hostile inputs against the installed `aqmlab` (command and Python API).

Each case is a command line, a scenario or a Python call a careful or a hostile
user might try, of the kinds docs/testing.md lists under "Hostile rounds". A case
fails when its run panics (a Rust panic, exit 101, a `PanicException`), prints a
Python traceback, shows the content of a file that is not a trace (every file the
cases read holds a marker that must never be printed), dies of a signal, outlives
its time limit or its memory limit, or refuses bad input without naming the key.

    python fuzz/hostile/round.py [--aqmlab PATH] [--only KIND] [-v]

It prints one line per kind and the totals; exit 1 if any case failed. Emulation
cases need root and are skipped without it.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

MARKER = "HOSTILE-SECRET-7f3a"
GB = 1 << 30

BASE = """name = "hostile"
duration = "{duration}"
warmup = "0s"
seed = 1
qdisc = {{ kind = "{qdisc}" }}
flows = [{flows}]

[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps", delay = "1ms" }}
[topology.bottleneck]
{bottleneck}
"""

TCP = '{ name = "t", kind = "tcp", count = 2 }'


def scenario(bottleneck: str, *, flows: str = TCP, qdisc: str = "droptail", duration: str = "200ms") -> str:
    return BASE.format(bottleneck=bottleneck, flows=flows, qdisc=qdisc, duration=duration)


@dataclass
class Case:
    kind: str
    name: str
    argv: list[str] = field(default_factory=list)
    text: str | None = None  # a scenario file's text, given as {scenario} in argv
    trace: str | None = None  # a trace file's text, given as {trace} in the scenario
    python: str | None = None  # a Python snippet, run in its own interpreter
    timeout: float = 60.0
    memory: int = 4 * GB
    expect_error: str | None = None  # a substring the error must name (a key)
    signal_at: float | None = None  # SIGINT after this many seconds
    expect_exit: int | None = None
    root: bool = False
    leftovers: Path | None = None  # a folder that must hold no partial file afterwards


@dataclass
class Outcome:
    case: Case
    problems: list[str]


# ---- the cases --------------------------------------------------------------------------


def zero_and_extreme_rates() -> Iterator[Case]:
    zeros = ["0bit", "0kbit", "0mbit", "0gbit", "0", "0.0bit", "0e3bit", "0.0000001bit", "1e-30gbit"]
    huge = ["1e30gbit", "1e400bit", "99999999999999999999tbit", "infbit", "nanbit", "-5mbit"]
    for rate, where in itertools.product(zeros + huge, ["netem", "reverse_netem"]):
        line = f"tc qdisc add dev eth0 root netem delay 5ms rate {rate}"
        keys = (
            f'{where} = "{line}"'
            if where == "netem"
            else f'rate = "10Mbps"\ndelay = "5ms"\n{where} = "{line}"'
        )
        text = scenario(keys)
        yield Case("rate", f"{where} rate {rate}", ["run", "{scenario}", "-q"], text=text, expect_error=where)
        yield Case("rate", f"tc {rate}", ["tc", line], expect_error="rate")
    for rate in zeros + huge:
        graph = f"""name = "g"
duration = "200ms"
flows = [{{ name = "t", kind = "tcp", from = "a", to = "b" }}]
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [{{ from = "a", to = "b", netem = "netem delay 5ms rate {rate}" }}]
"""
        yield Case(
            "rate", f"graph netem rate {rate}", ["run", "{scenario}", "-q"], text=graph, expect_error="netem"
        )
    # Traces whose mean rate rounds to nothing, or that are empty or out of order.
    for lines in (
        ["0", "100000000000000000"],
        ["1", "99999999999999"],
        [],
        ["5", "3"],
        ["-1"],
        ["1.5"],
        ["18446744073709551616"],
        ["0"] * 3,
    ):
        yield Case(
            "rate",
            f"trace {lines[:2]}",
            ["run", "{scenario}", "-q"],
            text=scenario('rate = { trace = "{trace}" }\ndelay = "5ms"'),
            expect_error="trace",
            trace="\n".join(lines) + "\n",
        )
    for steps in (
        '[{ at = "0s", rate = "0bps" }]',
        '[{ at = "0s", rate = "1Mbps" }, { at = "1ms", rate = "0bit" }]',
        '[{ at = "0s", rate = "1e30bps" }]',
        "[]",
    ):
        yield Case(
            "rate",
            f"schedule {steps}",
            ["run", "{scenario}", "-q"],
            text=scenario(f'rate = {{ schedule = {steps} }}\ndelay = "5ms"'),
            expect_error="schedule",
        )


def secret_files(folder: Path) -> list[Path]:
    """Files that are not traces, each holding the marker where an error could quote it."""
    files = []
    for i, content in enumerate(
        [
            f"{MARKER}:x:0:0:root\n",
            f"1\n2\n{MARKER}\n",
            f"\x1b[31m{MARKER}\x07\x00\n",
            f"{MARKER}=1\x00PATH=/bin\x00",
            f"# comment\n\n   {MARKER}   \n",
            f"10\n20\n30 {MARKER}\n",
            f"{MARKER}" * 5000 + "\n",
            f"1e3\n{MARKER}\n",
            f"\ufeff{MARKER}\n",
            f"{MARKER}\r\n",
        ]
    ):
        p = folder / f"secret{i}"
        p.write_bytes(content.encode("utf-8", "surrogatepass"))
        files.append(p)
    p = folder / "secret-binary"
    p.write_bytes(b"\x7fELF\x02\x01\x01" + MARKER.encode() + bytes(range(256)))
    files.append(p)
    return files


def file_contents(folder: Path) -> Iterator[Case]:
    targets = [str(p) for p in secret_files(folder)]
    targets += [
        "/etc/passwd",
        "/proc/self/environ",
        "/proc/self/cmdline",
        "/dev/zero",
        "/dev/urandom",
        "/proc/self/maps",
        str(folder),
        "/nonexistent/trace",
    ]
    for t in targets:
        text = scenario(f'rate = {{ trace = "{t}" }}\ndelay = "5ms"')
        yield Case(
            "content",
            f"trace = {t}",
            ["run", "{scenario}", "-q"],
            text=text,
            expect_error="trace",
            timeout=30,
        )
        yield Case(
            "content",
            f"--set trace = {t}",
            [
                "run",
                "dumbbell-red",
                "-q",
                "--duration",
                "100ms",
                "--set",
                f'topology.bottleneck.rate={{ trace = "{t}" }}',
            ],
            expect_error="trace",
            timeout=30,
        )
        yield Case(
            "content",
            f"reverse_rate trace = {t}",
            ["run", "{scenario}", "-q"],
            text=scenario(f'rate = "10Mbps"\nreverse_rate = {{ trace = "{t}" }}\ndelay = "5ms"'),
            expect_error="trace",
            timeout=30,
        )
        yield Case(
            "content",
            f"python trace = {t}",
            python=(
                "import aqmlab\n"
                "aqmlab.run('dumbbell-red', duration='100ms', "
                f"set={{'topology.bottleneck.rate': {{'trace': {t!r}}}}})"
            ),
            expect_error="trace",
            timeout=30,
        )
    # A scenario file that is itself not a scenario.
    for t in targets[:8]:
        yield Case("content", f"scenario = {t}", ["run", t, "-q"], timeout=30)
        yield Case("content", f"sweep {t}", ["sweep", t, "-q"], timeout=30)


def warnings_scale() -> Iterator[Case]:
    for groups in (2000, 8000, 30000):
        flows = ", ".join(
            f'{{ name = "g{i}", kind = "cbr", rate = "1kbps", start_spread = "10s" }}' for i in range(groups)
        )
        text = scenario('rate = "10Mbps"\ndelay = "5ms"', flows=flows, duration="100ms").replace(
            "kbps", "kbit"
        )
        yield Case(
            "warnings", f"{groups} groups with warnings", ["run", "{scenario}", "-q"], text=text, timeout=20
        )


def statistics_flags() -> Iterator[Case]:
    for value in ["1e-300", "0", "-1", "nan", "inf", "abc", "1e308", "tcp_goodput_bps", ""]:
        yield Case(
            "stats",
            f"--precision {value!r}",
            [
                "sweep",
                "dumbbell-red",
                "--set",
                "qdisc.kind=red,pie",
                "--precision",
                f"tcp_goodput_bps={value}",
                "--duration",
                "100ms",
                "--warmup",
                "0s",
                "-q",
            ],
            expect_error="precision",
        )
    yield Case(
        "stats",
        "--precision nope=0.1",
        [
            "sweep",
            "dumbbell-red",
            "--set",
            "qdisc.kind=red,pie",
            "--precision",
            "nope=0.1",
            "--duration",
            "100ms",
            "--warmup",
            "0s",
            "-q",
        ],
        expect_error="nope",
        timeout=20,
    )
    for value in ["-1", "0", "1" + "0" * 30, "x", "1.5"]:
        yield Case(
            "stats",
            f"--max-seeds {value}",
            [
                "sweep",
                "dumbbell-red",
                "--set",
                "qdisc.kind=red,pie",
                "--precision",
                "tcp_goodput_bps=0.1",
                "--max-seeds",
                value,
                "--duration",
                "100ms",
                "--warmup",
                "0s",
                "-q",
            ],
            expect_error="max-seeds",
        )
    for value in ["1,1", "", ",", "a", "-1", "1,,2", "18446744073709551616"]:
        yield Case(
            "stats",
            f"--seed-list {value!r}",
            ["sweep", "dumbbell-red", f"--seed-list={value}", "--duration", "100ms", "--warmup", "0s", "-q"],
            expect_error="seed",
        )
    for precision in [
        "{'x': 1}",
        "[0.1]",
        "'0.1'",
        "{'tcp_goodput_bps': 1e-300}",
        "{'tcp_goodput_bps': float('nan')}",
    ]:
        yield Case(
            "stats",
            f"python precision={precision}",
            python=(
                "import aqmlab\n"
                "aqmlab.sweep('dumbbell-red', {'qdisc.kind': ['red', 'pie']}, duration='100ms', warmup='0s', "
                f"precision={precision}, max_seeds=10**12)"
            ),
            expect_error="precision",
        )
    for baseline in ["'red'", "{'qdisc.kind': 'nope'}", "{'nope': 1}", "3"]:
        yield Case(
            "stats",
            f"python baseline={baseline}",
            python=(
                "import aqmlab\n"
                "aqmlab.sweep('dumbbell-red', {'qdisc.kind': ['red', 'pie']}, duration='100ms', "
                f"warmup='0s', baseline={baseline})"
            ),
            expect_error="baseline",
        )


def qdisc_values() -> Iterator[Case]:
    bad = {
        "dualpi2": [
            'step_thresh = "1ms", step_thresh_packets = 5',
            'step_thresh = "2ms", step_thresh_packets = 1',
            "mtu = 4294967295",
            "mtu = 0",
            "limit = 0",
            "coupling_factor = 1e30",
        ],
        "red": [
            "step = 1e30",
            "min_th = 50, max_th = 10",
            "max_p = 2",
            "w_q = 0",
            "limit = 18446744073709551615",
            "mean_pkt_size = 0",
        ],
        "codel": ["mtu = 4294967295", 'target = "0s"', 'interval = "-1ms"', "limit = 4294967296"],
        "fq_codel": ["flows = 0", "flows = 4294967295", "quantum = 0", "mtu = 4294967295"],
        "sfb": ["bins = 0", "levels = 1000000", "increment = 2"],
        "pie": ['target = "1000000s"', "alpha = -1", "limit = -5"],
        "cake": ['rtt = "0s"', "bandwidth = 0", 'diffserv = "nope"'],
    }
    for kind, values in bad.items():
        for v in values:
            text = scenario('rate = "10Mbps"\ndelay = "5ms"').replace(
                'qdisc = { kind = "droptail" }', f'qdisc = {{ kind = "{kind}", {v} }}'
            )
            key = v.split(" ")[0]
            yield Case("qdisc", f"{kind} {v}", ["run", "{scenario}", "-q"], text=text, expect_error=key)
    for big in ["2**63", "2**64", "-(2**63)-1", "10**30", "float('inf')", "True"]:
        yield Case(
            "qdisc",
            f"python set limit={big}",
            python=(
                f"import aqmlab\naqmlab.run('dumbbell-red', duration='100ms', set={{'qdisc.limit': {big}}})"
            ),
            expect_error="limit",
        )


def out_folders(folder: Path) -> Iterator[Case]:
    if os.geteuid() != 0:
        return
    other = 65534
    shared = folder / "shared"
    shared.mkdir(mode=0o1777)
    victim = folder / "victim"
    victim.mkdir()
    (victim / "flows.csv").write_text(MARKER)
    (victim / "summary.json").write_text(MARKER)
    for i, name in enumerate(["link", "link2"]):
        link = shared / f"{name}"
        link.symlink_to(victim, target_is_directory=True)
        os.lchown(link, other, other)
        yield Case(
            "out",
            f"run --out symlink of another user {i}",
            ["run", "dumbbell-red", "-q", "--duration", "100ms", "--out", str(link), "--format", "csv"],
            expect_error="--out",
        )
    theirs = shared / "theirs"
    theirs.mkdir()
    os.chown(theirs, other, other)
    for sub in ["", "new", "new/deeper"]:
        yield Case(
            "out",
            f"run --out inside another user's folder {sub!r}",
            ["run", "dumbbell-red", "-q", "--duration", "100ms", "--out", str(theirs / sub)],
            expect_error="user",
        )
    ro = folder / "readonly"
    ro.mkdir()
    yield Case("out", "--out ''", ["run", "dumbbell-red", "-q", "--out", ""], expect_error="out")
    yield Case(
        "out", "--out a file", ["run", "dumbbell-red", "-q", "--out", "/etc/hostname"], expect_error="out"
    )


def emulation(folder: Path) -> Iterator[Case]:
    if os.geteuid() != 0:
        return
    for rate in ["200Mbps", "1Gbps", "10Gbps"]:
        flows = f'{{ name = "u", kind = "cbr", rate = "{rate}" }}'.replace("bps", "bit")
        text = scenario('rate = "5Mbps"\ndelay = "5ms"', flows=flows, duration="2s").replace(
            'access = { rate = "100Mbps", delay = "1ms" }', 'access = { rate = "2Mbps", delay = "1ms" }'
        )
        yield Case(
            "emulate",
            f"UDP at {rate} over a 2 Mbit/s access",
            ["emulate", "{scenario}", "-q"],
            text=text,
            timeout=15,
            memory=GB,
            root=True,
        )
    sched = scenario(
        'rate = { schedule = [{ at = "0s", rate = "10Mbit" }, { at = "500ms", rate = "10Gbit" }] }\n'
        'delay = "5ms"',
        duration="1s",
    )
    yield Case(
        "emulate",
        "schedule to 10 Gbit/s",
        ["emulate", "{scenario}", "-q"],
        text=sched,
        expect_error="rate",
        timeout=15,
        root=True,
    )
    for at in [0.1, 0.2, 0.3, 1.0, 1.5]:
        yield Case(
            "emulate",
            f"SIGINT at {at}s",
            ["emulate", "{scenario}", "-q"],
            text=scenario('rate = "10Mbps"\ndelay = "5ms"', duration="3s"),
            signal_at=at,
            expect_exit=130,
            timeout=15,
            root=True,
        )
    for d in ["1ns", "0s", "1us"]:
        yield Case(
            "emulate",
            f"duration {d}",
            ["emulate", "{scenario}", "-q"],
            text=scenario('rate = "10Mbps"\ndelay = "5ms"', duration=d),
            expect_error="duration",
            root=True,
        )
    flows = '{ name = "t", kind = "tcp", count = 30000 }'
    yield Case(
        "emulate",
        "30000 flows",
        ["emulate", "{scenario}", "-q"],
        text=scenario('rate = "10Mbps"\ndelay = "5ms"', flows=flows),
        expect_error="count",
        root=True,
    )


def python_api(folder: Path) -> Iterator[Case]:
    calls = {
        "run(3)": "scenario",
        "run(b'dumbbell-red')": "scenario",
        "run('nope-no-such')": "nope-no-such",
        "run('dumbbell-red', seed=-1)": "seed",
        "run('dumbbell-red', seed=2**64)": "seed",
        "run('dumbbell-red', seed='1')": "seed",
        "run('dumbbell-red', seed=1.5)": "seed",
        "run('dumbbell-red', duration=5)": "duration",
        "run('dumbbell-red', duration='-1s')": "duration",
        "run('dumbbell-red', duration='1e400s')": "duration",
        "run('dumbbell-red', warmup='1h', duration='1s')": "warmup",
        "run('dumbbell-red', set=[1])": "set",
        "run('dumbbell-red', set={'a..b': 1})": "a..b",
        "run('dumbbell-red', set={'qdisc': None})": "qdisc",
        "run('dumbbell-red', set={'qdisc.kind': 'nope'})": "kind",
        "run('dumbbell-red', progress='yes')": "progress",
        "run({'name': 'x'})": "duration",
        "run({'topology': 3})": "topology",
        "run({'flows': [{}]})": "flows",
        "run('dumbbell-red', nope=1)": "nope",
        "Result.read('/nonexistent')": "nonexistent",
        "Result.read('/etc')": "etc",
        "sweep('dumbbell-red', {'qdisc.kind': []})": "empty",
        "sweep('dumbbell-red', {'qdisc.kind': ['red']}, jobs=0)": "jobs",
        "sweep('dumbbell-red', {'qdisc.kind': ['red']}, jobs=-1)": "jobs",
        "sweep('dumbbell-red', {'qdisc.kind': ['red']}, seeds=0)": "seeds",
        "sweep('dumbbell-red', {'qdisc.kind': ['red']}, seeds=10**12)": "seeds",
        "sweep('dumbbell-red', {'qdisc.kind': ['red']}, cache_dir='/etc/passwd')": "passwd",
        "sweep('dumbbell-red', {'qdisc.kind': ['red', 'red']})": "twice",
        "sweep('dumbbell-red', {'qdisc.limit': [10, 2**70]})": "qdisc.limit",
        "sweep('dumbbell-red', {'qdisc.kind': ['red', 'pie']}, duration='100ms', warmup='0s')"
        ".statistics(['nope'])": "nope",
        "emulate('nope-no-such')": "nope-no-such",
        "emulate('dumbbell-red', strict='yes')": "strict",
    }
    for call, key in calls.items():
        yield Case(
            "python",
            call,
            python=f"import aqmlab\nfrom aqmlab import Result, sweep, run, emulate\n{call}",
            expect_error=key,
            timeout=60,
        )


def command_line(folder: Path) -> Iterator[Case]:
    flags = {
        ("--seed", "-1"): "seed",
        ("--seed", "1e3"): "seed",
        ("--seed", "18446744073709551616"): "seed",
        ("--duration", ""): "duration",
        ("--duration", "1e400s"): "duration",
        ("--duration", "-5s"): "duration",
        ("--duration", "5 parsecs"): "duration",
        ("--warmup", "1h"): "warmup",
        ("--set", "a"): "set",
        ("--set", "=1"): "set",
        ("--set", "qdisc.kind"): "set",
        ("--set", "qdisc.kind=nope"): "kind",
        ("--set", "qdisc.limit=1" + "0" * 40): "limit",
        ("--set", "qdisc.kind=" + "x" * 100_000): "kind",
        ("--set", "topology=" + "[" * 10_000): "topology",
        ("--format", "xml"): "format",
        ("--pcap", "/nonexistent/dir/x.pcap"): "pcap",
        ("--pcap", "nope->nowhere"): "pcap",
    }
    for (flag, value), key in flags.items():
        yield Case(
            "cli",
            f"run {flag} {value[:30]!r}",
            ["run", "dumbbell-red", "-q", "--duration", "1s", "--warmup", "0s", flag, value],
            expect_error=key,
        )
    for argv in (
        ["run", "-q", "--nope"],
        ["sweep", "--seeds", "0"],
        ["sweep", "--seeds", "1" + "0" * 20],
        ["sweep", "--jobs", "0"],
        ["repro", "nope"],
        ["qdiscs", "nope"],
        ["tc", ""],
        ["tc", "x" * 100_000],
        ["plot", "/nonexistent"],
        ["plot", "/etc"],
        ["model", "nope"],
        ["queue-lab", "--nope"],
    ):
        yield Case("cli", " ".join(a[:20] for a in argv), argv)


def toml_bombs(folder: Path) -> Iterator[Case]:
    texts = {
        "nested arrays": "x = " + "[" * 100_000 + "]" * 100_000,
        "nested tables": "x = " + "{ a = " * 10_000 + "1" + " }" * 10_000,
        "a million keys": "\n".join(f"k{i} = {i}" for i in range(1_000_000)),
        "a long string": 'name = "' + "a" * 10_000_000 + '"',
        "a long line of garbage": "=" * 1_000_000,
        "duplicate keys": 'name = "a"\nname = "b"',
        "a key of dots": "." * 10_000 + " = 1",
        "control bytes": 'name = "\x1b[2J\x07"',
        "an array of a million flows": "flows = [" + ", ".join(["{}"] * 200_000) + "]",
        "a flow count beyond u32": scenario(
            'rate = "10Mbps"\ndelay = "5ms"', flows='{ name = "t", kind = "tcp", count = 4294967296 }'
        ),
        "a flow count of a billion": scenario(
            'rate = "10Mbps"\ndelay = "5ms"', flows='{ name = "t", kind = "tcp", count = 1000000000 }'
        ),
        "a window of 2^40": scenario(
            'rate = "10Mbps"\ndelay = "5ms"',
            flows='{ name = "t", kind = "tcp", count = 2, max_window = 1099511627776 }',
        ),
        "a duration of 10^9 s": scenario('rate = "10Mbps"\ndelay = "5ms"', duration="1000000000s"),
    }
    for name, text in texts.items():
        yield Case("toml", name, ["run", "{scenario}", "-q"], text=text, timeout=60, memory=2 * GB)


def full_disk(folder: Path) -> Iterator[Case]:
    if os.geteuid() != 0:
        return
    small = folder / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)]).returncode:
        return
    for argv in (
        ["--pcap", "bottleneck", "--out", str(small / "pcap")],
        ["--out", str(small / "out")],
        ["--out", str(small / "out2"), "--format", "csv"],
    ):
        yield Case(
            "disk",
            f"full disk {argv[0]}",
            ["run", "dumbbell-red", "-q", "--duration", "11s", *argv],
            expect_error="space",
            timeout=60,
            leftovers=small,
        )


KINDS: dict[str, Callable[[Path], Iterator[Case]]] = {
    "rate": lambda _: zero_and_extreme_rates(),
    "content": file_contents,
    "warnings": lambda _: warnings_scale(),
    "stats": lambda _: statistics_flags(),
    "qdisc": lambda _: qdisc_values(),
    "out": out_folders,
    "emulate": emulation,
    "python": python_api,
    "cli": command_line,
    "toml": toml_bombs,
    "disk": full_disk,
}


# ---- running one --------------------------------------------------------------------------


def run_case(case: Case, aqmlab: str, python: str, folder: Path, verbose: bool) -> Outcome:
    work = Path(tempfile.mkdtemp(dir=folder))
    argv = list(case.argv)
    if case.text is not None:
        text = case.text
        if case.trace is not None:
            (work / "trace").write_text(case.trace)
            text = text.replace("{trace}", str(work / "trace"))
        (work / "s.toml").write_text(text)
        argv = [str(work / "s.toml") if a == "{scenario}" else a for a in argv]
    cmd = [python, "-c", case.python] if case.python is not None else [aqmlab, *argv]

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (case.memory, case.memory))

    started = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=work,
        preexec_fn=limits,
        start_new_session=True,
    )
    problems = []
    try:
        if case.signal_at is not None:
            time.sleep(case.signal_at)
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=case.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        problems.append(f"outlived {case.timeout:.0f} s")
    took = time.monotonic() - started
    text = (out + err).decode("utf-8", "replace")
    code = proc.returncode
    if "panicked" in text or "PanicException" in text or code == 101:
        problems.append("panic")
    if "Traceback (most recent call last)" in text and case.python is None:
        problems.append("traceback")
    if case.python is not None and "Traceback" in text and "Error" in text:
        last = text.strip().splitlines()[-1]
        if not last.startswith(
            ("ValueError", "RuntimeError", "OSError", "FileNotFoundError", "KeyboardInterrupt")
        ):
            problems.append(f"raised {last[:80]}")
    if len(err) > 8192:
        problems.append(f"an error of {len(err):,} bytes")
    if MARKER in text:
        problems.append("printed a file's content")
    if code is not None and code < 0 and code != -signal.SIGINT:
        problems.append(f"killed by signal {-code}")
    if "memory allocation" in text and "failed" in text:
        problems.append("aborted on memory")
    # Death by SIGINT is what a shell reports as 130.
    if code == -signal.SIGINT:
        code = 130
    if case.expect_exit is not None and code != case.expect_exit:
        problems.append(f"exit {code}, not {case.expect_exit}")
    if case.expect_error and code == 0 and case.signal_at is None:
        pass  # accepted: some spellings are valid; the other checks still hold
    elif case.expect_error and code not in (0, None) and case.expect_exit is None:
        first = err.decode("utf-8", "replace")
        if case.expect_error.lower() not in first.lower():
            problems.append(f"error does not name {case.expect_error!r}: {first.strip()[:120]!r}")
    if case.leftovers is not None:
        partial = [
            p.name for p in case.leftovers.rglob("*") if p.is_file() and not p.name.startswith(".aqmlab")
        ]
        if partial:
            problems.append(f"left {', '.join(partial[:3])}")
    if verbose or problems:
        print(f"  {case.kind:8} {case.name[:60]:60} exit {code} {took:5.1f}s {'; '.join(problems)}")
    shutil.rmtree(work, ignore_errors=True)
    return Outcome(case, problems)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aqmlab", default=shutil.which("aqmlab") or "aqmlab")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--only", choices=sorted(KINDS))
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="hostile-"))
    os.chmod(folder, 0o755)
    totals: dict[str, list[Outcome]] = {}
    try:
        for kind, make in KINDS.items():
            if a.only and kind != a.only:
                continue
            cases = list(make(folder))
            outcomes = [run_case(case, a.aqmlab, a.python, folder, a.v) for case in cases]
            totals[kind] = outcomes
            bad = sum(1 for o in outcomes if o.problems)
            print(f"{kind:9} {len(outcomes):4} cases, {bad} with problems")
    finally:
        # The full-disk cases mount a tmpfs in the folder.
        for line in Path("/proc/self/mounts").read_text().splitlines():
            point = line.split()[1]
            if point.startswith(str(folder)):
                subprocess.run(["umount", "-l", point], check=False)
        shutil.rmtree(folder, ignore_errors=True)
    every = [o for v in totals.values() for o in v]
    counts: dict[str, int] = {}
    for o in every:
        for p in o.problems:
            counts[p.split(":")[0].split(" ")[0]] = counts.get(p.split(":")[0].split(" ")[0], 0) + 1
    print(
        f"all       {len(every):4} cases, {sum(1 for o in every if o.problems)} with problems {counts or ''}"
    )
    return 1 if any(o.problems for o in every) else 0


if __name__ == "__main__":
    sys.exit(main())
