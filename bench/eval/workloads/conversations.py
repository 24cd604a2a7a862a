"""*conversations*: LoCoMo turns, one project per conversation, each turn one memory; when the
server's `MemoryIn` has them, each turn carries `conversation_id` ("<sample_id>-session-<N>") and
`message_index` (its position in the session). Every question of categories 1-4 through
POST /v3/recall on that project, limit 10; a turn is found at k when its memory is among the first k."""

from __future__ import annotations

import time
from typing import Any

from bench.eval.baselines import BASELINES, baselines
from bench.eval.locomo import CATEGORIES, Conversation, load_conversations
from bench.eval.scoring import Record
from bench.eval.server import LIMIT
from bench.eval.workloads import Context, Unanswerable

NAME = "conversations"


def turn_bodies(conv: Conversation, project_id: str, signal: bool) -> list[dict[str, Any]]:
    bodies = []
    for turn in conv.turns:
        body: dict[str, Any] = {**turn.memory(), "project_id": project_id}
        if signal:
            body["conversation_id"] = f"{conv.sample_id}-session-{turn.session}"
            body["message_index"] = turn.index
        bodies.append(body)
    return bodies


def run(ctx: Context) -> tuple[list[Record], dict[str, Any]]:
    api = ctx.api
    conversations = load_conversations(ctx.args.memory, ctx.args.conversation or ())
    signal = api.conversation_signal
    ctx.progress(
        f"{NAME}: turns saved {'WITH' if signal else 'WITHOUT'} the conversation signal "
        f"(MemoryIn {'has' if signal else 'lacks'} conversation_id and message_index)"
    )
    saved = []
    started = time.monotonic()
    for conv in conversations:
        t0 = time.monotonic()
        project_id = api.project(f"locomo {conv.sample_id}")
        ctx.projects[f"locomo {conv.sample_id}"] = project_id
        ids = api.save_all(turn_bodies(conv, project_id, signal))
        saved.append((conv, project_id, dict(zip((t.dia_id for t in conv.turns), ids, strict=True))))
        ctx.progress(f"{NAME}: {conv.sample_id}: {len(conv.turns)} turns saved in {time.monotonic() - t0:.0f} s")
    save_seconds = time.monotonic() - started
    records: list[Record] = []
    documents = 0
    for i, (conv, project_id, documents_of) in enumerate(saved):
        texts: dict[str, str] = {}
        for turn in conv.turns:
            m = turn.memory()
            texts.setdefault(documents_of[turn.dia_id], f"{m['title']}\n{m['content']}")
        documents += len(texts)
        base = baselines(list(texts), list(texts.values()), api.embedder)
        for q in conv.questions:
            targets = [[documents_of[e]] for e in q.evidence]
            category = CATEGORIES[q.category]
            ranked, relevance = api.recall(q.question, project_id)
            records.append(Record(NAME, "memlane", category, q.question, ranked, targets, relevance, conv.sample_id))
            if api.min_relevance:  # as a client asks: the server's floor applies
                ranked, relevance = api.recall(q.question, project_id, default_floor=True)
                records.append(Record(NAME, "memlane-floor", category, q.question, ranked, targets, relevance,
                                      conv.sample_id))
            for b in BASELINES:
                records.append(Record(NAME, b, category, q.question, base[b].rank(q.question, LIMIT), targets))
            if len(saved) > 1:  # asked of the next conversation's project: not answerable there
                other = saved[(i + 1) % len(saved)][1]
                ctx.unanswerable.append(Unanswerable(NAME, q.question, other))
        ctx.progress(f"{NAME}: {conv.sample_id}: {len(conv.questions)} questions asked")
    info = {
        "conversations": [c.sample_id for c in conversations],
        "turns": sum(len(c.turns) for c in conversations),
        "documents": documents,
        "save_seconds": save_seconds,
        "signal": signal,
        "skipped_questions": sum(c.skipped_questions for c in conversations),
        "dropped_evidence": sorted({f"{c.sample_id} {d}" for c in conversations for d in c.dropped_evidence}),
    }
    return records, info
