"""The two plain baselines every workload is measured beside, over the same units in the same run:
Okapi BM25 with English stopwords (bm25s defaults: k1 1.5, b 0.75) and MiniLM cosine similarity."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

BASELINES = ("bm25", "minilm")


class Bm25Baseline:
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
    """Cosine similarity of unit vectors (the dot product)."""

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


def baselines(doc_ids: Sequence[str], texts: Sequence[str], embedder: Any) -> dict[str, Any]:
    """Both baselines over one set of units (texts: title and content, as memlane holds them)."""
    return {
        "bm25": Bm25Baseline(doc_ids, texts),
        "minilm": DenseBaseline(doc_ids, embedder.embed_documents(list(texts)), embedder.embed_query),
    }
