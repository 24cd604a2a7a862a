"""`python -m bench.recall_record`: one recording of every workload's candidates, for calibrating
recall's relevance and its two thresholds offline (bench.calibrate_relevance).

Every workload of the recall suite that asks memories (conversations, facts, code, personal notes) is
saved into one local server (the suite's embedding cache; with --data-dir a rerun reuses the saved
memories), then every question is asked through recall's own pipeline (memlane.recall.pipeline, in
the server's process, no floor) and what relevance reads is written down: per document in rank order,
its best chunks' evidence (cosine, BM25 as relevance reads it, exact match, code, BM25 over the project, whether
it holds every name the question gives: memlane.recall.names, whether its title holds every word of
the question: memlane.recall.relevance `titled`, whether its own words hold every word of a question of
two or more: memlane.recall.pipeline `whole`), and per query the
candidates' cosines (what the store gives this query: the shape relevance reads).

Groups:
- answerable: each workload's questions asked of the project that holds their answers;
- unanswerable: LoCoMo questions asked of the next conversation's project, code questions of the other
  half of the library, the personal notes' own unanswerable questions, and LoCoMo questions asked of the
  personal notes (another person's life);
- nonsense: the suite's seeded nonsense, the floor calibration's and the notes' own, asked of every project.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.eval.cache import EmbeddingCache, cache_dir
from bench.eval.locomo import CATEGORIES, load_conversations, shared_eval_dir
from bench.eval.server import Api, running_server
from bench.eval.workloads import abstention, facts, notes
from bench.eval.workloads.code import sample_functions, stdlib_dir
from bench.eval.workloads.conversations import turn_bodies

PROG = "python -m bench.recall_record"
LIMIT = 10
SEED = 35
LOCOMO_ASKED_OF_NOTES = 200  # a seeded sample of LoCoMo questions asked of the notes: another person's life


@dataclass
class Query:
    workload: str
    group: str  # answerable | unanswerable | nonsense
    category: str
    query: str
    project_id: str
    targets: list[list[str]] = field(default_factory=list)


def _save(api: Api, args: argparse.Namespace) -> tuple[list[Query], list[str]]:
    """Every workload saved; the queries to ask and every project id."""
    conversations = load_conversations(Path(args.memory))
    queries, projects = _conversations(api, conversations)
    fq, fpid = _facts(api, conversations)
    cq, code_projects = _code(api, args.code_sample)
    nq, npid, own_nonsense = _notes(api, args.notes, [q.question for c in conversations for q in c.questions])
    from bench.calibrate_floor import nonsense_queries as floor_nonsense

    nonsense = list(dict.fromkeys([*abstention.nonsense_queries(), *floor_nonsense(), *own_nonsense]))
    workload_of = {**dict.fromkeys(projects, "conversations"), fpid: "facts", npid: "notes",
                   **dict.fromkeys(code_projects, "code")}
    queries += fq + cq + nq
    queries += [Query(w, "nonsense", "nonsense", text, pid) for pid, w in workload_of.items() for text in nonsense]
    return queries, list(workload_of)


def _conversations(api: Api, conversations: list[Any]) -> tuple[list[Query], list[str]]:
    saved = []
    for conv in conversations:
        pid = api.project(f"locomo {conv.sample_id}")
        ids = api.save_all(turn_bodies(conv, pid, signal=True))
        saved.append((conv, pid, dict(zip((t.dia_id for t in conv.turns), ids, strict=True))))
        print(f"{conv.sample_id} saved", file=sys.stderr, flush=True)
    queries = []
    for i, (conv, pid, doc_of) in enumerate(saved):
        other = saved[(i + 1) % len(saved)][1]
        for q in conv.questions:
            cat = CATEGORIES[q.category]
            queries.append(Query("conversations", "answerable", cat, q.question, pid, [[doc_of[e]] for e in q.evidence]))
            queries.append(Query("conversations", "unanswerable", cat, q.question, other))
    return queries, [pid for _, pid, _ in saved]


def _facts(api: Api, conversations: list[Any]) -> tuple[list[Query], str]:
    """One project, shuffled as the suite shuffles them."""
    fact_list = facts.shuffled_facts(conversations)
    fpid = api.project(facts.PROJECT)
    fids = api.save_all([{**f.memory(), "project_id": fpid} for f in fact_list])
    citing: dict[tuple[str, str], list[str]] = defaultdict(list)
    for fact, doc in zip(fact_list, fids, strict=True):
        for turn in fact.evidence:
            citing[(fact.sample_id, turn)].append(doc)
    queries = []
    for conv in conversations:
        for q in conv.questions:
            targets = facts.evidence_targets(q.evidence, conv.sample_id, citing)
            if targets:
                queries.append(Query("facts", "answerable", CATEGORIES[q.category], q.question, fpid, targets))
    print("facts saved", file=sys.stderr, flush=True)
    return queries, fpid


def _code(api: Api, sample: int) -> tuple[list[Query], list[str]]:
    """Two projects by top-level module; each question also asked of the other half."""
    functions = sample_functions(stdlib_dir(), sample)
    parts = {}
    for part in ("a", "b"):
        mine = [f for f in functions if f.part == part]
        pid = api.project(f"stdlib code {part}")
        parts[part] = (pid, mine, api.save_all([{**f.memory(), "project_id": pid} for f in mine]))
    queries = []
    for part, (pid, mine, ids) in parts.items():
        other = parts["b" if part == "a" else "a"][0]
        for f, doc in zip(mine, ids, strict=True):
            queries.append(Query("code", "answerable", "", f.query, pid, [[doc]]))
            queries.append(Query("code", "unanswerable", "", f.query, other))
    print("code saved", file=sys.stderr, flush=True)
    return queries, [parts["a"][0], parts["b"][0]]


def _notes(api: Api, path: str, locomo: list[str]) -> tuple[list[Query], str, list[str]]:
    """The personal notes, their questions, and LoCoMo questions asked of them (another person's life)."""
    note_list, questions = notes.load_notes(path)
    npid = api.project(notes.PROJECT)
    nids = api.save_all([{**n.memory(), "project_id": npid} for n in note_list])
    doc_of_note = dict(zip((n.id for n in note_list), nids, strict=True))
    queries, own_nonsense = [], []
    for nq in questions:
        if nq.answer:
            queries.append(Query("notes", "answerable", nq.kind, nq.query, npid, [[doc_of_note[nq.answer]]]))
        elif nq.kind == "unanswerable":
            queries.append(Query("notes", "unanswerable", nq.kind, nq.query, npid))
        else:
            own_nonsense.append(nq.query)
    for text in random.Random(SEED).sample(locomo, min(LOCOMO_ASKED_OF_NOTES, len(locomo))):
        queries.append(Query("notes", "unanswerable", "another person", text, npid))
    print("notes saved", file=sys.stderr, flush=True)
    return queries, npid, own_nonsense


def record_query(svc: Any, org_id: str, q: Query) -> dict[str, Any]:
    """Recall's pipeline for one query (no floor): each document in rank order with its chunks'
    evidence, and the query's candidate cosines."""
    from memlane.ports import RecallFilters, SearchScope
    from memlane.recall import relevance as rel
    from memlane.recall.pipeline import retrieve
    from memlane.recall.recipes import MEMORY_RECALL

    scope = SearchScope(organization_id=org_id, project_ids=(q.project_id,), filters=RecallFilters(), now=svc.clock.now())
    # exact_match above 1: every chunk the text leg found is checked for an exact term (as calibrate_floor does)
    probe = replace(rel.calibration_for(svc.embedder.id), exact_match=2.0)
    found = retrieve(svc, replace(MEMORY_RECALL.retrieval(svc, q.query, scope, results=LIMIT, min_relevance=0.0),
                                  calibration=probe))
    return {
        "workload": q.workload, "group": q.group, "category": q.category, "query": q.query,
        "project": q.project_id, "targets": q.targets, "terms": rel.query_terms(q.query),
        "background": found.background.as_json() if found.background is not None else None,
        "documents": [[g.document_id, round(g.score, 5),
                       [[round(c.vector_score, 5), round(c.bm25, 4), c.exact, c.code, round(c.bm25, 4), c.named, c.titled,
                         c.whole]
                        for c in g.chunks]]
                      for g in found.documents],
    }


def record(args: argparse.Namespace) -> dict[str, Any]:
    cache = EmbeddingCache(cache_dir(args.cache_dir) / "embeddings.sqlite3")
    with running_server(cache, data_dir=Path(args.data_dir) if args.data_dir else None) as api:
        queries, _ = _save(api, args)
        svc = api.services
        t0 = time.monotonic()
        rows = []
        for i, q in enumerate(queries):
            rows.append(record_query(svc, api.organization_id, q))
            if i % 500 == 0:
                print(f"{i}/{len(queries)} asked", file=sys.stderr, flush=True)
        out = {"embedder": svc.embedder.id, "queries": rows, "seconds": round(time.monotonic() - t0, 1),
               "load_average": os.getloadavg()[1], "fusion": repr(svc.settings.fusion)}
    cache.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--memory", default=str(shared_eval_dir() / "locomo-dev.json"))
    ap.add_argument("--notes", default=str(shared_eval_dir() / "personal-notes-dev.jsonl"))
    ap.add_argument("--code-sample", type=int, default=300)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--out", required=True, help="where the recording goes (JSON)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    data = record(args)
    Path(args.out).write_text(json.dumps(data))
    print(f"{len(data['queries'])} queries recorded in {data['seconds']} s → {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
