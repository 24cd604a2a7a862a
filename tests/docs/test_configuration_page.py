"""docs/configuration.md is written from the configuration model (memlane.config.reference), and
the model is where every variable is read: the page names them all by construction, and a read of
the environment anywhere else in memlane's code fails here (tests/docs/test_site.py also checks
that every variable name the code mentions is on the page)."""

from __future__ import annotations

import ast
from pathlib import Path

from memlane.config.model import Configuration
from memlane.config.reference import PAGE, _parts, page
from memlane.config.variables import variables_of

ROOT = Path(__file__).resolve().parents[2]
# The one module that looks variables up (memlane.config.variables: each by its name).
READER = ROOT / "memlane" / "config" / "variables.py"


def test_the_committed_page_is_what_the_model_writes():
    assert PAGE.read_text(encoding="utf-8") == page(), (
        "docs/configuration.md is stale: run `make configuration-docs` (python -m memlane.config.reference)")


def test_every_variable_of_every_part_is_on_the_page():
    declared = {name for part in _parts(Configuration) for field in part.model_fields
                for name in variables_of(part, field)}
    assert {"MEMLANE_DATA_DIR", "MEMLANE_TABLE", "MEMLANE_GITHUB_CLIENT_SECRET", "MEMORY_API_URL"} <= declared
    text = PAGE.read_text(encoding="utf-8")
    assert sorted(n for n in declared if f"`{n}`" not in text) == []


def _environment_reads(source: str) -> list[int]:
    """The lines where a module reads the process environment: `os.environ` (but for
    `os.environ.setdefault`, which sets a library's own switch for it), `os.getenv`, and importing
    either from os."""
    tree = ast.parse(source)
    setdefaults = {id(node.func.value) for node in ast.walk(tree)
                   if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                   and node.func.attr == "setdefault"}
    names = ("environ", "getenv", "environb")

    def reads(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr in names and id(node) not in setdefaults
        return isinstance(node, ast.ImportFrom) and node.module == "os" and any(a.name in names for a in node.names)

    return sorted(node.lineno for node in ast.walk(tree) if reads(node))


def test_nothing_outside_the_configuration_model_reads_the_environment():
    # Lambda-runtime and library variables (AWS_REGION for the SDK, _X_AMZN_TRACE_ID, POWERTOOLS_*,
    # OPENAI_BASE_URL, HF_*) are read by the libraries themselves; memlane's own reads are the model's.
    sources = [*(ROOT / "memlane").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
    reads = [f"{path.relative_to(ROOT)}:{line}" for path in sources if path != READER
             for line in _environment_reads(path.read_text(encoding="utf-8"))]
    assert reads == [], f"read the environment outside memlane.config (declare the variable in a part): {reads}"


def test_the_scan_sees_every_kind_of_read():
    stray = ("import os\nfrom os import getenv\nurl = os.environ.get('MEMLANE_X')\n"
             "os.environ.setdefault('HF_HUB_OFFLINE', '1')\nkey = getenv('K')\nall = dict(os.environ)\n"
             "home = os.getenv('HOME')\n")
    assert _environment_reads(stray) == [2, 3, 6, 7]
