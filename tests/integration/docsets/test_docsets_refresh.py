"""Refresh (incremental by ETag and content hash, full reindex, removed pages), stuck pages, and a
crawl that survives a restart of the local server (reliability rows 17 and 20)."""

from __future__ import annotations

import time

import pytest
from docsets_site import LONG, index, pages_by_path, retrieve, start_server

from memlane.domain.docsets import PageStatus

pytestmark = pytest.mark.integration


def refresh(running, **body) -> dict:
    r = running.client.post("/refresh", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_refresh_is_incremental_and_removes_pages_that_disappeared(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    before = pages_by_path(docs_server, docset_id)
    embedder = docs_server.server.stack.services.embedder
    calls_before = embedder.calls
    # Given: one page changed, one removed, one changed only in its chrome (same cleaned content,
    # new ETag), the rest untouched
    site.html("/docs/config", "Configuration",
              "Tune the quux deadline with the QUUX_DEADLINE variable. " + LONG, etag='"config-2"')
    site.remove("/docs/orphan")
    site.raw("/sitemap.xml", 200, b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"></urlset>',
             {"Content-Type": "application/xml"})
    site.html("/docs/new", "Renamed Page", "Zebra migration notes live on this renamed page.", etag='"new-2"')
    site.reset_hits()
    # When: a refresh (forced: the docset was crawled a moment ago)
    out = refresh(docs_server, docsetId=docset_id, force=True)
    # Then: the documented response, with the hashes kept for the 5 indexed pages and cleared for
    # the 2 skipped ones
    assert set(out) == {"docsetId", "status", "refreshed", "message", "incremental"}
    assert out == {"docsetId": docset_id, "status": "pending", "refreshed": True,
                   "message": "Refreshing 7 pages from Frob Docs (incremental mode)",
                   "incremental": {"preservedHashes": 5, "clearedHashes": 2}}
    docs_server.wait_ready(docset_id)
    after = pages_by_path(docs_server, docset_id)
    # Unchanged pages answered 304 to the stored ETag and were not re-embedded.
    conditional = [h for p, h in site.hits if p == "/docs/install"]
    assert conditional and conditional[0].get("If-None-Match") == '"install-1"'
    assert after["/docs/install"]["indexedAt"] == before["/docs/install"]["indexedAt"]
    assert after["/docs/install"]["fetchedAt"] > before["/docs/install"]["fetchedAt"]
    # A new ETag with the same cleaned content: fetched, hash compared, not re-embedded.
    assert after["/docs/new"]["indexedAt"] == before["/docs/new"]["indexedAt"]
    # The changed page was re-embedded; only its chunks went to the embedder.
    assert after["/docs/config"]["indexedAt"] > before["/docs/config"]["indexedAt"]
    assert embedder.calls == calls_before + 2  # its chunks, and the candidate keyphrases of its summary
    top = retrieve(docs_server, "quux deadline variable", docsetIds=[docset_id])["results"][0]
    assert "QUUX_DEADLINE" in top["content"]
    assert all("QUUX_TIMEOUT" not in r["content"]
               for r in retrieve(docs_server, "quux timeout", topK=20, maxChunksPerPage=20)["results"])
    # The removed page left the docset and the index.
    assert "/docs/orphan" not in after
    orphan_doc = before["/docs/orphan"]["id"]
    assert orphan_doc not in docs_server.server.stack.index.document_ids()
    assert all(r["url"] != f"{site.url}/docs/orphan"
               for r in retrieve(docs_server, "xylophone tuning", topK=20)["results"])


def test_refresh_respects_max_age_and_full_reindex_re_embeds(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    fresh = refresh(docs_server, docsetId=docset_id)
    assert fresh["refreshed"] is False and fresh["status"] == "ready"
    assert fresh["message"].startswith("Frob Docs is fresh (refreshed 0.0 hours ago; maxAge 24 hours)")
    assert "incremental" not in fresh or fresh["incremental"] is None
    by_url = refresh(docs_server, baseUrl=site.url, maxAge=0.0000001)
    assert by_url["refreshed"] is True and by_url["docsetId"] == docset_id
    docs_server.wait_ready(docset_id)
    before = pages_by_path(docs_server, docset_id)
    time.sleep(0.01)
    full = refresh(docs_server, docsetId=docset_id, force=True, fullReindex=True)
    assert full["message"] == "Refreshing 7 pages from Frob Docs (full reindex mode)"
    assert full["incremental"] == {"preservedHashes": 0, "clearedHashes": 7}
    docs_server.wait_ready(docset_id)
    after = pages_by_path(docs_server, docset_id)
    for path in ("/docs/", "/docs/install", "/docs/config"):
        assert after[path]["indexedAt"] > before[path]["indexedAt"], path
    bad = docs_server.client.post("/refresh", json={"force": True})
    assert bad.status_code == 400 and bad.json() == {"error": "docsetId: docsetId or baseUrl is required"}
    missing = docs_server.client.post("/refresh", json={"baseUrl": "https://nowhere.example"})
    assert missing.status_code == 404 and missing.json()["error"].startswith("baseUrl: ")


def test_refresh_all_refreshes_only_stale_docsets_unless_forced(docs_server, site):
    first = index(docs_server, site)["docsetId"]
    second = index(docs_server, site, seedSlug="/docs/config", allowedPaths=["/docs/config"],
                   name="Config only")["docsetId"]
    docs_server.wait_ready(first)
    docs_server.wait_ready(second)
    none = docs_server.client.post("/refresh-all", json={}).json()
    assert none == {"total": 2, "refreshed": 0, "results": []}
    # Make one docset stale, as if refreshed two days ago.
    store = docs_server.store
    org = docs_server.server.stack.metadata.list_organizations()[0].id
    stale = store.get_docset(org, second)
    two_days_ago = stale.last_refreshed_at - 48 * 3_600_000
    store.update_docset(stale.model_copy(update={"last_refreshed_at": two_days_ago}))
    some = docs_server.client.post("/refresh-all", json={"maxAge": 24}).json()
    assert set(some) == {"total", "refreshed", "results"}
    assert (some["total"], some["refreshed"]) == (2, 1)
    assert some["results"] == [{"docsetId": second, "status": "pending", "refreshed": True,
                                "message": "Queued 1 pages for refresh (incremental)",
                                "incremental": {"preservedHashes": 1, "clearedHashes": 0}}]
    docs_server.wait_ready(second)
    forced = docs_server.client.post("/refresh-all", json={"force": True}).json()
    assert (forced["total"], forced["refreshed"]) == (2, 2)
    assert {r["docsetId"] for r in forced["results"]} == {first, second}
    docs_server.wait_ready(first)
    # The schedule's job is idempotent: right after a refresh everything is fresh.
    assert docs_server.server.docsets.refresh_stale().refreshed == 0


def test_stuck_pages_are_reported_and_retried(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    store = docs_server.store
    page = store.get_page(docset_id, pages_by_path(docs_server, docset_id)["/docs/config"]["id"])
    six_minutes_ago = int(time.time() * 1000) - 6 * 60_000
    store.save_page(page.model_copy(update={"status": PageStatus.PROCESSING, "claimed_at": six_minutes_ago,
                                            "retry_at": None, "attempts": 1}))
    status = docs_server.client.get("/status").json()["docsets"][0]
    assert status["indexStatus"]["stuckPages"] == 1  # reported even unasked, since there are some
    assert "stuckPageDetails" not in status
    detailed = docs_server.client.get("/status", params={"includeStuck": "true"}).json()["docsets"][0]
    assert detailed["indexStatus"]["stuckPages"] == 1 and detailed["status"] == "indexing"
    assert detailed["stuckPageDetails"] == [{"id": page.id, "url": f"{site.url}/docs/config",
                                             "status": "processing", "attempts": 1,
                                             "claimedAt": six_minutes_ago, "errorMessage": None}]
    # When the maintenance pass runs, the page goes back to the queue and is crawled again.
    assert docs_server.runner.reap() == 1
    body = docs_server.wait_ready(docset_id)
    assert body["indexStatus"]["stuckPages"] == 0 and body["indexStatus"]["retriedPages"] == 1
    assert store.get_page(docset_id, page.id).status == PageStatus.INDEXED


def test_transient_errors_are_retried_with_backoff_then_recorded(docs_server, site):
    site.raw("/docs/flaky", 503, b"busy", {"Retry-After": "1"})
    site.html("/docs/", "Guide Home", "Welcome home.", links=("/docs/flaky", "/docs/config"))
    docset_id = index(docs_server, site)["docsetId"]
    body = docs_server.wait_ready(docset_id, timeout=20)
    flaky = pages_by_path(docs_server, docset_id)["/docs/flaky"]
    assert flaky["status"] == "error" and flaky["errorMessage"] == f"HTTP 503 from {site.url}/docs/flaky"
    assert site.paths_hit().count("/docs/flaky") == 3  # max_attempts in the test settings
    assert body["indexStatus"]["errorPages"] == 1 and body["indexStatus"]["retriedPages"] >= 1
    assert body["status"] == "ready"


def test_crawl_resumes_after_a_restart_without_losing_or_duplicating_pages(tmp_path, site):
    # Given a site of 30 pages that answer slowly
    names = [f"/restart/p{i}" for i in range(30)]
    site.html("/restart/", "Restart Home", "Index of pages.", links=tuple(names))
    for i, name in enumerate(names):
        site.html(name, f"Page {i}", f"Unique marker word{i} appears on page {i}. " + LONG)
    site.delay_s = 0.05
    first = start_server(tmp_path / "data")
    try:
        docset_id = index(first, site, seedSlug="/restart/", allowedPaths=["/restart"],
                          waitForSeed=False)["docsetId"]
        deadline = time.monotonic() + 20
        while first.client.get(f"/docset/{docset_id}").json()["indexStatus"]["indexedPages"] < 5:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        first.server.shutdown()  # stopped mid-crawl
    store = first.store
    counts = store.page_counts(docset_id, 0)
    assert counts.indexed < 31
    # A kill -9 leaves claimed pages in processing: simulate that for two pending ones.
    pending, _ = store.list_pages(docset_id, PageStatus.PENDING, limit=2)
    for p in pending:
        store.save_page(p.model_copy(update={"status": PageStatus.PROCESSING, "claimed_at": 1,
                                             "retry_at": None}))
    second = start_server(tmp_path / "data")
    try:
        body = second.wait_ready(docset_id, timeout=60)
        # The seed is a bare list of links: followed, not indexed.
        not_indexed = [p for p in pages_by_path(second, docset_id).values() if p["status"] != "indexed"]
        assert [(p["path"], p["status"]) for p in not_indexed] == [("/restart/", "skipped")]
        assert not_indexed[0]["errorMessage"].startswith("navigation page (")
        assert body["indexStatus"]["indexedPages"] == 30 and body["indexStatus"]["errorPages"] == 0
        pages = pages_by_path(second, docset_id)
        assert len(pages) == 31
        stack = second.server.stack
        org = stack.metadata.list_organizations()[0].id
        doc_ids = {p["id"] for p in pages.values() if p["status"] == "indexed"}
        assert doc_ids <= stack.index.document_ids(org)
        # One document per page and each page's chunks exactly once in the index.
        docs = stack.metadata.get_documents(org, list(doc_ids))
        assert len(docs) == 30
        rows = stack.db.connection().execute(
            "SELECT document_id, COUNT(*) AS n FROM search_rows GROUP BY document_id").fetchall()
        by_doc = {r["document_id"]: r["n"] for r in rows}
        assert all(by_doc[d.id] == d.chunk_count for d in docs)
        for i in (0, 17, 29):
            hit = retrieve(second, f"Unique marker word{i}", topK=1)["results"][0]
            assert hit["url"] == f"{site.url}/restart/p{i}"
    finally:
        second.client.close()
        second.server.shutdown()


def test_the_local_server_refreshes_stale_docsets_on_its_own(tmp_path, site):

    from docsets_site import FAST

    # Given a server whose periodic refresh runs every few milliseconds
    running = start_server(tmp_path / "data", settings=FAST.model_copy(update={
        "maintenance_interval_s": 0.05, "refresh_interval_hours": 0.00001}))
    try:
        docset_id = index(running, site)["docsetId"]
        running.wait_ready(docset_id)
        org = running.server.stack.metadata.list_organizations()[0].id
        fresh = running.store.get_docset(org, docset_id)
        time.sleep(0.3)
        assert running.store.get_docset(org, docset_id).last_refreshed_at == fresh.last_refreshed_at
        # When the docset becomes stale (last refreshed two days ago)
        running.store.update_docset(fresh.model_copy(update={"last_refreshed_at": 1}))
        site.html("/docs/config", "Configuration", "The quux limit is now set with QUUX_LIMIT. " + LONG)
        # Then the timer refreshes it, and the change is searchable
        deadline = time.monotonic() + 10
        while running.store.get_docset(org, docset_id).last_refreshed_at == 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        running.wait_ready(docset_id)
        top = retrieve(running, "quux limit", docsetIds=[docset_id])["results"][0]
        assert "QUUX_LIMIT" in top["content"]
    finally:
        running.client.close()
        running.server.shutdown()


def test_a_page_that_now_redirects_leaves_the_index(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    orphan = pages_by_path(docs_server, docset_id)["/docs/orphan"]
    assert orphan["id"] in docs_server.server.stack.index.document_ids()
    site.raw("/docs/orphan", 301, b"", {"Location": "/docs/new"})
    refresh(docs_server, docsetId=docset_id, force=True)
    docs_server.wait_ready(docset_id)
    after = pages_by_path(docs_server, docset_id)["/docs/orphan"]
    assert (after["status"], after["errorMessage"]) == ("skipped", f"redirects to {site.url}/docs/new")
    assert orphan["id"] not in docs_server.server.stack.index.document_ids()
    assert after["indexedAt"] == orphan["indexedAt"]  # kept as a record of when it last was
