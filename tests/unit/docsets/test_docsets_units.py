"""Docset building blocks without a network: the SQLite docset store, content cleaning, scope,
retrieval's diversity and budget helpers, and the request clamps."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from memlane.adapters.local.docset_store import SqliteDocsetStore
from memlane.docsets.pages import admissible, link_density, strip_markdown_links
from memlane.docsets.retrieval import _cut, diversify, format_snippet
from memlane.docsets.schemas import IndexIn, RetrieveIn
from memlane.domain.docsets import ClientSession, Docset, PageCounts, PageStatus, page_id_for
from memlane.recall.fusion import ScoredChunk


@pytest.fixture
def store(stack) -> SqliteDocsetStore:
    return SqliteDocsetStore(stack.db)


def docset(**kw) -> Docset:
    base = {"organization_id": "org", "project_id": "proj", "name": "Docs", "base_url": "https://d.example/",
            "seed_url": "https://d.example/docs/", "seed_slug": "/docs/", "allowed_paths": ["/docs"],
            "max_pages": 5, "created_at": 1_767_000_000_000, "updated_at": 1_767_000_000_000}
    return Docset(**{**base, **kw})


# ----------------------------------------------------------------------------- store


def test_pages_are_queued_once_and_capped_per_docset(store):
    d = store.create_docset(docset())
    urls = [f"https://d.example/docs/p{i}" for i in range(8)]
    assert store.add_pages(d, urls[:3] + urls[:3], now=1) == urls[:3]
    assert store.add_pages(d, urls, now=2) == urls[3:5]  # the cap is 5 pages
    pages, total = store.list_pages(d.id)
    assert total == 5 and [p.url for p in pages] == urls[:5]
    assert pages[0].id == page_id_for(d.id, urls[0]) and pages[0].path == "/docs/p0"
    assert {p.status for p in pages} == {PageStatus.PENDING}


def test_claims_hand_each_page_out_once_and_stuck_pages_come_back(store):
    d = store.create_docset(docset())
    store.add_pages(d, ["https://d.example/docs/a", "https://d.example/docs/b"], now=10)
    first = store.claim_pages(now=100, limit=1)
    second = store.claim_pages(now=100, limit=5)
    assert len(first) == 1 and len(second) == 1 and first[0].id != second[0].id
    assert store.claim_pages(now=100, limit=5) == []
    assert first[0].status == PageStatus.PROCESSING and first[0].attempts == 1 and first[0].claimed_at == 100
    counts = store.page_counts(d.id, stuck_before=200)
    assert counts == PageCounts(total=2, pending=2, stuck=2, last_update=100)
    assert counts.status().value == "indexing"
    assert {p.id for p in store.stuck_pages(d.id, stuck_before=200)} == {first[0].id, second[0].id}
    assert store.stuck_pages(d.id, stuck_before=100) == []  # claimed at 100: not before it
    assert store.release_stuck(stuck_before=200, now=300) == 2
    again = store.claim_pages(now=300, limit=5)
    assert len(again) == 2 and {p.attempts for p in again} == {2}


def test_requeue_keeps_hashes_of_indexed_pages_unless_full(store):
    d = store.create_docset(docset())
    store.add_pages(d, [f"https://d.example/docs/{n}" for n in "abc"], 1)
    a, b, c = store.claim_pages(now=2, limit=3)
    store.save_page(a.model_copy(update={"status": PageStatus.INDEXED, "content_hash": "h", "etag": '"1"',
                                         "retry_at": None}))
    store.save_page(b.model_copy(update={"status": PageStatus.SKIPPED, "error": "HTTP 404",
                                         "retry_at": None}))
    store.save_page(c.model_copy(update={"status": PageStatus.ERROR, "error": "boom", "retry_at": None}))
    assert store.requeue_docset(d.id, now=5, clear_hashes=False) == (3, 1, 2)
    kept = store.get_page(d.id, a.id)
    assert (kept.status, kept.content_hash, kept.etag, kept.retry_at) == (PageStatus.PENDING, "h", '"1"', 5)
    assert store.get_page(d.id, c.id).error is None
    assert store.requeue_docset(d.id, now=6, clear_hashes=True) == (3, 0, 3)
    cleared = store.get_page(d.id, a.id)
    assert (cleared.content_hash, cleared.etag) == (None, None)


def test_sessions_are_per_organization(store):
    store.put_session(ClientSession(id="s1", organization_id="a", client_type="cli", connected_at=1,
                                    last_heartbeat=1))
    store.put_session(ClientSession(id="s1", organization_id="a", client_type="cli", connected_at=9,
                                    last_heartbeat=5))
    store.put_session(ClientSession(id="s1", organization_id="b", connected_at=2, last_heartbeat=2))
    mine = store.list_sessions("a")
    assert [(s.id, s.connected_at, s.last_heartbeat) for s in mine] == [("s1", 1, 5)]
    assert store.delete_session("a", "s1") is True and store.delete_session("a", "s1") is False
    assert [s.organization_id for s in store.list_sessions("b")] == ["b"]


def test_deleting_a_docset_removes_its_pages_and_project(stack, store, org):
    from memlane.domain.models import Project

    project = stack.metadata.create_project(Project(organization_id=org.id, name="Docs", slug="docs-x"))
    d = store.create_docset(docset(organization_id=org.id, project_id=project.id))
    store.add_pages(d, ["https://d.example/docs/a"], 1)
    assert store.delete_docset("someone-else", d.id) is False
    assert store.delete_docset(org.id, d.id) is True
    assert store.get_docset(org.id, d.id) is None and store.list_pages(d.id)[1] == 0
    assert stack.metadata.get_project(org.id, project.id) is None


# ----------------------------------------------------------------------------- content and scope


def test_links_become_their_text_and_link_density_is_measured():
    text, linked = strip_markdown_links('See [the guide](https://x.example/a_(b) "Guide") and [API](/api).')
    assert text == "See the guide and API."
    assert linked == len("the guide") + len("API")
    assert link_density(linked, text) == pytest.approx(12 / len(text))
    # Index pages link "[[1]](...)", API docs "[`round(x[, n])`](...)"; link text may wrap.
    nested, _ = strip_markdown_links('pack, [[1]](https://x/a#i-4), [`round(x[, n])`](https://x/f#round) '
                                     "and [abstract base\nclass](https://x/glossary#abc).")
    assert nested == "pack, [1], `round(x[, n])` and abstract base\nclass."
    nav, nav_linked = strip_markdown_links("- [Installing](/1)\n- [Configuring](/2)\n- [Upgrading](/3)")
    assert link_density(nav_linked, nav) > 0.6


def test_admissible_keeps_scope_dedupes_and_drops_binaries():
    d = docset()
    urls = ["https://d.example/docs/a#x", "https://d.example/docs/a", "/docs/b", "https://d.example/blog/c",
            "https://other.example/docs/d", "https://d.example/docs/logo.png", "mailto:a@d.example",
            "https://D.EXAMPLE:443/docs/e?q=1"]
    absolute = [u if u.startswith(("http", "mailto")) else "https://d.example" + u for u in urls]
    assert admissible(d, absolute) == ["https://d.example/docs/a", "https://d.example/docs/b",
                                       "https://d.example/docs/e?q=1"]


# ----------------------------------------------------------------------------- retrieval helpers


def scored(doc: str, i: int, score: float) -> ScoredChunk:
    return ScoredChunk(chunk_id=f"{doc}-{i}", document_id=doc, chunk_index=i, score=score, vector_score=score,
                       text_score=0.0, recency=0.0)


def test_diversify_caps_chunks_per_page_in_rank_order():
    ranked = [scored("a", 0, 0.9), scored("a", 1, 0.8), scored("a", 2, 0.7), scored("b", 0, 0.6),
              scored("a", 3, 0.5), scored("c", 0, 0.4)]
    assert [c.chunk_id for c in diversify(ranked, 10, 2)] == ["a-0", "a-1", "b-0", "c-0"]
    assert [c.chunk_id for c in diversify(ranked, 2, 1)] == ["a-0", "b-0"]


def test_snippet_format_and_cutting():
    expected = "## T\nSource: https://u\nSection: A > B\n\nbody"
    assert format_snippet("T", "https://u", "A > B", "body") == expected
    assert format_snippet("T", "https://u", "", "body") == "## T\nSource: https://u\n\nbody"
    text = "alpha beta gamma delta epsilon " * 10
    cut = _cut(text, 50)
    assert len(cut) <= 50 and cut.endswith("…") and text.startswith(cut[:-1])
    assert _cut("short", 50) == "short"


def test_request_defaults_and_clamps():
    r = RetrieveIn(query="q")
    assert (r.topK, r.maxChunksPerPage, r.maxTotalChars, r.formatSnippets, r.mode, r.docsetIds) == (
        5, 3, 32000, True, "hybrid", None)
    assert RetrieveIn(query="q", topK=0).topK == 1 and RetrieveIn(query="q", topK=10**6).topK == 100
    assert RetrieveIn(query="q", maxTotalChars=10**9).maxTotalChars == 1_000_000
    for bad in ({"query": "  "}, {"query": "q", "maxTotalChars": 0}, {"query": "q", "extra": 1}):
        with pytest.raises(ValidationError):
            RetrieveIn(**bad)
    i = IndexIn(baseUrl="https://nextjs.org", seedSlug="/docs/getting-started")
    assert (i.name, i.allowedPaths, i.waitForSeed, i.maxPages) == (None, None, False, None)
    with pytest.raises(ValidationError):
        IndexIn(baseUrl=" ", seedSlug="/")


def test_epoch_ms_is_epoch_milliseconds():
    from memlane.domain.docsets import epoch_ms

    assert epoch_ms(datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)) == 1767323045678
