"""memlane's one way to build something on first use: `Lazy`.

Why lazily: a Lambda function imports its handler on a cold start, and importing must stay cheap
and free of side effects (no client, no environment read, no secret fetched), so that moto can be
started before any client exists and a function never builds what its request does not use (the
authorizer never imports opensearch-py). So every handler holds its composition as a `Lazy`, and
the AWS composition wraps each port and client whose construction costs something in one.

A `Lazy` is built once, thread-safely, and forwards attribute access to what it built, so it can
stand wherever the object would (`svc.index.search(...)` builds the index on the first search).
`reset()` forgets the object (tests change the environment between cases).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    def __init__(self, factory: Callable[[], T], name: str | None = None) -> None:
        self._factory = factory
        self._name = name or getattr(factory, "__name__", "value")
        self._box: tuple[T] | None = None  # what was built, once it is (None may be what was built)
        self._lock = threading.Lock()

    def get(self) -> T:
        if self._box is None:
            with self._lock:
                if self._box is None:
                    self._box = (self._factory(),)
        return self._box[0]

    @property
    def built(self) -> bool:
        return self._box is not None

    def reset(self) -> None:
        with self._lock:
            self._box = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_factory", "_name", "_box", "_lock"):
            raise AttributeError(name)
        return getattr(self.get(), name)

    def __repr__(self) -> str:
        return f"Lazy({self._name}, {'built' if self.built else 'not built yet'})"
