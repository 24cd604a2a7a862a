"""The optional rerank stage: a reranker model (memlane.ports.Reranker) reads the query beside the
text of the top-N fused documents and its score is mixed into theirs.

What is sent: the best chunk of each of the first `top_n` documents (the chunk recall would show
first), cut to MAX_TEXT_CHARS. Documents past `top_n` are not sent and keep their order, after the
reranked ones: a reranker can only reorder what it reads, and the fused ranking already put those
below.

Why top_n = 30 by default: the result page is 10 by default, and a reranker earns its cost by
promoting a relevant document from below the page into it; 30 gives it three pages to promote from
while staying well under the 100 documents Bedrock bills as one query (more is a second query) and
keeping the request small (its latency grows with the text sent).

Why mix rather than replace (weight 0.7 by default): the reranker's score is a calibrated relevance
in [0, 1], better than cosine at ordering the head, but it sees one chunk of text only: not the
recency bonus of the spec's fusion, and a cross-encoder can under-score an exact match of a rare
made-up token (an id, an error code) that BM25 found. Keeping 0.3 of the fused score keeps that
evidence; weight 1.0 replaces the fused score. Scores stay non-increasing down the list: a document
that was not sent never shows more than the last reranked one.

A reranker that fails (throttled, unavailable, refused) skips the stage: the fused ranking is
returned unchanged and the report says why, never an error to the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from memlane.domain.errors import MemlaneError
from memlane.ports import Rerank, Reranker, SearchScope
from memlane.recall.fusion import ScoredDocument

MAX_TEXT_CHARS = 4_000  # well within both models' inputs; the head of a chunk carries its topic


@dataclass(frozen=True)
class RerankReport:
    """What the stage did to one ranking, for the answer (`rerank` on /v3/recall)."""

    model: str
    status: str  # "applied" | "skipped"
    reranked: int = 0  # documents sent to the model
    reason: str | None = None  # why it was skipped

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"model": self.model, "status": self.status, "reranked": self.reranked}
        if self.reason:
            out["reason"] = self.reason
        return out


class RerankStage:
    def __init__(self, reranker: Reranker, top_n: int, weight: float) -> None:
        self.option = Rerank(reranker, top_n, weight)  # validates top_n and weight

    @classmethod
    def from_option(cls, option: Rerank) -> RerankStage:
        return cls(option.reranker, option.top_n, option.weight)

    @property
    def key(self) -> list[object]:
        """What changes the ranking (recall's cache key includes it)."""
        return [self.option.reranker.id, self.option.top_n, self.option.weight]

    def apply(
        self,
        query: str,
        ranked: list[ScoredDocument],
        texts: Callable[[Sequence[str]], dict[str, str]],
    ) -> tuple[list[ScoredDocument], RerankReport]:
        """`ranked` best first; `texts` gives chunk id → text for the chunk ids asked (a missing
        id is a chunk deleted since indexing: that document is not sent)."""
        model = self.option.reranker.id
        head = [d for d in ranked[: self.option.top_n] if d.chunks]
        if not query.strip() or not head:
            return ranked, RerankReport(model, "skipped", reason="nothing to rerank")
        found = texts([d.chunks[0].chunk_id for d in head])
        sent = [d for d in head if found.get(d.chunks[0].chunk_id, "").strip()]
        if not sent:
            return ranked, RerankReport(model, "skipped", reason="nothing to rerank")
        try:
            scores = self.option.reranker.score(query[:MAX_TEXT_CHARS], [found[d.chunks[0].chunk_id][:MAX_TEXT_CHARS] for d in sent])
        except MemlaneError as exc:
            return ranked, RerankReport(model, "skipped", reason=str(exc) or type(exc).__name__)
        if len(scores) != len(sent):
            return ranked, RerankReport(
                model, "skipped", reason=f"the model returned {len(scores)} scores for {len(sent)} texts"
            )
        w = self.option.weight
        reranked = sorted(
            (_rescored(d, w * max(0.0, min(1.0, s)) + (1 - w) * d.score) for d, s in zip(sent, scores, strict=True)),
            key=lambda d: d.score,
            reverse=True,
        )
        sent_ids = {d.document_id for d in sent}
        floor = reranked[-1].score
        rest = [d if d.score <= floor else _rescored(d, floor) for d in ranked if d.document_id not in sent_ids]
        return reranked + rest, RerankReport(model, "applied", reranked=len(sent))


def _rescored(doc: ScoredDocument, score: float) -> ScoredDocument:
    """The document with a new score; its chunks keep their order and move by the same amount."""
    delta = score - doc.score
    return ScoredDocument(doc.document_id, score, [replace(c, score=max(0.0, c.score + delta)) for c in doc.chunks])


class RerankPipelineStage:
    """The rerank stage as one of the retrieval pipeline's stages (memlane.recall.pipeline): bound
    to one query, it keeps what it did for the answer (`report`)."""

    name = "rerank"

    def __init__(self, stage: RerankStage, query: str,
                 texts: Callable[[str, Sequence[str]], dict[str, str]]) -> None:
        self.stage = stage
        self.query = query
        self.texts = texts
        self.report: RerankReport | None = None

    def settings(self) -> object:
        return self.stage.key

    def __call__(self, groups: list[ScoredDocument], scope: SearchScope) -> list[ScoredDocument]:
        ranked, self.report = self.stage.apply(self.query, groups, lambda ids: self.texts(scope.organization_id, ids))
        return ranked
