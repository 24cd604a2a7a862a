"""Synthetic corpora for the benchmarks: English-shaped text from a Zipf vocabulary, and a corpus
written straight into a local stack's stores with random unit vectors.

Embedding 100k real chunks would take over an hour on 2 cores, and the cost of exact search and of
BM25 does not depend on the vectors' values; the text's Zipf shape gives BM25 posting lists
realistic lengths.
"""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta

import numpy as np

from memlane.adapters.local.search_index import STOPWORDS
from memlane.domain.models import Chunk, ContentType, Document, DocumentStatus, chunk_id_for
from memlane.ports import IndexedChunk

WORDS = [
    "memory",
    "recall",
    "vector",
    "index",
    "search",
    "query",
    "document",
    "chunk",
    "embedding",
    "score",
    "python",
    "lambda",
    "server",
    "project",
    "cache",
    "token",
    "sentence",
    "paragraph",
    "section",
    "heading",
    "title",
    "summary",
    "metadata",
    "tag",
    "version",
    "forget",
    "schedule",
    "queue",
    "worker",
    "crawl",
    "page",
    "docset",
    "retrieve",
    "snippet",
    "budget",
    "fusion",
    "recency",
    "weight",
    "tenant",
    "organization",
    "key",
    "limit",
    "filter",
    "content",
    "markdown",
    "html",
    "code",
    "json",
    "pdf",
    "email",
    "note",
    "storage",
    "database",
    "table",
    "column",
    "row",
    "transaction",
    "commit",
    "rollback",
    "lock",
    "thread",
    "process",
    "signal",
    "socket",
    "network",
    "request",
    "response",
    "header",
    "body",
    "status",
    "error",
    "retry",
    "backoff",
    "timeout",
    "latency",
    "throughput",
    "benchmark",
    "machine",
    "core",
    "memory",
    "disk",
    "file",
    "directory",
    "path",
    "module",
    "package",
    "function",
    "class",
    "method",
]


def sentence(rng: random.Random, terms: list[str], cum_weights: list[float]) -> str:
    words = rng.choices(terms, cum_weights=cum_weights, k=rng.randint(8, 18))
    return " ".join(words).capitalize() + "."


def vocab(size: int = 20_000) -> tuple[list[str], list[float]]:
    """A Zipf vocabulary shaped like English: function words hold the top ranks (as in real text,
    where "the" alone is ~5% of tokens), content words follow. Without that head, content words
    would be 20-100 times denser than in real documents and every query would match most chunks."""
    rng = random.Random(7)
    terms = sorted(STOPWORDS) + list(WORDS)
    while len(terms) < size:
        terms.append("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(4, 10))))
    weights = [1.0 / (i + 1) for i in range(len(terms))]
    return terms, list(itertools.accumulate(weights))  # cumulative: random.choices is O(log n) then


def document_text(rng: random.Random, terms: list[str], weights: list[float], paragraphs: int) -> str:
    parts = []
    for p in range(paragraphs):
        if p % 3 == 0:
            parts.append(f"## Section {p // 3 + 1}")
        parts.append(" ".join(sentence(rng, terms, weights) for _ in range(rng.randint(3, 7))))
    return "\n\n".join(parts)


def clustered(seed: int, dim: int, clusters: int, spread: float = 0.05, noise_seed: int | None = None):
    """A source of clustered unit vectors (`fill`'s `vectors`): real embeddings gather around topics,
    and a graph index behaves on them as it does on real ones, unlike uniform random vectors (its
    worst case). Each vector is a topic centre plus Gaussian noise of `spread` per dimension (at 384
    dimensions and 0.05, a vector's cosine to its centre is ~0.7, to a neighbour of its topic ~0.5)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    if noise_seed is not None:  # other vectors around the same centres (queries)
        rng = np.random.default_rng(noise_seed)

    def draw(n: int) -> np.ndarray:
        v = centres[rng.integers(0, clusters, n)] + spread * rng.standard_normal((n, dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    return draw


def fill(
    stack, org_id: str, project_id: str, n_chunks: int, dim: int, context: bool = False, vectors=None, seed=None
) -> None:
    """Write the corpus straight into the stores, 500 documents per transaction. `context`: every
    chunk's index entry carries the text of the chunks on both sides of it, as contextual indexing
    (memlane.documents.contextual) gives a short memory saved in a sitting: the text leg's worst case
    (three times the postings), for its latency cost."""
    rng = random.Random(n_chunks if seed is None else seed)
    nprng = np.random.default_rng(n_chunks)
    words, weights = vocab()
    now = datetime.now(UTC)
    per_doc = 5
    docs_per_tx = 500
    n_docs = n_chunks // per_doc
    for first in range(0, n_docs, docs_per_tx):
        with stack.db.transaction():  # the stores' own transactions join this one
            items: list[IndexedChunk] = []
            for d in range(first, min(n_docs, first + docs_per_tx)):
                created = now - timedelta(days=rng.random() * 365)
                doc = Document(
                    organization_id=org_id,
                    project_id=project_id,
                    user_id="bench",
                    title=f"Doc {d}" if seed is None else f"Doc {seed}-{d}",
                    content="",
                    created_at=created,
                    status=DocumentStatus.READY,
                    chunk_count=per_doc,
                )
                chunks = [
                    Chunk(
                        id=chunk_id_for(doc.id, i),
                        document_id=doc.id,
                        organization_id=org_id,
                        project_id=project_id,
                        content=" ".join(sentence(rng, words, weights) for _ in range(12)),
                        chunk_index=i,
                        chunk_count=per_doc,
                        start_offset=0,
                        end_offset=0,
                        title=doc.title,
                        content_type=ContentType.TEXT,
                        created_at=created,
                    )
                    for i in range(per_doc)
                ]
                if vectors is None:  # uniform random unit vectors
                    vecs = nprng.standard_normal((per_doc, dim)).astype(np.float32)
                    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
                else:
                    vecs = vectors(per_doc)
                stack.metadata.put_document(doc)
                stack.metadata.put_chunks(org_id, doc.id, chunks)
                items.extend(
                    IndexedChunk(
                        chunk=c,
                        vector=v,
                        context="\n".join(x.content for x in chunks[max(0, i - 1) : i + 2] if x is not c)
                        if context
                        else "",
                    )
                    for i, (c, v) in enumerate(zip(chunks, vecs, strict=True))
                )
            stack.index.upsert(stack.services.embedder.id, items)
