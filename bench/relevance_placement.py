"""`python -m bench.relevance_placement`: does a person's notes' relevance move with what else their
organization holds? (issue 35, third round.)

The personal notes are saved into one project of a fresh organization and their questions asked
through `POST /v3/recall` as a client asks them (the default floor); then the Python docs pages are
saved as memories into a second project of the same organization (7,700 long chunks) and the same
questions asked again. Per placement it prints the notes' three figures the issue watches:
unanswerable questions with a strong result, answerable questions whose note is first and strong,
answerable questions answered with nothing; and the median over answerable questions of the best
result's BM25 per query word (what relevance's text part reads). Writes nothing; BENCHMARKS.md quotes
a run ("Recall that answers, third round", where the run on main 7536e74 that isolated N, df and avgdl
is described: that build read relevance's BM25 over the organization's statistics)."""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from bench.eval.cache import EmbeddingCache, cache_dir
from bench.eval.server import Api, running_server
from bench.eval.workloads import notes
from bench.eval.workloads.docs import doc_pages
from memlane.domain.requests import MAX_CONTENT_CHARS

PROG = "python -m bench.relevance_placement"


def figures(api: Api, project_id: str, questions: list[notes.Question], doc_of: dict[str, str]) -> dict[str, float]:
    """The issue's three notes figures at the default floor, and the median best BM25 evidence."""
    unanswerable = [q for q in questions if q.kind == "unanswerable"]
    answerable = [q for q in questions if q.answer]
    strong_unanswerable = 0
    for q in unanswerable:
        _, _, match = api.recall_with_match(q.query, project_id, default_floor=True)
        strong_unanswerable += bool(match and "strong" in match)
    first_strong = nothing = 0
    for q in answerable:
        ranked, _, match = api.recall_with_match(q.query, project_id, default_floor=True)
        nothing += not ranked
        first_strong += bool(ranked and ranked[0] == doc_of[q.answer or ""] and match and match[0] == "strong")
    return {"unanswerable strong": strong_unanswerable / len(unanswerable),
            "first and strong": first_strong / len(answerable), "answered nothing": nothing / len(answerable),
            "median best evidence": _median_evidence(api, project_id, answerable)}


def _median_evidence(api: Api, project_id: str, questions: list[notes.Question]) -> float:
    """The median over questions of the answering note's BM25 evidence per query word."""
    from memlane.ports import RecallFilters, SearchScope
    from memlane.recall import relevance as rel
    from memlane.recall.pipeline import retrieve
    from memlane.recall.recipes import MEMORY_RECALL

    svc = api.services
    values = []
    for q in questions:
        scope = SearchScope(organization_id=api.organization_id, project_ids=(project_id,), filters=RecallFilters(),
                            now=svc.clock.now())
        found = retrieve(svc, MEMORY_RECALL.retrieval(svc, q.query, scope, results=10, min_relevance=0.0))
        best = max((c.bm25 for g in found.documents for c in g.chunks), default=0.0)
        values.append(best / rel.query_terms(q.query))
    return statistics.median(values)


def run(args: argparse.Namespace) -> None:
    cache = EmbeddingCache(cache_dir(args.cache_dir) / "embeddings.sqlite3")
    note_list, questions = notes.load_notes(args.notes)
    with running_server(cache) as api:
        npid = api.project(notes.PROJECT)
        ids = api.save_all([{**n.memory(), "project_id": npid} for n in note_list])
        doc_of = dict(zip((n.id for n in note_list), ids, strict=True))
        _report(api, npid, questions, doc_of, "own organization")
        docs = Path(args.docs_dir)
        pages = [(p, (docs / p).read_text(encoding="utf-8", errors="replace")) for p in doc_pages(docs)]
        pid = api.project("python docs")
        api.save_all([{"content": h, "title": p, "content_type": "html", "project_id": pid}
                      for p, h in pages if len(h) <= MAX_CONTENT_CHARS], [])
        print("docs saved", file=sys.stderr, flush=True)
        _report(api, npid, questions, doc_of, "with the docs pages")
    cache.close()


def _report(api: Api, npid: str, questions: list[notes.Question], doc_of: dict[str, str], placement: str) -> None:
    from memlane.recall.service import project_scope_key

    if api.services.cache is not None:  # the recall cache keeps rankings and relevance: a new generation
        api.services.cache.bump_generation(project_scope_key(api.organization_id, npid))
    f = figures(api, npid, questions, doc_of)
    print(f"{placement:22} " + "  ".join(f"{k} {v:.3f}" for k, v in f.items()), flush=True)


def main(argv: list[str] | None = None) -> int:
    from bench.eval.locomo import shared_eval_dir

    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--notes", default=str(shared_eval_dir() / "personal-notes-dev.jsonl"))
    ap.add_argument("--docs-dir", default="/usr/share/doc/python3.11/html")
    ap.add_argument("--cache-dir", default=None)
    run(ap.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
