"""The run store: every finished run, one file each, named by what it ran.

A run's key is a digest of (scenario dict, seed, engine build): the same key is the
same simulation, bit for bit, so a stored run is never simulated again, whichever
executor (the local pool, a Dask cluster) produced it and whichever sweep or
experiment asked for it. A rebuilt engine gets new keys, never an old result.

An entry is ``KEY.parquet``: one row per table of the run (``name``, ``data``: the
table as the Arrow IPC stream the extension wrote), zstd-compressed (a 400-flow
run: about a sixth of the JSON it once was), with what produced it (format, key,
engine, seed, scenario) in the file's metadata. The worker that ran the simulation
encodes the entry (:func:`encode`); the parent only checks its footer and writes
the bytes (:func:`aqmlab._io.write_atomic`), so a killed sweep leaves whole
entries or none, and its memory does not grow with the number of runs: the store
is on disk, results are read back one at a time when they are used.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab._io import arrow_source

if TYPE_CHECKING:
    from aqmlab._runner.work import LabRun
    from aqmlab.result import Result

#: Bump when the entry layout changes (2: packed Arrow IPC; 3: zstd Parquet).
FORMAT = "3"
#: The kind of entry of a queue-lab run, whose one part is its JSON object.
QUEUE_LAB = "queue_lab"
#: The tables a network run's entry must hold to count as whole.
_REQUIRED = ("run", "flows", "groups")

_ENGINE_ID: str | None = None


def engine_id() -> str:
    """A digest of the simulator extension this process loaded: a rebuilt engine
    never reuses a stored result of an older one."""
    global _ENGINE_ID
    if _ENGINE_ID is None:
        from aqmlab import __version__, _aqmlab

        h = hashlib.sha256(__version__.encode())
        path = getattr(_aqmlab, "__file__", None)
        if path and os.path.isfile(path):
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        _ENGINE_ID = h.hexdigest()[:16]
    return _ENGINE_ID


def run_key(scenario: Mapping[str, Any], seed: int) -> str:
    """The key of one run: sha256 of (scenario, seed, engine build)."""
    text = json.dumps(
        {"scenario": scenario, "seed": seed, "engine": engine_id()}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()


def encode(key: str, scenario: Mapping[str, Any], seed: int, result: Result | LabRun) -> bytes:
    """The bytes of ``result``'s entry (in the worker that ran it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from aqmlab._runner.work import LabRun

    if isinstance(result, LabRun):
        kind, parts = QUEUE_LAB, {QUEUE_LAB: result.json_text.encode("utf-8")}
    else:
        kind, parts = "result", dict(result._ipc)
    meta = {
        "aqmlab": kind,
        "format": FORMAT,
        "key": key,
        "engine": engine_id(),
        "seed": str(seed),
        "scenario": json.dumps(scenario, sort_keys=True),
    }
    names = list(parts)
    table = pa.table(
        {"name": pa.array(names, pa.string()), "data": pa.array([parts[n] for n in names], pa.large_binary())}
    ).replace_schema_metadata(meta)
    sink = pa.BufferOutputStream()
    # Page checksums: a damaged body behind an intact footer is found on reading.
    pq.write_table(table, sink, compression="zstd", compression_level=3, write_page_checksum=True)
    return sink.getvalue().to_pybytes()


def entry_meta(data_or_path: bytes | Path) -> dict[str, str]:
    """The metadata of an entry (its footer only); raises ``ValueError`` when it is
    not a whole entry file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pa.BufferReader(data_or_path) if isinstance(data_or_path, bytes) else arrow_source(data_or_path)
    try:
        # ParquetFile, not read_schema/read_table: those go through pyarrow.dataset,
        # several times slower for one small file.
        meta = pq.ParquetFile(source).schema_arrow.metadata or {}
    except (OSError, pa.ArrowException) as e:
        raise ValueError(f"not an aqmlab run entry: {e}") from None
    return {k.decode(): v.decode() for k, v in meta.items()}


def decode(
    data_or_path: bytes | Path, key: str | None = None, *, check_tables: bool = True
) -> Result | LabRun:
    """The result an entry holds; raises ``ValueError`` for anything but a whole
    entry (of ``key``, when given) of this format. ``check_tables`` reads every
    table through once (what :meth:`Store.has` does before a run is taken as
    stored); without it only the pages' checksums are verified."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from aqmlab._runner.work import LabRun
    from aqmlab.result import Result

    source = pa.BufferReader(data_or_path) if isinstance(data_or_path, bytes) else arrow_source(data_or_path)
    try:
        # One thread: for a file of a few kilobytes, handing its columns to
        # Arrow's thread pool costs several times the read itself.
        table = pq.ParquetFile(source, page_checksum_verification=True).read(use_threads=False)
    except (OSError, pa.ArrowException) as e:
        raise ValueError(f"not an aqmlab run entry: {e}") from None
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if meta.get("format") != FORMAT or (key is not None and meta.get("key") != key):
        raise ValueError("an entry of another format or run")
    try:
        parts = dict(zip(table.column("name").to_pylist(), table.column("data").to_pylist()))
    except KeyError as e:
        raise ValueError(f"not an aqmlab run entry: {e}") from None
    if meta.get("aqmlab") == QUEUE_LAB and QUEUE_LAB in parts:
        try:
            lab = LabRun(parts[QUEUE_LAB].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"a queue-lab entry that does not read: {e}") from None
        if not all(k in lab.data for k in ("flows", "p0")):
            raise ValueError("a queue-lab entry without its numbers")
        return lab
    if meta.get("aqmlab") == "result" and all(t in parts for t in _REQUIRED):
        for name, data in parts.items() if check_tables else ():  # every part is a readable table
            try:
                pa.ipc.open_stream(data).read_all()
            except (OSError, pa.ArrowException) as e:
                raise ValueError(f"a run entry whose table {name} does not read: {e}") from None
        return Result(parts)
    raise ValueError("an entry that holds no whole result")


class Store:
    """A folder of entries: ``folder`` (kept), or a temporary folder removed when
    the store is garbage-collected or the interpreter exits (a sweep without a
    cache still keeps its results on disk, not in memory). Opening a kept folder
    removes the temporary files that writers killed on this host left in it."""

    def __init__(self, folder: str | os.PathLike[str] | None) -> None:
        if folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="aqmlab-runs-"))
            self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.folder), True)
            self.kept = False
        else:
            self.folder = Path(folder)
            self.kept = True
            if self.folder.is_dir():
                from aqmlab._io import remove_abandoned

                remove_abandoned(self.folder)

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.parquet"

    def has(self, key: str) -> bool:
        """Whether a whole entry of ``key`` is stored: one that reads back whole. A
        partial, foreign or damaged entry is not one (the run is simulated again
        and the entry replaced)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.path(key)
        if not path.is_file():
            return False
        try:
            f = pq.ParquetFile(arrow_source(path))
            meta = {k.decode(): v.decode() for k, v in (f.schema_arrow.metadata or {}).items()}
            if meta.get("format") != FORMAT or meta.get("key") != key:
                return False
            names = set(f.read(columns=["name"], use_threads=False).column("name").to_pylist())
        except (ValueError, OSError, KeyError, pa.ArrowException):
            return False
        if meta.get("aqmlab") == QUEUE_LAB:
            whole = QUEUE_LAB in names
        else:
            whole = meta.get("aqmlab") == "result" and all(t in names for t in _REQUIRED)
        if not whole:
            return False
        # A damaged body behind an intact footer: only reading it all finds that,
        # and an entry that cannot be read is a miss (simulated again), never an
        # error at the end of the sweep.
        try:
            decode(path, key)
        except (ValueError, OSError, KeyError, pa.ArrowException):
            return False
        return True

    def put(self, key: str, data: bytes) -> None:
        """Stores an entry's bytes (from :func:`encode`), atomically."""
        from aqmlab._io import write_atomic

        self.folder.mkdir(parents=True, exist_ok=True)
        # No fsync: an entry a power cut empties fails `has` and is run again.
        write_atomic(self.path(key), lambda f: f.write(data), sync=False)

    def load(self, key: str) -> Result | LabRun:
        """The stored result of ``key``; ``KeyError`` when there is no whole one.
        Its tables were read through when it was taken as stored (:meth:`has`) or
        came from the worker that ran it; here the pages' checksums are checked."""
        try:
            return decode(self.path(key), key, check_tables=False)
        except (ValueError, FileNotFoundError):
            raise KeyError(f"no stored run {key}") from None
