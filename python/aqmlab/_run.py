"""``aqmlab.run`` and the scenario catalogue: argument checks, then the extension."""

from __future__ import annotations

import json
import math
import numbers
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Union

from aqmlab import _aqmlab
from aqmlab._run_bar import run_with_bar
from aqmlab.result import Result

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

ScenarioArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]", Mapping[str, Any], None]


def run(
    scenario: ScenarioArg = None,
    *,
    seed: int | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    progress: bool | None = None,
    set: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> Result:
    """Simulates a scenario and returns its :class:`Result`.

    ``scenario`` is a path to a TOML scenario file, the name of a built-in scenario
    (see :func:`scenarios`), ``None`` for the default built-in, or a dict with the
    same keys as the TOML. It is resolved as ``aqmlab run SCENARIO`` resolves it.

    ``seed`` (an integer >= 0), ``duration`` and ``warmup`` (strings with a unit,
    ``"30s"``) replace the scenario's, as ``--seed``, ``--duration`` and
    ``--warmup`` do; results are measured after the warm-up, so a duration not
    longer than it is an error.

    ``progress``: a bar of simulated time with the time left (tqdm: a widget in a
    notebook, a line on stderr in a terminal) once the run has taken a second;
    ``None`` (the default) shows it when stderr is a terminal or in a notebook,
    ``False`` never.

    Any other keyword replaces that top-level key of the scenario, e.g.
    ``qdisc={"kind": "droptail", "limit": 300}`` or ``flows=[...]``; ``None``
    removes the key. A scenario with overrides is checked as a dict, so its error
    messages name keys but not file lines.

    ``set``: {dotted key: value}, as ``aqmlab run --set KEY=VALUE`` (the keys of
    :func:`aqmlab.sweep`'s grid, one value each), e.g. ``{"qdisc.kind": "red",
    "flows.udp.rate": "2Mbps"}``.

    Every table of the result starts with the columns ``scenario``, each ``set``
    key and ``seed``, as a sweep's tables are labelled, so the tables of several
    runs concatenate without labelling them by hand.

    A scenario that does not parse, validate or build raises ``ValueError`` with
    the message the ``aqmlab`` command prints for it.
    """
    return simulate(
        scenario, seed=seed, duration=duration, warmup=warmup, progress=progress, sets=_sets(set), **overrides
    )


def _sets(sets: object) -> str:
    """``set=`` as the extension takes it: a JSON list of [key, value]."""
    if sets is None:
        return "[]"
    if not isinstance(sets, Mapping):
        raise ValueError(f"set must be a dict of {{dotted key: value}}, got {type(sets).__name__}")
    pairs = []
    for key, value in sets.items():
        if not isinstance(key, str):
            raise ValueError(f"set key {key!r} is not a string (keys look like qdisc.kind)")
        pairs.append([key, _plain(value, key)])
    return json.dumps(pairs)


def simulate(
    scenario: ScenarioArg = None,
    *,
    seed: int | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    progress: bool | None = None,
    sets: str | None = None,
    **overrides: Any,
) -> Result:
    """:func:`run` with ``sets`` as the extension takes them; without, the tables
    are not labelled (a sweep labels its runs' rows itself)."""
    check_flag(progress, "progress", none=True)
    seed = _check_seed(seed)
    duration = check_duration(duration, "duration")
    warmup = check_duration(warmup, "warmup")
    if isinstance(scenario, Mapping):
        text = to_json(_apply(scenario, overrides))
    else:
        arg = check_path_or_name(scenario)
        if not overrides:
            return _finish(
                run_with_bar(
                    progress,
                    lambda bar: _aqmlab.run_builtin_or_path(arg, seed, duration, warmup, None, bar, sets),
                )
            )
        text = to_json(_apply(scenario_table(arg), overrides))
    return _finish(
        run_with_bar(progress, lambda bar: _aqmlab.run_json(text, seed, duration, warmup, bar, sets))
    )


def emulate(
    scenario: ScenarioArg = None,
    *,
    seed: int | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    strict: bool = False,
    app: str | None = None,
    command: Sequence[str] | None = None,
    receiver_command: str | None = None,
    **overrides: Any,
) -> Result:
    """Emulates a dumbbell scenario on real Linux TCP and returns its :class:`Result`.

    The same arguments as :func:`run`, and the same :class:`Result` (one schema):
    the scenario's TCP flows are kernel sockets in a network namespace of their
    own, sending to receivers in another, and every packet crosses the scenario's
    links and qdisc in this process, the very code :func:`run` simulates.
    ``duration`` and ``warmup`` are wall-clock time. ``Result.run["emulated"]`` is
    true and the run table records how well time was kept (``lateness_p99_s``,
    ``late_share``, ``kept_time``); a run that did not keep time warns
    (``RuntimeWarning``), and with ``strict=True`` raises ``RuntimeError`` instead
    of returning results that are not a measurement of the scenario.

    Needs Linux and root (CAP_NET_ADMIN): without it, or for a scenario the
    emulator cannot honour (a graph, web flows, a rate above what it keeps),
    ``ValueError`` with the message ``aqmlab emulate`` prints. docs/emulation.md
    says where emulated and simulated results differ.

    Your own programs run through the emulated path with ``app``, the name of a
    TCP or UDP flow group whose flows carry their connections (each takes the
    next free flow, and is reported as it): ``command``, a program and its
    arguments run in the senders' namespace for the run, and
    ``receiver_command``, a command line run with ``sh -c`` in the receivers'
    namespace before it starts (a server), as ``aqmlab emulate --app GROUP
    --receiver-cmd LINE -- CMD ARGS`` runs them.
    """
    apps = _app_args(app, command, receiver_command)
    return emulate_scenario(
        scenario, seed, duration, warmup, strict, labelled=True, overrides=overrides, apps=apps
    )


def _app_args(app: Any, command: Any, receiver_command: Any) -> dict[str, Any]:
    """:func:`emulate`'s programs as the extension takes them, their types checked."""
    if app is not None and not isinstance(app, str):
        raise ValueError(f"app = {app!r} must be the name of a flow group (a str)")
    if command is not None and (
        isinstance(command, (str, bytes)) or not all(isinstance(c, str) for c in command)
    ):
        raise ValueError(f"command = {command!r} must be a list of str (a program and its arguments)")
    if receiver_command is not None and not isinstance(receiver_command, str):
        raise ValueError(f"receiver_command = {receiver_command!r} must be a command line (a str)")
    return {
        "app": app,
        "command": list(command) if command is not None else None,
        "receiver_cmd": receiver_command,
    }


def emulate_scenario(
    scenario: ScenarioArg,
    seed: int | None,
    duration: str | None,
    warmup: str | None,
    strict: bool,
    *,
    labelled: bool,
    overrides: Mapping[str, Any],
    apps: Mapping[str, Any] | None = None,
) -> Result:
    """:func:`emulate`; unless ``labelled``, a scenario given as a dict gives tables
    without the scenario and seed columns (a sweep labels its runs' rows itself)."""
    seed = _check_seed(seed)
    duration = check_duration(duration, "duration")
    warmup = check_duration(warmup, "warmup")
    check_flag(strict, "strict")
    apps = dict(apps or {})
    if isinstance(scenario, Mapping):
        text = to_json(_apply(scenario, overrides))
        finished = _aqmlab.emulate_json(text, seed, duration, warmup, labelled, **apps)
    else:
        arg = check_path_or_name(scenario)
        if not overrides:
            finished = _aqmlab.emulate_builtin_or_path(arg, seed, duration, warmup, **apps)
        else:
            text = to_json(_apply(scenario_table(arg), overrides))
            finished = _aqmlab.emulate_json(text, seed, duration, warmup, labelled, **apps)
    late = late_run(finished)
    if strict and late:
        raise RuntimeError(f"strict: {late}; its results are discarded")
    return _finish(finished)


def late_run(finished: Any) -> str | None:
    """Why an emulated run is not a measurement (it did not keep time), or None."""
    e = json.loads(finished.summary_json()).get("emulation")
    if e is None or e.get("kept_time", True):
        return None
    return (
        f"the emulation did not keep time (p99 lateness {e['lateness_p99_s'] * 1e6:.1f} us "
        f"against a packet time of {e['packet_time_s'] * 1e6:.1f} us)"
    )


def _finish(finished: Any) -> Result:
    """The run's :class:`Result`, after a ``RuntimeWarning`` for each qdisc
    diagnostic (``Result.diagnostics`` keeps them), as ``aqmlab run`` prints them."""
    for line in finished.warnings().splitlines():
        warnings.warn(line.removeprefix("warning: "), RuntimeWarning, stacklevel=3)
    return Result._from_finished(finished)


def scenarios():
    """The built-in scenarios: a DataFrame indexed by name, with a one-line
    ``description`` and whether it is the ``default`` one."""
    import pandas as pd

    default = _aqmlab.default_scenario()
    rows = [(n, d, n == default) for n, d in _aqmlab.builtin_scenarios()]
    return pd.DataFrame(rows, columns=["name", "description", "default"]).set_index("name")


def scenario_text(name: str) -> str:
    """The TOML text of a built-in scenario (to read, or to edit and save)."""
    return _aqmlab.builtin_text(name)


def qdisc_kinds() -> list[str]:
    """The ``kind`` names a scenario's ``[qdisc]`` may use."""
    return _aqmlab.qdisc_kinds()


def qdisc_keys(kind: str) -> list[str]:
    """The keys a ``[qdisc]`` of ``kind`` takes besides ``kind`` (``ValueError``
    for an unknown kind)."""
    if not isinstance(kind, str):
        raise ValueError(f"kind = {kind!r} must be a string (one of aqmlab.qdisc_kinds())")
    return _aqmlab.qdisc_keys(kind)


# ---- argument checks ------------------------------------------------------------


def _check_seed(seed: object) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    value = int(seed)
    if not 0 <= value < 2**64:
        raise ValueError(f"seed = {value} must be between 0 and 2**64 - 1")
    return value


def check_duration(value: object, name: str = "duration") -> str | None:
    """``value`` if it can be a duration (``None`` or text such as ``"30s"``, which
    Rust parses); otherwise ``ValueError`` naming ``name``."""
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f'{name} must be a string with a unit, such as "30s", got {value!r}')


def check_flag(value: object, name: str, *, none: bool = False) -> Any:
    """``value`` if it is ``True`` or ``False`` (or ``None`` where ``none`` allows
    it); otherwise ``ValueError`` naming ``name``. A truthy string such as ``"no"``
    would otherwise switch the flag on."""
    if isinstance(value, bool) or (none and value is None):
        return value
    allowed = "True, False or None" if none else "True or False"
    raise ValueError(f"{name} = {value!r} must be {allowed}")


def check_path_or_name(scenario: object) -> str | None:
    """``scenario`` (a path or a built-in's name, or ``None``) as text for Rust to
    resolve; ``ValueError`` for anything else. A path need not be UTF-8: as
    ``bytes`` (``os.fsencode``'s) or a ``str`` with surrogate escapes
    (``os.fsdecode``'s, as ``sys.argv`` and ``os.listdir`` give it)."""
    if scenario is None or isinstance(scenario, str):
        return scenario
    if isinstance(scenario, (bytes, os.PathLike)):
        return os.fsdecode(os.fspath(scenario))
    raise ValueError(
        "scenario must be a path, the name of a built-in scenario, a dict or None, "
        f"got {type(scenario).__name__}"
    )


def scenario_table(arg: str | None) -> dict[str, Any]:
    """The scenario ``arg`` (a path or a built-in name, resolved as ``aqmlab run``
    resolves it, by the same Rust code) as a dict, to edit before running it."""
    text, origin = _aqmlab.scenario_source(arg)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{origin}: {e}") from None


def _apply(table: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(table)
    merged.update(overrides)
    return {k: v for k, v in merged.items() if v is not None}


#: How deep a scenario dict may nest (the deepest scenario key is four levels
#: down; this leaves room without reaching Python's recursion limit).
MAX_DEPTH = 32


def _plain(value: object, path: str = "", depth: int = 0) -> object:
    """``value`` as plain JSON values, checked: every key a string, every number
    finite and within the scenario's integer range; numpy scalars and paths as
    their values. A value a scenario cannot hold raises ``ValueError`` naming its
    key path (``flows[0].rate``), as the scenario's own errors do."""
    where = path or "the scenario"
    if depth > MAX_DEPTH:
        raise ValueError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):
        v = int(value)
        if not -(2**63) <= v < 2**64:
            raise ValueError(f"{where} = {v}: an integer beyond the 64 bits a scenario holds")
        return v
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            raise ValueError(f"{where} = {v}: not a finite number")
        return v
    if value is None:
        raise ValueError(f"{where} = None: a scenario has no null value (leave the key out)")
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{where}: key {k!r} is not a string")
            out[k] = _plain(v, f"{path}.{k}" if path else k, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (bytes, bytearray)):
        try:
            item = value.item()  # a numpy scalar
        except (TypeError, ValueError):
            item = value
        if item is not value:
            return _plain(item, path, depth)
    if isinstance(value, os.PathLike):
        return os.fsdecode(os.fspath(value))
    raise ValueError(f"{where}: a scenario cannot hold {value!r} (of type {type(value).__name__})")


def to_json(table: Mapping[str, Any]) -> str:
    """A scenario dict as the JSON the extension reads (plain values only)."""
    return json.dumps(_plain(table))
