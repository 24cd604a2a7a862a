"""*facts and notes*: the `observation` facts of every conversation, shuffled into ONE project with
a fixed seed and saved one after another with no conversation signal (they are notes, not turns).
Every question of categories 1-4 through POST /v3/recall on that project, limit 10; a question's
evidence turn is covered at k when a fact of the same conversation citing it is among the first k.
Measured on the default product, on the product with its sequence stages off (a second server:
`recall_neighbour_weight` 0, `context_sides` "none"), and on both baselines."""

from __future__ import annotations

import random
import time
from collections import defaultdict
from typing import Any

from bench.eval.baselines import BASELINES, baselines
from bench.eval.locomo import CATEGORIES, Conversation, Fact, load_conversations
from bench.eval.scoring import Record
from bench.eval.server import LIMIT, Api
from bench.eval.workloads import Context

NAME = "facts"
SEED = 22
PROJECT = "locomo facts"


def shuffled_facts(conversations: list[Conversation], seed: int = SEED) -> list[Fact]:
    facts = [f for c in conversations for f in c.facts]
    random.Random(seed).shuffle(facts)
    return facts


def evidence_targets(
    question_evidence: tuple[str, ...], sample_id: str, facts_citing: dict[tuple[str, str], list[str]]
) -> list[list[str]]:
    """One target per evidence turn that some fact of the conversation cites: the ids of those facts."""
    return [
        list(dict.fromkeys(facts_citing[(sample_id, turn)]))
        for turn in question_evidence
        if facts_citing.get((sample_id, turn))
    ]


def _save(api: Api, facts: list[Fact]) -> tuple[str, list[str], float]:
    project_id = api.project(PROJECT)
    t0 = time.monotonic()
    ids = api.save_all([{**f.memory(), "project_id": project_id} for f in facts])
    return project_id, ids, time.monotonic() - t0


def _ask(api: Api, method: str, project_id: str, questions: list[tuple[Any, str, list[list[str]]]],
         default_floor: bool = False) -> list[Record]:
    out = []
    for q, sample_id, targets in questions:
        ranked, relevance = api.recall(q.question, project_id, default_floor=default_floor)
        out.append(Record(NAME, method, CATEGORIES[q.category], q.question, ranked, targets, relevance, sample_id))
    return out


def run(ctx: Context) -> tuple[list[Record], dict[str, Any]]:
    api = ctx.api
    conversations = load_conversations(ctx.args.memory, ctx.args.conversation or ())
    facts = shuffled_facts(conversations)
    project_id, ids, save_seconds = _save(api, facts)
    ctx.projects[PROJECT] = project_id
    ctx.progress(f"{NAME}: {len(facts)} facts saved in {save_seconds:.0f} s")
    citing: dict[tuple[str, str], list[str]] = defaultdict(list)
    for fact, doc in zip(facts, ids, strict=True):
        for turn in fact.evidence:
            citing[(fact.sample_id, turn)].append(doc)
    questions = []
    uncited = 0
    skipped = 0
    for conv in conversations:
        for q in conv.questions:
            targets = evidence_targets(q.evidence, conv.sample_id, citing)
            uncited += len(q.evidence) - len(targets)
            if not targets:
                skipped += 1
                continue
            questions.append((q, conv.sample_id, targets))
    records = _ask(api, "memlane", project_id, questions)
    if api.min_relevance:  # as a client asks: the server's floor applies
        records += _ask(api, "memlane-floor", project_id, questions, default_floor=True)
    texts: dict[str, str] = {}
    for fact, doc in zip(facts, ids, strict=True):
        m = fact.memory()
        texts.setdefault(doc, f"{m['title']}\n{m['content']}")
    base = baselines(list(texts), list(texts.values()), api.embedder)
    for q, sample_id, targets in questions:
        for b in BASELINES:
            records.append(
                Record(NAME, b, CATEGORIES[q.category], q.question, base[b].rank(q.question, LIMIT), targets, None, sample_id)
            )
    ctx.progress(f"{NAME}: {len(questions)} questions asked")
    stages_off_seconds = None
    if ctx.stages_off is not None:
        with ctx.stages_off() as off:
            off_project, off_ids, stages_off_seconds = _save(off, facts)
            # the same facts in the same order: map this server's ids onto the first server's
            same = dict(zip(off_ids, ids, strict=True))
            for r in _ask(off, "stages-off", off_project, questions):
                r.ranked = [same.get(d, d) for d in r.ranked]
                records.append(r)
        ctx.progress(f"{NAME}: the stages-off server answered")
    info = {
        "facts": len(facts),
        "documents": len(texts),
        "seed": SEED,
        "save_seconds": save_seconds,
        "stages_off_save_seconds": stages_off_seconds,
        "uncited_evidence_turns": uncited,
        "skipped_questions": skipped,
        "conversations": [c.sample_id for c in conversations],
    }
    return records, info
