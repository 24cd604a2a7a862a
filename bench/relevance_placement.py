"""`python -m bench.relevance_placement`: does a person's notes' relevance move with what else their
organization holds? (issue 35, third round.)

The personal notes are saved into one project of a fresh organization and their questions asked
through `POST /v3/recall` as a client asks them (the default floor); then the Python docs pages are
saved as memories into a second project of the same organization (the suite's 6,530 long chunks) and
the same questions asked again. Each placement is asked once per way of counting the statistics that
relevance's BM25 evidence reads (memlane.adapters.local.search_legs `text_leg`'s background),
so that which of N, df and avgdl moves the figures can be read off:

- `org`: the organization's N, df and avgdl (the product);
- `scope`: the searched project's;
- `N`, `avgdl`, `N+df`: the project's statistics with that part taken from the organization.

Per placement and variant it prints the notes' three figures the issue watches: unanswerable questions
with a strong result, answerable questions whose note is first and strong, answerable questions answered
with nothing; and per answerable/unanswerable question the best result's BM25 evidence (median).
Writes nothing; BENCHMARKS.md quotes a run."""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.eval.cache import EmbeddingCache, cache_dir
from bench.eval.server import Api, running_server
from bench.eval.workloads import notes
from bench.eval.workloads.docs import doc_pages
from memlane.adapters.local import bm25
from memlane.domain.requests import MAX_CONTENT_CHARS

PROG = "python -m bench.relevance_placement"
_ORIGINAL = bm25.score_rows
_MINILM = __import__("memlane.recall.relevance", fromlist=["MINILM"]).MINILM


def _hybrid(part: str) -> Callable[..., Any]:
    """bm25.score_rows whose evidence statistics (`background`, the organization's) are the project's
    (`stats`), with `part` the organization's."""

    def score_rows(postings: Any, phrases: Any, own: bm25.ScopeStats, admitted: Any, doclen: Any, size: int,
                   org: bm25.ScopeStats | None = None) -> Any:
        if org is not None:
            own_avgdl = own.tokens / own.rows if own.rows else 1.0
            org_avgdl = org.tokens / org.rows if org.rows else 1.0
            org = {
                "scope": own,
                "N": bm25.ScopeStats(own.counted, org.rows, org.rows * own_avgdl),
                "avgdl": bm25.ScopeStats(own.counted, own.rows, own.rows * org_avgdl),
                "N+df": bm25.ScopeStats(org.counted, org.rows, org.rows * own_avgdl),
            }[part]
        return _ORIGINAL(postings, phrases, own, admitted, doclen, size, org)

    return score_rows


def _scaled(which: str, cap: float | None) -> Callable[..., Any]:
    """bm25.score_rows as the product's, with relevance's `bm25_scale` set for this query to the idf of
    a word found in one row of `which` statistics ("scope" or "org"), at most `cap`."""
    from dataclasses import replace

    from memlane.recall import relevance as rel

    def score_rows(postings: Any, phrases: Any, own: bm25.ScopeStats, admitted: Any, doclen: Any, size: int,
                   org: bm25.ScopeStats | None = None) -> Any:
        n = (own if which == "scope" or org is None else org).rows
        one = bm25._idf(n, 1)
        rel.MINILM = replace(_MINILM, bm25_scale=min(cap, one) if cap is not None else one)
        SEEN[which] = (own.rows, own.tokens / max(1, own.rows), org.rows if org else 0,
                       org.tokens / max(1, org.rows) if org else 0.0, one)
        return _ORIGINAL(postings, phrases, own, admitted, doclen, size, org)

    return score_rows


SEEN: dict[str, tuple[float, ...]] = {}


VARIANTS: dict[str, Callable[..., Any] | None] = {
    "org": None, "scope": _hybrid("scope"), "N": _hybrid("N"), "avgdl": _hybrid("avgdl"), "N+df": _hybrid("N+df"),
    "b: scale min(5, idf1 scope)": _scaled("scope", 5.0), "c: scale idf1 org": _scaled("org", None),
}


@contextmanager
def counted(variant: str) -> Iterator[None]:
    patch = VARIANTS[variant]
    if patch is not None:
        bm25.score_rows = patch  # type: ignore[assignment]
    try:
        yield
    finally:
        bm25.score_rows = _ORIGINAL  # type: ignore[assignment]
        from memlane.recall import relevance as rel

        rel.MINILM = _MINILM


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
        best = max((c.evidence for g in found.documents for c in g.chunks), default=0.0)
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

    for variant in VARIANTS:
        if api.services.cache is not None:  # the recall cache keeps rankings and relevance: a new generation
            api.services.cache.bump_generation(project_scope_key(api.organization_id, npid))
        with counted(variant):
            f = figures(api, npid, questions, doc_of)
        print(f"{placement:22} {variant:6} " + "  ".join(f"{k} {v:.3f}" for k, v in f.items()), flush=True)
    print("N, avgdl (project); N, avgdl (organization); idf of a word in one row:", SEEN, flush=True)


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
