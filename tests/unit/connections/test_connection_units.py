"""The pieces of a connection that need no provider: PKCE and the authorization URL, reading a
provider's Retry-After, when a connection is due, repository file rules, webhook signatures."""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from memlane.connections import oauth
from memlane.connections.providers import adapter_for, repository
from memlane.connections.sync import SYNC_EVERY, is_due
from memlane.connections.webhooks import github_signature, verify_github_signature
from memlane.domain.connections import Connection, ConnectionStatus, Provider
from memlane.domain.errors import InvalidInputError
from memlane.ports import OAuthApp

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def test_pkce_challenge_is_the_s256_of_the_verifier_and_goes_in_the_authorization_url():
    verifier, challenge = oauth.pkce_pair()
    assert 43 <= len(verifier) <= 128
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert challenge == digest
    spec = adapter_for("google_drive").oauth
    url = oauth.authorization_url(spec, OAuthApp("cid", "secret"), "https://m.example/oauth/callback", "st4te", challenge)
    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert url.startswith("https://accounts.google.com/o/oauth2/v2/auth?")
    assert query == {"client_id": "cid", "redirect_uri": "https://m.example/oauth/callback", "response_type": "code",
                     "state": "st4te", "scope": "https://www.googleapis.com/auth/drive.readonly",
                     "access_type": "offline", "prompt": "consent", "include_granted_scopes": "true",
                     "code_challenge": challenge, "code_challenge_method": "S256"}
    assert "secret" not in url


@pytest.mark.parametrize("headers,expected", [
    ({"Retry-After": "120"}, 120.0),
    ({"Retry-After": "Fri, 01 May 2026 12:01:30 GMT"}, 90.0),
    ({"x-rate-limit-reset": str(int(NOW.timestamp()) + 300)}, 300.0),
    ({}, 60.0),
])
def test_retry_after_is_read_as_seconds_a_date_or_a_reset_time(headers, expected):
    assert oauth.retry_after_seconds(httpx.Response(429, headers=headers), NOW) == expected


def conn(**fields) -> Connection:
    return Connection(organization_id="o", provider=Provider.GITHUB, project_id="p", name="n",
                      **{"status": ConnectionStatus.ACTIVE, **fields})


def test_a_connection_is_due_every_15_minutes_unless_paused_held_or_backing_off():
    assert is_due(conn(), NOW), "never synced"
    assert not is_due(conn(last_synced_at=NOW - SYNC_EVERY + timedelta(seconds=1)), NOW)
    assert is_due(conn(last_synced_at=NOW - SYNC_EVERY), NOW)
    assert is_due(conn(last_synced_at=NOW, sync_requested=True), NOW)
    assert not is_due(conn(sync_requested=True, next_sync_at=NOW + timedelta(seconds=5)), NOW), "Retry-After"
    assert not is_due(conn(lease_until=NOW + timedelta(minutes=1)), NOW), "a sync is running"
    assert not is_due(conn(status=ConnectionStatus.PAUSED), NOW)
    assert not is_due(conn(status=ConnectionStatus.ERROR), NOW)
    assert is_due(conn(status=ConnectionStatus.DELETING, last_synced_at=NOW), NOW)


@pytest.mark.parametrize("path,size,wanted", [
    ("src/app.py", 100, True),
    ("README.md", None, True),
    ("node_modules/x/index.js", 10, False),
    ("web/dist/bundle.js", 10, False),
    ("package-lock.json", 10, False),
    ("assets/logo.PNG", 10, False),
    ("data/huge.csv", repository.MAX_FILE_BYTES + 1, False),
])
def test_repository_files_are_chosen_by_path_and_size(path, size, wanted):
    assert repository.wanted(path, size, {}) is wanted


def test_repository_include_and_exclude_prefixes_and_raged_lang():
    opts = {"include": ["src/"], "exclude": ["src/generated/"]}
    assert repository.wanted("src/a.ts", 1, opts) and not repository.wanted("docs/a.md", 1, opts)
    assert not repository.wanted("src/generated/api.ts", 1, opts)
    assert [repository.raged_lang(p) for p in ("a.py", "b.yml", "c.markdown", "Makefile", "d.TSX")] == \
        ["py", "yaml", "md", "text", "tsx"]
    assert repository.decode_text(b"\x00\x01binary") is None and repository.decode_text(b"\xef\xbb\xbfhi") == "hi"


def test_github_options_name_the_field_that_is_wrong():
    github = adapter_for("github")
    assert github.validate_options({"repositories": ["a/b", "a/b"]})["repositories"] == ["a/b"]
    for options, field in (({}, "options.repositories"), ({"repositories": ["a/b"], "files": "yes"}, "options.files"),
                           ({"repositories": ["a/b"], "max_files": 0}, "options.max_files"),
                           ({"repositories": ["../etc"]}, "options.repositories")):
        with pytest.raises(InvalidInputError) as refused:
            github.validate_options(options)
        assert refused.value.field == field


def test_github_options_take_their_defaults_and_refuse_each_wrong_value_with_what_it_takes():
    github = adapter_for("github")
    # Given one repository and nothing else, every option takes its default
    assert github.validate_options({"repositories": ["octo/docs"]}) == {
        "repositories": ["octo/docs"], "files": True, "issues": True, "pull_requests": True, "include": [],
        "exclude": [], "branch": None, "max_files": repository.DEFAULT_MAX_FILES}
    # and each wrong value is refused naming its field and what it takes, in the order they are checked
    one = {"repositories": ["octo/docs"]}
    for options, field, message in (
        ({"repositories": "octo/docs"}, "options.repositories", "list the repositories to sync, as owner/name"),
        ({"repositories": [f"o/r{i}" for i in range(21)]}, "options.repositories", "at most 20 per connection"),
        ({"repositories": ["octo"]}, "options.repositories", "'octo' is not owner/name"),
        ({**one, "issues": 1, "include": "src"}, "options.issues", "must be true or false"),
        ({**one, "exclude": ["src/", ""]}, "options.exclude", "must be a list of path prefixes"),
        ({**one, "branch": "  "}, "options.branch", "must be a branch name"),
        ({**one, "max_files": True}, "options.max_files", "must be an integer from 1 to 20000"),
        ({**one, "max_files": 20_001}, "options.max_files", "must be an integer from 1 to 20000"),
        ({**one, "colour": "blue", "branch": "main"}, "options.colour", "is not an option of github connections"),
    ):
        with pytest.raises(InvalidInputError) as refused:
            github.validate_options(options)
        assert (refused.value.field, refused.value.message) == (field, f"{field}: {message}")


def test_github_signatures_are_hmac_sha256_of_the_exact_body():
    body = b'{"zen": "Design for failure."}'
    good = github_signature(b"s3cret", body)
    assert good.startswith("sha256=") and verify_github_signature(b"s3cret", body, good)
    assert not verify_github_signature(b"s3cret", body + b" ", good)
    assert not verify_github_signature(b"other", body, good)
    assert not verify_github_signature(b"s3cret", body, None)


def test_a_session_sends_its_token_only_to_the_providers_host():
    from fakes import FixedClock

    from memlane.connections.errors import ProviderItemError
    from memlane.connections.session import ProviderSession

    session = ProviderSession(provider="github", client=httpx.Client(), clock=FixedClock(NOW),
                              base_url="https://api.github.com")
    assert session.url("/repos/a/b") == "https://api.github.com/repos/a/b"
    assert session.url("https://api.github.com/repos/a/b/issues?page=2") == "https://api.github.com/repos/a/b/issues?page=2"
    with pytest.raises(ProviderItemError):
        session.url("https://attacker.example/collect?page=2")
