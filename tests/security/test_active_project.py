"""Finding 5: Vidurai's active project is kept per organization and set with a key, not read from
a file every organization shares (REST `POST /`, and MCP, whose project tools call the same)."""

from __future__ import annotations

import os

from memlane.services.keys import create_key


def tool(client, name, params=None):
    return client.post("/", json={"tool": name, "params": params or {}})


def test_one_organizations_active_project_is_invisible_to_another(secure_server):
    other_key, _, _ = create_key(secure_server.server.stack.metadata, "other")
    with secure_server.client() as mine, secure_server.client(other_key) as theirs:
        # Given my editor sets my active project
        r = tool(mine, "set_active_project", {"path": "/home/me/secret-plans"})
        assert r.status_code == 200 and r.json() == {"result": "/home/me/secret-plans", "source": "vscode"}
        # Then I see it, and another organization sees only its own default
        assert tool(mine, "get_active_project").json()["result"] == "/home/me/secret-plans"
        assert tool(theirs, "get_active_project").json() == {"result": os.getcwd(), "source": "default"}
        context = tool(theirs, "get_project_context").json()["result"]
        assert "secret-plans" not in context
        assert "secret-plans" in tool(mine, "get_project_context").json()["result"]


def test_setting_the_active_project_needs_a_key_and_one_line(secure_server):
    with secure_server.client("") as anon:
        assert tool(anon, "set_active_project", {"path": "/x"}).status_code == 401
    with secure_server.client() as c:
        for bad in ("", "a\u2028b", "a\nb", "x" * 1001):
            assert tool(c, "set_active_project", {"path": bad}).status_code == 400, repr(bad)


def test_no_shared_file_is_read(secure_server, data_dir):
    (data_dir / "active-project.txt").write_text("/planted/by/another/user\n")
    with secure_server.client() as c:
        assert tool(c, "get_active_project").json()["source"] == "default"
