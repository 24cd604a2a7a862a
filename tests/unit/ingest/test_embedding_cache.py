"""Recent embeddings (memlane.ingest.embedding_cache): a text the write path embedded moments ago is
not embedded again (contextual indexing rebuilds the previous memory's entry when the next one
arrives), the vectors are exactly the ones a fresh embedding gives, and nothing is shared across
organizations."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest
from fakes import FixedClock, HashEmbedder

from memlane.domain.models import Project, chunk_id_for
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn
from memlane.ingest.embedding_cache import RecentEmbeddings, recent_embeddings
from memlane.services.keys import ensure_organization
from memlane.services.memory import save_memory


class RecordingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_documents(self, texts):
        self.texts.extend(texts)
        return super().embed_documents(texts)


@pytest.fixture
def hash_embedder():
    return RecordingEmbedder()


def _stored(stack, doc_id):
    row = stack.db.connection().execute(
        "SELECT vector FROM search_rows WHERE chunk_id = ?", (chunk_id_for(doc_id, 0),)
    ).fetchone()
    return np.frombuffer(row["vector"], dtype=np.float32)


def _sitting(stack, who, contents):
    clock = FixedClock(datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    stack.services = replace(stack.services, clock=clock)
    project = stack.metadata.create_project(
        Project(organization_id=who.organization_id, name="chat", slug=f"chat-{who.organization_id[:8]}")
    ).id
    ids = []
    for content in contents:
        clock.advance(seconds=20)
        ids.append(save_memory(stack.services, who, MemoryIn(content=content, title="chat", project_id=project,
                                                             conversation_id="chat")).id)
    return ids


TURNS = [
    "Ann: Did you finish the pottery class you signed up for?",
    "Bo: Yes, last Friday! I made a black and white bowl.",
    "Ann: The weather has been lovely this week.",
]


def test_a_rebuilt_neighbour_does_not_embed_its_own_text_again(stack, who, hash_embedder):
    # When three turns are saved one by one in a sitting (each save rebuilds the one before it)
    ids = _sitting(stack, who, TURNS)
    # Then each turn's own text was embedded once, although entries were rebuilt
    for turn in TURNS:
        assert hash_embedder.texts.count(f"chat\n{turn}") == 1
    assert len(hash_embedder.texts) > len(TURNS)  # windows were embedded too
    # and the vectors are the ones a cold process computes: the same sitting with an empty cache
    recent_embeddings(hash_embedder).clear()
    cached = [_stored(stack, i).copy() for i in ids]
    from memlane.ingest.summarize import LocalSummarizer
    from memlane.local.compose import build_local

    cold = build_local(type(stack.services.settings)(data_dir=stack.services.settings.data_dir.parent / "cold"),
                       embedder=RecordingEmbedder(), summarizer=LocalSummarizer())
    try:
        org, _ = ensure_organization(cold.metadata, "acme")
        cold_ids = _sitting(cold, Principal(organization_id=org.id, key_id="k"), TURNS)
        for mine, theirs in zip(cached, (_stored(cold, i) for i in cold_ids), strict=True):
            assert np.array_equal(mine, theirs)
    finally:
        cold.close()


def test_organizations_never_share_an_embedding(stack, who, hash_embedder):
    other, _ = ensure_organization(stack.metadata, "globex")
    _sitting(stack, who, TURNS[:1])
    before = len(hash_embedder.texts)
    # When another organization saves the very same text
    _sitting(stack, Principal(organization_id=other.id, key_id="k2"), TURNS[:1])
    # Then it is embedded for that organization (no hit across tenants)
    assert hash_embedder.texts[before:] == hash_embedder.texts[:before]


def test_the_cache_is_bounded_and_forgets_the_least_recently_used():
    cache = RecentEmbeddings(entries=2)
    cache.put("a", [1.0, 0.0])
    cache.put("b", [0.0, 1.0])
    assert cache.get("a") == [1.0, 0.0]  # a is now the most recent
    cache.put("c", [0.5, 0.5])
    assert cache.get("b") is None
    assert cache.get("a") == [1.0, 0.0] and cache.get("c") == [0.5, 0.5]
    # 64-bit storage: what comes back is exactly what went in
    cache.put("d", [0.1, 1 / 3])
    assert cache.get("d") == [0.1, 1 / 3]
