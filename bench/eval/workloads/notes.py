"""*personal notes*: the notes of one person (../shared/eval/personal-notes-dev.jsonl, format in
../shared/eval/README.md) saved into ONE project as a client saves them (the title when the file
has one, `tags`), and that person's questions asked through POST /v3/recall with `limit` 10:
answerable ones of three kinds (paraphrase: no content word shared with the note; overlap: one or
two; keyword: a rare word of the note), unanswerable ones about the same life, and nonsense.

Measured without a floor (`min_relevance: 0`, every result seen), at the default settings (as a
client asks), and beside both baselines over the same notes (title and content). A question is
answered by exactly one note: top-1 and top-3 say whether it is first or among the first three
distinct documents. Unanswerable and nonsense questions are scored by what comes back: nothing,
weak matches only (`match: "weak"`, once recall marks confidence), or a strong match."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.eval.baselines import BASELINES, baselines
from bench.eval.locomo import shared_eval_dir
from bench.eval.scoring import Record
from bench.eval.server import LIMIT
from bench.eval.workloads import Context

NAME = "notes"
PROJECT = "personal notes"
DEFAULT_DATA = shared_eval_dir() / "personal-notes-dev.jsonl"
ANSWERABLE_KINDS = ("paraphrase", "overlap", "keyword")
UNANSWERABLE_KINDS = ("unanswerable", "nonsense")


@dataclass(frozen=True)
class Note:
    id: str
    title: str | None
    content: str
    tags: tuple[str, ...]

    def memory(self) -> dict[str, Any]:
        """The POST /v3/memory body (without the project): a null title is not sent."""
        body: dict[str, Any] = {"content": self.content}
        if self.title:
            body["title"] = self.title
        if self.tags:
            body["tags"] = list(self.tags)
        return body

    def text(self) -> str:
        """What the baselines rank: title and content."""
        return f"{self.title}\n{self.content}" if self.title else self.content


@dataclass(frozen=True)
class Question:
    id: str
    query: str
    answer: str | None
    kind: str


def load_notes(path: str | Path) -> tuple[list[Note], list[Question]]:
    notes: list[Note] = []
    questions: list[Question] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if item["type"] == "note":
            notes.append(Note(item["id"], item.get("title"), item["content"], tuple(item.get("tags") or ())))
        elif item["type"] == "question":
            questions.append(Question(item["id"], item["query"], item.get("answer"), item["kind"]))
    known = {n.id for n in notes}
    missing = [q.id for q in questions if q.answer is not None and q.answer not in known]
    if missing:
        raise ValueError(f"{path}: questions answered by no note: {', '.join(missing)}")
    return notes, questions


def run(ctx: Context) -> tuple[list[Record], dict[str, Any]]:
    api = ctx.api
    notes, questions = load_notes(getattr(ctx.args, "notes", None) or DEFAULT_DATA)
    project_id = api.project(PROJECT)
    ctx.projects[PROJECT] = project_id
    t0 = time.monotonic()
    ids = api.save_all([{**n.memory(), "project_id": project_id} for n in notes])
    save_seconds = time.monotonic() - t0
    doc_of = dict(zip((n.id for n in notes), ids, strict=True))
    ctx.progress(f"{NAME}: {len(notes)} notes saved in {save_seconds:.0f} s")
    base = baselines(ids, [n.text() for n in notes], api.embedder)
    records: list[Record] = []
    for q in questions:
        targets = [[doc_of[q.answer]]] if q.answer else []
        for method, floor in (("memlane", False), ("memlane-floor", True)):
            if method == "memlane-floor" and not api.min_relevance:
                continue
            ranked, relevance, match = api.recall_with_match(q.query, project_id, default_floor=floor)
            records.append(Record(NAME, method, q.kind, q.query, ranked, targets, relevance, PROJECT, match))
        for b in BASELINES:
            records.append(Record(NAME, b, q.kind, q.query, base[b].rank(q.query, LIMIT), targets, None, PROJECT))
    ctx.progress(f"{NAME}: {len(questions)} questions asked")
    info = {
        "notes": len(notes),
        "titled": sum(1 for n in notes if n.title),
        "questions": {k: sum(1 for q in questions if q.kind == k) for k in (*ANSWERABLE_KINDS, *UNANSWERABLE_KINDS)},
        "save_seconds": save_seconds,
        "data": str(getattr(ctx.args, "notes", None) or DEFAULT_DATA),
    }
    return records, info
