"""Finding 6: a signed GitHub delivery is applied once. The same push with the same
X-GitHub-Delivery, or the same signed body under a new id (the id is not signed), changes nothing
the second time; a delivery that failed is not recorded, so GitHub's redelivery still applies it."""

from __future__ import annotations

import json

import pytest

from memlane.connections import replay  # noqa: E402
from memlane.connections.webhooks import github_signature, handle_github  # noqa: E402

REPO = "acme/replay"


@pytest.fixture
def world(github_world):
    return github_world(REPO, {"notes.md": b"# Notes\n\nversion one\n"})


def deliver(world, conn, body: bytes, secret: str, delivery: str | None):
    headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": github_signature(secret.encode(), body)}
    if delivery:
        headers["X-GitHub-Delivery"] = delivery
    return handle_github(world.svc, conn.id, headers, body)


def push_body() -> bytes:
    return json.dumps({"ref": "refs/heads/main", "after": "c0ffee",
                       "repository": {"full_name": REPO, "default_branch": "main"},
                       "commits": [{"added": [], "modified": ["notes.md"], "removed": []}]}).encode()


def test_the_same_signed_push_is_applied_once(world, fake):
    conn = world.connect(world.a, {"repositories": [REPO]})
    secret = world.last_start.webhook.secret
    world.sync(conn)
    fake.repo(REPO).files["notes.md"] = b"# Notes\n\nversion two\n"
    body = push_body()
    first = deliver(world, conn, body, secret, "delivery-1")
    assert first.applied is not None and first.applied.updated == 1
    fetched = fake.hits(f"/repos/{REPO}/contents/notes.md")
    # When the same delivery is replayed, with its id or with a new one
    for delivery in ("delivery-1", "delivery-forged", None):
        again = deliver(world, conn, body, secret, delivery)
        # Then nothing is applied and the provider is not even asked
        assert again.applied is None and "already applied" in (again.note or ""), delivery
    assert fake.hits(f"/repos/{REPO}/contents/notes.md") == fetched


def test_the_record_is_kept_for_days_and_only_after_success(world, fake, monkeypatch):
    conn = world.connect(world.a, {"repositories": [REPO]})
    secret = world.last_start.webhook.secret
    world.sync(conn)
    assert replay.DELIVERY_TTL_SECONDS >= 3 * 24 * 3600  # GitHub redelivers for three days
    body = push_body()

    def broken(*args, **kwargs):
        raise RuntimeError("store down")

    import memlane.connections.webhooks as webhooks

    monkeypatch.setattr(webhooks, "apply_changes", broken)
    with pytest.raises(RuntimeError):
        deliver(world, conn, body, secret, "delivery-2")
    monkeypatch.undo()
    assert not replay.already_applied(world.svc, conn.id, "delivery-2", body)
    fake.repo(REPO).files["notes.md"] = b"# Notes\n\nversion three\n"
    assert deliver(world, conn, body, secret, "delivery-2").applied is not None  # the redelivery applies
