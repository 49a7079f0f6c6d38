# Stubs of the Rust extension module (crates/py/src/lib.rs, where each function is
# documented). tests/python/test_stubs.py checks that they name exactly the
# functions, parameters and defaults the binary exports.

from collections.abc import Callable
from os import PathLike

from typing_extensions import TypeAlias

# A path as the system has it: str (surrogate escapes where not UTF-8, as
# os.fsdecode gives), bytes (os.fsencode's), or a PathLike of either.
_Path: TypeAlias = str | bytes | PathLike[str] | PathLike[bytes]

# A finished run, kept in Rust: its tables as (name, Arrow IPC stream bytes), the
# `aqmlab run --json` object, and the text summary `aqmlab run` prints.
class Finished:
    def tables(self) -> list[tuple[str, bytes]]: ...
    def summary_json(self, pretty: bool = False) -> str: ...
    def text(self) -> str: ...
    def warnings(self) -> str: ...

# Run a scenario (TOML text, a dict as JSON, or a path / built-in name resolved as
# `aqmlab run ARG` does). seed, duration and warmup are `--seed`, `--duration`,
# `--warmup`; pcap = (link, folder) is `--pcap`; progress(now_s, end_s) is called
# at most ten times a second and once at the end. Errors in the scenario or the
# overrides raise ValueError with the CLI's message. sets (a JSON list of [dotted
# key, value]) applies `--set`s and labels the tables (scenario, each key, seed).
def run_toml(
    text: str,
    origin: str,
    seed: int | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    progress: Callable[[float, float], object] | None = None,
) -> Finished: ...
def run_json(
    json: str,
    seed: int | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    progress: Callable[[float, float], object] | None = None,
    sets: str | None = None,
) -> Finished: ...
def run_builtin_or_path(
    arg: _Path | None = None,
    seed: int | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    pcap: tuple[str, _Path] | None = None,
    progress: Callable[[float, float], object] | None = None,
    sets: str | None = None,
) -> Finished: ...

# The `aqmlab` command line parsed by the binary's own parser: (exit status, stdout,
# stderr, None) when it printed (help, an error, a subcommand that only prints), or
# (0, "", "", (subcommand, its values as a JSON object)) for one Python runs.
def command_line(argv: list[_Path]) -> tuple[int, str, str, tuple[str, str] | None]: ...

# `--set` texts (KEY=VALUE) parsed as `aqmlab run` parses them: a JSON list of
# [key, value], what run_json's and run_builtin_or_path's `sets` take.
def parse_sets(texts: list[str]) -> str: ...
def assign(table: str, sets: str) -> str: ...

# Check a scenario (a dict as JSON) as run_json would, without simulating it; returns
# what the run would simulate, as JSON (no name, description, seed or unused [qdisc]).
def check_json(
    json: str, seed: int | None = None, duration: str | None = None, warmup: str | None = None
) -> str: ...
def check_source(
    arg: _Path | None = None, duration: str | None = None, warmup: str | None = None
) -> None: ...

# Emulate a scenario (`aqmlab emulate`): real Linux TCP through the same qdiscs,
# in wall-clock time; needs root. ValueError for a scenario the emulator refuses
# or a process without CAP_NET_ADMIN; Ctrl-C stops it.
# Unless `labelled` is false, the tables start with the scenario and seed columns.
def emulate_json(
    json: str,
    seed: int | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    labelled: bool = True,
    app: str | None = None,
    command: list[str] | None = None,
    receiver_cmd: str | None = None,
) -> Finished: ...
def emulate_builtin_or_path(
    arg: _Path | None = None,
    seed: int | None = None,
    duration: str | None = None,
    warmup: str | None = None,
    sets: str | None = None,
    app: str | None = None,
    command: list[str] | None = None,
    receiver_cmd: str | None = None,
) -> Finished: ...

# ValueError with `aqmlab emulate`'s refusal when the emulator cannot honour the
# scenario (a JSON object); a sweep of emulated runs checks every point first.
def check_emulation(json: str) -> None: ...

# `aqmlab emulate --compare`'s side-by-side table of a simulated and an emulated run.
def compare_text(simulated: Finished, emulated: Finished) -> str: ...

# `aqmlab emulate --calibrate`: measures and keeps this machine's rate; (JSON, summary line).
def emulate_calibrate(duration: str | None = None) -> tuple[str, str]: ...

# (TOML text, origin) of a scenario argument, resolved as `aqmlab run ARG` does.
def scenario_source(arg: _Path | None = None) -> tuple[str, str]: ...

# The result tables' names, and the drop reasons of their drops_/marks_ columns.
def table_names() -> list[str]: ...
def table_schemas() -> list[tuple[str, bytes]]: ...
def drop_reasons() -> list[str]: ...

# The scenarios' unit parser: a rate in bit/s, a duration in ns, and back.
def parse_rate(text: str) -> int: ...
def parse_duration(text: str) -> int: ...
def format_duration(nanos: int) -> str: ...

# The qdiscs' flow hash: the key of a hash level, and a flow's 32-bit hash.
def hash_key(hash_seed: int, generation: int, level: int) -> int: ...
def flow_hash(key: int, flow: int) -> int: ...

# The queue lab (a JSON object of its flags' keys) and the models, printed as
# `aqmlab queue-lab` and `aqmlab model ...` print them.
def queue_lab(config: str, text: bool = False) -> str: ...
def model_sfb_misclass(levels: int, bins: int, nonresponsive: int, json: bool = False) -> str: ...
def model_choke_front(mu: float, rates: list[float], json: bool = False) -> str: ...
def model_choke_back(memory: int, rates: list[float], mu: float | None = None, json: bool = False) -> str: ...

# The catalogue: built-in scenarios as (name, one-line description), what
# `aqmlab scenarios` prints, a built-in's TOML text, the qdisc kinds and each
# kind's keys (ValueError for an unknown kind), and the name
# of the default scenario.
def builtin_scenarios() -> list[tuple[str, str]]: ...
def builtin_listing() -> str: ...
def builtin_text(name: str) -> str: ...
def qdisc_kinds() -> list[str]: ...
def qdisc_keys(kind: str) -> list[str]: ...
def qdisc_help(kind: str) -> str: ...

# Simulated time against a run's end as the progress bars show it ("12.3 s / 300 s").
def progress_text(now_s: float, end_s: float) -> str: ...
def tc_table(line: str) -> str: ...
def default_scenario() -> str: ...
