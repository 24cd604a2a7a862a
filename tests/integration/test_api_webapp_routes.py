"""The /v3 routes behind the web app, through a real local server on loopback (hashing embedder:
these tests check values, scope and errors, not ranking quality)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from conftest_helpers import Running, free_port
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.documents.forget import forget_expired
from memlane.local.server import LocalServer
from memlane.services.keys import create_key

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = LocalServer(Settings(data_dir=tmp_path_factory.mktemp("webapp-routes")), host="127.0.0.1",
                         port=free_port(), embedder=HashEmbedder())
    key = server.prepare()
    server.start_in_thread()
    yield Running(server, key, f"http://127.0.0.1:{server.port}")
    server.shutdown()


@pytest.fixture(scope="module")
def api(srv) -> httpx.Client:
    return srv.client()


@pytest.fixture(scope="module")
def stranger(srv) -> httpx.Client:
    """A key of another organization."""
    secret, _, _ = create_key(srv.server.stack.metadata, "someone-else", "theirs")
    return srv.client(secret)


def save(client: httpx.Client, content: str, **fields) -> dict:
    r = client.post("/v3/memory", json={"content": content, **fields})
    assert r.status_code in (200, 201, 202), r.text
    return r.json()


def new_project(client: httpx.Client, name: str) -> dict:
    r = client.post("/v3/projects", json={"name": name})
    assert r.status_code == 201, r.text
    return r.json()


def test_every_new_route_is_in_the_openapi_document(srv) -> None:
    spec = httpx.get(f"{srv.url}/openapi.json").json()["paths"]
    assert set(spec["/v3/projects/{project_id}"]) == {"get", "patch", "delete"}
    assert "get" in spec["/v3/projects/{project_id}/documents"]
    assert "patch" in spec["/v3/documents/{document_id}"]
    assert "get" in spec["/v3/documents/{document_id}/related"]
    assert {"get", "post"} <= set(spec["/v3/keys"]) and "delete" in spec["/v3/keys/{key_id}"]
    assert "get" in spec["/v3/stats"] and "get" in spec["/v3/forgotten"]


def test_stats_count_the_organizations_memories_and_their_bytes(api, stranger) -> None:
    # Given a fresh organization that saves two memories (one with non-ASCII text)
    before = api.get("/v3/stats").json()
    a = save(api, "Stats: the spare key hangs behind the red door.")
    b = save(api, "Stats: café opens at 7 — ☕ first.")
    save(stranger, "Stats: someone else's note, not ours.")
    # When the dashboard reads the stats
    after = api.get("/v3/stats").json()
    # Then both count, this week too, and storage grows by the UTF-8 bytes of their text
    assert after["total_memories"] - before["total_memories"] == 2
    assert after["memories_this_week"] - before["memories_this_week"] == 2
    texts = [api.get(f"/v3/documents/{d['id']}").json()["content"] for d in (a, b)]
    assert after["storage_bytes"] - before["storage_bytes"] == sum(len(t.encode()) for t in texts)
    assert after["project_count"] == len(api.get("/v3/projects").json()["projects"])


def test_a_projects_documents_come_newest_first_a_page_at_a_time(api, stranger) -> None:
    project = new_project(api, "Paged notes")
    ids = [save(api, f"Paged note number {i}: {'alpha beta gamma'[i:]}", project_id=project["id"])["id"]
           for i in range(5)]
    pages, cursor, seen = 0, None, []
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        r = api.get(f"/v3/projects/{project['id']}/documents", params=params)
        assert r.status_code == 200, r.text
        body = r.json()
        seen.extend(d["id"] for d in body["documents"])
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(ids)) and pages == 3
    first = api.get(f"/v3/projects/{project['id']}/documents", params={"limit": 1}).json()["documents"][0]
    assert first["title"].startswith("Paged note number 4") and first["status"] == "ready"
    assert "content" not in first
    # a cursor it never issued, a limit out of range, another organization's project
    bad = api.get(f"/v3/projects/{project['id']}/documents", params={"cursor": "???"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("cursor:")
    assert api.get(f"/v3/projects/{project['id']}/documents", params={"limit": 0}).status_code == 400
    assert stranger.get(f"/v3/projects/{project['id']}/documents").status_code == 404
    assert stranger.get(f"/v3/projects/{project['id']}").status_code == 404


def test_a_project_is_renamed_and_described_and_a_taken_name_is_a_409(api, stranger) -> None:
    project = new_project(api, "Renamable")
    new_project(api, "Taken name")
    r = api.patch(f"/v3/projects/{project['id']}", json={"name": "Field notes", "description": "from trips"})
    assert r.status_code == 200, r.text
    assert (r.json()["name"], r.json()["slug"], r.json()["description"]) == ("Field notes", "field-notes", "from trips")
    cleared = api.patch(f"/v3/projects/{project['id']}", json={"description": None}).json()
    assert cleared["description"] is None and cleared["name"] == "Field notes"
    taken = api.patch(f"/v3/projects/{project['id']}", json={"name": "Taken Name"})
    assert taken.status_code == 409 and taken.json()["error"].startswith("name:")
    empty = api.patch(f"/v3/projects/{project['id']}", json={})
    assert empty.status_code == 400 and "give name or description" in empty.json()["error"]
    blank = api.patch(f"/v3/projects/{project['id']}", json={"name": "  "})
    assert blank.status_code == 400 and blank.json()["error"] == "name: must not be empty"
    assert stranger.patch(f"/v3/projects/{project['id']}", json={"name": "Mine now"}).status_code == 404
    assert api.get(f"/v3/projects/{project['id']}").json()["name"] == "Field notes"


def test_deleting_a_project_removes_its_documents_everywhere(api, stranger) -> None:
    project = new_project(api, "Doomed")
    doc = save(api, "Doomed note: the lighthouse keeper feeds the gulls at dawn.", project_id=project["id"])
    assert stranger.delete(f"/v3/projects/{project['id']}").status_code == 404
    r = api.delete(f"/v3/projects/{project['id']}")
    assert r.status_code == 200, r.text
    out = r.json()
    assert (out["id"], out["deleted"], out["documents_deleted"]) == (project["id"], True, 1)
    # and it answers with the receipt it recorded: every store read back, nothing of the document left
    receipt = out["receipt"]
    assert (receipt["reason"], receipt["subject"], receipt["documents"]) == ("project", project["id"], [doc["id"]])
    assert receipt["verified"] is True
    assert [c["store"] for c in receipt["checks"]] == [
        "metadata", "content", "text index", "vector index", "cache", "staging"]
    assert all(c["clean"] and c["remaining"] == 0 for c in receipt["checks"])
    assert api.get(f"/v3/deletions/{receipt['id']}").json() == receipt
    assert stranger.get(f"/v3/deletions/{receipt['id']}").status_code == 404
    assert api.get(f"/v3/projects/{project['id']}").status_code == 404
    assert api.get(f"/v3/documents/{doc['id']}").status_code == 404
    hits = api.post("/v3/recall", json={"query": "lighthouse keeper gulls"}).json()["results"]
    assert doc["id"] not in {h["document_id"] for h in hits}
    default = next(p for p in api.get("/v3/projects").json()["projects"] if p["is_default"])
    refused = api.delete(f"/v3/projects/{default['id']}")
    assert refused.status_code == 409 and "default project" in refused.json()["error"]


def test_editing_tags_and_title_reprocesses_so_filters_and_search_follow(api, stranger) -> None:
    doc = save(api, "Editable: the boat's bilge pump needs a new float switch.", metadata={"tags": ["boat"]})
    r = api.patch(f"/v3/documents/{doc['id']}", json={"tags": ["repairs", "marine"], "title": "Bilge pump fix"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["metadata"]["tags"] == ["repairs", "marine"] and body["title"] == "Bilge pump fix"
    assert body["status"] == "ready" and body["chunk_count"] >= 1

    def found(tag: str) -> set[str]:
        out = api.post("/v3/recall", json={"query": "bilge pump", "filters": {"tags": [tag]}}).json()
        return {h["document_id"] for h in out["results"]}

    assert doc["id"] in found("marine") and doc["id"] not in found("boat")
    hit = next(h for h in api.post("/v3/recall", json={"query": "bilge pump"}).json()["results"]
               if h["document_id"] == doc["id"])
    assert hit["title"] == "Bilge pump fix"


def test_forget_after_is_set_and_cleared_and_bad_edits_are_400s_naming_the_field(api, stranger) -> None:
    doc = save(api, "Editable: renew the parking permit before it lapses.")
    when = (datetime.now(UTC) + timedelta(days=30)).replace(microsecond=0)
    set_ = api.patch(f"/v3/documents/{doc['id']}", json={"forget_after": when.isoformat()}).json()
    assert datetime.fromisoformat(set_["forget_after"]) == when
    cleared = api.patch(f"/v3/documents/{doc['id']}", json={"forget_after": None}).json()
    assert cleared["forget_after"] is None
    cases = {
        "forget_after": {"forget_after": "2001-01-01T00:00:00Z"},
        "tags": {"tags": "not-a-list"},
        "title": {"title": ""},
        "content": {"content": "server-owned"},
    }
    for field, patch in cases.items():
        r = api.patch(f"/v3/documents/{doc['id']}", json=patch)
        assert r.status_code == 400 and r.json()["error"].startswith(f"{field}:"), (field, r.text)
    assert api.patch(f"/v3/documents/{doc['id']}", json={}).status_code == 400
    assert stranger.patch(f"/v3/documents/{doc['id']}", json={"title": "mine"}).status_code == 404
    assert api.get(f"/v3/documents/{doc['id']}").json()["title"] != "mine"


def test_related_memories_exclude_the_document_and_its_versions(api, stranger) -> None:
    first = save(api, "Related: sourdough starter needs feeding with rye flour twice a day.",
                 source_url="https://bread.example/starter")
    second = save(api, "Related: sourdough starter needs feeding with rye flour once a day now.",
                  source_url="https://bread.example/starter")
    neighbour = save(api, "Related: a sourdough starter fed with rye flour rises faster.")
    r = api.get(f"/v3/documents/{second['id']}/related", params={"limit": 5})
    assert r.status_code == 200, r.text
    related = [x["document_id"] for x in r.json()["related"]]
    assert neighbour["id"] in related
    assert second["id"] not in related and first["id"] not in related  # itself and its old version
    assert all(isinstance(x["score"], float) for x in r.json()["related"])
    assert stranger.get(f"/v3/documents/{second['id']}/related").status_code == 404


def test_the_forgotten_log_names_what_the_sweep_removed(srv, api, stranger) -> None:
    soon = datetime.now(UTC) + timedelta(hours=1)
    doc = save(api, "Forgettable: the wifi password for the beach house.", forget_after=soon.isoformat())
    forget_expired(srv.server.stack.services, now=soon + timedelta(seconds=1))
    log = api.get("/v3/forgotten").json()["forgotten"]
    assert log[0]["document_id"] == doc["id"] and log[0]["reason"] == "forget_after reached"
    assert set(log[0]) == {"document_id", "project_id", "forgotten_at", "reason"}
    assert doc["id"] not in {r["document_id"] for r in stranger.get("/v3/forgotten").json()["forgotten"]}


def test_a_managing_key_creates_lists_and_revokes_keys_of_its_organization_only(srv, api, stranger) -> None:
    assert api.get("/v3/whoami").json()["can_manage_keys"] is True
    created = api.post("/v3/keys", json={"name": "laptop"})
    assert created.status_code == 201 and created.headers["cache-control"] == "no-store"
    new = created.json()
    assert new["secret"].startswith("mlk_") and new["key"]["can_manage_keys"] is False
    laptop = srv.client(new["secret"])
    assert laptop.get("/v3/whoami").json()["can_manage_keys"] is False
    # a key that may not manage keys is refused, naming why
    refused = laptop.get("/v3/keys")
    assert refused.status_code == 403 and "may not manage keys" in refused.json()["error"]
    assert laptop.post("/v3/keys", json={"name": "escalate", "can_manage_keys": True}).status_code == 403
    listed = {k["id"]: k for k in api.get("/v3/keys").json()["keys"]}
    assert new["key"]["id"] in listed and "secret" not in listed[new["key"]["id"]]
    # another organization's key is not ours to revoke; our own key cannot revoke itself
    theirs = create_key(srv.server.stack.metadata, "someone-else", "target")[1]
    assert api.delete(f"/v3/keys/{theirs.id}").status_code == 404
    me = api.get("/v3/whoami").json()["key_id"]
    assert api.delete(f"/v3/keys/{me}").status_code == 409
    # revoking works at once
    assert api.delete(f"/v3/keys/{new['key']['id']}").json() == {"id": new["key"]["id"], "revoked": True}
    assert laptop.get("/v3/whoami").status_code == 401
    assert api.delete(f"/v3/keys/{new['key']['id']}").status_code == 404
    bad = api.post("/v3/keys", json={"name": ""})
    assert bad.status_code == 400 and bad.json()["error"].startswith("name:")
