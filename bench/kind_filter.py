"""Facts returned, and recall latency, for `filters.kind=["fact"]` with limit 3 among N messages that
match the query better than the facts do: the local stack with the hash embedder and the scripted
fake OpenAI-compatible server of the conversation tests (tests/fake_chat_server.py, on loopback), so
it runs offline and draws the same three facts every time. Run from the repository root:

    PYTHONPATH=.:clients/python .venv/bin/python -m bench.kind_filter --messages 2000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

FACT_MESSAGES = ("I live in Paris, near the canal.", "I love hiking on weekends.", "We adopted a dog, his name is Rex!")
QUERY = "Alice Paris hiking dog Rex"


def run(messages: int, queries: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the fakes live with the tests
    from fake_chat_server import FakeChatServer

    from tests.unit.conversations.conftest import make_world, scripted_brain

    with FakeChatServer(scripted_brain) as llm, tempfile.TemporaryDirectory() as tmp:
        world = make_world(Path(tmp), llm)
        chatter = [f"{QUERY}: chat number {i} about Alice in Paris, hiking and the dog" for i in range(messages)]
        for start in range(0, messages, 100):
            world.converse(f"chatter-{start}", *chatter[start:start + 100])
        world.worker.drain()
        world.converse("facts", *FACT_MESSAGES)
        world.worker.drain()
        cases = (("kind=fact, limit 3", {"filters": {"kind": ["fact"]}, "limit": 3}), ("no filter, limit 3", {"limit": 3}))
        for label, extra in cases:
            times, kinds = [], []
            for i in range(queries):
                started = time.perf_counter()
                results = world.recall(f"{QUERY} {i}", **extra)  # a new query each time: never a cache hit
                times.append((time.perf_counter() - started) * 1000)
                kinds = [r["kind"] for r in results]
            times.sort()
            print(f"{messages} messages, {label}: last results {kinds}; median {statistics.median(times):.1f} ms, "
                  f"p90 {times[int(0.9 * (len(times) - 1))]:.1f} ms over {queries} queries")
        world.stack.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.kind_filter", description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000, help="messages that match better than the facts")
    parser.add_argument("--queries", type=int, default=30, help="recalls timed per case")
    args = parser.parse_args(argv)
    run(args.messages, args.queries)


if __name__ == "__main__":
    main()
