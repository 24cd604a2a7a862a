"""Settings are read once, where a host starts (memlane.config.Settings.from_env), and passed
inward: a request never reads the environment, and a value memlane cannot use stops the host at
startup with a message naming the variable."""

from __future__ import annotations

import json
import os

import pytest

from memlane.api.app import MemlaneApi
from memlane.config import Settings
from memlane.config.docsets import DocsetSettings
from memlane.domain.errors import ConfigurationError
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import build_local
from memlane.local.gateway import LocalGateway

PUBLIC_URL = "https://memlane.example/dev"
OAUTH_ENV = {"MEMLANE_OAUTH_ISSUER": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Pool",
             "MEMLANE_OAUTH_CLIENT_IDS": "client-1", "MEMLANE_OAUTH_DOMAIN": "https://pool.auth.example",
             "MEMLANE_PUBLIC_URL": "https://elsewhere.example"}


@pytest.fixture
def composed(tmp_path, hash_embedder, monkeypatch):
    for name in (*OAUTH_ENV, "MEMLANE_ALLOWED_ORIGINS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMLANE_PUBLIC_URL", PUBLIC_URL + "/")
    stack = build_local(Settings.from_env(data_dir=tmp_path / "data"), embedder=hash_embedder,
                        summarizer=LocalSummarizer())
    yield LocalGateway(MemlaneApi(stack.services), stack.services)
    stack.close()


def get(gw: LocalGateway, path: str) -> tuple[int, dict]:
    r = gw.handle("GET", path, "", {"host": "127.0.0.1:7432"}, b"")
    return r.status, json.loads(r.body)


def test_a_request_does_not_see_the_environment_change_after_composition(composed, monkeypatch):
    # Given a server composed with MEMLANE_PUBLIC_URL set (a trailing slash is dropped)
    status, before = get(composed, "/.well-known/oauth-protected-resource")
    assert status == 200 and before["resource"] == f"{PUBLIC_URL}/mcp"
    assert get(composed, "/.well-known/oauth-authorization-server")[0] == 404  # no OAuth
    # When the environment changes while it runs (another URL, a whole OAuth configuration)
    for name, value in OAUTH_ENV.items():
        monkeypatch.setenv(name, value)
    assert os.environ["MEMLANE_PUBLIC_URL"] == "https://elsewhere.example"
    # Then its requests still answer with what it read when it started
    assert get(composed, "/.well-known/oauth-protected-resource") == (200, before)
    assert get(composed, "/.well-known/oauth-authorization-server")[0] == 404
    # and a host started now reads the new values
    fresh = Settings.from_env()
    assert fresh.public_url == "https://elsewhere.example" and fresh.oauth is not None
    assert fresh.oauth.resource == "https://elsewhere.example/mcp"


@pytest.mark.parametrize(("variable", "value"), [
    ("MEMLANE_ALLOWED_ORIGINS", "https://*.example"),
    ("MEMLANE_MCP_MAX_OUTPUT_CHARS", "999"),
    ("MEMLANE_INLINE_MAX_CHARS", "twenty"),
    ("MEMLANE_WEIGHT_TEXT", "0.4.1"),
    ("MEMLANE_CONTEXT_SIDES", "after"),
    ("MEMLANE_EMBEDDER_WINDOW", "512"),
    ("MEMLANE_OAUTH_ISSUER", "https://cognito-idp.example/pool"),  # without the URL and client ids
])
def test_a_bad_value_is_a_startup_error_naming_its_variable(variable, value):
    with pytest.raises(ConfigurationError) as exc:
        Settings.from_env({variable: value})
    assert exc.value.variable == variable
    assert exc.value.message.startswith(variable)


def test_docset_settings_name_the_variable_too():
    assert DocsetSettings.from_env({"MEMLANE_CRAWL_MAX_PAGES": "200"}).max_pages == 200
    with pytest.raises(ConfigurationError, match="MEMLANE_CRAWL_MAX_PAGES='lots'"):
        DocsetSettings.from_env({"MEMLANE_CRAWL_MAX_PAGES": "lots"})
    with pytest.raises(ConfigurationError, match="MEMLANE_DOCSET_WEIGHT_TEXT"):
        DocsetSettings.from_env({"MEMLANE_DOCSET_WEIGHT_TEXT": "heavy"})


def test_the_cli_names_the_variable_and_exits_2(tmp_path, capsys, monkeypatch):
    from memlane.cli import main

    monkeypatch.delenv("MEMLANE_API_URL", raising=False)
    monkeypatch.setenv("MEMLANE_MCP_MAX_OUTPUT_CHARS", "10")
    assert main(["mcp", "--data-dir", str(tmp_path / "d")]) == 2
    assert "memlane: MEMLANE_MCP_MAX_OUTPUT_CHARS='10': expected a whole number of characters, at least 1000" in (
        capsys.readouterr().err)
    assert not (tmp_path / "d").exists()  # nothing was opened


@pytest.mark.parametrize("value, on", [(None, True), ("0", False), ("off", False), ("1", True)])
def test_code_chunks_are_weighed_by_their_keyword_evidence_unless_turned_off(value, on):
    env = {} if value is None else {"MEMLANE_FUSION_CODE_TEXT_EVIDENCE": value}
    weights = Settings.from_env(env).fusion
    assert weights.code_text_evidence is on
    assert (weights.vector, weights.text, weights.recency) == (0.6, 0.4, 0.1)  # the spec's weights either way
