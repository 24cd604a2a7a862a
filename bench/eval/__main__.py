"""`make eval` (`python -m bench.eval`): the recall workload suite - conversations, facts and notes,
code, documentation and abstention - each beside plain BM25 and MiniLM baselines over the same
units in the same run, through a local server on 127.0.0.1; writes BENCHMARKS.md.

Each workload's rankings are saved (bench/.cache/results/<workload>.json) and scored offline
(bench.eval.scoring), so `--report-only` rewrites BENCHMARKS.md from the last run of each.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine, write_section
from bench.eval import report
from bench.eval.cache import EmbeddingCache, cache_dir
from bench.eval.locomo import DEFAULT_DATA, shared_eval_dir
from bench.eval.scoring import Record
from bench.eval.server import Api, describe_settings, running_server
from bench.eval.workloads import NAMES, Context

PROG = "python -m bench.eval"
DEFAULT_DOCS = Path("/usr/share/doc/python3.11/html")
DEFAULT_QUERIES = shared_eval_dir() / "python-docs-queries.jsonl"


def parse_workloads(text: str) -> list[str]:
    chosen = [w.strip() for w in text.split(",") if w.strip()]
    unknown = [w for w in chosen if w not in NAMES]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"unknown workload(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(NAMES)}")
    return [w for w in NAMES if w in chosen]  # the suite's order: abstention asks the others' questions


def _percentile(values: list[float], p: float) -> float:
    """Nearest rank."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def _module(name: str) -> Any:
    import importlib

    return importlib.import_module(f"bench.eval.workloads.{name}")


def run_workloads(args: argparse.Namespace, server: Callable[..., AbstractContextManager[Api]] = running_server,
                  results_dir: Path | None = None) -> int:
    """Every selected workload through `server` (a running_server), results saved in `results_dir`
    (default: the cache's results/, what --report-only reads)."""
    from memlane.config.docsets import DocsetSettings

    selected = args.workloads
    if selected == ["abstention"]:
        print(f"{PROG}: abstention asks the questions of the other workloads of the same run: add conversations "
              "and/or code (make eval-abstention does)", file=sys.stderr)
        return 2
    if "docs" in selected and not Path(args.docs_dir).is_dir():
        print(f"{PROG}: {args.docs_dir} not found (apt-get install python3.11-doc, or pass --docs-dir)", file=sys.stderr)
        return 2
    if any(w in selected for w in ("conversations", "facts")) and not Path(args.memory).is_file():
        print(f"{PROG}: {args.memory} not found (--memory)", file=sys.stderr)
        return 2
    cache = EmbeddingCache(cache_dir(args.cache_dir) / "embeddings.sqlite3")
    results_dir = results_dir or cache_dir(args.cache_dir) / "results"
    print(f"embedding cache: {cache.path} ({len(cache)} vectors)", file=sys.stderr, flush=True)
    docset_settings = args.docset_settings = DocsetSettings.from_env(os.environ)

    def stages_off() -> AbstractContextManager[Api]:
        return server(cache, recall_neighbour_weight=0.0, context_sides="none")

    data_dir = Path(args.data_dir) if args.data_dir else None
    with server(cache, data_dir=data_dir, allow_private_network="docs" in selected and not args.skip_crawl,
                        docset_settings=docset_settings) as api:
        ctx = Context(api, args, stages_off=stages_off)
        for name in selected:
            api.recall_ms.clear()
            hits, misses = cache.hits, cache.misses
            records, info = _module(name).run(ctx)
            info.update(
                machine=machine(),
                date=f"{datetime.now(UTC):%Y-%m-%d}",
                load_average=os.getloadavg()[1],
                embedder=api.embedder.id,
                settings=describe_settings(api.settings),
                recall_p50=_percentile(api.recall_ms, 50),
                recall_p95=_percentile(api.recall_ms, 95),
                recalls=len(api.recall_ms),
                cache_hits=cache.hits - hits,
                cache_misses=cache.misses - misses,
            )
            if name == "abstention":
                info["floor"] = _floor(api)
            report.save_results(results_dir, name, records, info)
            print(f"{name}: done ({len(records)} records; embeddings {info['cache_hits']} from the cache, "
                  f"{info['cache_misses']} computed)", file=sys.stderr, flush=True)
            print_summary(name, records)
    cache.close()
    return 0


def _floor(api: Api) -> float | None:
    """The floor the server applies by default, when its recall answer names one."""
    r = api.client.post("/v3/recall", json={"query": "floor", "limit": 1})
    value = r.json().get("floor") if r.status_code == 200 else None
    return float(value) if isinstance(value, int | float) else None


def print_summary(name: str, records: list[Record]) -> None:
    from bench.eval.scoring import summarize

    for method in ("memlane", "memlane-floor", "stages-off", "bm25", "minilm"):
        s = summarize(r for r in records if r.method == method)
        if s.n:
            print(f"  {name:<14} {method:<11} n {s.n:>4}  R@10 {s['recall@10']:.3f}  H@10 {s['hit@10']:.3f}  "
                  f"MRR@10 {s['mrr@10']:.3f}", flush=True)


def write_report(args: argparse.Namespace) -> None:
    results = report.load_results(cache_dir(args.cache_dir) / "results")
    if not results:
        print(f"{PROG}: no results in {cache_dir(args.cache_dir) / 'results'}: run the suite first", file=sys.stderr)
        return
    path = Path(args.write)
    first = next(iter(results.values()))[1]
    write_section(path, "eval", report.summary_section(results, "make eval", first.get("machine", machine()),
                                                       first.get("date", "?")))
    sections = {
        "conversations": ("memory", report.conversations_section),
        "facts": ("eval-facts", report.facts_section),
        "code": ("eval-code", report.code_section),
        "notes": ("eval-notes", report.notes_section),
    }
    for workload, (section, render) in sections.items():
        if workload in results:
            write_section(path, section, render(*results[workload]))
    if "docs" in results:
        from bench.eval.workloads import docs

        records, info = results["docs"]
        if info.get("crawl"):  # else (--skip-crawl) the docsets section keeps its last figures
            body = docs.report_markdown(docs.CrawlReport(**info["crawl"]), docs.retrieve_results(records),
                                        info["queries"], "make eval-docs", info["docset_settings"],
                                        info["crawl_load_average"], records, info.get("retrieve_floor"))
            write_section(path, "docsets", body)
        memory_records = [r for r in records if r.workload == "docs"]
        if memory_records:
            write_section(path, "eval-docs-memory", report.docs_memory_section(memory_records, info))
    if "abstention" in results:
        answerable: dict[str, list[Record]] = {w: results[w][0] for w in ("conversations", "facts", "code", "docs", "notes")
                                               if w in results}
        write_section(path, "eval-abstention", report.abstention_section(answerable, *results["abstention"]))
    print(f"wrote the suite's sections of {path}", flush=True)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workloads", type=parse_workloads, default=list(NAMES),
                   help=f"comma-separated, from {', '.join(NAMES)} (default: all)")
    p.add_argument("--memory", metavar="FILE", default=str(DEFAULT_DATA.resolve()),
                   help="LoCoMo-style JSON (default: ../shared/eval/locomo-dev.json)")
    p.add_argument("--notes", metavar="FILE", default=None,
                   help="personal notes JSONL (default: ../shared/eval/personal-notes-dev.jsonl)")
    p.add_argument("--conversation", action="append", metavar="ID", help="only this conversation (repeatable)")
    p.add_argument("--stdlib", default=None, help="the Python sources to sample code from (default: this Python's)")
    p.add_argument("--code-sample", dest="code_sample", type=int, default=300, help="functions in the code sample")
    p.add_argument("--docs-dir", default=str(DEFAULT_DOCS), help="HTML documentation to crawl")
    p.add_argument("--queries", default=str(DEFAULT_QUERIES.resolve()), help="JSONL: query, relevant pages")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the docs crawl")
    p.add_argument("--skip-crawl", dest="skip_crawl", action="store_true",
                   help="docs: only the pages saved as memories, not the crawl and /retrieve (the slow part)")
    p.add_argument("--docs-port", type=int, default=0, help="port for the docs server (default: any free)")
    p.add_argument("--data-dir", dest="data_dir", default=None, help="keep the server's data here (default: temporary)")
    p.add_argument("--cache-dir", dest="cache_dir", default=None,
                   help="embedding cache and results (default: $MEMLANE_EVAL_EMBED_CACHE or bench/.cache)")
    p.add_argument("--write", metavar="BENCHMARKS.md", help="write the figures into this file")
    p.add_argument("--report-only", action="store_true", help="only rewrite --write from the saved results")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description="The recall workload suite (what `make eval` runs).")
    add_arguments(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.report_only:
        if not args.write:
            p.error("--report-only needs --write")
        write_report(args)
        return 0
    code = run_workloads(args)
    if code == 0 and args.write:
        write_report(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
