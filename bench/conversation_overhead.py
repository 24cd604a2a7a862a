"""memlane's own cost around the LLM in conversations (issue 24): `python -m bench.conversation_overhead`.

In-process through the one resolver, embedded default (SQLite, MiniLM on ONNX Runtime), the LLM a
scripted OpenAI-compatible server on loopback that answers at once (tests/fake_chat_server.py), so
what is timed is memlane: POST /v3/conversations of 20 messages with extraction off and on (the
request must not wait for the LLM), and the extraction job of one conversation (5 facts: the extract
call, then per fact the similar-facts search, the reconcile call, the write, the links).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fake_chat_server import FakeChatServer  # noqa: E402

from memlane.adapters.openai.llm import OpenAICompatibleLLM  # noqa: E402
from memlane.api.app import MemlaneApi  # noqa: E402
from memlane.api.auth import authorizer_context  # noqa: E402
from memlane.api.events import build_event  # noqa: E402
from memlane.config import Settings  # noqa: E402
from memlane.domain.principal import Principal  # noqa: E402
from memlane.local.compose import build_local  # noqa: E402
from memlane.local.worker import IngestWorker  # noqa: E402
from memlane.ports import LanguageModel
from memlane.services.keys import ensure_organization  # noqa: E402

TOPICS = ["hiking", "cooking", "chess", "Berlin", "guitar"]


def brain(task: str, data: dict[str, Any]) -> dict[str, Any]:
    if task == "extract_facts":
        return {"facts": [{"text": f"User {i} likes {TOPICS[i % 5]} number {m['n']}", "subject": "User",
                           "sources": [m["n"]]} for i, m in enumerate(data["messages"][:5])]}
    return {"outcome": "new", "reason": "different"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.conversation_overhead")
    p.add_argument("--conversations", type=int, default=20)
    args = p.parse_args(argv)
    from memlane.adapters.local.embedder import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.load()
    out: dict[str, Any] = {}
    with FakeChatServer(brain) as server, tempfile.TemporaryDirectory() as tmp:
        for mode in ("off", "on"):
            llm = OpenAICompatibleLLM(base_url=server.base_url, model="fake") if mode == "on" else None
            stack = build_local(Settings(data_dir=Path(tmp) / mode), embedder=embedder, media_readers=(None, None),
                                llm=llm)
            stack.services = replace(stack.services, llm=LanguageModel(llm) if llm is not None else None)
            api = MemlaneApi(stack.services)
            org, _ = ensure_organization(stack.metadata, "bench")
            who = authorizer_context(Principal(organization_id=org.id, key_id="k", rate_limit_per_minute=10**6))
            worker = IngestWorker(stack.services, stack.queue)
            saves, jobs = [], []
            for c in range(args.conversations):
                body = {"conversation_id": f"c{c}", "messages": [
                    {"speaker": "User", "content": f"Conversation {c}, message {i}: I talked about {TOPICS[i % 5]} "
                                                   f"and the weekend plans for trip {c * 20 + i}."} for i in range(20)]}
                event = build_event("POST", "/v3/conversations", "", {"Content-Type": "application/json"},
                                    json.dumps(body).encode(), who)
                t0 = time.perf_counter()
                result = api.handle(event, None)
                saves.append((time.perf_counter() - t0) * 1000)
                assert result["statusCode"] == 201, result
                t0 = time.perf_counter()
                worker.drain()
                jobs.append((time.perf_counter() - t0) * 1000)
            out[mode] = {"save_20_messages_ms_p50": round(statistics.median(saves), 1),
                         "save_20_messages_ms_max": round(max(saves), 1)}
            if mode == "on":
                out[mode]["extraction_job_ms_p50"] = round(statistics.median(jobs), 1)
                out[mode]["llm_calls"] = len(server.requests)
            stack.close()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
