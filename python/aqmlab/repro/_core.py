"""The reproduction framework: experiments, checks, the cached parallel runner.

An :class:`Experiment` names the simulations it needs as :class:`Point` s (a label
and a scenario dict), says what to measure in each run (``measure``: a
:class:`~aqmlab.Result` -> a dict of numbers), and turns the measurements of every
point and seed into :class:`Check` s (the paper's number, ours, the band we accept)
and a figure. Nothing here knows about a paper; a module or package per paper
(``choke/``, ``sfb/``, ``breathe.py``, ...) declares its experiments, and
:data:`aqmlab.repro.PAPERS` lists the papers. What the papers' modules share
beyond this framework (scenario edits, statistics over seeds, plotting) is
:mod:`aqmlab.repro._helpers`.

Runs go through :mod:`aqmlab._runner`, the sweeps' runner: keyed by a hash of
(scenario dict, seed, engine build), stored one file each under ``OUT/cache/``
(``KEY.parquet``, written atomically), run on the local process pool or a Dask
cluster, and read back one at a time when the experiment measures them.
"""

from __future__ import annotations

import copy
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

if TYPE_CHECKING:
    import pandas as pd

    from aqmlab.result import Result

# Re-exported: the experiments and the tests know the runner's parts by these names.
from aqmlab._runner import Failure, LabRun, RunStats, Store, StoredResults, engine_id, run_key  # noqa: F401
from aqmlab._runner.store import FORMAT as STORE_FORMAT
from aqmlab._runner.work import QUEUE_LAB, simulate

# ---- scenarios --------------------------------------------------------------------


def scenario_dir() -> Path | None:
    """Where the scenario TOML files are: ``$AQMLAB_SCENARIOS``, else the source
    tree's ``scenarios/`` (an editable install), else ``None``."""
    env = os.environ.get("AQMLAB_SCENARIOS")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parents[3] / "scenarios"
    return here if here.is_dir() else None


def load_scenario(name: str) -> dict[str, Any]:
    """The scenario ``scenarios/NAME.toml`` as a dict (a built-in of that name when
    there is no source tree)."""
    folder = scenario_dir()
    if folder is not None and (folder / f"{name}.toml").is_file():
        with open(folder / f"{name}.toml", "rb") as f:
            return tomllib.load(f)
    from aqmlab import scenario_text

    try:
        return tomllib.loads(scenario_text(name))
    except ValueError:
        raise FileNotFoundError(
            f"scenario {name}.toml not found (looked in {folder}; set AQMLAB_SCENARIOS "
            "to the scenarios/ folder of an aqmlab checkout)"
        ) from None


def parse_nanos(text: str) -> int:
    """A repro ``duration`` in nanoseconds, read by the scenarios' own parser
    (``aqm::parse_dur``: ``"30s"``, ``"500ms"``, ``"2min"``); it must be positive."""
    from aqmlab import _aqmlab

    try:
        nanos = _aqmlab.parse_duration(text)
    except ValueError as e:
        raise ValueError(f"--duration: {e}") from None
    if nanos == 0:
        raise ValueError(f'--duration: duration "{text}" must be positive')
    return nanos


#: Arrivals of a queue-lab point in a shortened (``--duration``) run.
QUICK_LAB_PACKETS = 100_000


def shortened(scenario: Mapping[str, Any], duration: str | None) -> dict[str, Any]:
    """``scenario`` run for ``duration`` with a warm-up of a fifth of it (the paper
    runs' 20 s of 100 s), for quick runs and tests. A queue-lab point has no
    duration: it runs ``QUICK_LAB_PACKETS`` arrivals instead."""
    out = copy.deepcopy(dict(scenario))
    if QUEUE_LAB in out:
        # No simulated time to shorten: a quick run is fewer arrivals instead.
        if duration is not None:
            parse_nanos(duration)
            lab = out[QUEUE_LAB]
            lab["packets"] = min(int(lab["packets"]), QUICK_LAB_PACKETS)
        return out
    if duration is not None:
        from aqmlab import _aqmlab

        nanos = parse_nanos(duration)
        # Written back by the same code that reads it: one spelling per value, so
        # equal runs share a cache entry, and no "1e+06s".
        out["duration"] = _aqmlab.format_duration(nanos)
        out["warmup"] = _aqmlab.format_duration(nanos // 5)
    return out


# ---- what an experiment declares --------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One simulated configuration: ``label`` (plain values: the sweep's
    coordinates, e.g. ``{"qdisc": "choke", "udp_mbps": 1.0}``) and its scenario."""

    label: Mapping[str, Any]
    scenario: Mapping[str, Any]


@dataclass
class Check:
    """One number of the paper against ours.

    ``lo``..``hi`` is the band we accept for ``ours`` (derived from the paper's value
    and the tolerance, both stated). A trend or qualitative statement is a check
    with ``ours`` 1 (holds) or 0 and band [1, 1]. When we can only bound our value
    (``ours_lo``..``ours_hi``), the check passes if the bound and the band overlap.
    """

    quantity: str
    source: str
    paper: str
    ours: float
    lo: float
    hi: float
    tolerance: str
    unit: str = ""
    paper_value: float | None = None
    ours_sd: float | None = None
    ours_lo: float | None = None
    ours_hi: float | None = None
    note: str = ""

    @property
    def verdict(self) -> str:
        """PASS (ours in the band), MISS (outside it), or OPEN: our value is only
        bounded and the bounds reach both inside and outside the band."""
        if self.ours != self.ours:  # NaN: a trend our bounds cannot decide
            return "OPEN"
        if self.ours_lo is not None and self.ours_hi is not None:
            if self.lo <= self.ours_lo and self.ours_hi <= self.hi:
                return "PASS"
            if self.ours_lo <= self.hi and self.ours_hi >= self.lo:
                return "OPEN"
            return "MISS"
        return "PASS" if self.lo <= self.ours <= self.hi else "MISS"

    @property
    def passed(self) -> bool:
        return self.verdict == "PASS"

    def ours_text(self) -> str:
        if self.unit == "trend":
            if self.ours != self.ours:
                return "undecided"
            return "holds" if self.ours >= 0.5 else "does not hold"
        text = _fmt(self.ours)
        if self.ours_sd is not None and self.ours_sd > 0:
            text += f" ± {_fmt(self.ours_sd)}"
        if self.ours_lo is not None and self.ours_hi is not None:
            text += f" (bounds {_fmt(self.ours_lo)}..{_fmt(self.ours_hi)})"
        return text


def _fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    a = abs(x)
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}" if a >= 0.01 or a == 0 else f"{x:.2e}"


# Helpers to state a check's band from the paper's value and a tolerance.


def within(
    quantity: str,
    source: str,
    paper: float,
    ours: float,
    tol: float,
    unit: str,
    *,
    sd: float | None = None,
    relative: bool = False,
    paper_text: str | None = None,
    note: str = "",
) -> Check:
    """Paper value ± ``tol`` (absolute, in ``unit``; or a fraction of the paper's
    value when ``relative``)."""
    width = abs(paper) * tol if relative else tol
    if relative:
        tol_text = f"±{tol * 100:g}%"
    elif unit == "%":
        tol_text = f"±{tol:g} pp"  # percentage points, not a relative tolerance
    else:
        tol_text = f"±{tol:g} {unit}".rstrip()
    return Check(
        quantity=quantity,
        source=source,
        paper=paper_text if paper_text is not None else f"{_fmt(paper)} {unit}".rstrip(),
        paper_value=paper,
        ours=ours,
        ours_sd=sd,
        lo=paper - width,
        hi=paper + width,
        tolerance=tol_text,
        unit=unit,
        note=note,
    )


def band(
    quantity: str,
    source: str,
    paper_text: str,
    ours: float,
    lo: float,
    hi: float,
    unit: str,
    tolerance: str,
    *,
    sd: float | None = None,
    paper_value: float | None = None,
    note: str = "",
) -> Check:
    """An explicit accepted band [lo, hi] (for "more than 95%"-style statements)."""
    return Check(
        quantity=quantity,
        source=source,
        paper=paper_text,
        paper_value=paper_value,
        ours=ours,
        ours_sd=sd,
        lo=lo,
        hi=hi,
        tolerance=tolerance,
        unit=unit,
        note=note,
    )


def trend(quantity: str, source: str, paper_text: str, holds: bool | None, *, note: str = "") -> Check:
    """A qualitative statement of the paper, checked on the means over seeds;
    ``holds=None`` when our numbers cannot decide it (OPEN)."""
    return Check(
        quantity=quantity,
        source=source,
        paper=paper_text,
        ours=float("nan") if holds is None else 1.0 if holds else 0.0,
        lo=1.0,
        hi=1.0,
        tolerance="trend",
        unit="trend",
        note=note,
    )


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a paper.

    - ``points(base_scenarios)``: the configurations to simulate; each runs once per
      seed. ``scenarios`` lists the files (``scenarios/NAME.toml``) it starts from.
    - ``measure(label, result)``: numbers from one run.
    - ``checks(runs)``: the rows of the table, from the DataFrame of every run (one
      row per point and seed: the label's keys, ``seed``, and the measured numbers).
    - ``plot(runs, file)``: the figure, saved as PNG into ``file`` (a path or a
      binary file, as ``savefig`` takes).
    """

    id: str
    paper: str
    title: str
    source: str
    scenarios: tuple[str, ...]
    points: Callable[[Mapping[str, dict[str, Any]]], list[Point]]
    measure: Callable[[Mapping[str, Any], Result], dict[str, float]]
    checks: Callable[[pd.DataFrame], list[Check]]
    plot: Callable[[pd.DataFrame, Any], None]
    seeds: int = 5
    notes: str = ""
    extra_tables: Callable[[pd.DataFrame], dict[str, pd.DataFrame]] | None = field(default=None)

    def build_points(self, duration: str | None = None) -> list[Point]:
        bases = {name: load_scenario(name) for name in self.scenarios}
        pts = self.points(bases)
        if duration is not None:
            pts = [Point(p.label, shortened(p.scenario, duration)) for p in pts]
        return pts


# ---- the list of experiments -----------------------------------------------------


def index(experiments: Iterable[Experiment]) -> dict[str, Experiment]:
    """``experiments`` by id, in their order; an id given twice raises ``ValueError``."""
    out: dict[str, Experiment] = {}
    for exp in experiments:
        if exp.id in out:
            raise ValueError(f"experiment {exp.id!r} is listed twice")
        out[exp.id] = exp
    return out


# ---- running, with a cache --------------------------------------------------------
# The runner itself (executors, the store, progress) is aqmlab._runner, shared with
# the sweeps; here are the names the experiments and tests know it by.

#: Bump when the cache file layout changes.
CACHE_FORMAT = STORE_FORMAT
#: One run, in a worker (looked up at each call, so a test can count the runs of
#: an in-process, ``jobs=1``, reproduction).
_simulate = simulate


def run_all(
    jobs_in: Sequence[tuple[Mapping[str, Any], int]],
    cache_dir: Path | None,
    *,
    jobs: int | None = None,
    client: Any = None,
    progress: bool = True,
    fail_fast: bool = False,
    describe: Callable[[Mapping[str, Any], int], str] | None = None,
) -> tuple[Mapping[str, Result | LabRun], RunStats, list[Failure]]:
    """Runs every (scenario, seed) not already in ``cache_dir`` (a temporary store
    when ``None``) on the local pool (``jobs``) or a Dask cluster (``client``), and
    returns ({key: result}, read from the store on access, one at a time), the
    counts, and the runs that failed (:func:`aqmlab._runner.run_all`)."""
    from aqmlab import _runner

    store = Store(cache_dir)
    keys, stats, failures = _runner.run_all(
        jobs_in,
        store,
        jobs=jobs,
        client=client,
        progress=progress,
        fail_fast=fail_fast,
        work=_simulate,
        describe=describe,
    )
    return StoredResults(store, keys), stats, failures


# ---- one experiment end to end ----------------------------------------------------


def plan(exp: Experiment, seeds: int | None, duration: str | None) -> list[tuple[Point, int]]:
    """The (point, seed) runs of ``exp``: its points, each with seeds 1..``seeds``
    (the experiment's default when ``None``), shortened to ``duration`` if given."""
    n = exp.seeds if seeds is None else seeds
    return [(p, s) for p in exp.build_points(duration) for s in range(1, n + 1)]


def evaluate(exp: Experiment, planned: Iterable[tuple[Point, int]], results: Mapping[str, Result]):
    """(runs DataFrame, checks DataFrame) from the results of ``planned``."""
    import pandas as pd

    rows = []
    for point, seed in planned:
        result = results[run_key(point.scenario, seed)]
        row = dict(point.label)
        row["seed"] = seed
        row.update(exp.measure(point.label, result))
        rows.append(row)
    runs = pd.DataFrame(rows)
    checks = exp.checks(runs)
    return runs, checks_frame(exp, checks)


def checks_frame(exp: Experiment, checks: Sequence[Check]):
    """The checks of ``exp`` as the rows of its table."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "experiment": exp.id,
                "quantity": c.quantity,
                "source": c.source,
                "paper": c.paper,
                "paper_value": c.paper_value,
                "ours": c.ours,
                "ours_sd": c.ours_sd,
                "ours_lo": c.ours_lo,
                "ours_hi": c.ours_hi,
                "ours_text": c.ours_text(),
                "unit": c.unit,
                "tolerance": c.tolerance,
                "lo": c.lo,
                "hi": c.hi,
                "verdict": c.verdict,
                "pass": c.passed,
                "note": c.note,
            }
            for c in checks
        ]
    )


def write_outputs(exp: Experiment, runs, table, out: Path, fmt: str = "parquet") -> list[Path]:
    """``ID`` (the checks) and ``ID-runs`` (every run's numbers) as Parquet (or
    ``fmt="csv"``), extra tables, and ``ID.png``. Each file is written atomically
    (:func:`aqmlab._io.write_folder`); the tables of the other format, left by an
    earlier call, are removed, so the folder holds one run of the experiment (a
    file of the user's of the same name is refused, never replaced)."""
    from aqmlab._io import add_to_record, check_folder, write_atomic, write_folder

    check_folder(out, "out", [f"{exp.id}.png"], warn=lambda _: None)  # the user's own figure stays
    tables = {exp.id: table, f"{exp.id}-runs": runs}
    if exp.extra_tables is not None:
        for name, frame in exp.extra_tables(runs).items():
            tables[f"{exp.id}-{name}"] = frame.reset_index()
    written = write_folder(out, tables, fmt, known=tables)

    def png(f) -> None:
        from aqmlab.repro._helpers import pyplot

        pyplot()  # the file-only backend, before the experiment draws
        exp.plot(runs, f)

    written.append(write_atomic(out / f"{exp.id}.png", png))
    add_to_record(out / f"{exp.id}.png")
    return written


# ---- another simulator's values beside ours -----------------------------------------

#: Column-name prefix of a peer simulator's values in a checks table.
PEER_PREFIX = "peer:"


@dataclass(frozen=True)
class Peer:
    """Another simulator's value of some checks, run on the same scenarios (e.g.
    ns-2.35 by ``bench/vs_ns2.py``): ``label`` heads its column; ``values`` maps
    (experiment id, quantity) to the text shown (mean ± sd over its seeds)."""

    label: str
    values: Mapping[tuple[str, str], str]


def load_peer(path: str | os.PathLike[str]) -> Peer:
    """A peer's values from its JSON file: ``{"label": ..., "experiments": {id:
    {"checks": {quantity: {"text": ...}}}}}``. A file that does not hold that
    raises ``ValueError`` naming the file and the key."""
    import json

    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"--peer {path}: {e}") from None

    def need(obj: Any, key: str, kind: type, where: str) -> Any:
        if not isinstance(obj, dict) or not isinstance(obj.get(key), kind):
            raise ValueError(f"--peer {path}: {where}{key} must be a {kind.__name__}")
        return obj[key]

    label = need(doc, "label", str, "")
    values = {}
    for eid, exp in need(doc, "experiments", dict, "").items():
        for quantity, v in need(exp, "checks", dict, f"experiments.{eid}.").items():
            values[(eid, quantity)] = need(v, "text", str, f"experiments.{eid}.checks.{quantity}.")
    return Peer(label, values)


def with_peer(table, peer: Peer):
    """``table`` (checks) with a column of ``peer``'s values, "" where it has none."""
    out = table.copy()
    out[PEER_PREFIX + peer.label] = [
        peer.values.get((e, q), "") for e, q in zip(table["experiment"], table["quantity"])
    ]
    return out


def format_table(exp: Experiment, table) -> str:
    """The checks as a fixed-width text table, with a column after ours for each
    peer simulator (``with_peer``) that has a value in it."""
    peers = [c for c in table.columns if str(c).startswith(PEER_PREFIX) and (table[c] != "").any()]
    header = ["quantity", "source", "paper", "ours (mean ± sd over seeds)"]
    header += [c[len(PEER_PREFIX) :] for c in peers] + ["tolerance", "result"]
    rows = [
        [r.quantity, r.source, r.paper, r.ours_text, *(r[c] for c in peers), r.tolerance, r.verdict]
        for _, r in table.iterrows()
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    lines = [f"{exp.id}: {exp.title} ({exp.source})"]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip())
    n_pass = int(table["pass"].sum())
    n_open = int((table["verdict"] == "OPEN").sum())
    lines.append(f"{n_pass}/{len(table)} within tolerance" + (f", {n_open} open" if n_open else ""))
    if (table["verdict"] == "MISS").any():
        lines.append(miss_pointer(exp.id))
    return "\n".join(lines)


def miss_pointer(experiment: str) -> str:
    """Where a MISS of ``experiment`` is explained: its section of REPRODUCTION.md
    (each experiment's heading starts with its id; a test checks every one has
    one), and the section on what the verdicts mean."""
    return (
        f'MISS: REPRODUCTION.md, section "{experiment}: ...", says where and why ours differs '
        'from the paper ("What the verdicts mean" explains the bands)'
    )
