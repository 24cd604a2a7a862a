"""The connection routes through a real local server on loopback, against a fake GitHub: the OAuth
code flow through the browser redirect to /oauth/callback, the background sync, pause, resume,
sync now, a signed webhook searchable in the next request, delete with its memories, tenant
isolation (another key's connection is a 404), field-naming 400s and the OpenAPI document."""

from __future__ import annotations

import json
import re
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from conftest_helpers import free_port
from docs_pages import ROOT
from fake_github import FakeGitHub
from fake_provider import CLIENT_ID, CLIENT_SECRET
from fakes import HashEmbedder

from memlane.config import Settings
from memlane.connections.apps import StaticApps
from memlane.connections.webhooks import github_signature
from memlane.local.server import LocalServer
from memlane.ports import OAuthApp

REPO = "acme/handbook"


@pytest.fixture(scope="module")
def fake():
    f = FakeGitHub().start()
    yield f
    f.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake):
    fake.repo(REPO).files.update({"README.md": b"# Handbook\n\nVacation requests go to Dana.\n",
                                  "policies/expenses.md": b"# Expenses\n\nTaxis after 22:00 are covered.\n"})
    fake.add_issue(REPO, 7, "Update the travel policy", "Trains over planes under 500 km.")
    srv = LocalServer(Settings(data_dir=tmp_path_factory.mktemp("api") / "data"), host="127.0.0.1",
                      port=free_port(), embedder=HashEmbedder())
    srv.stack.services.connections.apps = StaticApps({"github": OAuthApp(
        client_id=CLIENT_ID, client_secret=CLIENT_SECRET, authorize_url=f"{fake.url}/oauth/authorize",
        token_url=f"{fake.url}/oauth/token", api_url=fake.url)})
    key = srv.prepare()
    srv.start_in_thread()
    url = f"http://127.0.0.1:{srv.port}"
    other = srv.stack.metadata  # a second organization with its own key
    from memlane.services.keys import create_key

    other_key, _, _ = create_key(other, "globex")
    yield {"server": srv, "url": url, "a": httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"},
                                                         timeout=60),
           "b": httpx.Client(base_url=url, headers={"Authorization": f"Bearer {other_key}"}, timeout=60)}
    srv.shutdown()


def wait_for(check, timeout_s: float = 30.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def test_connect_sync_webhook_and_delete_over_http(server, fake):
    a, b = server["a"], server["b"]
    # Given a connection started over the API
    started = a.post("/v3/connections", json={"provider": "github", "options": {"repositories": [REPO]}})
    assert started.status_code == 201, started.text
    body = started.json()
    conn_id = body["connection"]["id"]
    assert body["connection"]["status"] == "authorizing"
    assert body["webhook"]["url"] == f"{server['url']}/webhooks/github?connection={conn_id}"
    auth = urlsplit(body["authorization_url"])
    assert "code_challenge=" in auth.query and "state=" in auth.query

    # When the user approves at the provider and the browser comes back to the callback (no key)
    consent = httpx.get(body["authorization_url"], follow_redirects=False)
    callback = httpx.get(consent.headers["Location"], follow_redirects=False)
    # it is sent on to the web app's confirmation page, where a member of the organization confirms
    assert callback.status_code == 302, callback.text
    confirm = urlsplit(callback.headers["Location"])
    assert confirm.path == "/connections/confirm"
    confirmed = a.post("/v3/connections/confirm", json={"flow": parse_qs(confirm.query)["flow"][0]})

    # Then the connection is active and the server syncs it in the background
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["status"] == "active" and confirmed.json()["account"] == "octocat"
    synced = wait_for(lambda: (c := a.get(f"/v3/connections/{conn_id}").json())["last_synced_at"] and c)
    assert synced["last_result"]["added"] == 3 and synced["last_result"]["errors"] == []
    # and the same state cannot be used twice
    replay = httpx.get(consent.headers["Location"])
    assert replay.status_code == 400 and replay.json()["error"].startswith("state:")

    # and another organization's key sees nothing of it
    assert b.get("/v3/connections").json() == {"connections": []}
    for method, path in (("GET", ""), ("POST", "/pause"), ("POST", "/sync"), ("DELETE", "")):
        assert b.request(method, f"/v3/connections/{conn_id}{path}").status_code == 404
    found = b.post("/v3/recall", json={"query": "taxis covered after 22:00", "limit": 50}).json()
    assert found["results"] == []

    # When it is paused, sync now is refused; resumed, it is accepted
    assert a.post(f"/v3/connections/{conn_id}/pause").json()["status"] == "paused"
    refused = a.post(f"/v3/connections/{conn_id}/sync")
    assert refused.status_code == 409 and refused.json()["error"].startswith("status:")
    assert a.post(f"/v3/connections/{conn_id}/resume").json()["status"] == "active"
    assert a.post(f"/v3/connections/{conn_id}/sync").status_code == 202

    # When GitHub delivers a signed push, it is searchable in the very next request
    wait_for(lambda: not a.get(f"/v3/connections/{conn_id}").json()["sync_requested"])
    fake.repo(REPO).files["policies/expenses.md"] = b"# Expenses\n\nTaxis after 21:00 are covered, receipts needed.\n"
    payload = json.dumps({"ref": "refs/heads/main", "after": "c0ffee",
                          "repository": {"full_name": REPO, "default_branch": "main"},
                          "commits": [{"added": [], "removed": [], "modified": ["policies/expenses.md"]}]}).encode()
    secret = body["webhook"]["secret"].encode()
    hook = f"/webhooks/github?connection={conn_id}"
    delivered = httpx.post(server["url"] + hook, content=payload, headers={
        "Content-Type": "application/json", "X-GitHub-Event": "push",
        "X-Hub-Signature-256": github_signature(secret, payload)})
    assert delivered.status_code == 200, delivered.text
    assert delivered.json()["applied"]["updated"] == 1
    hits = a.post("/v3/recall", json={"query": "taxis after 21:00 receipts"}).json()["results"]
    assert hits and hits[0]["title"] == "policies/expenses.md" and "21:00" in hits[0]["chunks"][0]["content"]
    # and a delivery signed with another secret is refused
    forged = httpx.post(server["url"] + hook, content=payload, headers={
        "Content-Type": "application/json", "X-GitHub-Event": "push",
        "X-Hub-Signature-256": github_signature(b"guess", payload)})
    assert forged.status_code == 401 and forged.json()["error"].startswith("X-Hub-Signature-256:")

    # When it is deleted with its memories
    doc_ids = [r["document_id"] for r in a.post("/v3/recall", json={"query": "", "limit": 100}).json()["results"]]
    gone = a.delete(f"/v3/connections/{conn_id}", params={"remove_documents": "true"})

    # Then the connection and every version of what it brought in are gone
    assert gone.status_code == 200 and gone.json()["deleted"] is True
    assert gone.json()["documents_removed"] == 4  # three items, one of them in two versions
    # with a verified receipt per item, each readable again and naming every store it read back
    assert len(gone.json()["receipts"]) == 3 and gone.json()["verified"] is True
    receipts = [a.get(f"/v3/deletions/{rid}").json() for rid in gone.json()["receipts"]]
    assert sorted(len(r["documents"]) for r in receipts) == [1, 1, 2]
    removed = {d for r in receipts for d in r["documents"]}  # recall showed the latest versions only
    assert len(removed) == 4 and set(doc_ids) <= removed and all(r["verified"] for r in receipts)
    assert all([c["store"] for c in r["checks"]] == ["metadata", "content", "text index", "vector index",
                                                     "cache", "staging"] for r in receipts)
    assert all(r["reason"] == "connection" and r["subject"].startswith(f"{conn_id}:") for r in receipts)
    assert a.get(f"/v3/connections/{conn_id}").status_code == 404
    for doc_id in doc_ids:
        assert a.get(f"/v3/documents/{doc_id}").status_code == 404
    assert a.post("/v3/recall", json={"query": "taxis", "limit": 50}).json()["results"] == []


@pytest.mark.parametrize("body,field", [
    ({"provider": "dropbox"}, "provider"),
    ({"provider": "git", "options": {"path": "/etc"}}, "provider"),
    ({"provider": "github"}, "options.repositories"),
    ({"provider": "github", "options": {"repositories": ["not a repo"]}}, "options.repositories"),
    ({"provider": "github", "options": {"repositories": ["a/b"], "colour": "red"}}, "options.colour"),
    ({"provider": "notion", "project_id": "nope"}, "project_id"),
    ({"provider": "slack", "status": "active"}, "status"),
])
def test_bad_requests_are_400s_naming_the_field(server, body, field):
    answer = server["a"].post("/v3/connections", json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"].startswith(f"{field}:"), answer.json()


def test_a_provider_without_an_oauth_app_is_a_clear_400_and_routes_need_a_key(server):
    answer = server["a"].post("/v3/connections", json={"provider": "notion"})
    assert answer.status_code == 400 and "not set up on this server" in answer.json()["error"]
    page = re.search(r"\((docs/[\w-]+\.md)", answer.json()["error"])  # it names the page that says what to do
    assert page and "## Setting up the providers" in (ROOT / page[1]).read_text(encoding="utf-8")
    assert httpx.get(server["url"] + "/v3/connections").status_code == 401
    missing = httpx.get(server["url"] + "/oauth/callback", params={"code": "x"})
    assert missing.status_code == 400 and missing.json()["error"] == "state: is required"


def test_a_refused_authorization_is_a_400_and_marks_the_connection(server):
    a = server["a"]
    started = a.post("/v3/connections", json={"provider": "github", "options": {"repositories": [REPO]}}).json()
    state = parse_qs(urlsplit(started["authorization_url"]).query)["state"][0]
    # When the user says no at the provider, it sends them back with error=access_denied
    back = httpx.get(server["url"] + "/oauth/callback", params={"state": state, "error": "access_denied"})
    assert back.status_code == 400 and back.json()["error"].startswith("error: the provider did not authorize")
    conn = a.get(f"/v3/connections/{started['connection']['id']}").json()
    assert conn["status"] == "error" and "access_denied" in conn["status_reason"]
    # and a made-up state is refused without touching anything
    assert httpx.get(server["url"] + "/oauth/callback", params={"state": "forged", "code": "c"}).status_code == 400
    assert a.delete(f"/v3/connections/{conn['id']}").status_code == 200


def test_every_connection_route_is_in_the_openapi_document(server):
    paths = httpx.get(server["url"] + "/openapi.json").json()["paths"]
    assert {"/v3/connections", "/v3/connections/{connection_id}", "/v3/connections/{connection_id}/pause",
            "/v3/connections/{connection_id}/resume", "/v3/connections/{connection_id}/sync",
            "/oauth/callback", "/webhooks/github"} <= set(paths)
    assert set(paths["/v3/connections/{connection_id}"]) == {"get", "delete"}
