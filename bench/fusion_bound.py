"""`python -m bench.fusion_bound --record FILE`: how far any fusion of the two legs could go.

Ranking work on memlane's recall reweights two kinds of evidence a candidate has: its cosine to the
query (the vector leg) and its BM25 (the text leg). Before tuning a fusion, this says whether a
better one exists. A question's evidence document that at least ten other candidates beat on both
legs (each of its chunks met by a chunk of the other document with a cosine and a BM25 at least as
high, one of them higher) is below those ten in every ranking that grows with both legs: any positive
weights, any monotone rescaling of either leg (BM25 over the batch maximum, a code chunk's own
evidence), even weights chosen per question by an oracle. So the share of evidence that is *not* so
beaten bounds recall@10 of every such fusion from above.

What it does not bound: a stage that reads something else (the neighbouring turns of a conversation,
memlane.recall.neighbours) and a third kind of evidence (a reranker, another embedder). A target out of
the fusion's reach needs one of those.

The data is `python -m bench.calibrate_floor`'s recording (its answerable questions: LoCoMo dev
conversations, each asked of its own project, and the recall suite's code workload), where every
candidate of recall's pipeline carries both legs' evidence (each leg scores the other's candidates,
memlane.ports.SearchIndex.search). The recording holds candidates only (each leg's best 50 and the
stages' picks), and of each document its best few chunks (three). Both only loosen the bound: a
document left out would have to beat the evidence to matter, and a dropped chunk can only help it;
evidence whose document shows as many chunks as are kept may have more, so it is counted within reach.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine, write_section
from bench.eval.locomo import CATEGORIES
from bench.eval.scoring import score

PROG = "python -m bench.fusion_bound"
K = 10

Evidence = tuple[float, float]  # (cosine, BM25) of one chunk


def beats(mine: Sequence[Evidence], theirs: Sequence[Evidence]) -> bool:
    """Whether a document with chunks `mine` outranks one with chunks `theirs` under every fusion that
    grows with both legs: each of their chunks is met by one of ours at least as high on both legs and
    higher on one (a document ranks by its best chunk)."""
    return bool(mine) and all(
        any(c >= tc and b >= tb and (c > tc or b > tb) for c, b in mine) for tc, tb in theirs
    )


def reachable(documents: dict[str, list[Evidence]], target: str, k: int = K, shown: int | None = None) -> bool:
    """Whether some fusion growing with both legs could put `target` in the first `k`: fewer than `k`
    candidates beat it on both legs. `shown`: the most chunks the recording keeps of a document (its
    best few by the product's fusion); a target with that many may have more, and another fusion
    could rank it by one of those, so it is counted within reach."""
    mine = documents.get(target)
    if not mine:
        return False
    if shown is not None and len(mine) >= shown:
        return True
    beaten_by = 0
    for doc, chunks in documents.items():
        if doc != target and beats(chunks, mine):
            beaten_by += 1
            if beaten_by >= k:
                return False
    return True


@dataclass
class Row:
    workload: str
    questions: int
    product: float  # recall@10 of the recorded ranking (recall's pipeline, its stages, no floor)
    vector: float  # recall@10 of the candidates by cosine alone (the vector leg: MiniLM's ranking)
    bound: float  # the most recall@10 any fusion growing with both legs can reach
    out_of_reach: list[str]  # questions whose evidence no such fusion brings into the first ten


def _documents(record: dict[str, Any]) -> dict[str, list[Evidence]]:
    return {doc: [(float(c[0]), float(c[1])) for c in chunks] for doc, chunks in record["documents"]}


def bound_row(workload: str, records: Iterable[dict[str, Any]], k: int = K, shown: int | None = None) -> Row:
    items = list(records)
    product = vector = ceiling = 0.0
    out: list[str] = []
    for r in items:
        documents = _documents(r)
        targets = [[e] for e in r["evidence"]]
        product += score([doc for doc, _ in r["documents"]][:k], targets)[f"recall@{k}"]
        by_cosine = sorted(documents, key=lambda d: (-max(c for c, _ in documents[d]), d))
        vector += score(by_cosine[:k], targets)[f"recall@{k}"]
        reach = sum(1 for e in r["evidence"] if reachable(documents, e, k, shown)) / len(r["evidence"])
        ceiling += reach
        if reach == 0.0:
            out.append(r.get("query") or r.get("question") or "")
    n = max(1, len(items))
    return Row(workload, len(items), product / n, vector / n, ceiling / n, out)


def rows(data: dict[str, Any], k: int = K) -> list[Row]:
    answerable = data["answerable"]
    # recordings made before the field: recall's default of three chunks a document
    shown = int(data.get("chunks_per_document", 3))
    out = [bound_row("conversations", answerable, k, shown)]
    for number, name in CATEGORIES.items():
        mine = [r for r in answerable if r.get("category") == number]
        if mine:
            out.append(bound_row(f"conversations: {name}", mine, k, shown))
    code = (data.get("code") or {}).get("answerable")
    if code:
        out.append(bound_row("code", code, k, shown))
    return out


def markdown(data: dict[str, Any], table: list[Row], command: str) -> str:
    lines = [
        "## Recall: how far any fusion of the two legs could go",
        "",
        f"Generated by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}, from "
        f"`python -m bench.calibrate_floor`'s recording (embedder `{data.get('embedder', '?')}`). A question's "
        f"evidence that at least {K} other candidates beat on both legs (cosine and BM25 at least as high, one "
        f"higher) is below them in every ranking that grows with both legs, whatever the weights, even chosen per "
        f"question; the bound is the share of evidence not so beaten (bench/fusion_bound.py; evidence whose document "
        "shows as many chunks as the recording keeps may have a stronger one and counts as within reach). Stages that read "
        "something else (the neighbouring turns) and a third kind of evidence (a reranker) are not bounded by it.",
        "",
        f"| workload | questions | memlane recall@{K} (no floor) | vector leg alone (MiniLM over what memlane embeds) | any fusion of the two legs: at most |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in table:
        lines.append(f"| {r.workload} | {r.questions} | {r.product:.3f} | {r.vector:.3f} | {r.bound:.3f} |")
    code = next((r for r in table if r.workload == "code"), None)
    if code:
        lines += [
            "",
            f"Code: {len(code.out_of_reach)} of {code.questions} functions are out of every such fusion's first "
            f"{K}, so no fusion of these two legs reaches more than {code.bound:.3f} recall@{K} "
            f"(MiniLM alone: {code.vector:.3f}): " + "; ".join(f"\"{_short(q)}\"" for q in code.out_of_reach) + ".",
        ]
    return "\n".join(lines) + "\n"


def _short(query: str, chars: int = 90) -> str:
    return query if len(query) <= chars else query[: chars - 1].rstrip() + "…"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description="The most recall@10 any fusion of the two legs can reach, "
                                 "from bench.calibrate_floor's recording.")
    ap.add_argument("--record", metavar="JSON", required=True, help="python -m bench.calibrate_floor --record's file")
    ap.add_argument("--write", metavar="BENCHMARKS.md", help="write the table into this file's section")
    args = ap.parse_args(argv)
    data = json.loads(Path(args.record).read_text())
    table = rows(data)
    for r in table:
        print(f"{r.workload}: {r.questions} questions, recall@{K} {r.product:.3f}, vector leg {r.vector:.3f}, "
              f"any fusion at most {r.bound:.3f}")
    if args.write:
        write_section(Path(args.write), "fusion-bound", markdown(data, table, f"{PROG} --record FILE"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
