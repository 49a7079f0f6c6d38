"""Writing output folders, the same way ``crates/cli/src/output.rs`` writes them.

:func:`atomic_file` (and :func:`write_atomic` over it) is the one way a file is
written: a temporary file in the same folder (``.STEM.partial-HOST-PID.EXT``),
then a rename, so a reader sees the old file, the whole new one, or nothing, and an error
leaves no temporary file behind. Files get the mode the user's umask leaves. A path
that names something other than a regular file is never renamed over: a symbolic
link is followed (its target is replaced, the link kept), a device, FIFO or socket
(``/dev/stdout``) is written through, a folder is refused.

:func:`write_folder` writes a folder of tables so that it never looks finished
while it mixes two runs: ``summary.json`` (the mark of a finished run) is removed
first and written last, tables of an earlier run that this one does not write are
removed, and so are temporary files a killed writer left;
:func:`write_folder_streamed` does the same for tables written piece by piece.
A writer holds an exclusive lock (``flock``) on the folder's ``.aqmlab-files``
from its first step to its last, so two writers of one folder (array jobs, a
loop) take turns instead of mixing; the file lists what aqmlab wrote there, and
only those files are ever removed or replaced: a file of the user's is left
alone, with a warning, and one a run would replace is refused before the run
(:func:`check_folder`).

:func:`pack` and :func:`unpack` hold several byte strings (Arrow IPC streams, a
JSON text) in one Arrow IPC stream, with string metadata: what a pickled result,
a cache entry, and a result sent between processes are made of.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Union

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

PARTIAL = ".partial-"


def arrow_source(path: str | os.PathLike[str]) -> str | IO[bytes]:
    """What pyarrow (and pandas through it) can read ``path`` from: the path itself
    when UTF-8 spells it, as pyarrow encodes every path as UTF-8; else, for a name
    that is not UTF-8 (a ``str`` with surrogate escapes), the file's bytes."""
    import io

    text = os.fspath(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return io.BytesIO(Path(text).read_bytes())
    return text


#: In every folder aqmlab writes: the names of the files it wrote there, one a
#: line, and the lock its writers take turns on.
RECORD = ".aqmlab-files"
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


#: ``--allow-foreign-out``: run as root, write where another user chose, knowingly.
_allow_foreign = False


def allow_foreign_out(yes: bool) -> None:
    """Lets root write into folders and through symbolic links other users own."""
    global _allow_foreign
    _allow_foreign = yes


def _foreign_owner(st: os.stat_result) -> int | None:
    """The owner of ``st``'s node when this process is root and it is another
    user: a folder or link they own lets them choose where root's files go (a
    ``flows.csv`` link to ``/etc/shadow``, listed in a record they wrote)."""
    if _allow_foreign or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    # The user who ran `sudo` is not foreign: they could run anything as root.
    sudo_uid = os.environ.get("SUDO_UID", "")
    if st.st_uid == 0 or (sudo_uid.isdigit() and st.st_uid == int(sudo_uid)):
        return None
    return st.st_uid


def check_owner(folder: Path, flag: str = "--out") -> None:
    """Raises ``ValueError`` when, run as root, ``folder`` is another user's
    folder (or, new, would be made in one) or is reached through another user's
    symbolic link."""
    for at in (folder, *folder.parents):
        try:
            st = os.lstat(at)
        except OSError:
            continue
        uid = _foreign_owner(st) if stat.S_ISLNK(st.st_mode) else None
        if uid is not None:
            raise ValueError(
                f"{flag} {folder}: {at} is a symbolic link of user {uid}, who would choose "
                "where root writes (--allow-foreign-out to write anyway)"
            )
    # The folder, or the one a new folder goes into: its owner could replace what
    # root makes there by a link of theirs.
    absolute = Path(os.path.abspath(folder))
    for at in (absolute, *absolute.parents):
        try:
            st = os.stat(at)
        except OSError:
            continue
        uid = _foreign_owner(st) if stat.S_ISDIR(st.st_mode) else None
        if uid is None:
            return
        where = "a folder" if at == absolute else f"it would be made in {at}, a folder"
        raise ValueError(
            f"{flag} {folder}: {where} of user {uid}, who could steer root's writes there "
            "(--allow-foreign-out to write anyway)"
        )


def _destination(path: Path) -> tuple[Path, bool]:
    """Where a write of ``path`` goes, and whether by a rename: a symbolic link's
    target (the link stays a link), a regular or new file by a rename, a device,
    FIFO or socket written through (a rename would replace the node itself: run as
    root, ``/dev/full`` would become a PNG). A folder is an error."""
    for _ in range(40):  # the kernel's own bound on links followed
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return path, True
        if stat.S_ISLNK(st.st_mode):
            uid = _foreign_owner(st)
            if uid is not None:
                why = f"a symbolic link of user {uid}: root does not write through it"
                raise PermissionError(errno.EACCES, why, str(path))
            target = Path(os.readlink(path))
            path = target if target.is_absolute() else path.parent / target
            continue
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
        return path, stat.S_ISREG(st.st_mode)
    raise OSError(errno.ELOOP, "too many levels of symbolic links", str(path))


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, sync: bool = True) -> Iterator[IO[bytes]]:
    """A temporary file in ``path``'s folder, renamed to ``path`` when the block
    ends without an error (and removed when it raises). It is created as any file
    is, with the mode the user's umask leaves (not 0600, as ``mkstemp`` would).
    ``sync=False`` skips the fsync before the rename: the file is still whole or
    absent if the process is killed, but a power cut may leave it empty (fine for
    a cache whose reader checks what it reads; an fsync per run held the parent
    of a sweep of thousands of short runs back). ``path`` may be a symbolic link
    (its target is replaced) or a device or FIFO (written through, not atomic:
    there is nothing to rename)."""
    path, rename = _destination(Path(path))
    if not rename:
        with open(path, "wb") as f:
            yield f
            f.flush()
        return
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


def out_path(text: str) -> Path:
    """An ``--out`` value as a path; an empty one (an unset shell variable) is an
    error, not the current folder."""
    if not text:
        raise ValueError("--out '': an empty path (an unset shell variable?); name a folder")
    return Path(text)


def check_folder(
    folder: str | os.PathLike[str],
    flag: str = "--out",
    names: Iterable[str] = (),
    *,
    known: Iterable[str] = (),
    warn: Callable[[str], None] | None = None,
) -> None:
    """Raises ``ValueError`` unless ``folder`` can be an output folder: a folder, or
    a path to create whose nearest existing ancestor is a folder, in which no file
    of ``names`` (what the writer will write) exists that aqmlab did not write
    (``known``: the tables, by stem, that a writer of this folder may write).
    Other files aqmlab did not write are named in a warning (``warn``, default a
    line on stderr): they are left alone. Called before a run, so a run does not
    find out only at the end that ``--out`` names a file."""
    if not os.fspath(folder):
        raise ValueError(f"{flag} '': an empty path (an unset shell variable?); name a folder")
    path = Path(folder)
    for at in (path, *path.parents):
        here = at if str(at) else Path(".")
        try:
            if here.is_dir():
                break
            if here.exists():
                if at == path:
                    raise ValueError(
                        f"{flag} {path}: is a file, not a folder (the results are a folder of tables)"
                    )
                raise ValueError(f"{flag} {path}: {at} is a file, so the folder cannot be made")
        except OSError as e:
            raise ValueError(f"{flag} {path}: {e.strerror or e}") from None
    check_owner(path, flag)
    if not path.is_dir():
        return
    try:
        theirs = _foreign(path, _ours(path, _read_record(path), not (path / RECORD).exists(), known))
    except OSError as e:
        raise ValueError(f"{flag} {path}: {e.strerror or e}") from None
    clash = sorted(set(names) & set(theirs))
    if clash:
        raise ValueError(
            f"{flag} {path}: {clash[0]} was not written by aqmlab and would be replaced "
            "(move it, or choose a new or empty folder)"
        )
    if theirs:
        shown = ", ".join(_printable(n) for n in theirs[:5]) + (", ..." if len(theirs) > 5 else "")
        message = f"{flag} {path} holds files aqmlab did not write ({shown}); they are left alone"
        if warn is None:
            print(f"warning: {message}", file=sys.stderr)
        else:
            warn(message)


def _printable(name: str) -> str:
    """A file name fit for one line of a terminal: control characters escaped."""
    return name if name.isprintable() else repr(name)


def _read_record(folder: Path) -> set[str]:
    """The names in ``folder``'s record of what aqmlab wrote there (none if it has
    none)."""
    try:
        text = (folder / RECORD).read_bytes().decode("utf-8", "replace")
    except (FileNotFoundError, NotADirectoryError):
        return set()
    return {line for line in text.split("\n") if line}


def _foreign(folder: Path, ours: set[str]) -> list[str]:
    """The regular files in ``folder`` aqmlab did not write (folders, such as a
    sweep's cache, and temporary files are not counted)."""
    out = []
    for entry in folder.iterdir():
        name = entry.name
        if name == RECORD or name in ours or (name.startswith(".") and PARTIAL in name):
            continue
        if entry.is_file():
            out.append(name)
    return sorted(out)


def _ours(folder: Path, recorded: set[str], new: bool, known: Iterable[str]) -> set[str]:
    """The files of ``folder`` that are aqmlab's: those in its record, or in a
    folder an aqmlab without records wrote (a ``summary.json`` and no record), its
    tables (``known``, by stem, in any format) and ``summary.json``."""
    if not new or not (folder / "summary.json").is_file():
        return recorded
    tables = {f"{n}.{x}" for n in known for x in FORMATS} | {"summary.json"}
    return recorded | (tables & set(_foreign(folder, set())))


class _Record:
    """The open, locked record of a folder: :func:`locked`."""

    def __init__(self, fd: int, folder: Path, new: bool) -> None:
        self.fd, self.folder, self.new = fd, folder, new
        self.ours = _read_record(folder)

    def save(self, names: Iterable[str]) -> None:
        """Replaces the record by ``names``, in place (the lock is on this file;
        a rename would leave it behind). A write cut short loses names, so at
        worst a stale file of aqmlab's is kept, never one of the user's removed."""
        self.ours = set(names)
        data = "".join(f"{n}\n" for n in sorted(self.ours)).encode("utf-8", "surrogateescape")
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)


@contextlib.contextmanager
def locked(folder: str | os.PathLike[str]) -> Iterator[_Record]:
    """``folder`` (created if needed) locked for writing: one writer at a time, the
    others wait (with a line on stderr) for it to finish. The lock is ``flock`` on
    the record file, released when the process ends however it ends."""
    folder = Path(folder)
    check_owner(folder, "folder")
    folder.mkdir(parents=True, exist_ok=True)
    new = not (folder / RECORD).exists()
    fd = os.open(folder / RECORD, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if os.name == "posix":
            import fcntl

            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print(f"note: waiting for another aqmlab writing {folder} to finish", file=sys.stderr)
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield _Record(fd, folder, new)
    finally:
        os.close(fd)  # releases the lock


def add_to_record(path: str | os.PathLike[str]) -> None:
    """Records ``path`` as aqmlab's in its folder's record, when that folder is one
    aqmlab writes (has a record): a figure saved beside a run's tables is then not
    taken for a file of the user's."""
    path = Path(path)
    if (path.parent / RECORD).is_file():
        with locked(path.parent) as record:
            record.save(record.ours | {path.name})


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
    names = set(known) | set(tables)
    with _open_folder(
        folder, fmt, [f"{name}.{fmt}" for name in tables], names, summary is not None
    ) as record:
        written = []
        for name, table in tables.items():
            written.append(
                write_atomic(record.folder / f"{name}.{fmt}", lambda f, t=table: write_table(f, t, fmt))
            )
        return _close_folder(record, written, names, summary)


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
    names = set(known) | set(schemas)
    with _open_folder(
        folder, fmt, [f"{name}.{fmt}" for name in schemas], names, summary is not None
    ) as record:
        paths = [record.folder / f"{name}.{fmt}" for name in schemas]
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
        return _close_folder(record, paths, names, summary)


@contextlib.contextmanager
def _open_folder(
    folder: str | os.PathLike[str], fmt: str, names: list[str], known: set[str], marked: bool = True
) -> Iterator[_Record]:
    """The first steps of writing a folder: the lock, the names about to be written
    added to the record (so a killed writer's tables are known as aqmlab's), and
    the finished run's mark removed. A folder an aqmlab without records wrote (a
    ``summary.json``, no record) has its tables (``known``) taken as aqmlab's."""
    if fmt not in FORMATS:
        raise ValueError(f"format = {fmt!r} must be one of {', '.join(FORMATS)}")
    if not os.fspath(folder):
        raise ValueError("folder '': an empty path; name a folder")
    with locked(folder) as record:
        record.ours = _ours(record.folder, record.ours, record.new, known)
        names = [*names, "summary.json"] if marked else names
        theirs = set(_foreign(record.folder, record.ours)) & set(names)
        if theirs:
            raise ValueError(
                f"{record.folder}: {min(theirs)} was not written by aqmlab and would be replaced "
                "(move it, or choose a new or empty folder)"
            )
        record.save(record.ours | set(names))
        if marked:
            (record.folder / "summary.json").unlink(missing_ok=True)
        try:
            yield record
        except BaseException:
            # A write that failed (a full disk) or was stopped leaves no table,
            # in either format: the ones written would sit beside an earlier
            # run's not yet replaced. A link stays (the user's, written through).
            earlier = {f"{n}.{x}" for n in known for x in FORMATS} & record.ours
            for name in {*names, *earlier}:
                entry = record.folder / name
                if entry.is_file() and not entry.is_symlink():
                    entry.unlink(missing_ok=True)
            raise


def _close_folder(record: _Record, written: list[Path], names: set[str], summary: str | None) -> list[Path]:
    """The last steps: what an earlier run of aqmlab left goes (never a file
    the record does not hold, never a live writer's temporary file), the mark
    comes last."""
    folder = record.folder
    stale = {f"{n}.{x}" for n in names for x in FORMATS} - {p.name for p in written}
    stale &= record.ours
    for name in stale:
        entry = folder / name
        if entry.is_file() and not entry.is_symlink():
            entry.unlink()
    remove_abandoned(folder)
    record.save(record.ours - stale)
    written = list(written)
    if summary is not None:
        written.append(write_atomic(folder / "summary.json", lambda f: f.write(summary.encode("utf-8"))))
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
