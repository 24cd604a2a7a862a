"""Facts from LoCoMo conversations (issue 24): `python -m bench.facts_eval --url URL --key KEY`.

Sends each conversation of ../shared/eval/locomo-dev.json through POST /v3/conversations (one
conversation per session, `<sample_id>-session-<N>`, every turn a message with its speaker and the
session's time), one project per conversation, waits for every extraction, then asks each question
of categories 1-4 twice through POST /v3/recall (limit 10): over facts (`filters.kind: ["fact"]`)
and over the turns (`["message"]`). It reports:

- facts extracted, and what reconciliation made of them (new, update, duplicate, contradiction);
- answer coverage: the share of questions whose answer (LoCoMo's `answer`, lowercased, its words
  all present) is in one of the recalled facts;
- recall@10 over facts: the share of a question's evidence turns that a recalled fact was drawn
  from (a fact's `sources`), averaged over questions;
- recall@10 over turns, the turn-level figure, from the same run and server.

It needs a memlane server with an LLM configured (MEMLANE_LLM_BASE_URL or OPENAI_API_KEY locally,
or the AWS stack's `llm_model`); without one every answer says extraction is off and this command
stops and says so. It has not been run on the machines memlane is built on: they have no LLM.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bench.eval.locomo import CATEGORIES, DEFAULT_DATA, parse_evidence

LIMIT = 10
MAX_MESSAGES = 100


def session_time(text: str) -> str | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" as ISO 8601 (None when it reads otherwise)."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).isoformat()
    except ValueError:
        return None


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", str(text).lower()))


def answered(answer: Any, facts: list[str]) -> bool:
    wanted = words(answer)
    return bool(wanted) and any(wanted <= words(f) for f in facts)


class Client:
    def __init__(self, url: str, key: str, transport: httpx.BaseTransport | None = None) -> None:
        self.http = httpx.Client(base_url=url.rstrip("/"), headers={"Authorization": f"Bearer {key}"}, timeout=120,
                                 transport=transport)
        self.sources: dict[str, list[str]] = {}

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        r = self.http.request(method, path, **kwargs)
        if r.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:300]}")
        return r.json()

    def project(self, name: str) -> str:
        for p in self.call("GET", "/v3/projects")["projects"]:
            if p["name"] == name:
                return str(p["id"])
        return str(self.call("POST", "/v3/projects", json={"name": name})["id"])

    def fact_sources(self, fact_id: str) -> list[str]:
        if fact_id not in self.sources:
            doc = self.call("GET", f"/v3/documents/{fact_id}")
            self.sources[fact_id] = list((doc.get("fact") or {}).get("sources") or [])
        return self.sources[fact_id]

    def recall(self, query: str, project_id: str, kind: str) -> list[dict[str, Any]]:
        body = {"query": query, "project_id": project_id, "limit": LIMIT, "filters": {"kind": [kind]}}
        return list(self.call("POST", "/v3/recall", json=body)["results"])


def send_conversation(api: Client, item: dict[str, Any], project_id: str) -> tuple[dict[str, str], list[str]]:
    """Every session as one conversation; returns dia_id → message id and the extraction ids."""
    conversation = item["conversation"]
    sessions = sorted(int(m.group(1)) for k in conversation if (m := re.fullmatch(r"session_(\d+)", k)))
    ids: dict[str, str] = {}
    extractions: list[str] = []
    for number in sessions:
        turns = conversation[f"session_{number}"]
        when = session_time(str(conversation.get(f"session_{number}_date_time", "")))
        for start in range(0, len(turns), MAX_MESSAGES):
            part = turns[start:start + MAX_MESSAGES]
            messages = []
            for t in part:
                text = str(t["text"]) + (f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else "")
                messages.append({"speaker": str(t["speaker"]), "content": text, **({"time": when} if when else {})})
            out = api.call("POST", "/v3/conversations", json={
                "conversation_id": f"{item['sample_id']}-session-{number}", "project_id": project_id,
                "messages": messages})
            if out["extraction"]["status"] == "off":
                raise SystemExit(f"the server has no LLM: {out['extraction']['reason']}")
            for t, saved in zip(part, out["messages"], strict=True):
                ids[str(t["dia_id"])] = saved["id"]
            if out["extraction"].get("id"):
                extractions.append(out["extraction"]["id"])
    return ids, extractions


def wait_extractions(api: Client, extraction_ids: list[str], timeout_s: float,
                     poll_s: float = 2.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout_s
    done: dict[str, dict[str, Any]] = {}
    while len(done) < len(extraction_ids) and time.monotonic() < deadline:
        for eid in extraction_ids:
            if eid not in done:
                record = api.call("GET", f"/v3/extractions/{eid}")
                if record["status"] in ("done", "failed"):
                    done[eid] = record
        if len(done) < len(extraction_ids):
            time.sleep(poll_s)
    return list(done.values())


def evaluate(api: Client, data: list[dict[str, Any]], timeout_s: float, poll_s: float = 2.0) -> dict[str, Any]:
    outcomes: Counter[str] = Counter()
    failed = 0
    per_question: list[tuple[int, float, float, bool]] = []
    for item in data:
        project_id = api.project(f"locomo-facts-{item['sample_id']}")
        ids, extraction_ids = send_conversation(api, item, project_id)
        for record in wait_extractions(api, extraction_ids, timeout_s, poll_s):
            failed += record["status"] == "failed"
            outcomes.update(f["outcome"] for f in record["facts"])
        for qa in item["qa"]:
            if int(qa["category"]) not in CATEGORIES:
                continue
            evidence = [ids[e] for e in parse_evidence(qa.get("evidence") or []) if e in ids]
            if not evidence:
                continue
            facts = api.recall(qa["question"], project_id, "fact")
            covered = {s for f in facts for s in api.fact_sources(f["document_id"])}
            turns = {r["document_id"] for r in api.recall(qa["question"], project_id, "message")}
            fact_texts = [c["content"] for f in facts for c in f["chunks"]]
            per_question.append((int(qa["category"]), sum(e in covered for e in evidence) / len(evidence),
                                 sum(e in turns for e in evidence) / len(evidence), answered(qa.get("answer"), fact_texts)))
    n = len(per_question) or 1
    return {
        "conversations": len(data), "questions": len(per_question), "extractions_failed": failed,
        "facts": dict(outcomes), "facts_stored": outcomes["new"] + outcomes["update"] + outcomes["contradiction"],
        "answer_in_a_recalled_fact": round(sum(q[3] for q in per_question) / n, 3),
        "recall@10_facts": round(sum(q[1] for q in per_question) / n, 3),
        "recall@10_turns": round(sum(q[2] for q in per_question) / n, 3),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.facts_eval", description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=os.environ.get("MEMLANE_API_URL", "http://127.0.0.1:7432"))
    p.add_argument("--key", default=os.environ.get("MEMLANE_API_KEY", ""))
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--only", default="", help="sample ids, comma-separated (default: every conversation)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for each conversation's extractions")
    args = p.parse_args(argv)
    if not args.key:
        p.error("--key (or MEMLANE_API_KEY) is required")
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    data = [d for d in json.loads(args.data.read_text()) if not only or d["sample_id"] in only]
    print(json.dumps(evaluate(Client(args.url, args.key), data, args.timeout), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
