"""Every example output in README.md and docs/*.md is what its command prints on
this build (.ci/examples.py produces them; `python3 .ci/examples.py write`
rewrites them after a change)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _examples():
    name = "aqmlab_ci_examples"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / ".ci" / "examples.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # a dataclass looks its module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_the_examples_are_found():
    examples = _examples()
    found: dict[str, list[str]] = {}
    for page in examples.pages():
        for block in examples.blocks(page):
            found.setdefault(str(page.relative_to(ROOT)), []).extend(block.commands())
    assert any(c.startswith("aqmlab sweep choke-fig3") for c in found["README.md"])
    assert len(found["docs/models.md"]) == 4
    # Only aqmlab commands: each is run as `python -m aqmlab`.
    assert all(c.startswith("aqmlab ") for cs in found.values() for c in cs)


def test_a_varying_line_is_left_out():
    (varying,) = _examples().VARYING
    assert varying.match("30 runs (30 simulated, 0 from cache) in 7.9 s; tables in sweep-out/runs.parquet")
    assert not varying.match("     choke   749.2 ± 3.8   241.0 ± 2.9")


def test_every_example_is_what_its_command_prints():
    proc = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "examples.py"), "check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
