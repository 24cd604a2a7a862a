"""The small weight value types that settings (memlane.config) build and the pipeline reads:
recall's fusion (memlane.recall.fusion), its neighbouring-memories stage (memlane.recall.neighbours),
contextual indexing at write time (memlane.documents.contextual) and the rerank stage. Values only,
no behaviour beyond validation, so config can build them without importing the pipeline.

Their defaults are written here once: the settings' defaults (memlane.config), the /v3/recall
description in the OpenAPI document (memlane.api.routes.v3) and docs/configuration.md are all taken
from these values."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FusionWeights:
    vector: float = 0.6
    text: float = 0.4
    recency: float = 0.1
    recency_days: float = 30.0
    # Evidence from the same document: its best chunk gains `support` × the sum of the scores of
    # its next `support_chunks` best candidates. 0 (the spec's formula) unless a caller asks for it.
    support: float = 0.0
    support_chunks: int = 2
    # A code chunk's text share is its own BM25 evidence (memlane.recall.relevance.text_part: raw
    # BM25 per query word, saturating), not BM25 over the batch maximum (memlane.recall.pipeline).
    # A prose question shares only incidental words with code (return, true, file, path), so the
    # batch's best keyword match on code is often one such word, and max-normalised it would weigh
    # as much as a strong vector match. False: the spec's formula for every chunk.
    code_text_evidence: bool = False
    # The text leg also searches for the words of a query's compound identifiers (`getUserName` →
    # get user name; memlane.ingest.identifiers), as code chunks are then indexed with them
    # (Settings.index_identifier_words turns both on).
    identifier_words: bool = False
    # Each leg scores the other leg's candidates (memlane.ports.SearchIndex.search, `complete`): the
    # formula then reads a chunk's real cosine and BM25 instead of 0 for "outside that leg's top k".
    # Documentation retrieval keeps each leg's own top k (memlane.domain.tuning.DOCSET_FUSION): its
    # weights and page support were chosen with them, and completed legs cost it (BENCHMARKS.md).
    complete_legs: bool = True
    # The text share's divisor is the batch's best BM25, but never less than this much BM25 per query
    # word: what a keyword match of the whole query scores (memlane.recall.fusion.normalize_by_max).
    # A batch whose best keyword match is one incidental word of the query then gives it a share as weak
    # as its evidence, not the full `text` weight. 0: the spec's formula (the batch maximum alone).
    text_reference: float = 0.0
    # The word share is scaled by coverage ** text_coverage, coverage being the share of the question's
    # content words the chunk holds (memlane.recall.coverage): one incidental word of a four-word question
    # is a quarter of what was asked. 0: the spec's formula (no scaling).
    text_coverage: float = 0.0

    def __post_init__(self) -> None:
        for name in ("vector", "text", "recency", "support", "text_reference", "text_coverage"):
            if getattr(self, name) < 0:
                raise ValueError(f"fusion weight {name} must be ≥ 0")
        if self.recency_days <= 0:
            raise ValueError("recency_days must be > 0")
        if self.support_chunks < 0:
            raise ValueError("support_chunks must be ≥ 0")


# Memory recall's fusion (Settings.fusion: /v3/recall, the context pack's memories, related): the
# spec's weights, with a code chunk's text share by its own evidence, each leg completed, a prose chunk's
# text share scaled by the square of the share of the question's words it holds (text_coverage 2: one
# of two words asked counts a quarter, one of four a sixteenth, the whole question in full), and the
# divisor never below 2.5 BM25 per query word. Both keep an incidental shared word from outvoting
# meaning; before coverage the divisor alone did it, at 5 (relevance's bm25_scale), which also held a
# keyword match of the whole question at half weight. Chosen on every workload of the recall suite at
# once (BENCHMARKS.md, "Recall that answers, fourth round": coverage 1, 1.5, 2, 3 by divisor 0, 2.5, 5).
RECALL_FUSION = FusionWeights(code_text_evidence=True, complete_legs=True, text_reference=2.5, text_coverage=2.0)
# Documentation's (DocsetSettings.fusion: /retrieve, the context pack's documentation): top candidates'
# cosines sit in a narrow band while max-normalised BM25 spans 0-1, so at the memory weights the
# keyword leg decides most orderings; 0.8/0.2 measured best on the docs eval (BENCHMARKS.md, docsets).
# No recency bonus: documentation does not age, and a refresh must not reorder pages by when they
# happened to be fetched. Page evidence: a page's best chunk gains 0.2 × the scores of the page's
# next two best candidates, so a page about the topic beats a page that mentions it once. Each leg
# keeps its own top k (the weights and page support were chosen with them).
DOCSET_FUSION = FusionWeights(vector=0.8, text=0.2, recency=0.0, support=0.2, support_chunks=2,
                              code_text_evidence=False, complete_legs=False)


@dataclass(frozen=True)
class NeighbourWeights:
    weight: float = 0.3
    window: int = 2
    decay: float = 0.8  # a neighbour two saves away passes 0.8 of what the next one would
    lookups: int = 100

    def __post_init__(self) -> None:
        if self.weight < 0:
            raise ValueError("neighbour weight must be ≥ 0")
        if self.window < 1 or self.lookups < 1:
            raise ValueError("neighbour window and lookups must be ≥ 1")
        if not 0 <= self.decay <= 1:
            raise ValueError("neighbour decay must be between 0 and 1")

    @property
    def active(self) -> bool:
        return self.weight > 0


@dataclass(frozen=True)
class ContextWeights:
    sides: str = "both"  # "before", "both", or "none" (off)
    text_weight: float = 0.5  # of the context field in the text leg, against 1 for the body; 0: none
    vector: bool = True  # mix the window's embedding into the memory's own
    # The window's "after" side in the vector too (else only in the text field): without it a
    # memory's vector is final when it is saved, so the next save rebuilds its entry without
    # embedding anything (its own and its window's embeddings are recent: memlane.ingest.embedding_cache).
    vector_after: bool = True
    max_chars: int = 600  # of each neighbour's text (the embedder reads ~256 word pieces)

    def __post_init__(self) -> None:
        if self.sides not in ("none", "before", "both"):
            raise ValueError("context sides must be none, before or both")
        if self.text_weight < 0:
            raise ValueError("context text weight must be ≥ 0")
        if self.max_chars < 1:
            raise ValueError("context max_chars must be ≥ 1")

    @property
    def text(self) -> bool:
        return self.text_weight > 0

    @property
    def active(self) -> bool:
        return self.sides != "none" and (self.vector or self.text)


# Recall's optional rerank stage (memlane.ports.Rerank; on AWS with MEMLANE_RERANK_MODEL_ID): how many
# fused candidates the reranker reads, and its weight against the fused score (1.0 replaces it).
DEFAULT_RERANK_TOP_N = 30
DEFAULT_RERANK_WEIGHT = 0.7
MAX_RERANK_TOP_N = 100  # Bedrock bills a query per 100 documents: more than 100 costs a second query
