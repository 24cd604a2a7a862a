"""Fault injection for the write path: every store a write touches, wrapped so that one chosen
call (or every call of one method until recovery) fails as an outage does.

    faults = Faults(services)             # wraps metadata, index, blobs, cache and the embedder
    svc = faults.services                 # hand these to the code under test
    faults.fail_call(3)                   # the 4th write-path call raises TransientError
    faults.fail_method("index.upsert")    # every call to it fails until faults.recover()
    faults.crash_at(3)                    # the process dies at the 4th call (raises Crash)

A clean run with `faults.record()` lists the calls a write makes in order, so a test can put a
failure between any two of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from memlane.domain.errors import DependencyUnavailableError, TransientError
from memlane.ports import Services

# The calls that write (or, for the embedder, that can fail in the middle of a write).
WRITE_METHODS: dict[str, tuple[str, ...]] = {
    "metadata": ("add_document", "put_document", "set_status", "put_chunks"),
    "index": ("upsert", "delete_document", "set_superseded"),
    "blobs": ("put", "delete", "delete_prefix"),
    "cache": ("bump_generation", "purge_document"),
    "embedder": ("embed_documents",),
}


class Crash(BaseException):  # noqa: N818 - what it simulates is a crash, not an error
    """The process dies at this call: nothing after it runs, no handler records anything."""


class _Proxy:
    def __init__(self, name: str, target: Any, faults: Faults) -> None:
        self._name = name
        self._target = target
        self._faults = faults

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        if attr in WRITE_METHODS.get(self._name, ()) and callable(value):
            return self._faults.wrap(f"{self._name}.{attr}", value)
        return value


class Faults:
    def __init__(self, services: Services) -> None:
        self.calls: list[str] = []
        self._fail_at: int | None = None
        self._crash = False
        self._down: set[str] = set()
        self.injected: list[str] = []
        self.services = dataclasses.replace(
            services,
            **{name: _Proxy(name, getattr(services, name), self) for name in WRITE_METHODS
               if getattr(services, name) is not None},
        )

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            index = len(self.calls)
            self.calls.append(name)
            if index == self._fail_at and self._crash:
                self.injected.append(name)
                raise Crash(name)
            if index == self._fail_at or name in self._down:
                self.injected.append(name)
                if name.startswith("index."):
                    raise DependencyUnavailableError(f"{name}: search index unavailable (injected)")
                raise TransientError(f"{name}: unavailable (injected)")
            return fn(*args, **kwargs)

        return call

    def record(self) -> None:
        self.calls.clear()
        self._fail_at = None
        self._down.clear()

    def fail_call(self, index: int) -> None:
        """The call at `index` (counted from now) fails once."""
        self.calls.clear()
        self._fail_at = index
        self._crash = False

    def crash_at(self, index: int) -> None:
        """The process dies at the call at `index` (counted from now): the call does not happen."""
        self.fail_call(index)
        self._crash = True

    def fail_method(self, name: str) -> None:
        """Every call to `name` fails until recover()."""
        self._down.add(name)

    def recover(self) -> None:
        self._fail_at = None
        self._crash = False
        self._down.clear()
