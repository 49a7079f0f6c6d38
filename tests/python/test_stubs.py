"""The stubs in _aqmlab.pyi name exactly what the binary exports, with the same
parameters."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from aqmlab import _aqmlab

STUBS = Path(_aqmlab.__file__).with_name("_aqmlab.pyi")


def stub_functions() -> dict[str, list[str]]:
    tree = ast.parse(STUBS.read_text())
    return {
        node.name: [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def binary_functions() -> dict[str, list[str]]:
    return {
        name: list(inspect.signature(obj).parameters)
        for name, obj in vars(_aqmlab).items()
        if not name.startswith("_") and callable(obj) and not isinstance(obj, type)
    }


def test_stub_classes_list_the_binarys_methods():
    tree = ast.parse(STUBS.read_text())
    stubbed = {
        node.name: sorted(f.name for f in node.body if isinstance(f, ast.FunctionDef))
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }
    binary = {
        name: sorted(m for m in vars(obj) if not m.startswith("_"))
        for name, obj in vars(_aqmlab).items()
        if isinstance(obj, type) and not name.startswith("_")
    }
    assert stubbed == binary


def test_the_stubs_ship_beside_the_module():
    assert STUBS.exists()
    assert STUBS.with_name("py.typed").exists()


def test_stubs_list_exactly_the_exported_functions():
    assert sorted(stub_functions()) == sorted(binary_functions())


def test_stub_parameters_match():
    binary = binary_functions()
    for name, params in stub_functions().items():
        assert params == binary[name], name


def test_stub_defaults_match():
    tree = ast.parse(STUBS.read_text())
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        sig = inspect.signature(getattr(_aqmlab, node.name))
        with_default = [p for p in sig.parameters.values() if p.default is not inspect.Parameter.empty]
        assert len(with_default) == len(node.args.defaults), node.name
