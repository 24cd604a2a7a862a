"""The local gateway's browser policy (the Vidurai allow-list, 403 for other origins, preflight)
and `--no-auth` (keyless requests act as the default organization, on loopback only)."""

from __future__ import annotations

import json

import pytest

from memlane.api.app import MemlaneApi
from memlane.config import Settings
from memlane.domain.errors import InvalidInputError
from memlane.domain.origins import OriginPolicy, is_loopback_origin
from memlane.local.gateway import LocalGateway, is_loopback_host
from memlane.local.server import LocalServer
from memlane.services.keys import create_key

LOCAL = {"host": "127.0.0.1:7432", "content-type": "application/json"}


def gateway(stack, **kwargs) -> LocalGateway:
    return LocalGateway(MemlaneApi(stack.services), stack.services, **kwargs)


def call(gw, method, path, headers=None, body=None):
    raw = json.dumps(body).encode() if body is not None else b""
    r = gw.handle(method, path, "", {**LOCAL, **(headers or {})}, raw)
    return r.status, r.headers, json.loads(r.body) if r.body else None


@pytest.mark.parametrize(("origin", "allowed"), [
    ("http://localhost:3000", True), ("http://localhost", True), ("http://127.0.0.1:8080", True),
    ("https://chat.openai.com", True), ("https://chatgpt.com", True),
    ("https://localhost:3000", False), ("http://localhost.evil.com", False), ("https://evil.example", False),
    ("http://127.0.0.2:80", False), ("null", False), ("http://localhost:abc", False),
    ("https://chatgpt.com.evil.example", False),
])
def test_the_seed_allow_list(origin, allowed):
    assert OriginPolicy().allows(origin) is allowed
    assert OriginPolicy(allow_all=True).allows(origin)


def test_loopback_helpers():
    assert is_loopback_origin("http://127.0.0.1:1") and not is_loopback_origin("http://127.0.0.1/path")
    for host in ("localhost:7432", "127.0.0.1", "127.0.0.1:7432", "[::1]:7432", "::1", "LOCALHOST"):
        assert is_loopback_host(host), host
    for host in ("evil.example:7432", "0.0.0.0:7432", "192.168.1.2", "", "[::1"):
        assert not is_loopback_host(host), host


def test_a_rejected_origin_is_403_before_anything_runs(stack):
    gw = gateway(stack)
    status, headers, body = call(gw, "GET", "/health", {"Origin": "https://evil.example"})
    assert (status, body) == (403, {"error": "origin not allowed: https://evil.example"})
    assert "Access-Control-Allow-Origin" not in headers
    status, _, _ = call(gw, "OPTIONS", "/", {"Origin": "https://evil.example"})
    assert status == 403


def test_allowed_origins_get_cors_headers_and_preflight_answers(stack):
    gw = gateway(stack)
    status, headers, body = call(gw, "GET", "/capabilities", {"Origin": "https://chatgpt.com"})
    assert status == 200 and "get_project_context" in body["capabilities"]["tools"]
    assert headers["Access-Control-Allow-Origin"] == "https://chatgpt.com" and headers["Vary"] == "Origin"
    status, headers, body = call(gw, "OPTIONS", "/", {"Origin": "http://localhost:5173",
                                                      "Access-Control-Request-Method": "POST",
                                                      "Access-Control-Request-Headers": "content-type"})
    assert (status, body) == (204, None)
    assert headers == {"Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
                       "Access-Control-Allow-Headers": "content-type", "Access-Control-Max-Age": "600",
                       "Access-Control-Allow-Origin": "http://localhost:5173", "Vary": "Origin"}
    # --allow-all-origins opens the list
    status, headers, _ = call(gateway(stack, allow_all_origins=True), "GET", "/health",
                              {"Origin": "https://evil.example"})
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "https://evil.example"


def test_without_no_auth_a_keyless_request_is_401(stack):
    status, _, body = call(gateway(stack), "POST", "/", body={"tool": "get_active_project", "params": {}})
    assert status == 401 and "API key" in body["error"]


def test_no_auth_acts_as_the_default_organization_and_still_checks_keys(stack):
    gw = gateway(stack, no_auth=True)
    status, _, body = call(gw, "GET", "/v3/whoami")
    assert status == 200 and body["organization_name"] == "default" and body["key_id"] == "local-no-auth"
    # a key, when sent, is used — and a bad one is still refused
    secret, _, org = create_key(stack.metadata, "acme")
    status, _, body = call(gw, "GET", "/v3/whoami", {"Authorization": f"Bearer {secret}"})
    assert status == 200 and body["organization_id"] == org.id
    status, _, body = call(gw, "GET", "/v3/whoami", {"Authorization": "Bearer mlk_wrong"})
    assert (status, body) == (401, {"error": "invalid or revoked API key"})
    # a page that rebinds its own name to 127.0.0.1 sends its own Host: refused
    status, _, body = call(gw, "GET", "/v3/whoami", {"host": "attacker.example:7432"})
    assert (status, body) == (403, {"error": "host not allowed without an API key: attacker.example:7432"})


def test_no_auth_is_refused_on_a_non_loopback_host(tmp_path):
    with pytest.raises(InvalidInputError, match="refusing to serve without authentication on '0.0.0.0'"):
        LocalServer(Settings(data_dir=tmp_path / "d"), host="0.0.0.0", no_auth=True)
    assert not (tmp_path / "d").exists()  # refused before anything was created


def test_serve_refuses_no_auth_on_a_public_address(tmp_path, capsys):
    from memlane.cli import main

    assert main(["serve", "--no-auth", "--host", "0.0.0.0", "--data-dir", str(tmp_path / "d")]) == 2
    assert "refusing to serve without authentication on '0.0.0.0'" in capsys.readouterr().err
