"""Writing output folders, the same way ``crates/cli/src/output.rs`` writes them.

:func:`atomic_file` (and :func:`write_atomic` over it) is the one way a file is
written: a temporary file in the same folder (``.STEM.partial-HOST-PID.EXT``),
then a rename, so a reader sees the old file, the whole new one, or nothing, and an error
leaves no temporary file behind. Files get the mode the user's umask leaves.
:func:`write_folder` writes a folder of tables so that it never looks finished
while it mixes two runs: ``summary.json`` (the mark of a finished run) is removed
first and written last, tables of an earlier run that this one does not write are
removed, and so are temporary files a killed writer left;
:func:`write_folder_streamed` does the same for tables written piece by piece.

:func:`pack` and :func:`unpack` hold several byte strings (Arrow IPC streams, a
JSON text) in one Arrow IPC stream, with string metadata: what a pickled result,
a cache entry, and a result sent between processes are made of.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Union

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

PARTIAL = ".partial-"
FORMATS = ("parquet", "csv")
#: Rows gathered before :func:`write_folder_streamed` writes a row group.
ROW_GROUP = 65_536
#: ... or parts gathered (each small part has a fixed cost in memory).
HELD_PARTS = 128

TableLike = Union["pa.Table", "pd.DataFrame"]


def _partial_name(path: Path) -> Path:
    # The host and process: a later sweep on this host can tell a killed writer's
    # file from a live one's (:func:`remove_abandoned`).
    return path.with_name(f".{path.stem}{PARTIAL}{socket.gethostname()}-{os.getpid()}{path.suffix}")


def remove_abandoned(folder: Path) -> int:
    """Removes the temporary files in ``folder`` of writers on this host that are no
    longer running (a killed sweep's); returns how many. A live writer's, another
    host's (a cache on a shared file system) and unnamed ones are left alone.
    POSIX only: elsewhere ``os.kill(pid, 0)`` does not merely ask."""
    if os.name != "posix":
        return 0
    mine = f"{PARTIAL}{socket.gethostname()}-"
    removed = 0
    for entry in folder.iterdir():
        name = entry.name
        if not (name.startswith(".") and mine in name):
            continue
        pid = name.split(mine, 1)[1].split(".", 1)[0]
        if pid.isdigit() and not _running(int(pid)) and entry.is_file():
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
                removed += 1
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, sync: bool = True) -> Iterator[IO[bytes]]:
    """A temporary file in ``path``'s folder, renamed to ``path`` when the block
    ends without an error (and removed when it raises). It is created as any file
    is, with the mode the user's umask leaves (not 0600, as ``mkstemp`` would).
    ``sync=False`` skips the fsync before the rename: the file is still whole or
    absent if the process is killed, but a power cut may leave it empty (fine for
    a cache whose reader checks what it reads; an fsync per run held the parent
    of a sweep of thousands of short runs back)."""
    path = Path(path)
    tmp = _partial_name(path)
    try:
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_atomic(
    path: str | os.PathLike[str], write: Callable[[IO[bytes]], Any], *, sync: bool = True
) -> Path:
    """Writes ``path`` through ``write(file)`` on a temporary file, then renames it
    into place (:func:`atomic_file`). Returns the path."""
    with atomic_file(path, sync=sync) as f:
        write(f)
    return Path(path)


def check_folder(folder: str | os.PathLike[str], flag: str = "--out") -> None:
    """Raises ``ValueError`` unless ``folder`` can be an output folder: a folder, or
    a path to create whose nearest existing ancestor is a folder. Called before a
    run, so a run does not find out only at the end that ``--out`` names a file."""
    path = Path(folder)
    for at in (path, *path.parents):
        here = at if str(at) else Path(".")
        try:
            if here.is_dir():
                return
            if here.exists():
                if at == path:
                    raise ValueError(
                        f"{flag} {path}: is a file, not a folder (the results are a folder of tables)"
                    )
                raise ValueError(f"{flag} {path}: {at} is a file, so the folder cannot be made")
        except OSError as e:
            raise ValueError(f"{flag} {path}: {e.strerror or e}") from None


def to_arrow(table: TableLike) -> pa.Table:
    import pyarrow as pa

    if isinstance(table, pa.Table):
        return table
    return pa.Table.from_pandas(table, preserve_index=False)


def write_table(f: IO[bytes], table: TableLike, fmt: str) -> None:
    """One table in ``fmt`` (``parquet``, Snappy-compressed, or ``csv`` with a
    header row and empty cells for missing values)."""
    t = to_arrow(table)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(t, f, compression="snappy")
    elif fmt == "csv":
        import pyarrow.csv as pcsv

        pcsv.write_csv(t, f)
    else:
        raise ValueError(f"format = {fmt!r} must be one of {', '.join(FORMATS)}")


class TableWriter:
    """Writes one table in ``fmt`` piece by piece (each piece an Arrow table of
    ``schema``), so a table larger than memory streams through."""

    def __init__(self, f: IO[bytes], schema: pa.Schema, fmt: str) -> None:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            self._w = pq.ParquetWriter(f, schema, compression="snappy")
        elif fmt == "csv":
            import pyarrow.csv as pcsv

            self._w = pcsv.CSVWriter(f, schema)
        else:
            raise ValueError(f"format = {fmt!r} must be one of {', '.join(FORMATS)}")

    def write(self, table: pa.Table) -> None:
        self._w.write_table(table)

    def close(self) -> None:
        self._w.close()


def write_folder(
    folder: str | os.PathLike[str],
    tables: Mapping[str, TableLike],
    fmt: str = "parquet",
    *,
    summary: str | None = None,
    known: Iterable[str] = (),
) -> list[Path]:
    """Writes ``tables`` ({name: table}) as ``NAME.<fmt>`` and then ``summary``
    (JSON text) as ``summary.json`` into ``folder``; removes the tables named in
    ``known`` (any format) that this call does not write. Returns the files
    written."""
    folder = _open_folder(folder, fmt)
    written = []
    for name, table in tables.items():
        written.append(write_atomic(folder / f"{name}.{fmt}", lambda f, t=table: write_table(f, t, fmt)))
    return _close_folder(folder, written, set(known) | set(tables), summary)


def write_folder_streamed(
    folder: str | os.PathLike[str],
    schemas: Mapping[str, pa.Schema],
    pieces: Iterable[Mapping[str, pa.Table]],
    fmt: str = "parquet",
    *,
    summary: str | None = None,
    known: Iterable[str] = (),
) -> list[Path]:
    """:func:`write_folder` for tables too large to hold: ``schemas`` ({name:
    schema}) names the tables, ``pieces`` yields {name: part of that table}, in
    order. The parts are gathered into row groups of about ``ROW_GROUP`` rows (a
    row group per small part would make a slow file) and written as they fill,
    all the tables at once, in one pass over ``pieces``."""
    folder = _open_folder(folder, fmt)
    paths = [folder / f"{name}.{fmt}" for name in schemas]
    with contextlib.ExitStack() as stack:
        writers = {}
        for name, path in zip(schemas, paths):
            writers[name] = TableWriter(stack.enter_context(atomic_file(path)), schemas[name], fmt)
        held: dict[str, list[pa.Table]] = {name: [] for name in schemas}
        rows = dict.fromkeys(schemas, 0)

        def flush(name: str) -> None:
            if held[name]:
                import pyarrow as pa

                writers[name].write(pa.concat_tables(held[name]))
                held[name], rows[name] = [], 0

        for piece in pieces:
            for name, table in piece.items():
                held[name].append(table)
                rows[name] += table.num_rows
                # Many small parts cost more than their rows: a cap on both.
                if rows[name] >= ROW_GROUP or len(held[name]) >= HELD_PARTS:
                    flush(name)
        for name, w in writers.items():
            flush(name)
            w.close()
    return _close_folder(folder, paths, set(known) | set(schemas), summary)


def _open_folder(folder: str | os.PathLike[str], fmt: str) -> Path:
    """The first step of writing a folder: a finished run's mark goes first."""
    if fmt not in FORMATS:
        raise ValueError(f"format = {fmt!r} must be one of {', '.join(FORMATS)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "summary.json").unlink(missing_ok=True)
    return folder


def _close_folder(folder: Path, written: list[Path], names: set[str], summary: str | None) -> list[Path]:
    """The last steps: what an earlier run left goes, the mark comes last."""
    marker = folder / "summary.json"
    stale = {f"{n}.{x}" for n in names for x in FORMATS} - {p.name for p in written}
    for entry in folder.iterdir():
        partial = entry.name.startswith(".") and PARTIAL in entry.name
        if (entry.name in stale or partial) and entry.is_file():
            entry.unlink()
    if summary is not None:
        written.append(write_atomic(marker, lambda f: f.write(summary.encode("utf-8"))))
    return written


def pack(parts: Mapping[str, bytes], metadata: Mapping[str, str] | None = None) -> bytes:
    """``parts`` ({name: bytes}) and ``metadata`` as one Arrow IPC stream: one row
    per part (``name``, ``data``), the metadata on its schema."""
    import pyarrow as pa

    names = list(parts)
    batch = pa.record_batch(
        [pa.array(names, pa.string()), pa.array([parts[n] for n in names], pa.binary())],
        names=["name", "data"],
    )
    schema = batch.schema.with_metadata(dict(metadata or {}))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as w:
        w.write_batch(batch.replace_schema_metadata(schema.metadata))
    return sink.getvalue().to_pybytes()


def unpack(data: bytes) -> tuple[dict[str, bytes], dict[str, str]]:
    """(parts, metadata) of :func:`pack`'s bytes; raises ``ValueError`` on bytes
    that are not such a stream."""
    import pyarrow as pa

    try:
        reader = pa.ipc.open_stream(data)
        table = reader.read_all()
        names, blobs = table.column("name").to_pylist(), table.column("data").to_pylist()
    except (pa.ArrowException, KeyError) as e:
        raise ValueError(f"not a packed aqmlab result: {e}") from None
    meta = {k.decode(): v.decode() for k, v in (reader.schema.metadata or {}).items()}
    return dict(zip(names, blobs)), meta
