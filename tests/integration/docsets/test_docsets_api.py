"""The Mem-Oracle API on a real local server, crawling a docs site served on loopback. Every
documented request is replayed and every documented field of its response checked by type and
value (seed mem-oracle-api.txt)."""

from __future__ import annotations

import time
import uuid

import pytest
from docsets_site import assert_index_status, assert_ms, index, pages_by_path, retrieve

pytestmark = pytest.mark.integration


# ----------------------------------------------------------------------------- index and crawl


def test_index_with_wait_for_seed_makes_the_seed_searchable_at_once(docs_server, site):
    # Given a docs site; When indexing with waitForSeed
    out = index(docs_server, site)
    # Then the documented response, and the seed is searchable before the crawl is done
    assert set(out) == {"docsetId", "status", "seedIndexed"}
    assert isinstance(out["docsetId"], str) and uuid.UUID(out["docsetId"])
    assert out["status"] in ("indexing", "ready")
    assert out["seedIndexed"] is True
    hit = retrieve(docs_server, "welcome overview installation configuration operators",
                   docsetIds=[out["docsetId"]])
    assert hit["results"][0]["url"] == f"{site.url}/docs/"


def test_crawl_follows_scope_robots_sitemap_and_redirects(docs_server, site):
    out = index(docs_server, site)
    body = docs_server.wait_ready(out["docsetId"])
    pages = pages_by_path(docs_server, out["docsetId"])
    # In scope and linked, found only in the sitemap, or reached through a redirect: indexed.
    for path in ("/docs/", "/docs/install", "/docs/config", "/docs/new", "/docs/orphan"):
        assert pages[path]["status"] == "indexed", (path, pages[path])
    # The redirect's source is skipped and names its target; a broken link is skipped with its status.
    assert pages["/docs/old"]["status"] == "skipped"
    assert pages["/docs/old"]["errorMessage"] == f"redirects to {site.url}/docs/new"
    missing = pages["/docs/missing"]
    assert (missing["status"], missing["errorMessage"], missing["indexedAt"]) == ("skipped", "HTTP 404", None)
    # robots.txt, allowedPaths, other hosts and binaries are never fetched nor listed.
    hits = site.paths_hit()
    assert "/docs/private/secret" not in hits and "/blog/post" not in hits and "/docs/logo.png" not in hits
    assert not any(p.startswith("/docs/private") or p.startswith("/blog") for p in pages)
    # Fragments do not create duplicates: each page was fetched once.
    assert hits.count("/docs/install") == 1 and hits.count("/docs/") == 1
    assert body["indexStatus"]["indexedPages"] == 5 and body["indexStatus"]["skippedPages"] == 2
    assert body["indexStatus"]["totalPages"] == 7 and body["status"] == "ready"


def test_index_twice_returns_the_same_docset(docs_server, site):
    first = index(docs_server, site)
    docs_server.wait_ready(first["docsetId"])
    again = index(docs_server, site)
    assert again == {"docsetId": first["docsetId"], "status": "ready", "seedIndexed": True}


def test_index_validation_errors_are_400_with_the_field(docs_server, site):
    c = docs_server.client
    r = c.post("/index", json={"seedSlug": "/docs/"})
    assert r.status_code == 400 and r.json() == {"error": "baseUrl: is required"}
    r = c.post("/index", json={"baseUrl": site.url, "seedSlug": "/blog/", "allowedPaths": ["/docs"]})
    assert r.status_code == 400 and r.json()["error"].startswith("seedSlug: ")
    r = c.post("/index", json={"baseUrl": site.url, "seedSlug": "/docs/", "docsetId": "x"})
    assert r.status_code == 400 and "docsetId" in r.json()["error"]


def test_routes_need_an_api_key(docs_server):
    import httpx

    r = httpx.post(f"{docs_server.url}/retrieve", json={"query": "x"})
    assert r.status_code == 401 and set(r.json()) == {"error"}


# ----------------------------------------------------------------------------- retrieve


def test_retrieve_response_fields_and_snippet_format(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    out = retrieve(docs_server, "quux timeout variable", topK=5, docsetIds=[docset_id], maxChunksPerPage=2,
                   maxTotalChars=16000, formatSnippets=True)
    # the seed's fields, and memlane's additions (freshness, refresh on read, the relevance floor)
    assert set(out) == {"query", "results", "totalChars", "truncated", "refreshedPages", "changedPages", "floor"}
    assert out["query"] == "quux timeout variable" and out["truncated"] is False
    assert 1 <= len(out["results"]) <= 5
    top = out["results"][0]
    assert set(top) == {"chunkId", "pageId", "docsetId", "content", "url", "title", "heading", "score",
                        "snippet", "fetchedAt", "lastModified", "etag", "stale", "refreshed", "relevance"}
    # the hashing embedder is not calibrated: no floor, the relevance still reported
    assert out["floor"] == 0 and 0 < top["relevance"] <= 1
    assert top["stale"] is False and top["fetchedAt"] > 0 and top["refreshed"] is False
    assert top["url"] == f"{site.url}/docs/config" and top["title"] == "Configuration"
    assert top["docsetId"] == docset_id and uuid.UUID(top["chunkId"]) and uuid.UUID(top["pageId"])
    assert top["pageId"] == pages_by_path(docs_server, docset_id)["/docs/config"]["id"]
    assert isinstance(top["score"], float) and top["score"] > 0
    assert "QUUX_TIMEOUT" in top["content"] and top["heading"] == "Configuration"
    snippet = top["snippet"]
    assert set(snippet) == {"formatted", "title", "url", "breadcrumb", "content", "charCount"}
    assert snippet["breadcrumb"] == "Configuration" and snippet["content"] == top["content"]
    assert snippet["formatted"] == (f"## Configuration\nSource: {site.url}/docs/config\n"
                                    f"Section: Configuration\n\n{top['content']}")
    assert snippet["charCount"] == len(snippet["formatted"])
    assert out["totalChars"] == sum(r["snippet"]["charCount"] for r in out["results"])
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)


def test_retrieve_breadcrumb_follows_the_heading_path(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    out = retrieve(docs_server, "wheel builder number 4", docsetIds=[docset_id], topK=1)
    top = out["results"][0]
    assert top["url"] == f"{site.url}/docs/install"
    assert top["snippet"]["breadcrumb"].startswith("Installing > Step ")
    assert top["heading"] == top["snippet"]["breadcrumb"].split(" > ")[-1]


def test_retrieve_diversity_caps_chunks_per_page(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    query = "installation step wheel builder run"
    many = retrieve(docs_server, query, topK=10, maxChunksPerPage=10)
    install = [r for r in many["results"] if r["url"].endswith("/docs/install")]
    assert len(install) >= 4  # the long page can fill the answer when allowed to
    for cap in (1, 2):
        out = retrieve(docs_server, query, topK=10, maxChunksPerPage=cap)
        per_page: dict[str, int] = {}
        for r in out["results"]:
            per_page[r["pageId"]] = per_page.get(r["pageId"], 0) + 1
        assert max(per_page.values()) == cap
        assert len(per_page) > 1


def test_retrieve_budget_truncates_and_reports_it(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    query = "installation step wheel builder run"
    full = retrieve(docs_server, query, topK=6, maxChunksPerPage=6)
    assert full["truncated"] is False and len(full["results"]) == 6
    second = full["results"][1]
    assert len(second["content"]) > 260  # enough to be cut rather than dropped
    budget = full["results"][0]["snippet"]["charCount"] + second["snippet"]["charCount"] - 40
    cut = retrieve(docs_server, query, topK=6, maxChunksPerPage=6, maxTotalChars=budget)
    assert cut["truncated"] is True and cut["totalChars"] <= budget
    assert len(cut["results"]) == 2
    last = cut["results"][-1]
    assert last["content"].endswith("…") and len(last["content"]) < len(second["content"])
    assert last["chunkId"] == second["chunkId"]
    assert last["snippet"]["charCount"] == len(last["snippet"]["formatted"])
    assert cut["totalChars"] == sum(r["snippet"]["charCount"] for r in cut["results"])
    # Without snippets the budget counts content characters.
    plain = retrieve(docs_server, query, topK=3, maxChunksPerPage=6, formatSnippets=False)
    assert all(r["snippet"] is None for r in plain["results"])
    assert plain["totalChars"] == sum(len(r["content"]) for r in plain["results"])


def test_retrieve_defaults_and_clamps(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    default = retrieve(docs_server, "installation step wheel builder")
    assert len(default["results"]) == 5  # topK 5
    per_page: dict[str, int] = {}
    for r in default["results"]:
        per_page[r["pageId"]] = per_page.get(r["pageId"], 0) + 1
    assert max(per_page.values()) <= 3  # maxChunksPerPage 3
    assert all(r["snippet"] is not None for r in default["results"])  # formatSnippets true
    assert len(retrieve(docs_server, "installation", topK=0)["results"]) == 1
    assert len(retrieve(docs_server, "installation", topK=-7)["results"]) == 1
    huge = retrieve(docs_server, "installation frobnicator", topK=10**6, maxChunksPerPage=100)
    assert 5 < len(huge["results"]) <= 100
    for bad, field in (({"query": ""}, "query"), ({"query": "x", "topK": "many"}, "topK"),
                       ({"query": "x", "maxChunksPerPage": 0}, "maxChunksPerPage"),
                       ({"query": "x", "mode": "magic"}, "mode")):
        r = docs_server.client.post("/retrieve", json=bad)
        assert r.status_code == 400 and r.json()["error"].startswith(f"{field}: "), r.text


def test_retrieve_modes_rank_by_one_leg(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    for mode in ("bm25", "vector", "hybrid"):
        out = retrieve(docs_server, "xylophone tuning", mode=mode, topK=3)
        assert out["results"][0]["url"] == f"{site.url}/docs/orphan", mode


def test_retrieve_filters_by_docset_and_docsets_are_recallable(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    c = docs_server.client
    saved = c.post("/v3/memory", json={"content": "Xylophone tuning notes from my notebook, not the docs."})
    assert saved.status_code == 201
    only_docs = retrieve(docs_server, "xylophone tuning", docsetIds=[docset_id])
    assert {r["docsetId"] for r in only_docs["results"]} == {docset_id}
    r = c.post("/retrieve", json={"query": "x", "docsetIds": [str(uuid.uuid4())]})
    assert r.status_code == 404 and r.json()["error"].startswith("docsetIds: docset ")
    # The docset's pages are documents with their URL in the docset's project: /v3/recall finds them.
    recalled = c.post("/v3/recall", json={"query": "xylophone tuning sitemap"}).json()["results"]
    urls = [d["source_url"] for d in recalled]
    assert f"{site.url}/docs/orphan" in urls
    projects = c.get("/v3/projects").json()["projects"]
    assert any(p["name"] == "Frob Docs" and p["document_count"] == 5 for p in projects)


# ----------------------------------------------------------------------------- status, docset, pages


def test_status_docset_and_pages_shapes(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    c = docs_server.client
    status = c.get("/status").json()
    assert set(status) == {"docsets"} and len(status["docsets"]) == 1
    d = status["docsets"][0]
    # Mem-Oracle's fields, plus memlane's projectId (the project holding the pages; the web app keeps
    # documentation off the memory dashboard by it), which a Mem-Oracle client ignores
    assert set(d) == {"id", "name", "baseUrl", "seedSlug", "allowedPaths", "createdAt", "updatedAt", "status",
                      "indexStatus", "projectId"}  # no stuck pages, none asked for: stuckPages left out
    assert (d["id"], d["name"], d["baseUrl"], d["seedSlug"], d["allowedPaths"], d["status"]) == (
        docset_id, "Frob Docs", f"{site.url}/", "/docs/", ["/docs"], "ready")
    assert_ms(d["createdAt"]) and assert_ms(d["updatedAt"])
    assert d["updatedAt"] >= d["createdAt"]
    assert_index_status(d["indexStatus"], docset_id, stuck_key=False)
    assert "stuckPages" not in d["indexStatus"]
    assert d["indexStatus"]["totalChunks"] > 5
    with_stuck = c.get("/status", params={"docsetId": docset_id, "includeStuck": "true"}).json()["docsets"][0]
    assert with_stuck["indexStatus"]["stuckPages"] == 0 and with_stuck["stuckPageDetails"] == []
    assert c.get("/status", params={"docsetId": str(uuid.uuid4())}).status_code == 404

    one = c.get(f"/docset/{docset_id}").json()
    assert set(one) == {"id", "name", "baseUrl", "seedSlug", "allowedPaths", "createdAt", "updatedAt",
                        "status", "indexStatus", "projectId"}
    assert_index_status(one["indexStatus"], docset_id, stuck_key=True)
    assert one["indexStatus"]["stuckPages"] == 0 and one["indexStatus"]["retriedPages"] == 0
    assert one["indexStatus"] == {**d["indexStatus"], "stuckPages": 0}

    listing = c.get(f"/docset/{docset_id}/pages").json()
    assert set(listing) == {"pages", "total", "limit", "offset"}
    assert (listing["total"], listing["limit"], listing["offset"]) == (7, 100, 0)
    page = next(p for p in listing["pages"] if p["path"] == "/docs/config")
    assert set(page) == {"id", "url", "path", "title", "status", "errorMessage", "fetchedAt", "indexedAt"}
    assert page["url"] == f"{site.url}/docs/config" and page["title"] == "Configuration"
    assert page["status"] == "indexed" and page["errorMessage"] is None
    assert_ms(page["fetchedAt"]) and assert_ms(page["indexedAt"])
    skipped = c.get(f"/docset/{docset_id}/pages", params={"status": "skipped"}).json()
    assert skipped["total"] == 2 and {p["status"] for p in skipped["pages"]} == {"skipped"}
    assert all(p["indexedAt"] is None for p in skipped["pages"])
    window = c.get(f"/docset/{docset_id}/pages", params={"limit": 2, "offset": 3}).json()
    assert (window["total"], window["limit"], window["offset"], len(window["pages"])) == (7, 2, 3, 2)
    assert [p["id"] for p in window["pages"]] == [p["id"] for p in listing["pages"][3:5]]
    assert c.get(f"/docset/{docset_id}/pages", params={"limit": 100000}).json()["limit"] == 500
    bad = c.get(f"/docset/{docset_id}/pages", params={"status": "weird"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("status: must be one of")
    assert c.get(f"/docset/{uuid.uuid4()}").status_code == 404


def test_another_organization_sees_nothing(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    other = docs_server.as_key(docs_server.new_key("intruder"))
    assert other.get(f"/docset/{docset_id}").status_code == 404
    assert other.get(f"/docset/{docset_id}/pages").status_code == 404
    assert other.delete(f"/docset/{docset_id}").status_code == 404
    assert other.get("/status").json() == {"docsets": []}
    assert other.post("/retrieve", json={"query": "xylophone tuning", "topK": 100}).json()["results"] == []
    assert other.post("/retrieve", json={"query": "x", "docsetIds": [docset_id]}).status_code == 404
    assert other.post("/refresh", json={"docsetId": docset_id}).status_code == 404


# ----------------------------------------------------------------------------- delete


def test_delete_removes_pages_chunks_and_vectors(docs_server, site):
    docset_id = index(docs_server, site)["docsetId"]
    docs_server.wait_ready(docset_id)
    c = docs_server.client
    stack = docs_server.server.stack
    doc_ids = {p["id"] for p in pages_by_path(docs_server, docset_id).values() if p["status"] == "indexed"}
    assert doc_ids <= stack.index.document_ids()
    r = c.delete(f"/docset/{docset_id}")
    assert r.status_code == 200 and r.json()["success"] is True and r.json()["docsetId"] == docset_id
    # memlane adds the deletion receipt of the pages: every store read back, nothing left
    assert r.json()["verified"] is True
    receipt = c.get(f"/v3/deletions/{r.json()['receiptId']}").json()
    assert receipt["reason"] == "docset" and set(receipt["documents"]) == doc_ids
    assert not doc_ids & stack.index.document_ids()
    org = stack.metadata.list_organizations()[0].id
    assert all(stack.metadata.get_document(org, d) is None for d in doc_ids)
    assert all(stack.metadata.get_chunks(org, d) == [] for d in doc_ids)
    assert c.get(f"/docset/{docset_id}").status_code == 404
    assert c.post("/retrieve", json={"query": "xylophone tuning"}).json()["results"] == []
    assert all(p["name"] != "Frob Docs" for p in c.get("/v3/projects").json()["projects"])
    assert c.post("/v3/recall", json={"query": "xylophone tuning sitemap"}).json()["results"] == []
    assert c.delete(f"/docset/{docset_id}").status_code == 404


# ----------------------------------------------------------------------------- sessions


def test_sessions_register_list_unregister(docs_server):
    c = docs_server.client
    r = c.post("/session/register", json={"sessionId": "session-123", "clientType": "claude-code"})
    assert r.status_code == 200
    out = r.json()
    assert set(out) == {"success", "session", "totalSessions"}
    assert out["success"] is True and out["totalSessions"] == 1
    session = out["session"]
    assert set(session) == {"id", "clientType", "connectedAt", "lastHeartbeat"}
    assert (session["id"], session["clientType"]) == ("session-123", "claude-code")
    assert_ms(session["connectedAt"]) and session["lastHeartbeat"] == session["connectedAt"]
    time.sleep(0.01)
    again = c.post("/session/register", json={"sessionId": "session-123", "clientType": "claude-code"}).json()
    assert again["totalSessions"] == 1
    assert again["session"]["connectedAt"] == session["connectedAt"]
    assert again["session"]["lastHeartbeat"] > session["lastHeartbeat"]
    c.post("/session/register", json={"sessionId": "session-456", "clientType": "cursor"})
    listed = c.get("/sessions").json()
    assert set(listed) == {"sessions", "count"} and listed["count"] == 2
    assert [s["id"] for s in listed["sessions"]] == ["session-123", "session-456"]
    assert set(listed["sessions"][1]) == {"id", "clientType", "connectedAt", "lastHeartbeat"}
    first = c.post("/session/unregister", json={"sessionId": "session-123"}).json()
    assert first == {"success": True, "existed": True, "remainingSessions": 1, "shouldStop": False}
    last = c.post("/session/unregister", json={"sessionId": "session-456"}).json()
    assert last == {"success": True, "existed": True, "remainingSessions": 0, "shouldStop": True}
    unknown = c.post("/session/unregister", json={"sessionId": "nope"}).json()
    assert unknown == {"success": True, "existed": False, "remainingSessions": 0, "shouldStop": True}
    assert c.get("/sessions").json() == {"sessions": [], "count": 0}
    bad = c.post("/session/register", json={"clientType": "x"})
    assert bad.status_code == 400 and bad.json() == {"error": "sessionId: is required"}
    other = docs_server.as_key(docs_server.new_key("other-org"))
    c.post("/session/register", json={"sessionId": "mine"})
    assert other.get("/sessions").json() == {"sessions": [], "count": 0}


def test_health_has_the_documented_fields(docs_server):
    import httpx

    h = httpx.get(f"{docs_server.url}/health").json()
    assert h["status"] == "ok" and isinstance(h["version"], str)
    assert_ms(h["timestamp"])


# ----------------------------------------------------------------------------- the dashboard's figures


def test_the_dashboard_counts_documentation_pages_apart_from_memories(docs_server, site):
    c = docs_server.client
    # Given two memories saved this week, then a documentation site indexed to the end
    for text in ("Stats: the spare key hangs behind the red door.", "Stats: café opens at 7 — ☕ first."):
        assert c.post("/v3/memory", json={"content": text}).status_code in (200, 201, 202)
    before = c.get("/v3/stats").json()
    out = index(docs_server, site)
    docs_server.wait_ready(out["docsetId"])
    # When the dashboard reads its figures
    after = c.get("/v3/stats").json()
    # Then the memories and this week's count are the two memories, not the site's five pages;
    # the pages are counted on their own and their text is in the storage used
    assert (after["total_memories"], after["memories_this_week"]) == (2, 2)
    assert after["documentation_pages"] == 5 and before["documentation_pages"] == 0
    assert after["storage_bytes"] > before["storage_bytes"]
    # and the docset's project is not counted among the projects of memories
    all_projects = c.get("/v3/projects").json()["projects"]
    assert after["project_count"] == before["project_count"] == len(all_projects) - 1
