"""The results of one run: Arrow tables, read as pandas DataFrames.

A :class:`Result` holds each table of the run as the Arrow IPC stream bytes the
extension produced (the schema is defined once, in ``crates/sim/src/tables.rs``),
and nothing else; the Arrow tables and DataFrames are built on first use. So a
result pickles as those bytes (small, and independent of pandas versions) and
crosses process boundaries cheaply.

Adding a table: its builder in ``tables.rs`` and one property here, made with
:func:`_table`.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab._io import arrow_source

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


@functools.cache
def _csv_types() -> dict[str, dict[str, Any]]:
    """{table: {column: Arrow type}}: the types of the run's tables, for reading CSV."""
    import pyarrow as pa

    from aqmlab import _aqmlab

    return {
        name: {f.name: f.type for f in pa.ipc.open_stream(ipc).schema}
        for name, ipc in _aqmlab.table_schemas()
    }


def _table(name: str, doc: str, index: str | None = None) -> property:
    """A DataFrame property of the table ``name`` (indexed by ``index``)."""

    def get(self: Result) -> pd.DataFrame:
        frame = self._frames.get(name)
        if frame is None:
            frame = self.arrow(name).to_pandas()
            if index is not None:
                frame = frame.set_index(index)
            self._frames[name] = frame
        return frame

    get.__doc__ = doc
    return property(get)


class NoSuchTable(ValueError, KeyError):
    """A table name that is not one of the result's: a ``ValueError`` (as every
    bad argument is), and a ``KeyError`` for code written when it was one."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class Result:
    """What one run produced: one DataFrame per table.

    - ``run``: one row: scenario, seed, duration_s, warmup_s, events,
      wall_seconds (the one value that differs between replays), sim_seconds.
    - ``flows``: one row per flow (goodput, drops by reason as ``drops_<reason>``,
      marks, RTT, retransmits, fair share).
    - ``groups``: one row per flow group, its name in the column ``group`` (as
      every table of a run and of a sweep has it: they concatenate).
    - ``hosts``: when the scenario names hosts (a group's ``host`` or
      ``receiver_host``), one row per host and ``role`` ("sender", "receiver"):
      its flows, goodput, share of all hosts', drops, marks and Jain's index
      among its flows; a flow that names no host is the host ``group#i``.
    - ``links``: one row per monitored link direction (drops and marks by reason).
    - ``queue``: the sampled backlog of every monitored link, long format
      (``link, t_s, packets, bytes``).
    - ``link_flows``: each flow's throughput across each monitored link, and its
      mean number of packets in that link's queue.
    - ``fairness``: Jain's index and the coefficient of variation, over TCP flows,
      over all flows, per group and (when the scenario names hosts) between hosts,
      as a dict (the table is ``arrow("fairness")``).
    - What ``[monitor]`` asks for (empty tables otherwise): ``flow_series`` (each
      flow's packets, bytes, throughput, drops and marks across each monitored link
      per interval), ``tcp_trace`` (cwnd, ssthresh, srtt, rto, packets in flight of
      every TCP flow per interval), ``delays`` (queueing-delay count, mean, p50,
      p90, p95, p99 and max per monitored queue, over every packet with
      ``scope`` "link" and ``group`` None, and per flow group with ``scope``
      "group") and ``delay_histogram`` (their buckets), ``objects`` (each web
      object's transfer time), ``events`` (every drop and mark: time, link, flow,
      reason, mark).
    - ``summary``: the dict ``aqmlab run --json`` prints, rebuilt from the tables.

    A result of :func:`aqmlab.run` is labelled: every table starts with the
    columns ``scenario``, each ``set=`` key and ``seed`` (as ``aqmlab run --out``
    writes them), so tables of several runs concatenate as a sweep's do.

    Rates are bit/s and counts are events inside the measured interval (after the
    warm-up). ``arrow(name)`` gives a table as a ``pyarrow.Table``; ``read(folder)``
    reads back the tables ``aqmlab run --out`` wrote. Two results are
    equal when every table is, ``wall_seconds`` and the label columns aside: a
    replay of a run (same scenario, same seed) equals it.
    """

    __slots__ = ("_arrow", "_frames", "_ipc")

    def __init__(self, tables: Mapping[str, bytes]) -> None:
        self._ipc: dict[str, bytes] = dict(tables)
        self._arrow: dict[str, pa.Table] = {}
        self._frames: dict[str, pd.DataFrame] = {}

    @classmethod
    def _from_finished(cls, finished: Any) -> Result:
        """A result from the extension's ``Finished`` run."""
        return cls(dict(finished.tables()))

    # ---- Arrow ----------------------------------------------------------------

    @property
    def table_names(self) -> list[str]:
        """The tables, in the schema's order."""
        return list(self._ipc)

    def arrow(self, name: str) -> pa.Table:
        """The table ``name`` as a ``pyarrow.Table``."""
        table = self._arrow.get(name)
        if table is None:
            import pyarrow as pa

            try:
                data = self._ipc[name]
            except KeyError:
                raise NoSuchTable(f"no table {name!r} (tables: {', '.join(self._ipc)})") from None
            table = self._arrow[name] = pa.ipc.open_stream(data).read_all()
        return table

    def to_ipc(self) -> bytes:
        """Every table in one Arrow IPC stream (see :func:`aqmlab._io.pack`)."""
        from aqmlab._io import pack

        return pack(self._ipc, {"aqmlab": "result"})

    @classmethod
    def from_ipc(cls, data: bytes) -> Result:
        """A result from :meth:`to_ipc`'s bytes."""
        from aqmlab._io import unpack

        parts, meta = unpack(data)
        if meta.get("aqmlab") != "result":
            raise ValueError("these bytes hold no aqmlab result")
        return cls(parts)

    @classmethod
    def read(cls, folder: str | os.PathLike[str]) -> Result:
        """The result ``aqmlab run --out FOLDER`` wrote, read back from its tables
        (Parquet or CSV). Raises ``ValueError`` when ``folder`` is not the output of
        a finished run."""
        import pyarrow as pa

        from aqmlab import _aqmlab

        folder = Path(folder)
        if not folder.is_dir():
            raise ValueError(f"{folder}: no such folder (give the folder `aqmlab run --out` wrote)")
        found = {f.name for f in folder.iterdir()}
        fmt = next((x for x in ("parquet", "csv") if f"run.{x}" in found), None)
        if fmt is None:
            hint = (
                " (it holds a sweep's tables: plot one run's folder)"
                if "runs.parquet" in found or "runs.csv" in found
                else ""
            )
            raise ValueError(f"{folder} is not the output of `aqmlab run --out`: no run.parquet{hint}")
        if "summary.json" not in found:
            raise ValueError(
                f"{folder} has no summary.json: the run writing it did not finish (run it again)"
            )
        try:
            summary = json.loads((folder / "summary.json").read_bytes())
        except (OSError, ValueError) as e:
            raise ValueError(f"{folder}/summary.json is not a run's summary ({e}): run it again") from None
        if not isinstance(summary, dict):
            raise ValueError(
                f"{folder}/summary.json is not a run's summary (not a JSON object): run it again"
            )
        parts = {}
        for name in _aqmlab.table_names():
            path = folder / f"{name}.{fmt}"
            if path.name not in found:
                continue
            try:
                if fmt == "parquet":
                    import pyarrow.parquet as pq

                    table = pq.read_table(arrow_source(path))
                else:
                    import pyarrow.csv as pcsv

                    # The writer leaves a missing value's cell empty, and CSV has no
                    # types: the columns take the ones the table was written with
                    # (a column of missing values would otherwise read as nulls of no type).
                    convert = pcsv.ConvertOptions(
                        strings_can_be_null=True, column_types=_csv_types().get(name, {})
                    )
                    table = pcsv.read_csv(arrow_source(path), convert_options=convert)
            except (pa.ArrowException, OSError) as e:
                raise ValueError(f"{path}: not a readable {fmt} table ({e})") from None
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as w:
                w.write_table(table)
            parts[name] = sink.getvalue().to_pybytes()
        return cls(parts)

    def __reduce__(self) -> tuple[type[Result], tuple[dict[str, bytes]]]:
        return (Result, (self._ipc,))

    def _comparable(self, name: str) -> pa.Table:
        # Labels name a run, they are not its results: a sweep's run equals the
        # single run of its point.
        table = self._own(name)
        return table.drop_columns(["wall_seconds"]) if name == "run" else table

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        if list(self._ipc) != list(other._ipc):
            return False
        return all(self._comparable(n).equals(other._comparable(n)) for n in self._ipc)

    def __hash__(self) -> int:
        return hash((self.scenario, self.seed, self.event_count))

    # ---- tables -----------------------------------------------------------------

    run = _table("run", "One row: what ran, for how long, and how long it took.")
    flows = _table("flows", "One row per flow.")
    groups = _table("groups", "One row per flow group, its name in the column ``group`` (as in a sweep's).")
    hosts = _table(
        "hosts",
        'One row per host and role ("sender", "receiver") when the scenario names hosts: flows, '
        "goodput_bps, share, drops_total, marks, jain.",
    )
    links = _table("links", "One row per monitored link direction.")
    queue = _table("queue", "The sampled backlog of every monitored link (link, t_s, packets, bytes).")
    link_flows = _table("link_flows", "Each flow's throughput and mean queue across each monitored link.")
    flow_series = _table(
        "flow_series",
        "Each flow across each monitored link per interval (t_s, dt_s, packets, bytes, "
        "throughput_bps, drops, marks); [monitor] flow_series.",
    )
    tcp_trace = _table(
        "tcp_trace",
        "Each TCP sender per interval (cwnd, ssthresh, srtt_s, rto_s, in_flight, pacing_rate_pps,"
        " bbr_bw_pps, bbr_min_rtt_s).",
    )
    delays = _table(
        "delays",
        'Queueing delay per monitored queue: the whole link (scope "link", group None) and per group.',
    )
    delay_histogram = _table("delay_histogram", "The delay histograms: count per [lo_s, hi_s).")
    objects = _table("objects", "Each web object's start, end and transfer time.")
    events = _table("events", "Every drop and mark at any queue (t_s, link, flow, reason, mark).")
    diagnostics = _table(
        "diagnostics",
        "The qdiscs' notes on how they ran (link, qdisc, note): a configuration that did not do "
        "what its parameters suggest, such as BREATHe whose heavy-hitter set never evicted a flow.",
    )

    # ---- plain data -------------------------------------------------------------

    def _labels(self) -> list[str]:
        """The label columns every table of a labelled run starts with
        (``scenario``, each ``--set`` key, ``seed``; see :func:`aqmlab.run`)."""
        names = self.arrow("run").column_names
        return names[: names.index("seed") + 1] if "seed" in names else []

    def _own(self, name: str) -> pa.Table:
        """The table ``name`` without its label columns (the run table keeps its
        own ``scenario`` and ``seed``)."""
        table = self.arrow(name)
        labels = self._labels()
        if name == "run":
            drop = [c for c in labels if c not in ("scenario", "seed")]
        elif table.column_names[: len(labels)] == labels:
            drop = labels
        else:
            drop = []
        return table.drop_columns(drop) if drop else table

    def _run_row(self) -> dict[str, Any]:
        return self._own("run").to_pylist()[0]

    @property
    def scenario(self) -> str:
        return self._run_row()["scenario"]

    @property
    def seed(self) -> int:
        return self._run_row()["seed"]

    @property
    def event_count(self) -> int:
        """Events the engine processed (``events`` is the drop and mark log)."""
        return self._run_row()["events"]

    @property
    def fairness(self) -> dict[str, Any]:
        """``{"tcp": {n, jain, cov}, "all": {...}, "groups": {name: {...}}}``, and
        ``"hosts"`` and ``"receiver_hosts"`` when the scenario names hosts."""
        out: dict[str, Any] = {"groups": {}}
        for row in self._own("fairness").to_pylist():
            scope, group = row.pop("scope"), row.pop("group")
            if scope == "group":
                out["groups"][group] = row
            else:
                out[scope] = row
        return out

    @property
    def summary(self) -> dict[str, Any]:
        """The ``aqmlab run --json`` object, as a new dict: the tables but
        ``link_flows``, with counts by reason as ``{reason: n}`` maps and each
        link's queue samples inside it."""
        from aqmlab import _aqmlab

        reasons = _aqmlab.drop_reasons()

        def fold(row: dict[str, Any], prefix: str) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for k, v in row.items():
                if k == f"{prefix}_{reasons[0]}":
                    out[prefix] = {r: row[f"{prefix}_{r}"] for r in reasons}
                elif not (k.startswith(f"{prefix}_") and k[len(prefix) + 1 :] in reasons):
                    out[k] = v
            return out

        def probe(row: dict[str, Any]) -> dict[str, Any]:
            # A probe flow's or group's columns, `probe_<stat>`, nested as the JSON
            # summary nests them (`"probe": {stat: ...}`); absent on other kinds.
            stats = {k.removeprefix("probe_"): row.pop(k) for k in list(row) if k.startswith("probe_")}
            if stats.get("sent") is not None:
                row["probe"] = stats
            return row

        q = self._own("queue")
        series: dict[str, dict[str, list[Any]]] = {}
        for link, t, packets, size in zip(
            q.column("link").to_pylist(),
            q.column("t_s").to_pylist(),
            q.column("packets").to_pylist(),
            q.column("bytes").to_pylist(),
        ):
            s = series.setdefault(link, {"t_s": [], "packets": [], "bytes": []})
            s["t_s"].append(t)
            s["packets"].append(packets)
            s["bytes"].append(size)
        links = []
        for row in self._own("links").to_pylist():
            row = fold(fold(row, "drops"), "marks")
            row["queue"] = series.get(row["name"], {"t_s": [], "packets": [], "bytes": []})
            links.append(row)
        groups = {}
        for row in self._own("groups").to_pylist():
            groups[row.pop("group")] = probe(row)
        run = self._run_row()
        # An emulated run's timekeeping is the summary's "emulation" object (the
        # run table's columns of it); a simulation has none.
        timekeeping = {k: run.pop(k, None) for k in self._EMULATION_COLUMNS}
        emulated = run.pop("emulated", False)
        hosts = self._own("hosts").to_pylist() if "hosts" in self._ipc else []
        summary = {
            **run,
            "flows": [probe(fold(row, "drops")) for row in self._own("flows").to_pylist()],
            "groups": groups,
            **({"hosts": hosts} if hosts else {}),
            "links": links,
            "fairness": self.fairness,
        }
        delays = self._own("delays").to_pylist()
        if delays:
            summary["delays"] = delays
        diagnostics = self._own("diagnostics").to_pylist()
        if diagnostics:
            summary["diagnostics"] = diagnostics
        if emulated:
            summary["emulation"] = timekeeping
        return summary

    _EMULATION_COLUMNS = (
        "lateness_p50_s", "lateness_p99_s", "lateness_max_s", "late_share", "kept_time", "tun_drops",
    )  # fmt: skip

    # ---- display ----------------------------------------------------------------

    def __repr__(self) -> str:
        d = self._run_row()
        lines = [
            f"<aqmlab.Result {d['scenario']!r} seed={d['seed']}: "
            f"{d['duration_s']:g} s simulated, measured after {d['warmup_s']:g} s, "
            f"{self._own('flows').num_rows} flows, {d['events']} events"
        ]
        for g in self._own("groups").to_pylist():
            lines.append(
                f"  group {g['group']}: {g['count']} x {g['kind']}, "
                f"goodput {g['goodput_bps'] / 1e3:.1f} kb/s "
                f"({g['goodput_mean_bps'] / 1e3:.1f} per flow), drops {g['drops_total']}, "
                f"jain {g['jain']:.3f}"
            )
            if g.get("probe_rtt_p99_s") is not None:  # a probe group: its latency under load
                lines.append(
                    f"    probes: {g['probe_sent']} sent, {g['probe_lost']} lost, RTT p50 "
                    f"{g['probe_rtt_p50_s'] * 1e3:.2f} ms, p99 {g['probe_rtt_p99_s'] * 1e3:.2f} ms"
                )
        for link in self._own("links").to_pylist():
            lines.append(
                f"  link {link['name']}: {link['qdisc']}, utilization {link['utilization']:.3f}, "
                f"mean queue {link['mean_queue_packets']:.1f} pkts, drops {link['drops_total']}, "
                f"marks {link['marks_total']}"
            )
        f = self.fairness
        lines.append(f"  fairness: tcp jain {f['tcp']['jain']:.3f}, all flows jain {f['all']['jain']:.3f}>")
        return "\n".join(lines)
