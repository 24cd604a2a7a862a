"""memlane's own overhead of the optional rerank stage (issue 22 item 5), with the model stubbed out.

What a deployment pays for the stage is the Bedrock Rerank call (its latency and price: docs/deploy.md,
from AWS's pages) plus what memlane does around it: reading the top-N chunks' texts from the metadata
store, building the request, botocore's parameter validation and response parsing, mixing the scores
and re-sorting. This measures only the second part, here:

* recall over a local stack (SQLite, hashing embedder: the legs are not what is measured) with the
  recall cache off, without the stage, then with the stage and
  - an instant in-process reranker (the stage's own work: texts, mixing, sorting), and
  - memlane's BedrockReranker over a real botocore client whose Rerank call is answered by
    botocore's Stubber (adds the adapter, botocore's validation and the response mapping; no network);
* for top_n 30 (the default) and 100 (the most one billed query covers).

    python -m bench.rerank_overhead [--memories 1000] [--queries 200] [--write BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine, p95, write_section

WORDS = [
    "ferry", "island", "budget", "review", "garden", "tomato", "lease", "landlord", "notice", "deploy",
    "bucket", "staging", "token", "meeting", "invoice", "travel", "hotel", "flight", "doctor", "medicine",
    "recipe", "lemon", "cake", "running", "shoes", "marathon", "keyboard", "python", "module", "release",
    "backup", "server", "latency", "cache", "vector", "index", "search", "query", "answer", "paper", "draft",
]


class InstantReranker:
    """Scores by length: in process, no I/O (the stage's own work only)."""

    id = "bench/instant"

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        return [min(1.0, len(t) / 500) for t in texts]


class HashingEmbedder:
    """Words hashed into 256 dimensions: instant and deterministic (the legs are not what is measured)."""

    id = "bench/hash/256"
    dimension = 256

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dimension
        for word in text.lower().split():
            v[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        return [x / norm for x in v]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def stubbed_bedrock(top_n: int, calls: int) -> tuple[Any, Any]:
    """memlane's BedrockReranker over a botocore client answered by the Stubber."""
    import boto3
    from botocore.stub import Stubber

    from memlane.adapters.aws.bedrock_reranker import AMAZON_RERANK_V1, BedrockReranker

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    client = boto3.client("bedrock-agent-runtime", region_name="us-west-2")
    stubber = Stubber(client)
    rng = random.Random(7)
    for _ in range(calls):
        results = [{"index": i, "relevanceScore": rng.random()} for i in range(top_n)]
        rng.shuffle(results)
        stubber.add_response("rerank", {"results": results})
    stubber.activate()
    return BedrockReranker(AMAZON_RERANK_V1, "us-west-2", client=client), stubber


def build_stack(memories: int, data_dir: Path) -> tuple[Any, Any]:
    from memlane.config import Settings
    from memlane.domain.principal import Principal
    from memlane.domain.requests import MemoryIn
    from memlane.ingest.summarize import LocalSummarizer
    from memlane.local.compose import build_local
    from memlane.services.keys import ensure_organization
    from memlane.services.memory import save_memory

    stack = build_local(Settings(data_dir=data_dir), embedder=HashingEmbedder(), summarizer=LocalSummarizer())
    org, _ = ensure_organization(stack.metadata, "bench")
    who = Principal(organization_id=org.id, key_id="bench")
    rng = random.Random(11)
    for i in range(memories):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 80)))
        save_memory(stack.services, who, MemoryIn(content=f"note {i}: {text}"), inline=True)
    return stack, who


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _row(name: str, top_n: str, ms: list[float], base: list[float] | None, note: str) -> str:
    ms = sorted(ms)
    added = "" if base is None else f"{statistics.median(ms) - statistics.median(base):+.2f}"
    return f"| {name} | {top_n} | {statistics.median(ms):.2f} | {p95(ms):.2f} | {added} | {note} |"


def run(memories: int, queries: int) -> str:
    from memlane.domain.requests import RecallIn
    from memlane.ports import Rerank, SearchScope
    from memlane.recall.fusion import fuse_scores, group_by_document
    from memlane.recall.rerank import RerankStage
    from memlane.recall.service import recall

    rng = random.Random(3)
    qs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6))) for _ in range(queries)]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        stack, who = build_stack(memories, Path(tmp) / "data")
        built_s = time.perf_counter() - started
        try:
            base = dataclasses.replace(stack.services, cache=None)  # every recall ranks
            for q in qs[:20]:  # warm up SQLite's pages and the code
                recall(base, who, RecallIn(query=q, limit=10))

            # 1. The stage alone, on the fused ranking of each query; the configurations take turns
            #    on the same ranking, so a busy machine slows them alike.
            svc = base
            scope = SearchScope(organization_id=who.organization_id,
                                project_ids=tuple(p.id for p in svc.metadata.list_projects(who.organization_id)))
            now = svc.clock.now()

            def texts(ids: Sequence[str]) -> dict[str, str]:
                return {c.id: c.content for c in svc.metadata.get_chunks_by_id(who.organization_id, list(ids))}

            stages: dict[str, tuple[RerankStage, Any]] = {}
            for top_n in (30, 100):
                stages[f"instant/{top_n}"] = (RerankStage(InstantReranker(), top_n, 0.7), None)
                reranker, stubber = stubbed_bedrock(top_n, len(qs))
                stages[f"bedrock/{top_n}"] = (RerankStage(reranker, top_n, 0.7), stubber)
            alone: dict[str, list[float]] = {k: [] for k in stages}
            sent: dict[str, int] = {}
            fused_ms: list[float] = []
            for q in qs:
                t0 = time.perf_counter()
                legs = svc.index.search(scope, q, svc.embedder.embed_query(q), svc.settings.candidate_k)
                groups = group_by_document(fuse_scores(legs, now, svc.settings.fusion),
                                           svc.settings.max_chunks_per_document)
                fused_ms.append(_ms(t0))
                for name, (stage, _) in stages.items():
                    t0 = time.perf_counter()
                    _, report = stage.apply(q, groups, texts)
                    alone[name].append(_ms(t0))
                    assert report.status == "applied", report
                    sent[name] = report.reranked
            for _, stubber in stages.values():
                if stubber is not None:
                    stubber.deactivate()

            # 2. Recall end to end (POST /v3/recall's service call), taking turns likewise.
            reranker, stubber = stubbed_bedrock(30, len(qs))
            configs = {
                "none": base,
                "instant": dataclasses.replace(base, rerank=Rerank(InstantReranker(), top_n=30)),
                "bedrock": dataclasses.replace(base, rerank=Rerank(reranker, top_n=30)),
            }
            whole: dict[str, list[float]] = {k: [] for k in configs}
            for q in qs:
                for name, config in configs.items():
                    t0 = time.perf_counter()
                    recall(config, who, RecallIn(query=q, limit=10))
                    whole[name].append(_ms(t0))
            stubber.deactivate()
        finally:
            stack.close()
    lines = [
        "## AWS: the rerank stage's own overhead (stubbed model)",
        "",
        f"Machine: {machine()}. Date: {datetime.now(UTC).date()}. Load average {os.getloadavg()[0]:.1f} "
        "(a shared machine: medians are the figures to read).",
        "",
        "Reproduce: `make bench-rerank` (`python -m bench.rerank_overhead --write BENCHMARKS.md`).",
        "",
        f"{memories} memories in a local stack (SQLite, hashing embedder), {queries} queries, built in "
        f"{built_s:.0f} s. **The model is stubbed:** the Bedrock Rerank call's own latency and price are not in "
        "these figures (docs/deploy.md, \"Rerank (optional)\", says what AWS publishes). Measured is memlane's work "
        "around it: reading the top-N chunks' texts from the metadata store, building the request, botocore's "
        "parameter validation and response parsing (the Stubber answers where the network would), mixing and "
        "re-sorting. \"instant\" is an in-process reranker (the stage alone); \"Bedrock\" is memlane's "
        "BedrockReranker over a real botocore client. Configurations take turns query by query.",
        "",
        "The stage alone, on each query's fused ranking:",
        "",
        "| stage | top_n | p50 ms | p95 ms | vs instant p50 | documents sent (last query) |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
        _row("fusion before it (both legs, fuse, group)", "-", fused_ms, None, "-"),
    ]
    for top_n in (30, 100):
        lines.append(_row("instant reranker", str(top_n), alone[f"instant/{top_n}"], None, str(sent[f"instant/{top_n}"])))
        lines.append(_row("BedrockReranker + botocore (Stubber)", str(top_n), alone[f"bedrock/{top_n}"],
                          alone[f"instant/{top_n}"], str(sent[f"bedrock/{top_n}"])))
    lines += [
        "",
        "Recall end to end (limit 10, recall cache off, top_n 30):",
        "",
        "| recall | top_n | p50 ms | p95 ms | added p50 ms | |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
        _row("no rerank stage", "-", whole["none"], None, ""),
        _row("stage, instant reranker", "30", whole["instant"], whole["none"], ""),
        _row("stage, BedrockReranker + botocore (Stubber)", "30", whole["bedrock"], whole["none"], ""),
        "",
        "With top_n 100 fewer documents than 100 are sent: recall fetches max(candidate_k 50, 5 × limit) "
        "candidates per leg, so the stage sends every fused document there is.",
        "",
        f"Reading: memlane's own work around one Rerank call is {statistics.median(alone['bedrock/30']):.1f} ms p50 "
        f"at top_n 30 (the stage alone) and adds "
        f"{statistics.median(whole['bedrock']) - statistics.median(whole['none']):.1f} ms p50 to a recall; the "
        "model call itself, not measured here, comes on top of that.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rerank_overhead", description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--write", type=Path, help="replace the section in this file (BENCHMARKS.md)")
    args = parser.parse_args(argv)
    text = run(args.memories, args.queries)
    print(text)
    if args.write:
        write_section(args.write, "rerank-overhead", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
