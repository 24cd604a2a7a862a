"""Which environment variables memlane's code reads while a function runs, taken from the code
itself: `os.environ` is replaced by a mapping that records every key looked up (`get`, `[]`,
`in`, `os.getenv`), with the file that looked. Reads made by memlane's own code (memlane/,
functions/) are what a deployment must provide; a library's reads of its own settings are not.

Two kinds of read are caught: those made while a handler runs (world.py installs the recorder
around each invocation, after a cold start, so composition and every reader run again), and those
made when a handler module is first imported (`import_time_reads`, in a fresh interpreter).

The environment test (tests/infra/test_environment.py) also checks that the readers are seen at
all: a settings reader that copies the environment in one sweep (`dict(os.environ)`, or a
pydantic-settings model) would hide which keys it wants, and the test says so instead of passing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
MEMLANE_CODE = (REPO_ROOT / "memlane", REPO_ROOT / "functions")
_SKIPPED_FILES = (__file__, os.__file__, getattr(sys.modules.get("_collections_abc"), "__file__", ""))


@dataclass(frozen=True)
class Read:
    name: str
    present: bool
    file: str
    line: int

    @property
    def by_memlane(self) -> bool:
        return any(Path(self.file).is_relative_to(root) for root in MEMLANE_CODE)


class RecordingEnviron(MutableMapping[str, str]):
    """Stands in for `os.environ`: the same values, every key looked up remembered."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self._data = dict(values)
        self.reads: list[Read] = []

    def _record(self, key: str) -> None:
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename in _SKIPPED_FILES:
            frame = frame.f_back  # type: ignore[assignment]
        where = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("?", 0)
        self.reads.append(Read(str(key), key in self._data, where[0], where[1]))

    def __getitem__(self, key: str) -> str:
        self._record(key)
        return self._data[key]

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        self._record(key)
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        self._record(str(key))
        return key in self._data

    def __setitem__(self, key: str, value: str) -> None:
        self._data[key] = value

    def __delitem__(self, key: str) -> None:
        del self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def copy(self) -> dict[str, str]:
        return dict(self._data)


@contextmanager
def lambda_environment(values: Mapping[str, str]) -> Iterator[RecordingEnviron]:
    """The process environment is exactly `values` (as in a Lambda execution environment), and
    `os.environ` records what is read, until the block ends; then everything is as it was."""
    real = os.environ
    saved = dict(real)
    real.clear()
    real.update(values)  # for code that kept a reference to the real mapping
    recorder = RecordingEnviron(values)
    os.environ = recorder  # type: ignore[assignment]  # noqa: B003 - the real mapping was set just above
    try:
        yield recorder
    finally:
        os.environ = real  # noqa: B003 - put back, then restored below
        real.clear()
        real.update(saved)


_IMPORT_PROBE = """
import json, os, sys
sys.path.insert(0, {root!r}); sys.path.insert(0, {tests!r})
from aws_trace.environ import RecordingEnviron
recorder = RecordingEnviron(json.loads(sys.argv[1]))
os.environ = recorder
import importlib
out = {{}}
for module in json.loads(sys.argv[2]):
    start = len(recorder.reads)
    importlib.import_module(module)
    out[module] = [[r.name, r.present, r.file, r.line] for r in recorder.reads[start:]]
print(json.dumps(out))
"""


def import_time_reads(modules: list[str], environment: Mapping[str, str]) -> dict[str, list[Read]]:
    """The reads each module makes when imported first, in a fresh interpreter whose environment is
    `environment` (a module imported by an earlier one in the list reads nothing again: the caller
    treats the union as what every handler's import reads, since they share functions._handler)."""
    code = _IMPORT_PROBE.format(root=str(REPO_ROOT), tests=str(REPO_ROOT / "tests"))
    result = subprocess.run([sys.executable, "-c", code, json.dumps(dict(environment)), json.dumps(modules)],
                            capture_output=True, text=True, check=True, cwd=REPO_ROOT, timeout=120)
    raw = json.loads(result.stdout.strip().splitlines()[-1])
    return {module: [Read(name, present, file, line) for name, present, file, line in reads]
            for module, reads in raw.items()}
