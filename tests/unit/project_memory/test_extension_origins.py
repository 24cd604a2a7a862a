"""Origins added to the allow-list for memlane's browser extension (--allow-origin,
MEMLANE_ALLOWED_ORIGINS): exactly the configured ones are accepted, every other origin — another
extension included — is refused with 403 before the request runs."""

from __future__ import annotations

import json

import pytest

from memlane.api.app import MemlaneApi
from memlane.domain.errors import InvalidInputError
from memlane.domain.origins import OriginPolicy, parse_origins
from memlane.local.gateway import LocalGateway
from memlane.services.keys import create_key

CHROME = "chrome-extension://ibjigdcepmcfoplhobofpgjnoibiglci"
FIREFOX = "moz-extension://0f3c6a52-1b7e-4d2a-9c4f-5e8d7a6b1c20"
OTHER_EXTENSION = "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"


def post_memory(gw, key, origin):
    headers = {"host": "127.0.0.1:7432", "content-type": "application/json", "Authorization": f"Bearer {key}",
               "Origin": origin}
    r = gw.handle("POST", "/v3/memory", "", headers, json.dumps({"content": "saved from the browser"}).encode())
    return r.status, r.headers, json.loads(r.body)


def test_parse_origins_accepts_whole_origins_only():
    # Given origins as a user types them: repeated flags, commas, spaces, a trailing slash, capitals
    parsed = parse_origins([f"{CHROME}/, {FIREFOX.upper().replace('MOZ-EXTENSION', 'moz-extension')}",
                            "https://Memlane.Example.com:8443"])
    # Then they are normalised to what browsers send
    assert parsed == {CHROME, FIREFOX, "https://memlane.example.com:8443"}
    assert parse_origins(["", " , "]) == frozenset()


@pytest.mark.parametrize("bad", [
    "chrome-extension://*", "chrome-extension://abc", "chrome-extension://zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
    "moz-extension://not-a-uuid", "*", "https://*.example.com", "https://example.com/path",
    "ftp://example.com", "example.com", "https://user@example.com", "https://example.com:99999",
])
def test_parse_origins_refuses_patterns_and_non_origins(bad):
    with pytest.raises(InvalidInputError) as exc:
        parse_origins([bad], "MEMLANE_ALLOWED_ORIGINS")
    assert exc.value.message.startswith("MEMLANE_ALLOWED_ORIGINS: ") and "is not an origin" in exc.value.message


def test_the_configured_extension_may_save_and_others_are_refused(stack):
    # Given a gateway that allows the Chrome and Firefox builds of the extension
    key, _, org = create_key(stack.metadata, "acme")
    gw = LocalGateway(MemlaneApi(stack.services), stack.services, allowed_origins=parse_origins([CHROME, FIREFOX]))

    # When each allowed extension saves, Then the save runs and the answer names its origin
    for origin in (CHROME, FIREFOX):
        status, headers, body = post_memory(gw, key, origin)
        assert status in (200, 201) and body["title"]
        assert headers["Access-Control-Allow-Origin"] == origin

    # When another extension or a web page sends the same request with a valid key, Then it is
    # refused before it runs, and nothing more is stored
    before = stack.metadata.count_documents(org.id)
    for origin in (OTHER_EXTENSION, "https://evil.example", "moz-extension://11111111-2222-3333-4444-555555555555"):
        status, headers, body = post_memory(gw, key, origin)
        assert (status, body) == (403, {"error": f"origin not allowed: {origin}"})
        assert "Access-Control-Allow-Origin" not in headers
    assert stack.metadata.count_documents(org.id) == before


def test_without_configuration_the_extension_is_refused(stack):
    key, _, _ = create_key(stack.metadata, "acme")
    gw = LocalGateway(MemlaneApi(stack.services), stack.services)
    assert post_memory(gw, key, CHROME)[0] == 403
    assert not OriginPolicy().allows(CHROME) and OriginPolicy(extra=frozenset({CHROME})).allows(CHROME)


def test_serve_reports_a_bad_origin_and_exits(tmp_path, capsys, monkeypatch):
    from memlane.cli import main

    monkeypatch.delenv("MEMLANE_ALLOWED_ORIGINS", raising=False)
    assert main(["serve", "--allow-origin", "chrome-extension://*", "--data-dir", str(tmp_path / "d")]) == 2
    assert "--allow-origin: 'chrome-extension://*' is not an origin" in capsys.readouterr().err
    monkeypatch.setenv("MEMLANE_ALLOWED_ORIGINS", f"{CHROME},https://*.example")
    assert main(["serve", "--data-dir", str(tmp_path / "d")]) == 2
    assert (f"memlane: MEMLANE_ALLOWED_ORIGINS='{CHROME},https://*.example': 'https://*.example' is not an origin"
            in capsys.readouterr().err)


def test_a_refused_extension_is_told_the_setting_that_lets_it_in_once(stack, caplog):
    # Given a server that does not (yet) allow the extension
    key, _, _ = create_key(stack.metadata, "acme")
    gw = LocalGateway(MemlaneApi(stack.services), stack.services)
    # When the extension saves twice, and a web page tries too
    with caplog.at_level("WARNING", logger="memlane.local.gateway"):
        for origin in (CHROME, CHROME, "https://evil.example"):
            assert post_memory(gw, key, origin)[0] == 403
    # Then the log names the extension's origin and the setting, once; the web page is not named
    told = [r.getMessage() for r in caplog.records if r.name == "memlane.local.gateway"]
    assert told == [f"refused a request from the browser extension {CHROME}: to let it in, start memlane with "
                    f"--allow-origin {CHROME} (or add it to MEMLANE_ALLOWED_ORIGINS)"]
