"""The Vidurai seed's documented requests and responses, replayed against a running local server
(started with --no-auth, as Vidurai's clients send no credentials)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import httpx
import pytest

pytestmark = [pytest.mark.integration]

PROJECT = "/home/user/my-project"
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

SEED_CAPABILITIES = {
    "capabilities": {
        "tools": {
            "get_project_context": {
                "description": "Get AI-ready formatted context for a project and optional query",
                "parameters": {
                    "project": {"type": "string", "description": "Project path (default: current directory)",
                                "required": False},
                    "query": {"type": "string", "description": "Optional search query to focus context",
                              "required": False},
                    "max_results": {"type": "integer", "description": "Maximum memories to include",
                                    "default": 20, "required": False},
                },
            },
            "search_memories": {
                "description": "Search project memories with optional filters",
                "parameters": {
                    "project": {"type": "string", "description": "Project path", "required": False},
                    "query": {"type": "string", "description": "Search query", "required": False},
                    "min_salience": {"type": "string", "description": "Minimum salience level",
                                     "enum": ["CRITICAL", "HIGH", "MEDIUM", "LOW", "NOISE"],
                                     "default": "MEDIUM", "required": False},
                    "limit": {"type": "integer", "description": "Maximum results", "default": 20,
                              "required": False},
                },
            },
            "get_recent_activity": {
                "description": "Get recent development activity for a project",
                "parameters": {
                    "project": {"type": "string", "description": "Project path", "required": False},
                    "hours": {"type": "integer", "description": "Look back this many hours", "default": 24,
                              "required": False},
                },
            },
            "get_active_project": {"description": "Get the current active project from VS Code",
                                   "parameters": {}},
            "set_active_project": {"description": "Set this organization's active project (what the editor has open)",
                                   "parameters": {"path": {"type": "string", "description": "Project path",
                                                           "required": True}}},
        }
    }
}


@pytest.fixture
def vidurai(start_server):
    """A --no-auth server holding a few memories of /home/user/my-project, saved through /v3."""
    running = start_server(no_auth=True)
    c = running.client()
    project_id = c.post("/v3/projects", json={"name": PROJECT}).json()["id"]
    for content, salience in [
        ("Database uses PostgreSQL 14", "CRITICAL"),
        ("Fixed authentication bug in login flow", "HIGH"),
        ("Resolved race condition in session handling", "CRITICAL"),
        ("Refactored user service", "MEDIUM"),
        ("Fixed a typo in a bug fix comment", "LOW"),
    ]:
        r = c.post("/v3/memory", json={"content": content, "project_id": project_id,
                                       "metadata": {"salience": salience}})
        assert r.status_code == 201, r.text
    return running


def tool(client: httpx.Client, name: str, params: dict) -> httpx.Response:
    return client.post("/", json={"tool": name, "params": params})


def test_health_and_capabilities(vidurai):
    anon = vidurai.client(key="")
    health = anon.get("/health").json()
    assert health["status"] == "ok" and isinstance(health["version"], str)
    r = anon.get("/capabilities")
    assert r.status_code == 200 and r.json() == SEED_CAPABILITIES


def test_get_project_context_example(vidurai):
    r = tool(vidurai.client(key=""), "get_project_context",
             {"project": PROJECT, "query": "authentication flow", "max_results": 30})
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"result"} and isinstance(body["result"], str)
    text = body["result"]
    assert text.startswith(f"# Project Context: {PROJECT}\n\n## Recent Developments (Last 24 hours)\n- ")
    assert ("\n## Critical Information\n- Resolved race condition in session handling\n"
            "- Database uses PostgreSQL 14\n") in text  # newest first
    related = text.split('## Related Memories for: "authentication flow"\n', 1)[1].split("\n\n---\n")[0]
    first = related.split("\n")[0]
    assert re.fullmatch(r"1\. \[\d{4}-\d\d-\d\d\] Fixed authentication bug in login flow", first)
    assert text.endswith("\n---\nGenerated by memlane v0.1.0")


def test_search_memories_example(vidurai):
    r = tool(vidurai.client(key=""), "search_memories",
             {"project": PROJECT, "query": "bug fix", "min_salience": "HIGH", "limit": 10})
    assert r.status_code == 200
    result = r.json()["result"]
    assert isinstance(result, list) and 1 <= len(result) <= 10
    assert result[0]["content"] == "Fixed authentication bug in login flow"
    for m in result:
        assert set(m) == {"id", "timestamp", "content", "salience", "kosha", "project_path", "metadata"}
        assert isinstance(m["id"], int) and TIMESTAMP.fullmatch(m["timestamp"])
        assert m["salience"] in ("HIGH", "CRITICAL")  # min_salience HIGH drops the LOW "bug fix" memory
        assert m["kosha"] in ("Manomaya", "Vijnanamaya") and m["project_path"] == PROJECT
        assert isinstance(m["metadata"], dict) and isinstance(m["content"], str)
    assert "Fixed a typo in a bug fix comment" not in [m["content"] for m in result]


def test_search_memories_curl_example_without_a_project(vidurai):
    # no project: the active project, and until one of that name exists, the default project (empty here)
    r = tool(vidurai.client(key=""), "search_memories", {"query": "bug", "min_salience": "HIGH", "limit": 5})
    assert r.status_code == 200 and r.json() == {"result": []}


def test_get_recent_activity_example(vidurai):
    r = tool(vidurai.client(key=""), "get_recent_activity", {"project": PROJECT, "hours": 48})
    assert r.status_code == 200
    result = r.json()["result"]
    assert [a["content"] for a in result] == ["Fixed a typo in a bug fix comment", "Refactored user service",
                                              "Resolved race condition in session handling",
                                              "Fixed authentication bug in login flow",
                                              "Database uses PostgreSQL 14"]
    for a in result:
        assert set(a) == {"timestamp", "content", "salience"} and TIMESTAMP.fullmatch(a["timestamp"])
    assert [a["salience"] for a in result] == ["LOW", "MEDIUM", "CRITICAL", "HIGH", "CRITICAL"]


def test_get_active_project_examples(vidurai):
    c = vidurai.client(key="")
    r = tool(c, "get_active_project", {})
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"result", "source"} and body["source"] == "default"
    assert isinstance(body["result"], str)
    assert tool(c, "set_active_project", {"path": PROJECT + "\n"}).json() == {"result": PROJECT, "source": "vscode"}
    assert tool(c, "get_active_project", {}).json() == {"result": PROJECT, "source": "vscode"}
    # and the active project is what "no project" means now
    assert len(tool(c, "search_memories", {"min_salience": "NOISE"}).json()["result"]) == 5


@pytest.mark.parametrize(("raw", "message"), [
    (b"{not json", "Invalid request format"),
    (b"[1, 2]", "Invalid request format"),
    (b'{"params": {}}', "Missing 'tool' in request"),
    (b'{"tool": "xyz", "params": {}}', "Unknown tool: xyz"),
    (b'{"tool": "search_memories", "params": {"min_salience": "URGENT"}}',
     "params.min_salience: must be one of CRITICAL, HIGH, MEDIUM, LOW, NOISE"),
    (b'{"tool": "get_recent_activity", "params": {"hours": "soon"}}', "params.hours"),
])
def test_error_responses(vidurai, raw, message):
    r = vidurai.client(key="").post("/", content=raw, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    body = r.json()
    assert set(body) == {"error"} and body["error"].startswith(message)


def test_salience_sets_retention_dates(vidurai):
    c = vidurai.client()
    for salience, days in [("CRITICAL", None), ("HIGH", 90), ("MEDIUM", 30), ("LOW", 7), ("NOISE", 1)]:
        saved = c.post("/v3/memory", json={"content": f"retention check {salience}",
                                           "metadata": {"salience": salience}}).json()
        doc = c.get(f"/v3/documents/{saved['id']}").json()
        created = datetime.fromisoformat(doc["created_at"])
        if days is None:
            assert doc["forget_after"] is None
        else:
            assert datetime.fromisoformat(doc["forget_after"]) - created == timedelta(days=days)
    r = c.post("/v3/memory", json={"content": "x", "metadata": {"salience": "URGENT"}})
    assert r.status_code == 400 and r.json()["error"].startswith("metadata.salience: must be one of")


def test_cors_allow_list_and_rejection(vidurai):
    c = vidurai.client(key="")
    ok = tool(httpx.Client(base_url=vidurai.url, headers={"Origin": "https://chatgpt.com"}),
              "get_active_project", {})
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "https://chatgpt.com"
    local = c.get("/capabilities", headers={"Origin": "http://localhost:5173"})
    assert local.status_code == 200 and local.headers["access-control-allow-origin"] == "http://localhost:5173"
    rejected = c.post("/", json={"tool": "get_active_project", "params": {}},
                      headers={"Origin": "https://evil.example"})
    assert rejected.status_code == 403 and rejected.json() == {"error": "origin not allowed: https://evil.example"}
    assert "access-control-allow-origin" not in rejected.headers
    pre = c.options("/", headers={"Origin": "https://chat.openai.com",
                                  "Access-Control-Request-Method": "POST",
                                  "Access-Control-Request-Headers": "content-type"})
    assert pre.status_code == 204
    assert pre.headers["access-control-allow-origin"] == "https://chat.openai.com"
    assert "POST" in pre.headers["access-control-allow-methods"]
    assert pre.headers["access-control-allow-headers"] == "content-type"
    assert c.options("/", headers={"Origin": "https://evil.example"}).status_code == 403


def test_allow_all_origins_and_keys_without_no_auth(start_server):
    open_server = start_server(allow_all_origins=True)
    r = open_server.client().get("/capabilities", headers={"Origin": "https://evil.example"})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://evil.example"
    # without --no-auth a keyless tool call is a 401; with the key it works
    assert tool(open_server.client(key=""), "get_active_project", {}).status_code == 401
    assert tool(open_server.client(), "get_active_project", {}).json()["source"] == "default"
