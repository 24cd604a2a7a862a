"""One local runtime for `memlane serve`, `memlane mcp` and the CLI (issue 20): the same rate
limit, background work and organization rule however a request comes in."""

from __future__ import annotations

import json
import time

import pytest
from fakes import HashEmbedder

from memlane.api.events import build_event
from memlane.cli import main
from memlane.config import Settings
from memlane.config.local import LocalConfiguration
from memlane.local.mcp import backend_from, local_backend
from memlane.local.runtime import KEY_FILE, LocalRuntime
from memlane.mcp.tools import MemlaneTools, ToolError
from memlane.services.keys import create_key


@pytest.fixture(autouse=True)
def hashing_embedder(monkeypatch):
    """The CLI composes its own runtime: give it the hashing embedder instead of the model."""
    monkeypatch.setattr("memlane.local.compose.make_embedder", lambda settings, models_dir=None: HashEmbedder())
    monkeypatch.delenv("MEMLANE_ORG", raising=False)
    monkeypatch.delenv("MEMLANE_API_URL", raising=False)


def _make_run_key(data_dir, org: str = "default", rate_limit: int = 100) -> None:
    """What `memlane serve` leaves on first start: a key, kept in the data directory."""
    with LocalRuntime(Settings(data_dir=data_dir), embedder=HashEmbedder(), docsets=False) as rt:
        secret, _, _ = create_key(rt.stack.metadata, org, "local", rate_limit, can_manage_keys=True)
    (data_dir / KEY_FILE).write_text(secret + "\n")


def _api_error(rt: LocalRuntime, method: str, path: str, body: dict) -> tuple[int, str]:
    """What the API answers a keyed request over HTTP (the gateway's event), as its `error` text."""
    who = rt.principal()
    from memlane.api.auth import authorizer_context

    event = build_event(method, path, "", {"Content-Type": "application/json"}, json.dumps(body).encode(),
                        authorizer_context(who))
    result = rt.api.handle(event)
    return int(result["statusCode"]), json.loads(result["body"])["error"]


def test_services_are_complete_at_construction(tmp_path):
    with LocalRuntime(Settings(data_dir=tmp_path / "d"), embedder=HashEmbedder(), docsets=False) as rt:
        svc = rt.services
        assert svc.rate_limiter is not None and svc.background is not None and svc.on_enqueued is not None
        assert svc.connections is not None and svc.connections.dispatcher is rt.connection_runner


def test_mcp_has_the_rate_limit_of_the_server(tmp_path):
    # Given make run's key with a limit of 3 requests a minute
    data = tmp_path / "data"
    _make_run_key(data, rate_limit=3)
    backend = local_backend(Settings(data_dir=data), embedder=HashEmbedder(), docsets=False)
    try:
        tools = MemlaneTools(backend)
        # When the MCP tools send a fourth request within the minute
        for _ in range(3):
            tools.call("whoAmI", {})
        with pytest.raises(ToolError) as exc:
            tools.call("whoAmI", {})
        # Then it is refused as the server refuses it (429)
        assert "rate limit of 3 requests per minute exceeded" in str(exc.value)
    finally:
        backend.close()


def test_mcp_runs_background_work(tmp_path):
    # Given saves too large to process in the request (everything over 10 characters is queued)
    backend = local_backend(Settings(data_dir=tmp_path / "data", inline_max_chars=10), embedder=HashEmbedder(),
                            docsets=False)
    try:
        tools = MemlaneTools(backend)
        saved = tools.call("memory", {"content": "The harbour ferry leaves at nine every morning."})
        assert saved.structured["status"] == "queued"
        # Then the runtime's ingestion worker finishes it without anyone asking
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            doc = backend.request("GET", f"/v3/documents/{saved.structured['id']}")
            if doc["status"] == "ready":
                break
            time.sleep(0.05)
        assert doc["status"] == "ready" and doc["chunk_count"] >= 1
    finally:
        backend.close()


def test_cli_save_goes_through_the_resolver(tmp_path, capsys):
    data = tmp_path / "data"
    args = ["--data-dir", str(data)]
    # The same validation error text as the API
    assert main([*args, "remember", "   "]) == 1
    with LocalRuntime(Settings(data_dir=data), embedder=HashEmbedder(), docsets=False) as rt:
        status, error = _api_error(rt, "POST", "/v3/memory", {"content": "   "})
    assert status == 400 and capsys.readouterr().err.splitlines()[-1] == f"memlane: {error}"
    # The Idempotency-Key is honoured: a retry gets the first answer, not a "duplicate"
    assert main([*args, "remember", "Ferry at nine.", "--idempotency-key", "k-1", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main([*args, "remember", "Ferry at nine.", "--idempotency-key", "k-1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first and first["duplicate"] is False
    assert main([*args, "remember", "Ferry at ten.", "--idempotency-key", "k-1"]) == 1
    assert "Idempotency-Key: already used with a different request body" in capsys.readouterr().err


def test_cli_save_is_rate_limited(tmp_path, capsys):
    # Given make run's key allowing one request a minute: finding and creating the project is two
    data = tmp_path / "data"
    _make_run_key(data, rate_limit=1)
    assert main(["--data-dir", str(data), "remember", "Ferry at nine.", "--project", "Harbour"]) == 1
    assert "rate limit of 1 requests per minute exceeded" in capsys.readouterr().err


def test_cli_saves_queued_work_before_it_exits(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMLANE_INLINE_MAX_CHARS", "10")
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "remember", "The harbour ferry leaves at nine.", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "ready" and out["chunk_count"] >= 1


def _mcp_org(data, flag: str | None = None) -> str:
    """The organization `memlane mcp [--org FLAG]` acts as (the environment is the process's)."""
    backend = backend_from(LocalConfiguration.from_env().with_data_dir(data), org=flag)
    try:
        return backend.request("GET", "/v3/whoami")["organization_name"]
    finally:
        backend.close()


def _cli_org(data, capsys) -> str:
    assert main(["--data-dir", str(data), "remember", "Where am I saved?", "--json"]) == 0
    project_id = json.loads(capsys.readouterr().out)["project_id"]
    with LocalRuntime(Settings(data_dir=data), embedder=HashEmbedder(), docsets=False) as rt:
        md = rt.stack.metadata
        return next(o.name for o in md.list_organizations()
                    if any(p.id == project_id for p in md.list_projects(o.id)))


def test_cli_and_mcp_choose_the_same_organization(tmp_path, capsys, monkeypatch):
    # Given make run's key in the organization "Home" (and others beside it)
    data = tmp_path / "data"
    _make_run_key(data, org="Home")
    with LocalRuntime(Settings(data_dir=data), embedder=HashEmbedder(), docsets=False) as rt:
        create_key(rt.stack.metadata, "default")
        create_key(rt.stack.metadata, "Research")
    # Without MEMLANE_ORG both act as the organization of make run's key
    assert _cli_org(data, capsys) == _mcp_org(data) == "Home"
    # With MEMLANE_ORG both act as the organization it names
    monkeypatch.setenv("MEMLANE_ORG", "research")
    assert _cli_org(data, capsys) == _mcp_org(data) == "Research"
    # and --org wins over it
    assert main(["--data-dir", str(data), "remember", "Also here", "--org", "default", "--json"]) == 0
    assert _mcp_org(data, "default") == "default"


def test_without_a_key_both_act_as_the_default_organization(tmp_path, capsys):
    data = tmp_path / "data"
    assert _cli_org(data, capsys) == _mcp_org(data) == "default"
