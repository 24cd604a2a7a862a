"""With `index_identifier_words` on (MEMLANE_INDEX_IDENTIFIER_WORDS=1), a code memory is found by the
words of its identifiers (memlane.ingest.identifiers), through `/v3/recall` on the local stack (the
resolver `memlane serve` and Lambda both call), while what recall shows stays the memory's own text;
off (the default), the index holds the text as written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from fakes import FixedClock, HashEmbedder

from memlane.api.app import MemlaneApi
from memlane.api.auth import authorizer_context
from memlane.api.events import build_event
from memlane.config import Settings
from memlane.domain.models import Project
from memlane.domain.principal import Principal
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import build_local
from memlane.services.keys import ensure_organization
from memlane.services.ratelimit import InMemoryRateLimiter

FETCH_USER_NAME = "def fetchUserName(account):\n    return account.profile['display']\n"
SAVE_INVOICE = "def saveInvoiceTotal(ledger, total):\n    ledger.append(total)\n"
SNAKE = "def load_config_file(path):\n    with open(path) as handle:\n        return parse(handle)\n"
NOTES = [
    "The ferry to the island leaves at dawn.",
    "Buy oat milk and coffee beans.",
    "The landlord needs two months of notice.",
    "Priya prefers the 1:1 on Thursdays.",
    "Offsite plan: the lake house, second week of June.",
    "BM25 parameters: k1 1.2 and b 0.75.",
]


class WideHashEmbedder(HashEmbedder):
    """The bag-of-words fake, wide enough that the few words here never share a dimension: two
    texts without a common word (as written) are at cosine 0, so only the text leg can join them."""

    dimension = 16_384

    @property
    def id(self) -> str:
        return "test/hash/16384"


class Api:
    def __init__(self, tmp_path: Any, identifier_words: bool = True) -> None:
        self.embedder = WideHashEmbedder()
        settings = Settings(data_dir=tmp_path / "d", index_identifier_words=identifier_words)
        self.stack = build_local(settings, embedder=self.embedder,
                                 summarizer=LocalSummarizer(), media_readers=(None, None))
        self.stack.services = replace(self.stack.services, clock=FixedClock(), rate_limiter=InMemoryRateLimiter())
        org, _ = ensure_organization(self.stack.metadata, "acme")
        self.who = Principal(organization_id=org.id, key_id="key-a", rate_limit_per_minute=1000)
        self.api = MemlaneApi(self.stack.services)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        event = build_event(method, path, "", {"Content-Type": "application/json"}, json.dumps(body).encode(),
                            authorizer_context(self.who))
        result = self.api.handle(event, None)
        return int(result["statusCode"]), json.loads(result.get("body") or "null")

    def save(self, content: str, **fields: Any) -> str:
        status, body = self.call("POST", "/v3/memory", {"content": content, **fields})
        assert status in (200, 201, 202), body
        return str(body["id"])

    def recall(self, query: str) -> list[dict[str, Any]]:
        status, body = self.call("POST", "/v3/recall", {"query": query, "limit": 10})
        assert status == 200, body
        return list(body["results"])


@pytest.fixture
def api(tmp_path) -> Iterator[Api]:
    a = Api(tmp_path)
    yield a
    a.stack.close()


def test_a_code_memory_is_found_by_the_words_of_a_camelcase_name(api: Api) -> None:
    # Given two functions saved as code among unrelated notes
    for note in NOTES:
        api.save(note)
    wanted = api.save(FETCH_USER_NAME, content_type="code", title="accounts.py")
    api.save(SAVE_INVOICE, content_type="code", title="billing.py")
    # The query shares no word with the function as written (the embedder here is a bag of the words
    # as written: "getusername" is one word), so the vector leg cannot find it: only its words can
    query, embedded = api.embedder._vec("read user name"), api.embedder._vec(f"accounts.py\n{FETCH_USER_NAME}")
    assert sum(q * e for q, e in zip(query, embedded, strict=True)) == 0.0
    # When a person asks in words
    results = api.recall("read user name")
    # Then the function that writes those words joined comes first, above everything else
    assert results[0]["document_id"] == wanted
    assert results[0]["score"] > results[1]["score"]
    # and recall shows the memory's own text, not the words added for the index
    assert [c["content"] for c in results[0]["chunks"]] == [FETCH_USER_NAME.strip()]


def test_a_query_naming_an_identifier_matches_its_words_in_other_spellings(api: Api) -> None:
    for note in NOTES:
        api.save(note)
    snake = api.save(SNAKE, content_type="code", title="settings.py")
    api.save(SAVE_INVOICE, content_type="code", title="billing.py")
    # `loadConfigFile` is written `load_config_file` in the code: the query's camelCase gains its words
    results = api.recall("loadConfigFile")
    assert results[0]["document_id"] == snake
    assert results[0]["score"] > results[1]["score"]


def test_prose_memories_are_indexed_as_written(api: Api) -> None:
    # A note is not code: its camelCase is not split ("getUserName" in a note is matched whole)
    note = api.save("Remember: rename getUserName before the release.")
    others = [api.save(other) for other in NOTES]
    assert [r["document_id"] for r in api.recall("getUserName")][:1] == [note]
    # asked in words, the note has no more evidence than a note about something else (recency only)
    scores = {r["document_id"]: r["score"] for r in api.recall("user name")}
    assert scores[note] == scores[others[0]] == 0.1


def test_off_by_default_the_index_holds_the_code_as_written(tmp_path) -> None:
    assert Settings.from_env({}).index_identifier_words is False
    assert Settings.from_env({"MEMLANE_INDEX_IDENTIFIER_WORDS": "1"}).index_identifier_words is True
    api = Api(tmp_path, identifier_words=False)
    try:
        for note in NOTES:
            api.save(note)
        wanted = api.save(FETCH_USER_NAME, content_type="code", title="accounts.py")
        other = api.save(SAVE_INVOICE, content_type="code", title="billing.py")
        # asked in words, the function has no more evidence than the other one (recency only)
        scores = {r["document_id"]: r["score"] for r in api.recall("read user name")}
        assert scores[wanted] == scores[other] == 0.1
    finally:
        api.stack.close()


def test_reindex_gives_an_existing_index_the_identifier_words(tmp_path, monkeypatch) -> None:
    from datetime import UTC, datetime

    from memlane.cli import main
    from memlane.local import compose
    from memlane.ports import RecallFilters, SearchScope

    # Given a data directory whose code memory was indexed with the setting off
    api = Api(tmp_path, identifier_words=False)
    project = api.stack.metadata.create_project(
        Project(organization_id=api.who.organization_id, name="code", slug="code")).id
    wanted = api.save(FETCH_USER_NAME, content_type="code", title="accounts.py", project_id=project)

    def text_hits() -> list[str]:
        scope = SearchScope(api.who.organization_id, (project,), RecallFilters(), now=datetime.now(UTC))
        return [c.document_id for c in api.stack.index.search(scope, "user name", None, 10).text]

    assert text_hits() == []
    api.stack.close()
    # When `MEMLANE_INDEX_IDENTIFIER_WORDS=1 memlane reindex` runs
    monkeypatch.setenv("MEMLANE_INDEX_IDENTIFIER_WORDS", "1")
    monkeypatch.setattr(compose, "make_embedder", lambda settings, models_dir=None: WideHashEmbedder())
    assert main(["reindex", "--data-dir", str(tmp_path / "d")]) == 0
    # Then the function is found by its identifier's words
    api = Api(tmp_path, identifier_words=True)
    try:
        assert text_hits() == [wanted]
    finally:
        api.stack.close()
