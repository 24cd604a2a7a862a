"""memlane.lazy.Lazy: built once on first use (by any number of threads), forwarding attributes,
forgotten by reset."""

from __future__ import annotations

import threading

from memlane.lazy import Lazy


def test_built_once_across_threads_and_again_after_reset():
    # Given a factory that is slow enough for threads to meet in it
    calls: list[int] = []
    started = threading.Barrier(8)

    def factory() -> dict[str, int]:
        calls.append(1)
        return {"n": len(calls)}

    lazy: Lazy[dict[str, int]] = Lazy(factory)
    assert not lazy.built and repr(lazy) == "Lazy(factory, not built yet)"
    seen: list[dict[str, int]] = []

    def use() -> None:
        started.wait()
        seen.append(lazy.get())

    # When eight threads ask for it at once
    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Then it was built once and every thread got that one object, whose attributes it forwards
    assert len(calls) == 1 and all(s is seen[0] for s in seen) and lazy.built
    assert list(lazy.keys()) == ["n"]  # dict.keys, forwarded
    # and after reset the next use builds it again
    lazy.reset()
    assert not lazy.built and lazy.get()["n"] == 2


def test_a_factory_that_builds_none_is_built_once():
    calls: list[int] = []
    lazy: Lazy[None] = Lazy(lambda: calls.append(1), "nothing")
    assert lazy.get() is None and lazy.get() is None
    assert calls == [1] and lazy.built and repr(lazy) == "Lazy(nothing, built)"
