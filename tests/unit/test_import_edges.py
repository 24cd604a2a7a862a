"""Every import is an edge the import rules can see (`make lint` runs lint-imports with the contracts
in pyproject.toml's [tool.importlinter], which count imports inside functions and under
TYPE_CHECKING). A module loaded by a name built at run time (`importlib.import_module`,
`__import__`) is an edge no rule follows: the library has none."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# `memlane invoke NAME` runs the Lambda handler a developer names on the command line: a tool of the
# checkout (functions/ is no part of the wheel), and the one place a module is chosen at run time.
CHOSEN_AT_RUN_TIME = {"functions/invoke.py"}


def loads_by_name(source: str) -> Iterator[int]:
    """The lines that load a module by a name: a call of import_module or __import__."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__"):
                yield node.lineno


def test_the_check_finds_a_module_loaded_by_name():
    # Given the two ways a module is loaded by a name built at run time
    source = "import importlib\nm = importlib.import_module(name)\nn = __import__('memlane.' + x)\n"
    # Then both are found, and a plain import is not
    assert list(loads_by_name(source)) == [2, 3]
    assert list(loads_by_name("from memlane.docsets import service\n")) == []


def test_no_module_of_the_library_is_loaded_by_a_name_the_import_rules_cannot_follow():
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in ("memlane", "functions")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if str(path.relative_to(ROOT)) not in CHOSEN_AT_RUN_TIME
        for line in loads_by_name(path.read_text(encoding="utf-8"))
    ]
    assert found == [], f"import these modules plainly (inside the function, where only it needs them): {found}"
