"""Issue 6 through the services: versions, auto-forget, complete deletion, cache, last access,
rate limits, doctor, export/import (spec §4.7, §9, §10, §13 Edge Caching and Memory Management)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest
from fakes import FixedClock, HashEmbedder

from memlane.documents.forget import forget_expired
from memlane.domain.errors import NotFoundError
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.local.doctor import examine
from memlane.recall.service import recall
from memlane.services.memory import delete_document, get_document, save_memory


@pytest.fixture
def clock(stack):
    c = FixedClock()
    stack.services = replace(stack.services, clock=c)
    return c


def remember(stack, who, content, **kw):
    return save_memory(stack.services, who, MemoryIn(content=content, **kw), inline=True)


def ids(out) -> list[str]:
    return [r.document_id for r in out.results]


# ----------------------------------------------------------------------------- versions (§9)


def test_changed_content_at_the_same_url_becomes_a_linked_version(stack, who, clock):
    url = "https://example.com/handbook"
    v1 = remember(stack, who, "The office opens at eight.", source_url=url, title="Handbook")
    clock.advance(minutes=5)
    v2 = remember(stack, who, "The office opens at nine since March.", source_url=url, title="Handbook")
    assert v2.id != v1.id and not v2.duplicate
    doc2 = get_document(stack.services, who, v2.id, include_versions=True)
    assert doc2.updates_memory_id == v1.id
    assert [(v.id, v.title) for v in doc2.versions] == [(v1.id, "Handbook"), (v2.id, "Handbook")]
    assert doc2.versions[0].created_at < doc2.versions[1].created_at
    assert get_document(stack.services, who, v1.id).superseded_by == v2.id
    # recall returns only the latest version unless asked otherwise
    assert ids(recall(stack.services, who, RecallIn(query="office opens"))) == [v2.id]
    both = recall(stack.services, who, RecallIn(query="office opens", include_versions=True))
    assert set(ids(both)) == {v1.id, v2.id}
    assert [r.document_id for r in recall(stack.services, who, RecallIn(query="")).results] == [v2.id]
    # identical content is still deduplicated
    again = remember(stack, who, "The office opens at nine since March.", source_url=url)
    assert again.duplicate and again.id == v2.id


def test_updates_memory_id_links_to_the_end_of_the_chain(stack, who, clock):
    v1 = remember(stack, who, "Budget draft one.")
    v2 = remember(stack, who, "Budget draft two.", updates_memory_id=v1.id)
    v3 = remember(stack, who, "Budget draft three.", updates_memory_id=v1.id)  # names the old one
    chain = get_document(stack.services, who, v3.id, include_versions=True).versions
    assert [v.id for v in chain] == [v1.id, v2.id, v3.id]
    with pytest.raises(NotFoundError, match="updates_memory_id"):
        remember(stack, who, "x", updates_memory_id="00000000-0000-4000-8000-000000000000")


def test_deleting_the_latest_version_brings_the_previous_back(stack, who, clock):
    v1 = remember(stack, who, "Wifi password is tulip42.", source_url="https://n.example/wifi")
    v2 = remember(stack, who, "Wifi password is orchid77.", source_url="https://n.example/wifi")
    delete_document(stack.services, who, v2.id)
    assert ids(recall(stack.services, who, RecallIn(query="wifi password"))) == [v1.id]
    assert get_document(stack.services, who, v1.id, include_versions=True).versions[0].id == v1.id
    assert get_document(stack.services, who, v1.id).superseded_by is None


# ----------------------------------------------------------------------------- auto-forget (§10)


def test_expired_memory_is_invisible_before_the_sweep_and_gone_after(stack, who, clock):
    keep = remember(stack, who, "Parking spot B12 is ours until December.")
    temp = remember(
        stack, who, "Door code 4411 for the party weekend.", forget_after=clock.now() + timedelta(hours=1)
    )
    q = RecallIn(query="door code party", limit=100)
    assert temp.id in ids(recall(stack.services, who, q))
    clock.advance(hours=2)
    # before any sweep: not recalled, not readable, not among the recent documents
    assert temp.id not in ids(recall(stack.services, who, q))
    assert temp.id not in ids(recall(stack.services, who, RecallIn(query="")))
    with pytest.raises(NotFoundError):
        get_document(stack.services, who, temp.id)
    report = forget_expired(stack.services)
    assert report.forgotten == 1 and report.by_organization == {who.organization_id: 1}
    assert stack.metadata.get_document(who.organization_id, temp.id) is None
    assert stack.metadata.get_chunks(who.organization_id, temp.id) == []
    assert temp.id not in stack.index.document_ids(who.organization_id)
    assert keep.id in stack.index.document_ids(who.organization_id)
    [record] = stack.metadata.list_forgotten(who.organization_id)
    assert record["document_id"] == temp.id and record["reason"] == "forget_after reached"
    assert "4411" not in json.dumps(record)  # the record keeps no content
    assert examine(stack).total == 0
    assert forget_expired(stack.services).forgotten == 0  # a schedule firing twice is harmless


# ----------------------------------------------------------------------------- cache (§4.7)


def test_identical_recall_is_served_from_the_cache(stack, who, clock, hash_embedder):
    remember(stack, who, "The boiler service is booked for Friday.")
    q = RecallIn(query="boiler service")
    first = recall(stack.services, who, q)
    calls = hash_embedder.query_calls
    second = recall(stack.services, who, q)
    assert hash_embedder.query_calls == calls, "a hit neither embeds nor searches"
    assert ids(second) == ids(first) and second.results[0].score == first.results[0].score
    other = recall(
        stack.services, who, RecallIn(query="boiler service", limit=3)
    )  # another parameter: a miss
    assert hash_embedder.query_calls == calls + 1 and ids(other) == ids(first)


def test_a_save_after_a_cached_recall_is_visible_in_the_next_recall(stack, who, clock):
    a = remember(stack, who, "Plant the garlic in October.")
    q = RecallIn(query="plant garlic")
    assert ids(recall(stack.services, who, q)) == [a.id]
    b = remember(stack, who, "Garlic needs well drained soil to plant.")
    assert set(ids(recall(stack.services, who, q))) == {a.id, b.id}


def test_generations_are_per_project(stack, who, clock):
    from memlane.domain.requests import ProjectIn
    from memlane.services.projects import create_project

    p = create_project(stack.services, who, ProjectIn(name="Elsewhere"))
    remember(stack, who, "Compost turns every two weeks.")
    q = RecallIn(query="compost")
    recall(stack.services, who, q)
    key_before = stack.services.cache.generations([f"{who.organization_id}:{p.id}"])
    remember(stack, who, "Unrelated note in another project.", project_id=p.id)
    assert stack.services.cache.generations([f"{who.organization_id}:{p.id}"]) != key_before


def test_deletion_leaves_nothing_in_the_cache(stack, who, clock):
    d = remember(stack, who, "Locker combination is 19-27-3.")
    recall(stack.services, who, RecallIn(query="locker combination"))
    assert d.id in stack.services.cache.document_ids()
    delete_document(stack.services, who, d.id)
    assert d.id not in stack.services.cache.document_ids()
    assert recall(stack.services, who, RecallIn(query="locker combination")).results == []
    assert examine(stack).total == 0


# ----------------------------------------------------------------------------- last access


def test_recall_updates_last_accessed_at_of_returned_documents_only(stack, who, clock):
    hit = remember(stack, who, "Passport expires in 2031.")
    miss = remember(stack, who, "Bananas ripen faster in a paper bag.")
    clock.advance(minutes=3)
    out = recall(stack.services, who, RecallIn(query="passport expiry", limit=1))
    assert ids(out) == [hit.id]
    assert stack.metadata.get_document(who.organization_id, hit.id).last_accessed_at == clock.now()
    assert stack.metadata.get_document(who.organization_id, miss.id).last_accessed_at is None


# ----------------------------------------------------------------------------- doctor


def test_doctor_finds_and_repairs_a_planted_orphan(stack, who, clock):
    d = remember(stack, who, "Orphan test document about kayaks.")
    # plant: remove the document from metadata only, leaving its index rows behind
    stack.metadata.delete_document(who.organization_id, d.id)
    report = examine(stack)
    assert report.index_orphans == [d.id] and report.total == 1
    fixed = examine(stack, repair=True)
    assert fixed.repaired
    assert examine(stack).total == 0
    assert d.id not in stack.index.document_ids()


def test_doctor_reindexes_a_ready_document_missing_from_the_index(stack, who, clock):
    d = remember(stack, who, "Ready but unindexed note about canoes.")
    stack.index.delete_document(who.organization_id, d.id)
    assert examine(stack).missing_from_index == [d.id]
    examine(stack, repair=True)
    assert ids(recall(stack.services, who, RecallIn(query="canoes"))) == [d.id]


# ----------------------------------------------------------------------------- export / import


class OtherEmbedder(HashEmbedder):
    @property
    def id(self) -> str:
        return "test/other-hash/256"


def test_export_import_round_trip_preserves_documents_and_versions(stack, who, clock, tmp_path):
    from memlane.config import Settings
    from memlane.domain.principal import Principal
    from memlane.ingest.summarize import LocalSummarizer
    from memlane.local.compose import build_local
    from memlane.services.keys import ensure_organization
    from memlane.services.projects import default_project
    from memlane.services.transfer import export_project, import_lines, reminted_id

    v1 = remember(
        stack,
        who,
        "Recipe v1: two eggs.",
        source_url="https://r.example/cake",
        title="Cake",
        metadata={"tags": ["baking"]},
    )
    v2 = remember(
        stack,
        who,
        "Recipe v2: three eggs and butter.",
        source_url="https://r.example/cake",
        title="Cake",
        forget_after=clock.now() + timedelta(days=30),
    )
    lines = list(export_project(stack.services, who, default_project(stack.services, who)))
    assert json.loads(lines[0])["format"] == "memlane.export/1" and len(lines) == 3

    target = build_local(
        Settings(data_dir=tmp_path / "target"), embedder=OtherEmbedder(), summarizer=LocalSummarizer()
    )
    try:
        org, _ = ensure_organization(target.metadata, "imported")
        them = Principal(organization_id=org.id, key_id="k")
        result = import_lines(target.services, them, lines)
        assert result["imported"] == 2 and result["skipped"] == 0 and result["reminted"] == 2

        def moved(doc_id):  # another organization: each document takes an id of its own (issue 34)
            return reminted_id(org.id, doc_id) if doc_id else None

        for original in (v1, v2):
            a = stack.metadata.get_document(who.organization_id, original.id)
            b = target.metadata.get_document(org.id, moved(original.id))
            for field in (
                "title",
                "content",
                "summary",
                "metadata",
                "content_hash",
                "content_type",
                "source_url",
                "forget_after",
                "created_at",
                "chunk_count",
            ):
                assert getattr(a, field) == getattr(b, field), field
            # the version chain, linked through the new ids
            assert (b.updates_memory_id, b.superseded_by) == (moved(a.updates_memory_id), moved(a.superseded_by))
            assert b.embedder == "test/other-hash/256"
        out = recall(target.services, them, RecallIn(query="eggs butter recipe"))
        assert ids(out) == [moved(v2.id)]  # the latest version only, re-embedded with the target's model
        assert import_lines(target.services, them, lines)["skipped"] == 2  # idempotent
    finally:
        target.close()
