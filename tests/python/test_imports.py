"""The package's modules use each other only through public names.

A name another module uses is public in its module (no leading underscore); a
module itself may stay private (``aqmlab._runner``, ``aqmlab.repro._helpers``).
Checked on the source with ``ast``: ``from M import _x`` and ``m._x`` (``m`` an
imported module) are refused unless ``_x`` is itself a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "aqmlab"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(dotted: str, root: Path) -> bool:
    """``dotted`` names a module or package of the source tree (or the extension)."""
    parts = dotted.split(".")
    if parts[0] != root.name:
        return False
    base = root.parent.joinpath(*parts)
    return (
        base.with_suffix(".py").is_file()
        or (base / "__init__.py").is_file()
        or base.with_suffix(".pyi").is_file()  # the compiled extension's stubs
    )


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def violations(root: Path) -> list[str]:
    """Every use of another module's underscore name under ``root``, as
    ``file:line: module.name``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        here = module_name(path, root)
        package = here if path.name == "__init__.py" else here.rpartition(".")[0]
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(), filename=str(path))
        modules: dict[str, str] = {}  # local name -> the module of the tree it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == root.name:
                        bound = alias.name if alias.asname else alias.name.split(".")[0]
                        modules[alias.asname or bound] = bound
            elif isinstance(node, ast.ImportFrom):
                source = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    source = f"{anchor}.{source}" if source else anchor
                if not source.startswith(root.name):
                    continue
                for alias in node.names:
                    if is_module(f"{source}.{alias.name}", root):
                        modules[alias.asname or alias.name] = f"{source}.{alias.name}"
                    elif private(alias.name) and source != here:
                        found.append(f"{rel}:{node.lineno}: {source}.{alias.name}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and not is_module(f"{modules[node.value.id]}.{node.attr}", root)
            ):
                found.append(f"{rel}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names():
    assert violations(PACKAGE) == []


@pytest.mark.parametrize(
    "source",
    [
        "from aqmlab.repro._helpers import _private\n",
        "from ._core import _fmt\n",
        "from aqmlab.repro import _core\nx = _core._simulate\n",
    ],
)
def test_a_private_import_is_found(tmp_path, source):
    """The check itself: a copy of the package with one module that breaks the
    rule fails it, naming the file and the name."""
    import shutil

    copy = tmp_path / "aqmlab"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    (copy / "repro" / "offender.py").write_text(source)
    found = violations(copy)
    assert len(found) == 1 and found[0].startswith("repro/offender.py:"), found


def test_modules_and_own_names_are_allowed(tmp_path):
    copy = tmp_path / "aqmlab"
    copy.mkdir()
    (copy / "__init__.py").write_text("")
    (copy / "_ext.pyi").write_text("")
    (copy / "_lib.py").write_text("def _own():\n    pass\n\n\ndef shared():\n    return _own()\n")
    (copy / "user.py").write_text(
        "from aqmlab import _ext, _lib\nfrom aqmlab._lib import shared\n_ext.run()\n_lib.shared()\n"
    )
    assert violations(copy) == []
