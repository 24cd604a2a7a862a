"""`python -m bench.context_docs_eval`: the context pack's documentation beside /retrieve (issue 33 item 4).

The Python 3.11 HTML docs are crawled through `POST /index` (as the docs workload of bench.eval does),
then each question of python-docs-queries.jsonl is asked twice:

- `POST /retrieve` as a client asks by default (topK 5, 3 chunks a page, the documentation floor);
- `POST /v3/context` for documentation only (`projects: []`, the docset, a budget of 8,000 tokens).

Scored at page level as the docs workload scores /retrieve (../shared/eval/README.md): the distinct
pages of the pack's pieces, best first; hit@5 and MRR@10. `agree@5`: the share of questions whose
pack puts /retrieve's five results first, in /retrieve's order (asked both with `minRelevance` 0 so
no floor cuts either). `--data-dir` keeps the crawled server data, so a second run (another build)
reuses the same index without crawling again.

Prints one JSON line (BENCHMARKS.md records it by hand, with the build it ran on).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine
from bench.eval.cache import EmbeddingCache, cache_dir
from bench.eval.locomo import shared_eval_dir
from bench.eval.server import Api, running_server
from bench.eval.workloads.docs import DEFAULT_DOCS, StaticSite, crawl, load_queries

PROG = "python -m bench.context_docs_eval"
BUDGET = 8_000


def _pages(urls: list[str], prefix: str) -> list[str]:
    return list(dict.fromkeys(u.removeprefix(prefix) for u in urls))


def _mrr(pages: list[str], relevant: set[str]) -> float:
    return next((1 / (i + 1) for i, p in enumerate(pages[:10]) if p in relevant), 0.0)


def _docset(api: Api, site_url: str, timeout: float) -> str:
    docsets = api.client.get("/status").json()["docsets"]
    if docsets:  # crawled by an earlier run into the same --data-dir
        return str(docsets[0]["id"])
    report = crawl(api.client, site_url + "/", "/index.html", timeout)
    print(f"crawl: {report.pages_indexed} pages, {report.chunks} chunks in {report.seconds:.0f} s", file=sys.stderr)
    return report.docset_id


def _ask(api: Api, docset_id: str, query: str, floor: float | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    body: dict[str, Any] = {"query": query, "docsetIds": [docset_id], "formatSnippets": False}
    pack: dict[str, Any] = {"query": query, "projects": [], "docsets": [docset_id], "budget": BUDGET,
                            "budget_unit": "tokens"}
    if floor is not None:
        body["minRelevance"] = pack["min_relevance"] = floor
    r = api.client.post("/retrieve", json=body)
    p = api.client.post("/v3/context", json=pack)
    r.raise_for_status()
    p.raise_for_status()
    return r.json()["results"], p.json()["pieces"]


def run(args: argparse.Namespace) -> dict[str, Any]:
    queries = load_queries(Path(args.queries))
    cache = EmbeddingCache(cache_dir(args.cache_dir) / "embeddings.sqlite3")
    hit5 = mrr10 = agree = 0.0
    with StaticSite(Path(args.docs_dir), args.docs_port) as site, running_server(
            cache, data_dir=Path(args.data_dir), allow_private_network=True) as api:
        docset_id = _docset(api, site.url, args.timeout)
        prefix = site.url.rstrip("/") + "/"
        for q in queries:
            relevant = set(q["relevant"])
            _, pieces = _ask(api, docset_id, q["query"], None)
            pages = _pages([p["url"] or "" for p in pieces], prefix)
            hit5 += any(p in relevant for p in pages[:5])
            mrr10 += _mrr(pages, relevant)
            results, pieces = _ask(api, docset_id, q["query"], 0.0)
            agree += [r["chunkId"] for r in results] == [p["chunk_id"] for p in pieces[:len(results)]]
    n = len(queries)
    return {"date": f"{datetime.now(UTC):%Y-%m-%d}", "machine": machine(), "build": args.build, "questions": n,
            "context docs hit@5": round(hit5 / n, 3), "context docs MRR@10": round(mrr10 / n, 3),
            "agree@5 with /retrieve": round(agree / n, 3)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("--docs-dir", default=str(DEFAULT_DOCS))
    p.add_argument("--docs-port", type=int, default=0,
                   help="a fixed port, so a second run's stored page URLs match (default: any free)")
    p.add_argument("--queries", default=str(shared_eval_dir() / "python-docs-queries.jsonl"))
    p.add_argument("--data-dir", required=True, help="the server's data (kept: a second run reuses the crawl)")
    p.add_argument("--cache-dir", default=None)
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--build", default="", help="what ran (a commit), for the printed line")
    args = p.parse_args(argv)
    print(json.dumps(run(args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
