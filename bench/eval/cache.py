"""Embeddings kept between evaluation runs, keyed by (embedder id, kind, sha256(text)).

A full suite run embeds tens of thousands of texts on two cores; a change to ranking changes none of
them. The cache is a SQLite file (one table, float32 blobs: the local model computes in float32, so
a stored vector is exactly the one the model returned). The baselines and the server the suite
starts embed through the same cache (`CachedEmbedder`, handed to the bench's `LocalServer`); the
production composition never sees it.

Where: `--cache-dir`, else `MEMLANE_EVAL_EMBED_CACHE`, else `bench/.cache` (git-ignored).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ENV = "MEMLANE_EVAL_EMBED_CACHE"
DEFAULT_DIR = Path(__file__).resolve().parents[1] / ".cache"


def cache_dir(explicit: str | Path | None = None) -> Path:
    return Path(explicit or os.environ.get(ENV) or DEFAULT_DIR)


class EmbeddingCache:
    """Vectors by (embedder id, kind, text); safe to share between threads."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (embedder TEXT, kind TEXT, sha TEXT, vector BLOB, "
            "PRIMARY KEY (embedder, kind, sha))"
        )
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_many(self, embedder: str, kind: str, texts: Sequence[str]) -> list[list[float] | None]:
        shas = [self.digest(t) for t in texts]
        found: dict[str, list[float]] = {}
        with self._lock:
            for start in range(0, len(shas), 500):
                part = list(dict.fromkeys(shas[start : start + 500]))
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT sha, vector FROM vectors WHERE embedder = ? AND kind = ? AND sha IN ({marks})",
                    [embedder, kind, *part],
                ).fetchall()
                found.update({sha: np.frombuffer(blob, dtype=np.float32).tolist() for sha, blob in rows})
            out = [found.get(s) for s in shas]
            self.hits += sum(1 for v in out if v is not None)
            self.misses += sum(1 for v in out if v is None)
        return out

    def put_many(self, embedder: str, kind: str, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        rows = [
            (embedder, kind, self.digest(t), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedEmbedder:
    """An embedder (memlane.ports.models.Embedder) that asks `inner` only for texts the cache lacks.
    Same id and dimension as `inner`: the stores cannot tell the difference."""

    def __init__(self, inner: Any, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache

    @property
    def id(self) -> str:
        return str(self.inner.id)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        found = self.cache.get_many(self.id, "document", texts)
        missing = list(dict.fromkeys(t for t, v in zip(texts, found, strict=True) if v is None))
        if missing:
            computed = self.inner.embed_documents(missing)
            self.cache.put_many(self.id, "document", missing, computed)
            fresh = {t: list(map(float, np.asarray(v, dtype=np.float32))) for t, v in zip(missing, computed, strict=True)}
            found = [v if v is not None else fresh[t] for t, v in zip(texts, found, strict=True)]
        return [v for v in found if v is not None]

    def embed_query(self, text: str) -> list[float]:
        [found] = self.cache.get_many(self.id, "query", [text])
        if found is not None:
            return found
        vector = self.inner.embed_query(text)
        self.cache.put_many(self.id, "query", [text], [vector])
        return list(map(float, np.asarray(vector, dtype=np.float32)))
