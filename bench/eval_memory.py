"""`make eval-memory` (`python -m bench.eval_memory --memory FILE`): conversation memory recall on
LoCoMo-style data (../shared/eval/README.md), through the real API, beside two plain baselines over
the same texts.

Protocol: a local server on 127.0.0.1 with the embedded default; one project per conversation;
every turn saved through POST /v3/memory as one memory (content "<speaker>: <text>", plus
" [shares a photo: <caption>]" when the turn has one; title "<speaker>, <session date-time>");
every question of categories 1-4 asked through POST /v3/recall scoped to that project with limit
10. A turn is found at k when its document is among the first k results; recall@k is the share of
a question's evidence turns found, hit@k whether any is; both are averaged over questions, overall
and per category. The baselines rank the same documents (title and content): BM25 with English
stopwords (bm25s) and plain all-MiniLM-L6-v2 cosine similarity.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bench.common import free_port, write_section

PROG = "python -m bench.eval_memory"
DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "eval" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)
LIMIT = 10
METHODS = ("memlane", "bm25", "minilm")
METHOD_NAMES = {
    "memlane": "memlane (POST /v3/recall)",
    "bm25": "BM25, English stopwords",
    "minilm": "MiniLM cosine",
}
# Issue 16: on the dev conversations, memlane's turn recall@10 and hit@10, and every category
# ahead of both baselines.
TARGET_RECALL10 = 0.80
TARGET_HIT10 = 0.85

# A turn id is "D<session>:<turn>". Evidence strings sometimes hold several ids separated by ";"
# or spaces, and a few are malformed ("D:11:26"): the pattern reads the two numbers either way.
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION = re.compile(r"session_(\d+)")


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    date_time: str
    session: int = 0  # LoCoMo's session number: one conversation_id per session
    position: int = 0  # the turn's place in its session

    def memory(self) -> dict[str, Any]:
        """The POST /v3/memory body of this turn (without the project): a message of its session's
        conversation (the signal the contextual indexing and the neighbour stage need)."""
        content = f"{self.speaker}: {self.text}"
        if self.caption:
            content += f" [shares a photo: {self.caption}]"
        return {"content": content, "title": f"{self.speaker}, {self.date_time}",
                "conversation_id": f"session_{self.session}", "message_index": self.position}


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]  # turn ids that exist in the conversation, each once


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    dropped_evidence: list[str] = field(default_factory=list)  # ids naming no turn
    skipped_questions: int = 0  # category 1-4 questions left without any evidence turn


def parse_evidence(items: Iterable[str]) -> list[str]:
    """The turn ids of an evidence list, in order, each once."""
    ids = [f"D{s}:{t}" for item in items for s, t in _DIA_ID.findall(str(item))]
    return list(dict.fromkeys(ids))


def conversation_turns(conversation: dict[str, Any]) -> list[Turn]:
    """Every turn, sessions in order (session_2 before session_10)."""
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conversation
        if (m := _SESSION.fullmatch(key)) and isinstance(conversation[key], list)
    )
    turns: list[Turn] = []
    for number, key in sessions:
        when = str(conversation.get(f"session_{number}_date_time", "")).strip()
        for position, t in enumerate(conversation[key]):
            caption = t.get("blip_caption")
            turns.append(
                Turn(
                    dia_id=str(t["dia_id"]),
                    speaker=str(t["speaker"]),
                    text=str(t["text"]),
                    caption=str(caption).strip() if caption else None,
                    date_time=when,
                    session=number,
                    position=position,
                )
            )
    return turns


def load_conversations(path: Path, only: Sequence[str] = ()) -> list[Conversation]:
    items = json.loads(Path(path).read_text())
    out: list[Conversation] = []
    for item in items:
        if only and item["sample_id"] not in only:
            continue
        turns = conversation_turns(item["conversation"])
        known = {t.dia_id for t in turns}
        conv = Conversation(item["sample_id"], turns, [])
        for qa in item["qa"]:
            category = int(qa["category"])
            if category not in CATEGORIES:
                continue
            ids = parse_evidence(qa.get("evidence") or [])
            conv.dropped_evidence += [i for i in ids if i not in known]
            ids = [i for i in ids if i in known]
            if not ids:
                conv.skipped_questions += 1
                continue
            conv.questions.append(Question(str(qa["question"]), category, tuple(ids)))
        out.append(conv)
    missing = set(only) - {c.sample_id for c in out}
    if missing:
        raise ValueError(f"conversations not in {path}: {', '.join(sorted(missing))}")
    return out


# --------------------------------------------------------------------------- scoring


def score_ranking(ranked_documents: Sequence[str], evidence_documents: Sequence[str]) -> dict[str, float]:
    """recall@k and hit@k of one question. `evidence_documents` has one entry per evidence turn
    (two turns saved as one document, identical content, name it twice)."""
    if not evidence_documents:
        raise ValueError("a question needs at least one evidence turn")
    out: dict[str, float] = {}
    for k in KS:
        top = set(ranked_documents[:k])
        found = sum(1 for d in evidence_documents if d in top)
        out[f"recall@{k}"] = found / len(evidence_documents)
        out[f"hit@{k}"] = 1.0 if found else 0.0
    return out


@dataclass
class Scores:
    """Per-question scores of one method, grouped by category."""

    by_category: dict[int, list[dict[str, float]]] = field(default_factory=dict)

    def add(self, category: int, scores: dict[str, float]) -> None:
        self.by_category.setdefault(category, []).append(scores)

    def summary(self, category: int | None = None) -> dict[str, float]:
        rows = (
            self.by_category.get(category, [])
            if category is not None
            else [s for rows in self.by_category.values() for s in rows]
        )
        if not rows:
            return {"n": 0}
        keys = [f"{m}@{k}" for m in ("recall", "hit") for k in KS]
        return {"n": len(rows), **{key: sum(r[key] for r in rows) / len(rows) for key in keys}}


# --------------------------------------------------------------------------- baselines


class Bm25Baseline:
    """Okapi BM25 (bm25s defaults: k1 1.5, b 0.75) with English stopwords, over one conversation."""

    def __init__(self, doc_ids: Sequence[str], texts: Sequence[str]) -> None:
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs each index build at DEBUG
        self._bm25s = bm25s
        self.doc_ids = list(doc_ids)
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(list(texts), stopwords="en", show_progress=False), show_progress=False)

    def rank(self, query: str, k: int) -> list[str]:
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:  # nothing but stopwords
            return []
        k = min(k, len(self.doc_ids))
        idx, scores = self.retriever.retrieve(tokens, k=k, show_progress=False)
        return [self.doc_ids[i] for i, s in zip(idx[0], scores[0], strict=True) if s > 0]


class DenseBaseline:
    """Cosine similarity of unit vectors (the dot product) over one conversation."""

    def __init__(self, doc_ids: Sequence[str], vectors: Sequence[Sequence[float]], embed_query: Callable) -> None:
        import numpy as np

        self._np = np
        self.doc_ids = list(doc_ids)
        self.matrix = np.asarray(vectors, dtype=np.float32)
        self.embed_query = embed_query

    def rank(self, query: str, k: int) -> list[str]:
        scores = self.matrix @ self._np.asarray(self.embed_query(query), dtype=self._np.float32)
        order = self._np.argsort(-scores, kind="stable")[:k]
        return [self.doc_ids[i] for i in order]


# --------------------------------------------------------------------------- the run


@dataclass
class Run:
    scores: dict[str, Scores]
    conversations: list[Conversation]
    turns_saved: int
    documents: int
    save_seconds: float
    recall_ms: list[float]  # client-side, each POST /v3/recall
    load_average: float
    settings: dict[str, str]


def _save_conversation(client: httpx.Client, conv: Conversation) -> dict[str, str]:
    """One project for the conversation, one memory per turn; returns turn id → document id.

    With a kept data directory (--data-dir) the project is found by name and every turn is saved
    again: identical content is deduplicated before any embedding, so the save answers with the
    stored document at once and a rerun only re-asks the questions."""
    name = f"locomo {conv.sample_id}"
    r = client.get("/v3/projects")
    r.raise_for_status()
    found = [p["id"] for p in r.json()["projects"] if p["name"] == name]
    if found:
        project_id = found[0]
    else:
        r = client.post("/v3/projects", json={"name": name})
        r.raise_for_status()
        project_id = r.json()["id"]
    documents: dict[str, str] = {}
    queued: list[str] = []
    for turn in conv.turns:
        r = client.post("/v3/memory", json={**turn.memory(), "project_id": project_id})
        r.raise_for_status()
        body = r.json()
        documents[turn.dia_id] = body["id"]
        if body["status"] != "ready":
            queued.append(body["id"])
    _wait_ready(client, queued)
    documents["__project__"] = project_id
    return documents


def _wait_ready(client: httpx.Client, document_ids: list[str], timeout_s: float = 600.0) -> None:
    deadline = time.monotonic() + timeout_s
    pending = list(document_ids)
    while pending:
        status = client.get(f"/v3/documents/{pending[0]}").json()["status"]
        if status == "ready":
            pending.pop(0)
        elif status == "failed" or time.monotonic() > deadline:
            raise RuntimeError(f"document {pending[0]} not indexed: {status}")
        else:
            time.sleep(0.2)


def evaluate(
    client: httpx.Client,
    conversations: list[Conversation],
    embedder: Any,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[dict[str, Scores], list[float], int, float]:
    """Every conversation saved first, then every question asked, so each question sees the same
    index whatever the order of the conversations (BM25's statistics span the whole index)."""
    scores = {m: Scores() for m in METHODS}
    latencies: list[float] = []
    saved: list[tuple[Conversation, str, dict[str, str]]] = []
    started = time.monotonic()
    for conv in conversations:
        t0 = time.monotonic()
        documents = _save_conversation(client, conv)
        saved.append((conv, documents.pop("__project__"), documents))
        progress(f"{conv.sample_id}: {len(conv.turns)} turns saved in {time.monotonic() - t0:.0f} s")
    save_seconds = time.monotonic() - started
    documents_total = 0
    for conv, project_id, documents in saved:
        # The baselines rank the documents memlane holds (identical turns share one), same texts.
        texts: dict[str, str] = {}
        for turn in conv.turns:
            m = turn.memory()
            texts.setdefault(documents[turn.dia_id], f"{m['title']}\n{m['content']}")
        doc_ids = list(texts)
        documents_total += len(doc_ids)
        bm25 = Bm25Baseline(doc_ids, list(texts.values()))
        dense = DenseBaseline(doc_ids, embedder.embed_documents(list(texts.values())), embedder.embed_query)
        for q in conv.questions:
            evidence = [documents[e] for e in q.evidence]
            t0 = time.perf_counter()
            r = client.post("/v3/recall", json={"query": q.question, "project_id": project_id, "limit": LIMIT})
            latencies.append((time.perf_counter() - t0) * 1000)
            r.raise_for_status()
            ranked = [d["document_id"] for d in r.json()["results"]]
            scores["memlane"].add(q.category, score_ranking(ranked, evidence))
            scores["bm25"].add(q.category, score_ranking(bm25.rank(q.question, LIMIT), evidence))
            scores["minilm"].add(q.category, score_ranking(dense.rank(q.question, LIMIT), evidence))
        overall = scores["memlane"].summary()
        progress(
            f"{conv.sample_id}: {len(conv.questions)} questions; so far memlane recall@10 "
            f"{overall['recall@10']:.3f}, hit@10 {overall['hit@10']:.3f}"
        )
    return scores, latencies, documents_total, save_seconds


# --------------------------------------------------------------------------- report


def machine() -> str:
    import platform

    cpu = platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def results_table(scores: dict[str, Scores]) -> list[str]:
    lines = [
        "| category | questions | method | recall@5 | recall@10 | hit@5 | hit@10 |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for category in [None, *CATEGORIES]:
        label = "all (1-4)" if category is None else f"{category} {CATEGORIES[category]}"
        for method in METHODS:
            s = scores[method].summary(category)
            if not s["n"]:
                continue
            cells = " | ".join(f"{s[f'{m}@{k}']:.3f}" for m in ("recall", "hit") for k in KS)
            name = f"**{METHOD_NAMES[method]}**" if method == "memlane" else METHOD_NAMES[method]
            lines.append(f"| {label} | {s['n']} | {name} | {cells} |")
    return lines


def targets_markdown(scores: dict[str, Scores]) -> str:
    def verdict(ok: bool, figure: str) -> str:
        return f"**{'met' if ok else 'not met'} ({figure})**"

    ours = scores["memlane"].summary()
    recall10, hit10 = ours["recall@10"], ours["hit@10"]
    behind = [
        f"{CATEGORIES[c]} {m}"
        for c in CATEGORIES
        if scores["memlane"].summary(c)["n"]
        for m in ("recall@10", "hit@10")
        if scores["memlane"].summary(c)[m]
        <= max(scores["bm25"].summary(c)[m], scores["minilm"].summary(c)[m])
    ]
    return (
        f"Targets (issue 16): recall@10 ≥ {TARGET_RECALL10:.2f} "
        f"{verdict(recall10 >= TARGET_RECALL10, f'{recall10:.3f}')}; "
        f"hit@10 ≥ {TARGET_HIT10:.2f} {verdict(hit10 >= TARGET_HIT10, f'{hit10:.3f}')}; "
        "every category ahead of both baselines on recall@10 and hit@10 "
        f"{verdict(not behind, 'behind: ' + ', '.join(behind) if behind else 'all four')}."
    )


def report_markdown(run: Run, command: str, data_name: str) -> str:
    convs = run.conversations
    questions = sum(len(c.questions) for c in convs)
    skipped = sum(c.skipped_questions for c in convs)
    dropped = sorted({f"{c.sample_id} {d}" for c in convs for d in c.dropped_evidence})
    lines = [
        "## Conversation memory: recall on LoCoMo (dev conversations)",
        "",
        f"Machine: {machine()} (shared with other work while measured, load average "
        f"{run.load_average:.1f} over the last 5 minutes of the run). Date: {datetime.now(UTC):%Y-%m-%d}.",
        f"Command: `{command}`. Data: {data_name}, conversations "
        f"{', '.join(c.sample_id for c in convs)}: {run.turns_saved} turns saved through `POST /v3/memory` "
        f"({run.documents} documents: identical turns of a conversation are one memory) in "
        f"{run.save_seconds:.0f} s, one project per conversation; {questions} questions of categories 1-4 "
        "through `POST /v3/recall` (that project, limit 10) on a local server on 127.0.0.1 with the "
        f"embedded default. Settings: {', '.join(f'{k} {v}' for k, v in run.settings.items())}.",
        "Baselines rank the same documents (title and content) in the same run: BM25 (bm25s, k1 1.5, "
        "b 0.75, English stopwords) and all-MiniLM-L6-v2 cosine similarity.",
        "",
        *results_table(run.scores),
        "",
        f"`POST /v3/recall` as the client saw it (HTTP on loopback, {len(run.recall_ms)} requests): "
        f"p50 {percentile(run.recall_ms, 50):.1f} ms, p95 {percentile(run.recall_ms, 95):.1f} ms.",
        f"Evidence: ids split on `;` and spaces; {skipped} questions without any evidence turn are left out"
        + (f"; ids that name no turn are dropped ({', '.join(dropped)})" if dropped else "")
        + ".",
        "",
        targets_markdown(run.scores),
    ]
    return "\n".join(lines)


def print_summary(scores: dict[str, Scores], out=sys.stdout) -> None:
    print(f"\n{'category':<14} {'method':<8} {'n':>4} {'R@5':>6} {'R@10':>6} {'H@5':>6} {'H@10':>6}", file=out)
    for category in [None, *CATEGORIES]:
        label = "all" if category is None else CATEGORIES[category]
        for method in METHODS:
            s = scores[method].summary(category)
            if s["n"]:
                print(
                    f"{label:<14} {method:<8} {s['n']:>4} {s['recall@5']:>6.3f} {s['recall@10']:>6.3f} "
                    f"{s['hit@5']:>6.3f} {s['hit@10']:>6.3f}",
                    file=out,
                )


def run(args: argparse.Namespace) -> int:
    from memlane.adapters.local.embedder import MiniLMEmbedder
    from memlane.config import Settings
    from memlane.local.server import LocalServer
    from memlane.services.keys import create_key

    path = Path(args.memory)
    if not path.is_file():
        print(f"{PROG}: {path} not found", file=sys.stderr)
        return 2
    try:
        conversations = load_conversations(path, args.conversation or ())
    except (ValueError, KeyError) as exc:
        print(f"{PROG}: {path}: {exc}", file=sys.stderr)
        return 2
    logging.getLogger("bm25s").setLevel(logging.WARNING)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="memlane-eval-memory-") as tmp:
        settings = Settings.from_env(data_dir=Path(args.data_dir) if args.data_dir else Path(tmp) / "data")
        server = LocalServer(settings, host="127.0.0.1", port=free_port())
        server.prepare()
        embedder = server.stack.services.embedder
        embedder.embed_query("warm up")
        # The dense baseline is the plain model, whatever the server's embedder is configured as.
        plain = embedder if isinstance(embedder, MiniLMEmbedder) else MiniLMEmbedder()
        server.start_in_thread()
        key, _, _ = create_key(server.stack.metadata, "locomo-eval", "eval", rate_limit_per_minute=1_000_000)
        try:
            with httpx.Client(
                base_url=f"http://127.0.0.1:{server.port}",
                headers={"Authorization": f"Bearer {key}"},
                timeout=120,
            ) as client:
                scores, latencies, documents, save_s = evaluate(client, conversations, plain, progress)
            load_average = os.getloadavg()[1]
        finally:
            server.shutdown()
    print_summary(scores)
    print(f"\nPOST /v3/recall p50 {percentile(latencies, 50):.1f} ms, p95 {percentile(latencies, 95):.1f} ms")
    if args.write:
        w = settings.fusion
        run_ = Run(
            scores=scores,
            conversations=conversations,
            turns_saved=sum(len(c.turns) for c in conversations),
            documents=documents,
            save_seconds=save_s,
            recall_ms=latencies,
            load_average=load_average,
            settings={
                "fusion": f"{w.vector}·vector + {w.text}·bm25 + {w.recency}·recency",
                "embedder": embedder.id,
                **recall_stage_settings(settings),
            },
        )
        write_section(Path(args.write), "memory", report_markdown(run_, "make eval-memory", path.name))
        print(f"wrote the 'memory' section of {args.write}")
    return 0


def recall_stage_settings(settings: Any) -> dict[str, str]:
    """The recall stages after the fusion, as configured."""
    c = settings.context
    if not c.active:
        indexing = "off"
    else:
        sides = ("the message before and the one after in its conversation" if c.sides == "both"
                 else "the message before in its conversation")
        parts = [f"a text field at {c.text_weight:g}× a body word" if c.text else "",
                 "its window's embedding added to the memory's own" if c.vector else ""]
        indexing = f"{sides} it, as " + " and ".join(p for p in parts if p)
    n = settings.neighbours
    if not n.active:
        return {"contextual indexing": indexing, "neighbouring memories": "off"}
    return {
        "contextual indexing": indexing,
        "neighbouring memories": f"+ {n.weight} × the best fused score within {n.window} messages of the "
        f"same conversation (× {n.decay} per further message)",
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--memory",
        metavar="FILE",
        default=str(DEFAULT_DATA.resolve()),
        help="LoCoMo-style JSON to measure conversation memory recall on (default: ../shared/eval/locomo-dev.json)",
    )
    p.add_argument(
        "--conversation",
        action="append",
        metavar="ID",
        help="only this conversation (sample_id; repeatable)",
    )
    p.add_argument(
        "--write", metavar="BENCHMARKS.md", help="write the figures into this file's memory section"
    )
    p.add_argument("--data-dir", dest="data_dir", default=None, help="keep the memories here; a rerun reuses them")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Conversation memory recall on LoCoMo-style data through POST /v3/memory and /v3/recall, "
        "beside plain BM25 and MiniLM baselines (what `make eval-memory` runs).",
    )
    add_arguments(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
