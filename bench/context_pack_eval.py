"""`python -m bench.context_pack_eval`: what the assistant receives from the context pack.

recall@10 says the evidence was found; this says whether it reaches the assistant. The LoCoMo dev
conversations are saved as the recall suite saves them (one project per conversation, each turn a
memory with its conversation signal), the personal notes into one project, and every question is asked
through `POST /v3/context` of its own project (`projects: [id]`, `docsets: []`, `budget_unit: tokens`)
at each budget:

- conversations: the share of a question's evidence turns whose memory is among the pack's pieces
  (averaged over questions, as recall@k is), beside recall@10 of `POST /v3/recall` on the same server;
- personal notes: the share of answerable questions whose answering note is in the pack, and the share
  whose answering note is the pack's first piece.

Prints one JSON line per run (BENCHMARKS.md records them by hand, with the build each ran on).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine
from bench.eval.cache import EmbeddingCache, cache_dir
from bench.eval.locomo import load_conversations, shared_eval_dir
from bench.eval.server import Api, running_server
from bench.eval.workloads import notes
from bench.eval.workloads.conversations import turn_bodies

PROG = "python -m bench.context_pack_eval"
BUDGETS = (1000, 2000)


def pack_ids(api: Api, query: str, project_id: str, budget: int) -> list[str]:
    body = {"query": query, "projects": [project_id], "docsets": [], "budget": budget, "budget_unit": "tokens"}
    r = api.client.post("/v3/context", json=body)
    if r.status_code >= 400:
        raise RuntimeError(f"POST /v3/context {r.status_code}: {r.text[:300]}")
    return [p["document_id"] for p in r.json()["pieces"]]


def conversations(api: Api, path: Path) -> dict[str, Any]:
    found = {b: 0.0 for b in BUDGETS}
    recall10 = 0.0
    n = 0
    for conv in load_conversations(path):
        pid = api.project(f"locomo {conv.sample_id}")
        ids = dict(zip((t.dia_id for t in conv.turns), api.save_all(turn_bodies(conv, pid, signal=True)), strict=True))
        for q in conv.questions:
            evidence = [ids[e] for e in q.evidence]
            n += 1
            ranked, _ = api.recall(q.question, pid)
            recall10 += sum(1 for e in evidence if e in ranked[:10]) / len(evidence)
            for b in BUDGETS:
                packed = set(pack_ids(api, q.question, pid, b))
                found[b] += sum(1 for e in evidence if e in packed) / len(evidence)
        print(f"{conv.sample_id}: asked", file=sys.stderr, flush=True)
    return {"questions": n, "recall@10": recall10 / n, **{f"in_pack@{b}": v / n for b, v in found.items()}}


def personal_notes(api: Api, path: Path) -> dict[str, Any]:
    note_list, questions = notes.load_notes(path)
    pid = api.project(notes.PROJECT)
    doc_of = dict(zip((n.id for n in note_list), api.save_all([{**n.memory(), "project_id": pid} for n in note_list]),
                      strict=True))
    answerable = [(q.query, doc_of[q.answer]) for q in questions if q.answer]
    inside = {b: 0 for b in BUDGETS}
    first = {b: 0 for b in BUDGETS}
    for query, answer in answerable:
        for b in BUDGETS:
            packed = pack_ids(api, query, pid, b)
            inside[b] += answer in packed
            first[b] += bool(packed) and packed[0] == answer
    n = len(answerable)
    return {"questions": n, **{f"in_pack@{b}": inside[b] / n for b in BUDGETS},
            **{f"first@{b}": first[b] / n for b in BUDGETS}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--memory", default=str(shared_eval_dir() / "locomo-dev.json"))
    ap.add_argument("--notes", default=str(shared_eval_dir() / "personal-notes-dev.jsonl"))
    ap.add_argument("--label", default="this build")
    ap.add_argument("--cache-dir", default=None)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    cache = EmbeddingCache(cache_dir(args.cache_dir) / "embeddings.sqlite3")
    with running_server(cache) as api:
        row = {"label": args.label, "date": f"{datetime.now(UTC):%Y-%m-%d}", "machine": machine(),
               "conversations": conversations(api, Path(args.memory)), "notes": personal_notes(api, Path(args.notes))}
    cache.close()
    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
