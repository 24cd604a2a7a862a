"""The recall suite's embedding cache (bench.eval.cache): vectors by (embedder id, kind, text), kept
between runs, so that only texts never embedded before reach the model."""

from __future__ import annotations

import numpy as np

from bench.eval.cache import CachedEmbedder, EmbeddingCache, cache_dir


class CountingEmbedder:
    def __init__(self, name: str = "fake/1") -> None:
        self.id = name
        self.dimension = 3
        self.documents: list[str] = []
        self.queries: list[str] = []

    def _vector(self, text: str) -> list[float]:
        v = np.array([len(text), text.count("a") + 0.1, 1.0 / 3], dtype=np.float64)
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts):
        self.documents += list(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text):
        self.queries.append(text)
        return self._vector(text)


def test_only_texts_missing_from_the_cache_are_embedded_and_reopening_keeps_them(tmp_path):
    path = tmp_path / "c" / "embeddings.sqlite3"
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, EmbeddingCache(path))
    first = cached.embed_documents(["alpha", "beta", "alpha"])
    # each distinct text once, in the caller's order
    assert inner.documents == ["alpha", "beta"]
    assert len(first) == 3 and first[0] == first[2]
    assert cached.id == "fake/1" and cached.dimension == 3
    # the vectors are the model's, to float32 precision, on the first run and every later one
    assert np.allclose(first[1], inner._vector("beta"), atol=1e-7)
    cached.cache.close()

    # When a later run opens the same file
    inner2 = CountingEmbedder()
    again = CachedEmbedder(inner2, EmbeddingCache(path))
    assert again.embed_documents(["beta", "gamma", "alpha"]) == [first[1], again.embed_documents(["gamma"])[0], first[0]]
    assert inner2.documents == ["gamma"]
    assert again.cache.hits >= 2


def test_queries_documents_and_models_do_not_share_entries(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.sqlite3")
    a, b = CountingEmbedder("model/a"), CountingEmbedder("model/b")
    CachedEmbedder(a, cache).embed_documents(["text"])
    CachedEmbedder(a, cache).embed_query("text")
    CachedEmbedder(b, cache).embed_query("text")
    assert a.documents == ["text"] and a.queries == ["text"] and b.queries == ["text"]
    CachedEmbedder(a, cache).embed_query("text")
    assert a.queries == ["text"]  # the second time from the cache
    assert len(cache) == 3


def test_the_cache_directory_is_the_flag_then_the_environment_then_bench_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("MEMLANE_EVAL_EMBED_CACHE", raising=False)
    assert cache_dir().parts[-2:] == ("bench", ".cache")
    monkeypatch.setenv("MEMLANE_EVAL_EMBED_CACHE", str(tmp_path / "env"))
    assert cache_dir() == tmp_path / "env"
    assert cache_dir(tmp_path / "flag") == tmp_path / "flag"
