"""What ``aqmlab.sweep`` returns: the sweep's plan over a store of finished runs.

A :class:`Sweep` holds no run's tables: every run is an entry of the run store
(:mod:`aqmlab._runner.store`, ``OUT/cache/`` from the command line), and the
sweep holds each run's label, seed and key. Its tables are stacked from the store
one run at a time: :meth:`Sweep.write` streams them to disk piece by piece
(:func:`aqmlab._io.write_folder_streamed`), so writing the tables of 10,000 runs
needs the memory of one; :attr:`Sweep.runs` and the other DataFrames are built
when first asked for (then they are as large as the table is).

The tables' schemas are unified over the runs before the first piece is written:
a grid that changes the flow groups gives the runs table a column per group of
any run, empty where a run has no such group.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from aqmlab._runner import Failure, Store
    from aqmlab.result import Result

#: Runs whose rows of the runs table are gathered before they become Arrow.
_ROWS_PER_BATCH = 1024
#: The tables of one row per run or per point, written whole.
_WHOLE = ("runs", "stats", "paired")
#: The runs table's own columns, besides the per-group ones.
_RUN_COLUMNS = ("events", "jain_tcp", "jain_all", "goodput_bps", "link", "mean_queue_packets")


def label_text(value: Any) -> Any:
    """A grid value as a table cell: scalars stay, tables become their JSON."""
    if isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True)


def label_types(grid: Mapping[str, Sequence[Any]]) -> dict[str, pa.DataType]:
    """Each key's column type, from all its values at once: ``1, 2.5`` is a float
    column in every run, not ints in some and floats in others. Values of no
    common type (``1, "a"``) are written as text."""
    import pyarrow as pa

    types = {}
    for key, values in grid.items():
        cells = [label_text(v) for v in values]
        try:
            types[key] = pa.array(cells).type
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            types[key] = pa.string()
        if pa.types.is_null(types[key]):
            types[key] = pa.string()
    return types


class _RunsDone(Sequence):
    """(label, seed, Result) of every finished run, each read from the store when
    it is looked at."""

    def __init__(self, sweep: Sweep) -> None:
        self._sweep = sweep

    def __len__(self) -> int:
        return len(self._sweep._done)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        label, seed, key = self._sweep._done[i]
        return label, seed, self._sweep.store.load(key)


class Sweep:
    """What a sweep produced: one :class:`~aqmlab.Result` per (point, seed), and
    tables over all of them, each row labelled with the run's ``scenario``, the
    point's values (one column per sweep key) and the ``seed``, as a
    :class:`~aqmlab.Result`'s tables are (``group`` is a column in both).

    - ``runs``: one row per run: events, the Jain index over TCP flows and over all
      flows, the goodput of all flows ``goodput_bps``, per flow group
      ``<group>_goodput_bps``, ``<group>_drops`` and (for groups that took RTT
      samples) ``<group>_rtt_mean_s``; at the busiest
      monitored link (``link``, :func:`busiest_link`), ``mean_queue_packets`` and,
      when the run recorded delays (``[monitor] delays = true``), the queueing
      delay of all its packets ``delay_{mean,p50,p95,p99}_s`` and of each
      group's ``<group>_delay_{mean,p50,p95,p99}_s``; per probe group
      (``kind = "probe"``), its probes' round trips ``<group>_probe_rtt_{mean,p50,p95,p99}_s``
      and the probes it lost ``<group>_probe_lost``.
    - ``groups``, ``hosts``, ``flows``, ``links``: the runs' tables of the same
      names, stacked (``hosts`` is empty unless the scenario names hosts).

    A key's column is the key itself (``qdisc.kind``), unless a run's table has a
    column of that name (the links table's ``qdisc``): then it is ``set.<key>``
    (``set.qdisc``), in every table alike.

    - ``stats``: per point and metric of the runs table, the number of seeds, mean,
      sd and the 95% Student-t interval (:func:`aqmlab.stats.summarize`).
    - ``paired``: with a ``baseline`` ({key: value}), each point's paired
      differences against the baseline point, seed by seed, with their intervals
      (:func:`aqmlab.stats.paired`); empty without one.

    ``runs_done`` is a sequence of (label, seed, Result), read from the run store
    one at a time; ``failed`` the runs that failed (they are in no table);
    ``simulated``, ``cached`` and ``seconds`` what the runner did; ``stopped``,
    with ``precision=``, each point's seeds and why no more were added.
    """

    #: The tables :meth:`write` writes.
    TABLES = ("runs", "groups", "hosts", "flows", "links", "stats", "paired")
    #: The tables of one row per run, stacked from the store.
    _STACKED = ("groups", "hosts", "flows", "links")
    #: The interval's confidence level of ``stats`` and ``paired``.
    level = 0.95

    def __init__(
        self,
        keys: list[str],
        planned: list[tuple[dict[str, Any], int, str]],
        store: Store,
        *,
        types: Mapping[str, pa.DataType],
        failed: Sequence[Failure] = (),
        simulated: int = 0,
        cached: int = 0,
        seconds: float = 0.0,
        baseline: Mapping[str, Any] | None = None,
    ) -> None:
        self.keys = keys
        #: {key: value} of the point the ``paired`` table compares against.
        self.baseline = dict(baseline or {})
        #: With ``precision=``: one row per point, its seeds and why it stopped.
        self.stopped: pd.DataFrame | None = None
        self.store = store
        self.failed = list(failed)
        bad = {f.key for f in self.failed}
        self._done = [(label, seed, key) for label, seed, key in planned if key not in bad]
        self._types = dict(types)
        # Seeds reach 2**64 - 1: past int64, the column is unsigned in every run.
        self._seed_type = "uint64" if any(seed >= 2**63 for _, seed, _ in self._done) else "int64"
        self.simulated = simulated
        self.cached = cached
        self.seconds = seconds
        #: Keys whose values gave the same results, each with why (see :func:`aqmlab.sweep`).
        self.warnings: list[str] = []
        self._frames: dict[str, pd.DataFrame] = {}
        self._columns: dict[str, str] | None = None
        self._scanned: tuple[pa.Table, dict[str, pa.Schema]] | None = None

    def __repr__(self) -> str:
        return (
            f"Sweep(keys={self.keys!r}, runs={len(self._done)}, failed={len(self.failed)}, "
            f"simulated={self.simulated}, cached={self.cached})"
        )

    @property
    def runs_done(self) -> Sequence[tuple[dict[str, Any], int, Result]]:
        return _RunsDone(self)

    @property
    def columns(self) -> dict[str, str]:
        """{sweep key: the name of its column in the tables}."""
        if self._columns is None:
            taken = {"scenario", "seed", *_RUN_COLUMNS}
            if self._done:
                result = self.store.load(self._done[0][2])
                for name in self._STACKED:
                    taken.update(result.arrow(name).column_names)
            self._columns = {key: f"set.{key}" if key in taken else key for key in self.keys}
        return self._columns

    # ---- one run's rows -------------------------------------------------------------

    def _label_columns(
        self, scenario: str, label: Mapping[str, Any], seed: int, n: int
    ) -> list[tuple[str, pa.Array]]:
        """The columns every row of a run starts with: ``scenario`` (the run's
        name), each key's, ``seed`` (as ``aqmlab.run``'s results start)."""
        import pyarrow as pa

        columns = self.columns
        out = [(columns[k], pa.array([label_text(label[k])] * n, self._types[k])) for k in self.keys]
        return [
            ("scenario", pa.array([scenario] * n, pa.string())),
            *out,
            ("seed", pa.array([seed] * n, self._seed_type)),
        ]

    def _labelled(self, name: str, label: Mapping[str, Any], seed: int, result: Result) -> pa.Table:
        t = result.arrow(name).replace_schema_metadata(None)
        for i, (column, values) in enumerate(self._label_columns(result.scenario, label, seed, t.num_rows)):
            t = t.add_column(i, column, values)
        return t

    def _scan(self) -> tuple[pa.Table, dict[str, pa.Schema]]:
        """One pass over the store: the runs table (one row per run, small), and the
        schema of each other table unified over every run (from the tables'
        headers, without reading their rows)."""
        import pyarrow as pa

        if self._scanned is None:
            # The runs table's rows gathered as dicts and turned into Arrow every
            # 1024 runs: a one-row Arrow table per run costs tens of kilobytes, a
            # dict a few (one entry per group), an Arrow row 8 bytes a column.
            rows: list[dict[str, Any]] = []
            batches: list[pa.Table] = []
            fields: dict[str, pa.DataType] = {}
            seen: dict[str, dict[str, pa.Schema]] = {name: {} for name in self._STACKED}
            for label, seed, key in self._done:
                result = self.store.load(key)
                head = self._label_columns(result.scenario, label, seed, 1)
                row = {column: values[0].as_py() for column, values in head}
                for column, values in head:
                    fields.setdefault(column, values.type)
                for column, (value, kind) in _runs_values(result).items():
                    row[column] = value
                    fields.setdefault(column, kind)
                rows.append(row)
                if len(rows) == _ROWS_PER_BATCH:
                    batches.append(pa.Table.from_pylist(rows, schema=pa.schema(list(fields.items()))))
                    rows = []
                for name in seen:
                    schema = pa.ipc.open_stream(result._ipc[name]).schema.remove_metadata()
                    schema = pa.schema([*((c, v.type) for c, v in head), *schema])
                    seen[name].setdefault(str(schema), schema)
            schema = pa.schema(list(fields.items()))
            batches.append(pa.Table.from_pylist(rows, schema=schema))
            runs = pa.concat_tables([_conform(b, schema) for b in batches])
            del rows, batches
            schemas = {"runs": runs.schema}
            schemas.update({n: pa.unify_schemas(list(s.values())) for n, s in seen.items() if s})
            self._scanned = (runs, schemas)
        return self._scanned

    def _pieces(self, schemas: Mapping[str, pa.Schema], whole: bool = True) -> Iterator[dict[str, pa.Table]]:
        """{table: this run's rows, labelled, in ``schemas``' columns}, run after run
        in the plan's order (with ``whole``, first the tables of a row per run or
        point: runs, stats, paired)."""
        if whole:
            yield {name: self.table(name) for name in _WHOLE}
        for label, seed, key in self._done:
            result = self.store.load(key)
            yield {
                name: _conform(self._labelled(name, label, seed, result), schemas[name])
                for name in self._STACKED
            }

    # ---- the tables -------------------------------------------------------------------

    def table(self, name: str) -> pa.Table:
        """The table ``name`` (one of :attr:`TABLES`) as a ``pyarrow.Table``."""
        import pyarrow as pa

        if name not in self.TABLES:
            from aqmlab.result import NoSuchTable

            raise NoSuchTable(f"no table {name!r} (tables: {', '.join(self.TABLES)})")
        if not self._done:
            return pa.table({})
        runs, schemas = self._scan()
        if name == "runs":
            return runs
        if name in ("stats", "paired"):
            return pa.Table.from_pandas(self._frame(name), preserve_index=False)
        return pa.concat_tables([piece[name] for piece in self._pieces(schemas, whole=False)])

    def _frame(self, name: str) -> pd.DataFrame:
        frame = self._frames.get(name)
        if frame is None:
            if name == "stats":
                frame = self.statistics()
            elif name == "paired":
                frame = self.differences(self.baseline) if self.baseline else _empty_paired(self)
            else:
                frame = self.table(name).to_pandas()
            self._frames[name] = frame
        return frame

    def statistics(self, metrics: Sequence[str] | None = None, level: float | None = None) -> pd.DataFrame:
        """Per point and metric (default: every metric of the runs table): ``n``
        seeds, ``mean``, ``sd``, ``ci_low``, ``ci_high``, ``half_width`` of the
        Student-t interval at ``level`` (default 0.95)."""
        from aqmlab.stats import summarize

        keys = [self.columns[k] for k in self.keys]
        return summarize(self.runs, keys, metrics, level=level or self.level)

    def differences(
        self,
        baseline: Mapping[str, Any],
        metrics: Sequence[str] | None = None,
        level: float | None = None,
    ) -> pd.DataFrame:
        """Paired differences of every point against the point with ``baseline``'s
        values ({sweep key: value}), seed by seed: see :func:`aqmlab.stats.paired`."""
        from aqmlab.stats import paired

        unknown = [k for k in baseline if k not in self.keys]
        if unknown:
            raise ValueError(
                f"baseline key {unknown[0]!r} is not a key of this sweep "
                f"(keys: {', '.join(self.keys) or 'none'})"
            )
        keys = [self.columns[k] for k in self.keys]
        base = {self.columns[k]: label_text(v) for k, v in baseline.items()}
        return paired(self.runs, keys, base, metrics, level=level or self.level)

    @property
    def stats(self) -> pd.DataFrame:
        return self._frame("stats")

    @property
    def paired(self) -> pd.DataFrame:
        return self._frame("paired")

    @property
    def runs(self) -> pd.DataFrame:
        return self._frame("runs")

    @property
    def groups(self) -> pd.DataFrame:
        return self._frame("groups")

    @property
    def hosts(self) -> pd.DataFrame:
        return self._frame("hosts")

    @property
    def flows(self) -> pd.DataFrame:
        return self._frame("flows")

    @property
    def links(self) -> pd.DataFrame:
        return self._frame("links")

    def summary(self) -> dict[str, Any]:
        """What ``summary.json`` holds: the keys, seeds, counts and failed runs."""
        return {
            "keys": self.keys,
            "seeds": sorted({seed for _, seed, _ in self._done}),
            "runs": len(self._done),
            "simulated": self.simulated,
            "cached": self.cached,
            "failed": [{"where": f.where, "seed": f.seed, "error": f.error} for f in self.failed],
            "seconds": self.seconds,
            "baseline": {k: label_text(v) for k, v in self.baseline.items()},
            "level": self.level,
            "stopped": [] if self.stopped is None else json.loads(self.stopped.to_json(orient="records")),
        }

    def write(self, out: str | os.PathLike[str], fmt: str = "parquet") -> list[Path]:
        """Writes the runs, groups, hosts, flows, links, stats and paired tables under ``out`` as
        Parquet (or ``fmt="csv"``), then ``summary.json`` (the sweep's keys, seeds
        and counts), by the steps of :func:`aqmlab._io.write_folder`: a killed or
        repeated sweep never leaves a folder that looks finished but mixes two.
        The tables stream from the run store, one run at a time."""
        from aqmlab._io import write_folder_streamed

        if self._done:
            schemas = {**self._scan()[1], **{name: self.table(name).schema for name in _WHOLE}}
            pieces: Iterator[Mapping[str, pa.Table]] = self._pieces(schemas)
        else:
            import pyarrow as pa

            schemas = {name: pa.schema([]) for name in self.TABLES}
            pieces = iter(())
        return write_folder_streamed(
            out,
            schemas,
            pieces,
            fmt,
            summary=json.dumps(self.summary(), indent=2),
            known=self.TABLES,
        )


def _empty_paired(sweep: Sweep) -> pd.DataFrame:
    import pandas as pd

    from aqmlab.stats import SUMMARY_COLUMNS

    columns = [sweep.columns[k] for k in sweep.keys]
    return pd.DataFrame(columns=[*columns, "metric", *SUMMARY_COLUMNS, "relative"])


def _runs_values(result: Result) -> dict[str, tuple[Any, pa.DataType]]:
    """The runs table's columns of one run: {column: (value, type)}."""
    import pyarrow as pa

    fairness = result.fairness
    out: dict[str, tuple[Any, pa.DataType]] = {
        "events": (result.event_count, pa.int64()),
        "jain_tcp": (fairness["tcp"]["jain"], pa.float64()),
        "jain_all": (fairness["all"]["jain"], pa.float64()),
    }
    groups = result.arrow("groups")
    goodput_type = groups.schema.field("goodput_bps").type
    drops_type = groups.schema.field("drops_total").type
    for g in groups.select(["group", "goodput_bps", "drops_total"]).to_pylist():
        out[f"{g['group']}_goodput_bps"] = (g["goodput_bps"], goodput_type)
        out[f"{g['group']}_drops"] = (g["drops_total"], drops_type)
    out["goodput_bps"] = (sum(groups.column("goodput_bps").to_pylist()), pa.float64())
    for g in groups.select(["group", "rtt_mean_s"]).to_pylist():
        if g["rtt_mean_s"] is not None:  # a group without RTT samples (UDP) has no column
            out[f"{g['group']}_rtt_mean_s"] = (g["rtt_mean_s"], pa.float64())
    out.update(_probe_values(groups))
    link = busiest_link(result)
    if link is None:
        return out
    out["link"] = (link, pa.string())
    row = next(
        r
        for r in result.arrow("links").select(["name", "mean_queue_packets"]).to_pylist()
        if r["name"] == link
    )
    out["mean_queue_packets"] = (row["mean_queue_packets"], pa.float64())
    for d in result.arrow("delays").to_pylist():
        if d["link"] != link or d["count"] == 0:
            continue
        prefix = "" if d["scope"] == "link" else f"{d['group']}_"
        for q in DELAY_STATS:
            out[f"{prefix}delay_{q}_s"] = (d[f"{q}_s"], pa.float64())
    return out


def _probe_values(groups: pa.Table) -> dict[str, tuple[Any, pa.DataType]]:
    """Each probe group's latency under load: ``<group>_probe_rtt_<q>_s`` (its
    probes' RTTs pooled, absent when none came back) and ``<group>_probe_lost``."""
    import pyarrow as pa

    if "probe_sent" not in groups.column_names:  # tables written before probes
        return {}
    out: dict[str, tuple[Any, pa.DataType]] = {}
    columns = ["group", "probe_sent", "probe_lost", *(f"probe_rtt_{q}_s" for q in PROBE_STATS)]
    for g in groups.select(columns).to_pylist():
        if g["probe_sent"] is None:  # not a probe group
            continue
        out[f"{g['group']}_probe_lost"] = (g["probe_lost"], pa.uint64())
        for q in PROBE_STATS:
            if g[f"probe_rtt_{q}_s"] is not None:
                out[f"{g['group']}_probe_rtt_{q}_s"] = (g[f"probe_rtt_{q}_s"], pa.float64())
    return out


#: The probe RTT statistics the runs table has per probe group
#: (``<group>_probe_rtt_<q>_s``), from the groups table's ``probe_rtt_<q>_s``.
PROBE_STATS = ("mean", "p50", "p95", "p99")


def runs_metric_names(scenario: Mapping[str, Any]) -> set[str]:
    """Every metric column the runs table can have for a run of ``scenario`` (a
    scenario table): what :func:`_runs_values` may write, known before anything
    runs, so that ``--precision`` refuses a metric no run will have at once. A
    superset: a delay column only exists where delays were monitored."""
    names = {c for c in _RUN_COLUMNS if c != "link"}
    names.update(f"delay_{q}_s" for q in DELAY_STATS)
    for flow in scenario.get("flows") or []:
        group = flow.get("name") if isinstance(flow, Mapping) else None
        if not isinstance(group, str):
            continue
        names.update(f"{group}_{m}" for m in ("goodput_bps", "drops", "rtt_mean_s"))
        names.update(f"{group}_delay_{q}_s" for q in DELAY_STATS)
        if flow.get("kind") == "probe":
            names.add(f"{group}_probe_lost")
            names.update(f"{group}_probe_rtt_{q}_s" for q in PROBE_STATS)
    return names


#: The queueing-delay statistics the runs table has per run (``delay_<q>_s``) and
#: per group (``<group>_delay_<q>_s``), from the delays table's ``<q>_s``.
DELAY_STATS = ("mean", "p50", "p95", "p99")


def busiest_link(result: Result) -> str | None:
    """The monitored link direction whose metrics the runs table has
    (``mean_queue_packets``, ``delay_*``): the one of highest throughput (a
    dumbbell's data direction, not its ACKs), the first of equals; None when
    no link is monitored."""
    links = result.arrow("links").select(["name", "throughput_bps"]).to_pylist()
    if not links:
        return None
    best = max(links, key=lambda r: r["throughput_bps"])
    return str(best["name"])


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns, in its order: absent ones are null."""
    import pyarrow as pa

    if table.schema.equals(schema):
        return table
    names = set(table.column_names)
    arrays = [
        table.column(f.name).cast(f.type) if f.name in names else pa.nulls(table.num_rows, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)
