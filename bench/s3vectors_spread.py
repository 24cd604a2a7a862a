"""`python -m bench.s3vectors_spread`: how much Amazon S3 Vectors' own BM25 could move memlane's recall
figures. Ranking quality on the real service is not measured here (no AWS); what is measured is the
spread between two ways the service might count BM25's statistics, on the recall suite (bench.eval)
run through S3VectorsIndex and the fake QueryVectors of tests/s3vectors_fake.py (on moto):

* `index`: N, df and avgdl over every vector of the index. memlane keeps an index per organization,
  so this is the organization's statistics: what a per-index inverted index (Lucene's, OpenSearch's)
  counts, and what the embedded default reads as a candidate's `evidence`.
* `scope`: over the vectors the request's filter admits (the projects searched, the recall filters), as
  a service that pre-filters (ENHANCED mode) and then scores only the admitted vectors would count. The
  embedded default counts its fused `score` this way (over the scope, filters aside).

Everything else is the same in both runs: the fake's analyzer (Porter stems, Lucene's English stop
words), memlane's fusion, relevance and floor. The suite runs in one organization with a project per
conversation (or workload), so `index` mixes every workload's words into each one's statistics.
With `--embedded`, the embedded default runs too, for reference (its own BM25, FTS5's tokenizer).

Writes the `s3vectors-spread` section of BENCHMARKS.md with --write. Results of each run are kept in
the eval cache (results-s3vectors-<statistics>/, results-embedded-reference/).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine, write_section
from bench.eval import report
from bench.eval.__main__ import add_arguments, run_workloads
from bench.eval.cache import cache_dir
from bench.eval.scoring import Record, abstains, paired_interval, summarize
from bench.eval.server import Api, running_server

PROG = "python -m bench.s3vectors_spread"
MODES = ("index", "scope")
DEFAULT_WORKLOADS = ["conversations", "facts", "code", "abstention"]


@contextmanager
def _aws() -> Iterator[None]:
    """moto in this process, with credentials that can reach nothing else."""
    from moto import mock_aws

    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                            "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL")}
    os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1"})
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
        os.environ.pop(name, None)
    try:
        with mock_aws():
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def s3vectors_server(statistics: str) -> Any:
    """A running_server whose search index is S3VectorsIndex over a new vector bucket in moto."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the fake lives with the tests
    from s3vectors_fake import FakeS3Vectors

    from memlane.adapters.aws._boto import new_client
    from memlane.adapters.aws.s3vectors_index import S3VectorsIndex

    fake = FakeS3Vectors(new_client("s3vectors"), statistics=statistics)

    def server(cache: Any, **kwargs: Any) -> AbstractContextManager[Api]:
        bucket = f"memlane-spread-{uuid.uuid4().hex[:12]}"
        fake.create_vector_bucket(vectorBucketName=bucket)
        return running_server(cache, search_index=lambda embedder: S3VectorsIndex(
            fake, bucket, embedder.dimension, embedder_id=embedder.id), **kwargs)

    return server


def run(args: argparse.Namespace) -> dict[str, Path]:
    """Each run's results directory, by run name."""
    base = cache_dir(args.cache_dir)
    dirs: dict[str, Path] = {}
    for mode in args.statistics:
        dirs[mode] = base / f"results-s3vectors-{mode}"
        if not args.report_only:
            with _aws():
                code = run_workloads(args, server=s3vectors_server(mode), results_dir=dirs[mode])
            if code:
                raise SystemExit(code)
    if args.embedded:
        dirs["embedded"] = base / "results-embedded-reference"
        if not args.report_only and run_workloads(args, results_dir=dirs["embedded"]):
            raise SystemExit(2)
    return dirs


def _memlane(records: list[Record]) -> list[Record]:
    return [r for r in records if r.method == "memlane"]


def section(dirs: dict[str, Path], command: str) -> str:
    results = {name: report.load_results(path) for name, path in dirs.items()}
    first = next(iter(results["index"].values()))[1]
    lines = [
        "## S3 Vectors: how far the service's BM25 statistics can move recall (issue 37)",
        "",
        f"Machine: {first.get('machine', machine())}. Date: {first.get('date', f'{datetime.now(UTC):%Y-%m-%d}')}. "
        f"Command: `{command}`.",
        "The recall suite (bench.eval) through a local server whose search index is `S3VectorsIndex` on moto, "
        "QueryVectors from tests/s3vectors_fake.py; the fake's BM25 counted two ways: **index** (N, df and "
        "avgdl over the organization's whole index: the suite's every workload and project) and **scope** "
        "(over the vectors the request's filter admits: the project asked). Same analyzer, same vectors, "
        "same fusion, relevance and floor; the spread is what the service's choice alone could move. "
        "Per question differences are paired (bootstrap 95 % interval, 10,000 resamples).",
        "",
        "| workload | questions | recall@10 index | recall@10 scope | Δ recall@10 [95 % CI] | MRR@10 index | "
        "MRR@10 scope | Δ MRR@10 [95 % CI] |" + (" recall@10 embedded default (same harness) |" if "embedded" in results else ""),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if "embedded" in results else ""),
    ]
    for workload in results["index"]:
        if workload == "abstention" or workload not in results.get("scope", {}):
            continue
        a, b = _memlane(results["index"][workload][0]), _memlane(results["scope"][workload][0])
        sa, sb = summarize(a), summarize(b)
        row = (f"| {workload} | {sa.n} | {sa['recall@10']:.3f} | {sb['recall@10']:.3f} | "
               f"{_delta(b, a, 'recall@10')} | {sa['mrr@10']:.3f} | {sb['mrr@10']:.3f} | {_delta(b, a, 'mrr@10')} |")
        if "embedded" in results and workload in results["embedded"]:
            row += f" {summarize(_memlane(results['embedded'][workload][0]))['recall@10']:.3f} |"
        lines.append(row)
    lines += _abstention(results)
    return "\n".join(lines) + "\n"


def _delta(scope: list[Record], index: list[Record], metric: str) -> str:
    interval = paired_interval(scope, index, metric)
    return str(interval) if interval is not None else "–"


def _abstention(results: dict[str, dict[str, tuple[list[Record], dict[str, Any]]]]) -> list[str]:
    if not all("abstention" in r for r in results.values()):
        return []
    out = ["", "Abstention (the questions asked of a project that cannot answer them) at each run's default floor:", ""]
    for name, runs in results.items():
        records, info = runs["abstention"]
        floor = info.get("floor")
        unanswerable = [r for r in records if not r.targets and r.method == "memlane"]
        if floor is None or not unanswerable:
            continue
        empty = sum(1 for r in unanswerable if abstains(r, floor))
        out.append(f"- {name}: {empty / len(unanswerable):.1%} of {len(unanswerable)} got nothing (floor {floor})")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    add_arguments(p)
    p.set_defaults(workloads=DEFAULT_WORKLOADS)
    p.add_argument("--statistics", type=lambda s: [m for m in s.split(",") if m], default=list(MODES),
                   help="the fake's BM25 statistics, comma-separated: index, scope (both by default)")
    p.add_argument("--embedded", action="store_true", help="also run the embedded default, for reference")
    args = p.parse_args(argv)
    if set(args.statistics) != set(MODES):
        p.error("--statistics: the spread needs both index and scope")
    logging.basicConfig(level=logging.WARNING)
    dirs = run(args)
    if args.write:
        write_section(Path(args.write), "s3vectors-spread", section(dirs, f"{PROG} --write BENCHMARKS.md"))
        print(f"wrote the s3vectors-spread section of {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
