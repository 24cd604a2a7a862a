"""`python -m bench.calibrate_relevance --record FILE`: recall's two thresholds, calibrated on every
workload at once (issue 35).

Reads `python -m bench.recall_record`'s recording (every workload's candidates, in rank order, with
what relevance reads) and applies memlane's own relevance (memlane.recall.relevance, the embedder's
calibration) offline, so any floor and strong threshold is tried in seconds. Per workload:

- answerable questions: recall@10 once documents below the floor are dropped (the next move up, as
  /v3/recall does), the share answered with nothing, and the share whose answer is first and strong;
- unanswerable questions (LoCoMo asked of another conversation, code of the other half of the library,
  the personal notes' own unanswerable questions, LoCoMo asked of the personal notes) and nonsense:
  the share answered with nothing, and the share with a strong result.

The rule (one for every store): the floor is the highest at which no workload has more than EMPTY of
its answerable questions answered with nothing (a stored answer is almost never hidden; above that,
the higher the floor the more nonsense gets nothing); the strong threshold is the lowest at which no group of
questions about people that the store cannot answer gets a strong result more than UNANSWERABLE_STRONG
of the time, and nonsense never does more than NONSENSE_STRONG. Code asked of the other half of the
library is reported, not ruled: another function doing the same is a real, not a noisy, answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine, write_section
from bench.eval.locomo import shared_eval_dir

PROG = "python -m bench.calibrate_relevance"
EMPTY = 0.05
UNANSWERABLE_STRONG = 0.25
NONSENSE_STRONG = 0.01
FLOORS = [round(0.02 * i, 2) for i in range(0, 26)]
STRONGS = [round(0.05 * i, 2) for i in range(6, 19)]
RULED = ("conversations: another conversation", "notes: unanswerable", "notes: another person")


@dataclass
class Asked:
    group: str  # "<workload>: answerable" or an unanswerable / nonsense group
    targets: list[list[str]]
    # rank order, each with its relevance and the relevance of its chunks that hold every name the
    # question gives (memlane.recall.names: only these can make it strong; 0 when none does)
    documents: list[tuple[str, float, float]]


def _strong(relevance: float, named: float, floor: float, strong: float) -> bool:
    """As memlane marks it: a chunk lacking a name is held at Calibration.named_cap, max(floor,
    strong − NAMED_MARGIN), so it is strong only where that cap reaches the strong threshold."""
    from memlane.recall.relevance import NAMED_MARGIN

    cap = max(floor, strong - NAMED_MARGIN)
    return max(named, min(relevance, cap)) >= strong - 1e-9


def _group(q: dict[str, Any], own_nonsense: set[str]) -> str:
    w, g = q["workload"], q["group"]
    if g == "answerable":
        return f"{w}: answerable"
    if g == "nonsense":
        return "notes: its own nonsense" if w == "notes" and q["query"] in own_nonsense else "nonsense"
    if w == "conversations":
        return "conversations: another conversation"
    if w == "code":
        return "code: the other half"
    return "notes: another person" if q["category"] == "another person" else "notes: unanswerable"


def relevances(data: dict[str, Any], notes_file: Path | None = None) -> list[Asked]:
    """Each recorded query with its documents' relevance, as memlane computes it today."""
    from memlane.recall import relevance as rel

    c = rel.calibration_for(data["embedder"])
    own: set[str] = set()
    if notes_file is not None and notes_file.is_file():
        for line in notes_file.read_text(encoding="utf-8").splitlines():
            item = json.loads(line) if line.strip() else {}
            if item.get("kind") == "nonsense":
                own.add(item["query"])
    out = []
    for q in data["queries"]:
        best = tuple((doc, max((ch[0] for ch in chunks), default=0.0)) for doc, _, chunks in q["documents"])
        background = rel.Background(tuple(q["background"]), best) if q.get("background") else None
        docs = []
        for doc, _score, chunks in q["documents"]:
            # a title holding every word of the question, or a chunk's own words holding every word of a
            # question of two or more (`titled`, `whole`), is at least strong: above any threshold tried
            each = [(1.0 if len(ch) > 6 and (ch[6] or (len(ch) > 7 and ch[7])) else
                     rel.relevance(ch[0], ch[1], q["terms"], bool(ch[2]), c, code=bool(ch[3]), background=background,
                                   document_id=doc),
                     len(ch) < 6 or bool(ch[5])) for ch in chunks]
            docs.append((doc, max((x for x, _ in each), default=0.0), max((x for x, n in each if n), default=0.0)))
        out.append(Asked(_group(q, own), q["targets"], docs))
    return out


def _found(targets: list[list[str]], ids: list[str]) -> float:
    return sum(1 for t in targets if any(d in t for d in ids)) / len(targets)


def _shown(documents: list[tuple[str, float, float]], floor: float, strong: float) -> list[tuple[str, float, float]]:
    """What /v3/recall shows at `floor`, as memlane.recall.pipeline keeps it: what passes the floor and, when
    some does but none is strong, the first FIRST_FEW documents with any evidence (the clear-best exception
    aside), ten at most."""
    from memlane.recall.pipeline import FIRST_FEW

    kept = [doc for doc in documents if doc[1] >= floor]
    if not kept or any(_strong(x, named, floor, strong) for _, x, named in kept):
        return kept[:10]
    return [doc for i, doc in enumerate(documents) if doc[1] >= floor or (i < FIRST_FEW and doc[1] > 0)][:10]


def answerable_at(rows: Iterable[Asked], floor: float, strong: float) -> dict[str, float]:
    rows = list(rows)
    recall = nothing = first_strong = 0.0
    for a in rows:
        kept = _shown(a.documents, floor, strong)
        recall += _found(a.targets, [d for d, _, _ in kept])
        if not kept:
            nothing += 1
        elif any(kept[0][0] in t for t in a.targets) and _strong(kept[0][1], kept[0][2], floor, strong):
            first_strong += 1
    n = max(1, len(rows))
    return {"recall@10": recall / n, "nothing": nothing / n, "first_strong": first_strong / n}


def unanswerable_at(rows: Iterable[Asked], floor: float, strong: float) -> dict[str, float]:
    rows = list(rows)
    best = [max((x for _, x, _ in a.documents), default=0.0) for a in rows]
    strongs = [any(_strong(x, named, floor, strong) for _, x, named in a.documents) for a in rows]
    n = max(1, len(rows))
    return {"nothing": sum(1 for b in best if b < floor) / n, "strong": sum(strongs) / n}


def choose(asked: list[Asked]) -> tuple[float, float]:
    groups: dict[str, list[Asked]] = defaultdict(list)
    for a in asked:
        groups[a.group].append(a)
    answerable = {g: rows for g, rows in groups.items() if g.endswith("answerable") and not g.endswith(": unanswerable")}
    floor = 0.0
    for f in FLOORS:
        if all(answerable_at(rows, f, 1.0)["nothing"] <= EMPTY + 1e-9 for rows in answerable.values()):
            floor = f
    strong = STRONGS[-1]
    for s in sorted(STRONGS, reverse=True):
        ruled = all(unanswerable_at(groups[g], floor, s)["strong"] <= UNANSWERABLE_STRONG + 1e-9 for g in RULED if g in groups)
        nonsense = all(unanswerable_at(groups[g], floor, s)["strong"] <= NONSENSE_STRONG + 1e-9
                       for g in ("nonsense", "notes: its own nonsense") if g in groups)
        if ruled and nonsense:
            strong = s
        else:
            break
    return floor, strong


def report(data: dict[str, Any], asked: list[Asked], floor: float, strong: float, command: str) -> str:
    from memlane.recall import relevance as rel

    c = rel.calibration_for(data["embedder"])
    groups: dict[str, list[Asked]] = defaultdict(list)
    for a in asked:
        groups[a.group].append(a)
    answerable = sorted(g for g in groups if g.endswith(": answerable"))
    others = sorted(g for g in groups if not g.endswith(": answerable"))
    lines = [
        "## Recall: the floor and the strong threshold, on every workload at once",
        "",
        f"Generated by `{command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {machine()}, from "
        f"`python -m bench.recall_record`'s recording (load average {data.get('load_average', 0):.1f}; embedder "
        f"`{data['embedder']}`; {len(asked)} queries; fusion {data.get('fusion', '?')}). Relevance as memlane computes "
        f"it (memlane.recall.relevance): the maximum of the cosine on {c.cosine_zero} → 0, {c.cosine_one} → 1; BM25 per "
        f"query word, 1 − exp(−x / {c.bm25_scale}); an exact match {c.exact_match}; and the cosine's elevation over the "
        f"median candidate on {c.elevation_zero} → 0, {c.elevation_one} → 1.",
        "",
        f"The rule: the floor is the highest at which no workload has more than {EMPTY:.0%} of its answerable "
        f"questions answered with nothing; the strong threshold the lowest at which "
        f"none of {', '.join(RULED)} gets a strong result more than {UNANSWERABLE_STRONG:.0%} of the time and nonsense "
        f"at most {NONSENSE_STRONG:.0%}. **Chosen here: floor {floor:.2f}, strong {strong:.2f}** (memlane's: floor "
        f"{c.floor:.2f}, strong {c.strong:.2f}).",
        "",
        "What each floor costs (strong threshold fixed at the chosen one): recall@10 of each workload's answerable "
        "questions / share answered with nothing; then each group of questions without an answer: share answered "
        "with nothing.",
        "",
        "| floor | " + " | ".join(answerable) + " | " + " | ".join(f"{g}: nothing" for g in others) + " |",
        "| ---: | " + " | ".join("---:" for _ in answerable) + " | " + " | ".join("---:" for _ in others) + " |",
    ]
    lines += _table(groups, answerable, others, FLOORS, floor, lambda f: (f, strong), "recall@10", "nothing")
    lines += [
        "",
        f"What each strong threshold gives (floor fixed at {floor:.2f}): the share of each workload's answerable "
        "questions whose answer is first and strong; each group without an answer: share with a strong result.",
        "",
        "| strong | " + " | ".join(answerable) + " | " + " | ".join(f"{g}: strong" for g in others) + " |",
        "| ---: | " + " | ".join("---:" for _ in answerable) + " | " + " | ".join("---:" for _ in others) + " |",
    ]
    lines += _table(groups, answerable, others, STRONGS, strong, lambda s: (floor, s), "first_strong", "strong")
    sizes = ", ".join(f"{g} {len(groups[g])}" for g in sorted(groups))
    lines += ["", f"Questions per group: {sizes}."]
    return "\n".join(lines) + "\n"


def _table(groups: dict[str, list[Asked]], answerable: list[str], others: list[str], values: list[float],
           chosen: float, at: Any, answer_figure: str, other_figure: str) -> list[str]:
    """One row per value: `at(value)` gives the (floor, strong) it is read at."""
    rows = []
    for v in values:
        floor, strong = at(v)
        cells = [answerable_at(groups[g], floor, strong) for g in answerable]
        un = [unanswerable_at(groups[g], floor, strong) for g in others]
        mark = " **(chosen)**" if abs(v - chosen) < 1e-9 else ""
        if answer_figure == "recall@10":
            shown = [f"{x['recall@10']:.3f} / {x['nothing']:.3f}" for x in cells]
        else:
            shown = [f"{x[answer_figure]:.3f}" for x in cells]
        rows.append(f"| {v:.2f}{mark} | " + " | ".join(shown) + " | " + " | ".join(f"{x[other_figure]:.3f}" for x in un) + " |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--record", required=True, help="python -m bench.recall_record's output")
    ap.add_argument("--notes", default=str(shared_eval_dir() / "personal-notes-dev.jsonl"),
                    help="the notes file (its own nonsense queries are reported apart)")
    ap.add_argument("--write", metavar="BENCHMARKS.md")
    args = ap.parse_args(argv)
    data = json.loads(Path(args.record).read_text())
    asked = relevances(data, Path(args.notes))
    floor, strong = choose(asked)
    print(f"rule: floor {floor:.2f}, strong {strong:.2f}", file=sys.stderr)
    text = report(data, asked, floor, strong, f"{PROG} --record FILE")
    print(text)
    if args.write:
        write_section(Path(args.write), "relevance", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
