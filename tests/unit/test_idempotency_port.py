"""The idempotency port as services use it: one answer per (organization, key), replayed for a
retry, refused for another body, and a plain call without a key or a store."""

from __future__ import annotations

import pytest

from memlane.adapters.idempotency import PowertoolsIdempotency
from memlane.adapters.local.idempotency import SqliteIdempotencyLayer
from memlane.adapters.local.sqlite_db import SqliteDatabase
from memlane.domain.errors import ConflictError, InvalidInputError
from memlane.services.idempotency import run_once


@pytest.fixture
def port(tmp_path):
    db = SqliteDatabase(tmp_path / "i.sqlite3")
    yield PowertoolsIdempotency(lambda: SqliteIdempotencyLayer(db))
    db.close()


class Counter:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> dict:
        self.calls += 1
        return {"status": 201, "body": {"saved": self.calls}}


def test_a_retry_with_the_key_gets_the_first_answer_and_runs_nothing(port) -> None:
    action = Counter()
    first = run_once(port, "org-a", "save-1", {"content": "x"}, action)
    again = run_once(port, "org-a", "save-1", {"content": "x"}, action)
    assert first == again == {"status": 201, "body": {"saved": 1}}
    assert action.calls == 1


def test_the_same_key_in_another_organization_is_another_request(port) -> None:
    action = Counter()
    run_once(port, "org-a", "save-1", {"content": "x"}, action)
    assert run_once(port, "org-b", "save-1", {"content": "x"}, action)["body"] == {"saved": 2}


def test_the_key_with_another_body_is_a_conflict_that_names_the_header(port) -> None:
    run_once(port, "org-a", "save-1", {"content": "x"}, Counter())
    with pytest.raises(ConflictError, match="Idempotency-Key: already used with a different request body"):
        run_once(port, "org-a", "save-1", {"content": "y"}, Counter())


@pytest.mark.parametrize("key", ["", "   ", "k" * 256])
def test_an_empty_or_overlong_key_is_refused_before_anything_runs(port, key) -> None:
    action = Counter()
    with pytest.raises(InvalidInputError) as err:
        run_once(port, "org-a", key, {}, action)
    assert "Idempotency-Key" in str(err.value) and action.calls == 0


def test_without_a_key_or_a_store_the_action_simply_runs(port) -> None:
    action = Counter()
    assert run_once(port, "org-a", None, {}, action)["body"] == {"saved": 1}
    assert run_once(None, "org-a", "save-1", {}, action)["body"] == {"saved": 2}
    assert run_once(None, "org-a", "save-1", {}, action)["body"] == {"saved": 3}
