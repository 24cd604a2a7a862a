"""Scoring of the recall workload suite, offline from the rankings a run recorded.

Every question of every workload is one `Record`: the ranked result ids a method returned (and,
when the server gives them, each result's `relevance`), and its targets. A target is a list of
ids any one of which satisfies it: a conversation turn is one memory; a turn of the facts workload
is every fact citing it; a code question is the memory holding its function. recall@k is the share
of a question's targets satisfied in the first k, hit@k whether any is, MRR@10 the reciprocal rank
of the first result satisfying any target. A record without targets is unanswerable: it abstains
at a floor when no result's relevance reaches it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

KS = (1, 3, 5, 10)
FLOORS = tuple(round(0.05 * i, 2) for i in range(0, 20))
FINE_FLOORS = tuple(round(0.01 * i, 2) for i in range(0, 100))  # where a default is read off the curve


@dataclass
class Record:
    workload: str
    method: str
    category: str  # "" when the data has none
    query: str
    ranked: list[str]
    targets: list[list[str]]
    relevance: list[float] | None = None
    scope: str = ""  # the project (or unit set) asked
    match: list[str] | None = None  # each result's `match` ("strong" / "weak") when the server marks it

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Record:
        return cls(**data)


def score(ranked: Sequence[str], targets: Sequence[Sequence[str]]) -> dict[str, float]:
    """recall@k, hit@k (k in KS) and MRR@10 of one answerable question."""
    if not targets:
        raise ValueError("an answerable question needs at least one target")
    position: dict[str, int] = {}
    for i, rid in enumerate(ranked, 1):
        position.setdefault(rid, i)
    first = [min((position[i] for i in t if i in position), default=None) for t in targets]
    out: dict[str, float] = {}
    for k in KS:
        found = sum(1 for r in first if r is not None and r <= k)
        out[f"recall@{k}"] = found / len(targets)
        out[f"hit@{k}"] = 1.0 if found else 0.0
    best = min((r for r in first if r is not None), default=None)
    out["mrr@10"] = 1.0 / best if best is not None and best <= 10 else 0.0
    return out


def above_floor(record: Record, floor: float) -> list[str]:
    """The ranked ids whose relevance reaches `floor` (all of them when the run had no relevance)."""
    if record.relevance is None:
        return list(record.ranked)
    return [rid for rid, rel in zip(record.ranked, record.relevance, strict=True) if rel >= floor]


METRICS = ("hit@1", "hit@3", "recall@5", "recall@10", "hit@5", "hit@10", "mrr@10")


@dataclass
class Summary:
    n: int
    values: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, key: str) -> float:
        return self.values[key]


def summarize(records: Iterable[Record], floor: float | None = None) -> Summary:
    """Averages over answerable records; with a floor, results below it are dropped first."""
    rows = [
        score(r.ranked if floor is None else above_floor(r, floor), r.targets) for r in records if r.targets
    ]
    if not rows:
        return Summary(0)
    return Summary(len(rows), {m: sum(x[m] for x in rows) / len(rows) for m in METRICS})


def abstains(record: Record, floor: float) -> bool:
    """Answered with nothing at or above the floor (an empty answer abstains at any floor)."""
    if not record.ranked:
        return True
    if record.relevance is None:
        return False
    return max(record.relevance) < floor


def abstention_share(records: Iterable[Record], floor: float) -> float | None:
    rows = [r for r in records if not r.targets]
    if not rows:
        return None
    return sum(1 for r in rows if abstains(r, floor)) / len(rows)


def has_relevance(records: Iterable[Record]) -> bool:
    return any(r.relevance is not None for r in records)


@dataclass
class CurvePoint:
    floor: float
    abstention: dict[str, float | None]  # per group of unanswerable records
    recall10: dict[str, float]  # per answerable workload, results below the floor dropped
    loss: dict[str, float]  # recall@10 at this floor minus at floor 0


def curve(
    answerable: dict[str, list[Record]], unanswerable: dict[str, list[Record]], floors: Sequence[float] = FLOORS
) -> list[CurvePoint]:
    """For each floor: the share of each unanswerable group that abstains, and each answerable
    workload's recall@10 with results below the floor removed, beside its loss against no floor."""
    base = {w: summarize(rs, 0.0) for w, rs in answerable.items()}
    out = []
    for f in floors:
        recall = {w: summarize(rs, f).values.get("recall@10", 0.0) for w, rs in answerable.items()}
        out.append(
            CurvePoint(
                floor=f,
                abstention={g: abstention_share(rs, f) for g, rs in unanswerable.items()},
                recall10=recall,
                loss={w: recall[w] - base[w].values.get("recall@10", 0.0) for w in answerable},
            )
        )
    return out


def highest_floor_within(points: Sequence[CurvePoint], allowance: float = 0.02) -> CurvePoint | None:
    """The highest floor at which no answerable workload loses more than `allowance` recall@10."""
    ok = [p for p in points if all(loss >= -allowance - 1e-9 for loss in p.loss.values())]
    return max(ok, key=lambda p: p.floor) if ok else None


@dataclass
class Interval:
    """memlane − a baseline on one metric, per question, with a paired bootstrap's 95 % interval."""

    mean: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        return f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


def paired_interval(
    ours: Sequence[Record], theirs: Sequence[Record], metric: str = "recall@10",
    resamples: int = 10_000, seed: int = 22,
) -> Interval | None:
    """How far `ours` is from `theirs` on `metric`, and how sure the data is of it.

    Both lists hold the same questions in the same order (paired by query and occurrence: a query
    asked of several projects is paired in order, as every method of a run asks them); a
    resample draws questions with replacement and averages the per-question differences, so what one
    question's luck contributes is in the interval. The interval is the 2.5th to 97.5th percentile of
    `resamples` such averages (seeded: the same records give the same interval)."""
    def keyed(records: Sequence[Record]) -> dict[tuple[str, int], Record]:
        seen: dict[str, int] = {}
        out = {}
        for r in records:
            if not r.targets:
                continue
            n = seen[r.query] = seen.get(r.query, -1) + 1
            out[(r.query, n)] = r
        return out

    a, b = keyed(ours), keyed(theirs)
    shared = [k for k in a if k in b]
    if not shared:
        return None
    diffs = np.array([score(a[k].ranked, a[k].targets)[metric] - score(b[k].ranked, b[k].targets)[metric] for k in shared])
    rng = np.random.default_rng(seed)
    means = diffs[rng.integers(0, len(diffs), size=(resamples, len(diffs)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(float(diffs.mean()), float(low), float(high), len(diffs))


def answered(record: Record) -> str:
    """What a question got back, as a person reads it: "nothing", "weak" (only results marked weak)
    or "strong" (at least one result marked strong; any result when the server marks none)."""
    if not record.ranked:
        return "nothing"
    if record.match is not None and all(m == "weak" for m in record.match):
        return "weak"
    return "strong"


def first_and_strong(record: Record) -> bool:
    """The answering document is the first result and marked strong (unmarked counts as strong)."""
    if not record.ranked or not record.targets or not any(record.ranked[0] in t for t in record.targets):
        return False
    return record.match is None or record.match[0] == "strong"
