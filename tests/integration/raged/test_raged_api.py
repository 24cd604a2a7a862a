"""The raged seed's documented requests and responses, replayed against a running local server."""

from __future__ import annotations

import httpx
import pytest

pytestmark = [pytest.mark.integration]

# The seed's POST /ingest body, with the item the POST /query example answers with.
INGEST_BODY = {
    "collection": "docs",
    "items": [
        {
            "id": "my-repo:src/auth.ts",
            "text": "export async function login(user: User) {\n  const token = await issueToken(user);\n"
                    "  return { token };\n}\n",
            "source": "https://github.com/org/repo#src/auth.ts",
            "metadata": {"repoId": "my-repo", "path": "src/auth.ts", "lang": "ts", "key": "value"},
        },
        {
            "id": "my-repo:README.md",
            "text": "# My repo\n\n" + "\n".join(f"Paragraph {i}: " + "setup notes " * 15 for i in range(20)),
            "source": "https://github.com/org/repo#README.md",
            "metadata": {"repoId": "my-repo", "path": "README.md", "lang": "md"},
        },
    ],
}
# The seed's POST /query body, verbatim.
QUERY_BODY = {"collection": "docs", "query": "search text", "topK": 8,
              "filter": {"repoId": "my-repo", "lang": "ts", "path": "src/"}, "strategy": "semantic"}


def assert_routing(routing: dict, strategy: str, method: str, confidence: float) -> None:
    assert set(routing) == {"strategy", "method", "confidence", "durationMs", "rule"}
    assert (routing["strategy"], routing["method"], routing["confidence"]) == (strategy, method, confidence)
    assert isinstance(routing["confidence"], float) and isinstance(routing["rule"], str)
    assert isinstance(routing["durationMs"], int) and routing["durationMs"] >= 0


def assert_result(result: dict) -> None:
    assert set(result) == {"id", "score", "source", "text", "payload"}
    assert isinstance(result["id"], str) and isinstance(result["score"], float)
    assert isinstance(result["source"], str) and isinstance(result["text"], str)
    payload = result["payload"]
    for name in ("text", "source", "chunkIndex", "repoId", "path", "lang"):  # the seed's stored payload
        assert name in payload, name
    assert payload["text"] == result["text"] and payload["source"] == result["source"]
    assert isinstance(payload["chunkIndex"], int)
    assert result["id"] == f"{payload['baseId']}:{payload['chunkIndex']}"


def test_healthz_needs_no_token(hash_server):
    r = httpx.get(f"{hash_server.url}/healthz")
    assert r.status_code == 200 and r.json() == {"ok": True}
    assert r.headers["content-type"].startswith("application/json")


def test_ingest_then_the_documented_query(hash_server):
    c = hash_server.client()
    r = c.post("/ingest", json=INGEST_BODY)
    assert r.status_code == 200
    body = r.json()
    # auth.ts is one chunk; the README (~3,900 chars) is three
    assert body == {"ok": True, "upserted": 4} and isinstance(body["upserted"], int)

    r = c.post("/query", json=QUERY_BODY)
    assert r.status_code == 200
    out = r.json()
    assert set(out) == {"ok", "results", "routing"} and out["ok"] is True
    assert [x["id"] for x in out["results"]] == ["my-repo:src/auth.ts:0"]
    res = out["results"][0]
    assert_result(res)
    assert res["source"] == "https://github.com/org/repo#src/auth.ts"
    assert res["text"] == INGEST_BODY["items"][0]["text"].strip()
    assert res["payload"] == {"key": "value", "text": res["text"], "source": res["source"], "chunkIndex": 0,
                              "baseId": "my-repo:src/auth.ts", "repoId": "my-repo", "path": "src/auth.ts",
                              "lang": "ts"}
    assert 0.0 <= res["score"] <= 1.0
    assert_routing(out["routing"], "semantic", "explicit", 1.0)


def test_routed_queries_explain_themselves(hash_server):
    c = hash_server.client()
    c.post("/ingest", json=INGEST_BODY).raise_for_status()
    keyword = c.post("/query", json={"query": "issueToken"}).json()
    assert_routing(keyword["routing"], "hybrid", "rule", 0.9)
    assert keyword["results"][0]["id"] == "my-repo:src/auth.ts:0"
    natural = c.post("/query", json={"query": "how does a user get a session token when logging in"}).json()
    assert_routing(natural["routing"], "semantic", "rule", 0.9)
    filter_only = c.post("/query", json={"filter": {"repoId": "my-repo", "path": "README"}, "topK": 2}).json()
    assert_routing(filter_only["routing"], "metadata", "rule", 1.0)
    assert [x["id"] for x in filter_only["results"]] == ["my-repo:README.md:0", "my-repo:README.md:1"]
    assert all(x["score"] == 1.0 for x in filter_only["results"])
    for x in filter_only["results"]:
        assert_result(x)


def test_topk_is_clamped_and_a_reingest_replaces(hash_server):
    c = hash_server.client()
    c.post("/ingest", json=INGEST_BODY).raise_for_status()
    assert len(c.post("/query", json={"filter": {"repoId": "my-repo"}, "topK": 1000}).json()["results"]) == 4
    assert len(c.post("/query", json={"filter": {"repoId": "my-repo"}, "topK": 0}).json()["results"]) == 1
    readme = {**INGEST_BODY["items"][1], "text": "# My repo\n\nNow short."}
    assert c.post("/ingest", json={"items": [readme]}).json() == {"ok": True, "upserted": 1}
    out = c.post("/query", json={"filter": {"path": "README"}, "topK": 10}).json()
    ids = [x["id"] for x in out["results"]]
    assert ids == ["my-repo:README.md:0"]


@pytest.mark.parametrize(("path", "body", "message"), [
    ("/query", {"collection": "docs"}, "query: is required"),
    ("/query", {"query": "   "}, "query: is required"),
    ("/query", {"query": "x", "strategy": "graph"},
     "strategy: Input should be 'semantic', 'metadata' or 'hybrid'"),
    ("/query", {"filter": {"repoId": "r"}, "strategy": "hybrid"},
     "query: is required for the hybrid strategy"),
    ("/query", {"query": "x", "filter": {"owner": "me"}}, "filter.owner"),
    ("/ingest", {"collection": "docs", "items": []}, "items: List should have at least 1 item"),
    ("/ingest", {"items": [{"id": "a", "text": ""}]}, "items.0.text"),
    ("/ingest", {"collection": "docs"}, "items: is required"),
])
def test_bad_requests_are_400_with_a_message(hash_server, path, body, message):
    r = hash_server.client().post(path, json=body)
    assert r.status_code == 400, r.text
    assert set(r.json()) == {"error"} and message in r.json()["error"]


def test_malformed_json_is_400(hash_server):
    r = hash_server.client().post("/query", content=b"{nope", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "malformed JSON" in r.json()["error"]


def test_without_a_valid_bearer_token_it_is_401(hash_server):
    for client in (hash_server.client(key=""), hash_server.client(key="mlk_not-a-key")):
        for path, body in (("/ingest", INGEST_BODY), ("/query", QUERY_BODY)):
            r = client.post(path, json=body)
            assert r.status_code == 401 and "API key" in r.json()["error"]


def test_collections_belong_to_the_key_organization(hash_server):
    hash_server.client().post("/ingest", json=INGEST_BODY).raise_for_status()
    from memlane.services.keys import create_key

    other, _, _ = create_key(hash_server.server.stack.metadata, "other-org")
    theirs = hash_server.client(key=other)
    assert theirs.post("/query", json={"query": "issueToken", "topK": 100}).json()["results"] == []
    assert theirs.post("/query", json={"filter": {"repoId": "my-repo"}}).json()["results"] == []
