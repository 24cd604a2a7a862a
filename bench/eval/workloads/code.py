"""*code*: a fixed, seeded sample of documented public functions and methods of the Python standard
library on this machine, each saved through POST /v3/memory as its own code memory
(`content_type: code`) with its docstrings removed, and queried by the first sentence of its
docstring with its own name removed; found when the memory holding that function is returned.

A file per function, not per module: the question is about one function, so the unit the product
and both baselines rank is that function's code; a module file would measure the chunker's
boundaries as well (a module of the standard library is often thousands of lines, many chunks), and
the baselines would need the product's chunking to rank the same units.

The sample is split in two projects by top-level module (a hash of its name), so that each half's
questions can also be asked of the other half (the abstention workload).
"""

from __future__ import annotations

import ast
import hashlib
import os
import random
import re
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.eval.baselines import BASELINES, baselines
from bench.eval.scoring import Record
from bench.eval.server import LIMIT
from bench.eval.workloads import Context, Unanswerable

NAME = "code"
SEED = 22
SAMPLE = 300
SKIP_DIRS = frozenset({"test", "tests", "idlelib", "lib2to3", "turtledemo", "site-packages", "dist-packages",
                       "ensurepip", "__pycache__", "__phello__", "pydoc_data"})
MAX_CHARS = 20_000
MIN_WORDS = 4
_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.S)


def stdlib_dir() -> Path:
    """The standard library of the Python running the suite (where `os` lives)."""
    return Path(os.__file__).resolve().parent


@dataclass(frozen=True)
class Function:
    path: str  # relative to the standard library's root
    qualname: str
    lineno: int
    code: str  # the source with its docstrings removed, dedented
    query: str

    @property
    def part(self) -> str:
        top = self.path.split("/", 1)[0].removesuffix(".py")
        return "a" if hashlib.sha256(top.encode()).digest()[0] % 2 == 0 else "b"

    def memory(self) -> dict[str, str]:
        return {"content": self.code, "title": f"{self.path}: {self.qualname}", "content_type": "code"}


def first_sentence(docstring: str) -> str:
    paragraph = docstring.strip().split("\n\n", 1)[0]
    text = " ".join(paragraph.split())
    m = _SENTENCE.match(text)
    return (m.group(1) if m else text).strip()


def query_of(docstring: str, name: str) -> str:
    """The docstring's first sentence without the function's own name (nor `name()`, nor `obj.name`'s
    name); a longer identifier that contains it stays."""
    sentence = first_sentence(docstring)
    sentence = re.sub(rf"(?<!\w){re.escape(name)}(\(\))?(?!\w)", " ", sentence)
    return " ".join(sentence.split())


def _docstring_nodes(node: ast.AST) -> list[ast.Expr]:
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and sub.body:
            first = sub.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.append(first)
    return out


def without_docstrings(source_lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The function's source (decorators included) with every docstring inside it removed, or None
    when a docstring shares a line with other code or the function is nothing but its docstring."""
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not body or all(isinstance(s, ast.Pass) for s in body):
        return None
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    end = node.end_lineno or node.lineno
    drop: set[int] = set()
    for doc in _docstring_nodes(node):
        first, last = doc.lineno, doc.end_lineno or doc.lineno
        if source_lines[first - 1][: doc.col_offset].strip() or source_lines[last - 1][doc.end_col_offset or 0 :].strip():
            return None
        drop.update(range(first, last + 1))
    kept = [source_lines[i - 1] for i in range(start, end + 1) if i not in drop]
    return textwrap.dedent("\n".join(kept)).strip("\n")


def _functions_of(root: Path, path: Path) -> list[Function]:
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    lines = source.splitlines()
    rel = path.relative_to(root).as_posix()
    out = []
    scopes: list[tuple[str, ast.AST]] = [("", n) for n in tree.body]
    scopes += [(f"{c.name}.", n) for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body]
    for prefix, node in scopes:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name.startswith("_"):
            continue
        if prefix and prefix.startswith("_"):
            continue
        doc = ast.get_docstring(node)
        if not doc:
            continue
        query = query_of(doc, node.name)
        if len(query.split()) < MIN_WORDS:
            continue
        code = without_docstrings(lines, node)
        if not code or len(code) > MAX_CHARS:
            continue
        out.append(Function(rel, prefix + node.name, node.lineno, code, query))
    return out


def sample_functions(root: Path, n: int = SAMPLE, seed: int = SEED) -> list[Function]:
    """A seeded sample of `n` functions whose queries are unique in the library (a question that
    several functions answer word for word cannot say which one it means)."""
    found: list[Function] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(("config-", ".")))
        for name in sorted(filenames):
            if name.endswith(".py"):
                found += _functions_of(root, Path(dirpath) / name)
    counts: dict[str, int] = {}
    for f in found:
        counts[f.query.lower()] = counts.get(f.query.lower(), 0) + 1
    unique = sorted((f for f in found if counts[f.query.lower()] == 1), key=lambda f: (f.path, f.lineno))
    return sorted(random.Random(seed).sample(unique, min(n, len(unique))), key=lambda f: (f.path, f.lineno))


def run(ctx: Context) -> tuple[list[Record], dict[str, Any]]:
    api = ctx.api
    root = Path(ctx.args.stdlib) if ctx.args.stdlib else stdlib_dir()
    functions = sample_functions(root, ctx.args.code_sample)
    records: list[Record] = []
    projects: dict[str, str] = {}
    save_seconds = 0.0
    for part in ("a", "b"):
        mine = [f for f in functions if f.part == part]
        if not mine:
            continue
        project_id = projects[part] = api.project(f"stdlib code {part}")
        ctx.projects[f"stdlib code {part}"] = project_id
        t0 = time.monotonic()
        ids = api.save_all([{**f.memory(), "project_id": project_id} for f in mine])
        save_seconds += time.monotonic() - t0
        texts: dict[str, str] = {}
        for f, doc in zip(mine, ids, strict=True):
            m = f.memory()
            texts.setdefault(doc, f"{m['title']}\n{m['content']}")
        base = baselines(list(texts), list(texts.values()), api.embedder)
        for f, doc in zip(mine, ids, strict=True):
            ranked, relevance = api.recall(f.query, project_id)
            records.append(Record(NAME, "memlane", "", f.query, ranked, [[doc]], relevance, f"part {part}"))
            if api.min_relevance:  # as a client asks: the server's floor applies
                ranked, relevance = api.recall(f.query, project_id, default_floor=True)
                records.append(Record(NAME, "memlane-floor", "", f.query, ranked, [[doc]], relevance, f"part {part}"))
            for b in BASELINES:
                records.append(Record(NAME, b, "", f.query, base[b].rank(f.query, LIMIT), [[doc]], None, f"part {part}"))
        ctx.progress(f"{NAME}: part {part}: {len(mine)} functions saved and asked")
    for f in functions:
        other = projects.get("b" if f.part == "a" else "a")
        if other:
            ctx.unanswerable.append(Unanswerable(NAME, f.query, other))
    if ctx.stages_off is not None:
        # The same saves on a server with the sequence stages off: functions saved one after another
        # are not parts of one conversation, so what the stages cost or bring here is worth a row.
        with ctx.stages_off() as off:
            for part in ("a", "b"):
                mine = [f for f in functions if f.part == part]
                if not mine:
                    continue
                off_project = off.project(f"stdlib code {part}")
                off_ids = off.save_all([{**f.memory(), "project_id": off_project} for f in mine])
                same = dict(zip(off_ids, (r.targets[0][0] for r in records if r.method == "memlane" and r.scope == f"part {part}"), strict=True))
                for f, doc in zip(mine, off_ids, strict=True):
                    ranked, relevance = off.recall(f.query, off_project)
                    records.append(Record(NAME, "stages-off", "", f.query, [same.get(d, d) for d in ranked],
                                          [[same[doc]]], relevance, f"part {part}"))
        ctx.progress(f"{NAME}: the stages-off server answered")
    info = {
        "stdlib": str(root),
        "functions": len(functions),
        "parts": {p: sum(1 for f in functions if f.part == p) for p in ("a", "b")},
        "seed": SEED,
        "save_seconds": save_seconds,
        "examples": [(f"{f.path}: {f.qualname}", f.query) for f in functions[:3]],
    }
    return records, info
