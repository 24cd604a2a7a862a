"""GitHub connections against a fake GitHub on loopback: the OAuth code flow with PKCE, first sync,
changes, deletions, rate limits, outages, expired tokens, one failing file, webhooks — and for
each, exactly which memories exist afterwards."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from connection_world import World
from fake_github import FakeGitHub, blob_sha

from memlane.connections.sync import is_due
from memlane.connections.webhooks import github_signature, handle_github
from memlane.domain.connections import ConnectionStatus, Provider
from memlane.domain.errors import AuthenticationError

REPO = "acme/billing"
APP = b'''def refund_window_days():
    """How long customers may ask for a refund."""
    return 30
'''


@pytest.fixture(scope="module")
def fake():
    f = FakeGitHub().start()
    yield f
    f.stop()


@pytest.fixture
def world(tmp_path, fake):
    fake.reset_data()
    repo = fake.repo(REPO)
    repo.files.update({"README.md": b"# Billing\n\nInvoices and refunds.\n", "src/app.py": APP,
                       "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00"})
    fake.add_issue(REPO, 1, "Refunds fail for old orders", "Orders older than a year cannot be refunded.")
    fake.comment(REPO, 1, "hubot", "Reproduced on staging.")
    fake.add_issue(REPO, 2, "Speed up invoice export", "Uses streaming.", pull=True)
    fake.comment(REPO, 2, "reviewer", "Please add a test.", review_path="src/app.py")
    fake.add_issue(REPO, 3, "Typo in receipt footer", "It says 'recieve'.")
    w = World(tmp_path, fake, Provider.GITHUB)
    yield w
    w.close()


def connect(world: World, repos: list[str] | None = None, who=None):
    return world.connect(who or world.a, {"repositories": repos or [REPO]})


EXPECTED_TITLES = {"README.md", "src/app.py", "acme/billing#1: Refunds fail for old orders",
                   "acme/billing#2: Speed up invoice export", "acme/billing#3: Typo in receipt footer"}


def test_first_sync_change_and_delete_leave_exactly_the_right_memories(world, fake):
    # Given a connection made through the OAuth code flow, with PKCE
    conn = connect(world)
    assert fake.token_requests[0]["code_verifier"], "PKCE verifier sent with the code"
    assert conn.account == "octocat" and conn.name == "GitHub: acme/billing"

    # When it syncs the first time
    first = world.sync(conn)

    # Then the README, the source file and the three issues/PRs are memories; the logo is not
    assert (first.added, first.updated, first.deleted, first.errors) == (5, 0, 0, [])
    docs = world.current(world.a, conn)
    assert set(docs) == EXPECTED_TITLES
    code = world.document(world.a, docs["src/app.py"].id)
    assert code.content == APP.decode() and code.metadata["language"] == "python"
    assert {k: code.metadata["raged"][k] for k in ("repoId", "path", "lang")} == \
        {"repoId": REPO, "path": "src/app.py", "lang": "py"}
    assert code.source_url == "https://github.com/acme/billing/blob/main/src/app.py"
    pr = world.document(world.a, docs["acme/billing#2: Speed up invoice export"].id)
    assert "Pull request #2" in pr.content and "@reviewer on src/app.py" in pr.content
    issue = world.document(world.a, docs["acme/billing#1: Refunds fail for old orders"].id)
    assert "Reproduced on staging." in issue.content and issue.metadata["kind"] == "issue"

    # When a file changes, a comment arrives, a file and an issue are deleted at GitHub
    fake.repo(REPO).files["src/app.py"] = APP.replace(b"30", b"14")
    del fake.repo(REPO).files["README.md"]
    fake.comment(REPO, 1, "octocat", "Fixed in the refund service.")
    fake.repo(REPO).issues[3].deleted = True
    world.clock.advance(hours=25)  # the daily full listing of issue numbers is due
    second = world.sync(conn)

    # Then the file and the issue are new versions of their old selves, the deleted ones are gone
    assert (second.added, second.updated, second.deleted, second.errors) == (0, 2, 2, [])
    after = world.current(world.a, conn)
    assert set(after) == {"src/app.py", "acme/billing#1: Refunds fail for old orders",
                          "acme/billing#2: Speed up invoice export"}
    assert world.document(world.a, after["src/app.py"].id).updates_memory_id == docs["src/app.py"].id
    assert "Fixed in the refund service." in after["acme/billing#1: Refunds fail for old orders"].content
    world.assert_gone(world.a, [docs["README.md"].id, docs["acme/billing#3: Typo in receipt footer"].id])
    assert len(world.documents(world.a, conn)) == 5  # 3 current + the 2 versions they replace

    # and nothing changed means nothing fetched: the branch head did not move, no issue was updated
    fake.reset()
    third = world.sync(conn)
    assert (third.added, third.updated, third.deleted) == (0, 0, 0)
    assert fake.hits(f"/repos/{REPO}/git/") == 0 and fake.hits(f"/repos/{REPO}/issues/") == 0


def test_another_organization_sees_nothing_of_this_one(world, fake):
    # Given two organizations, each with its own GitHub connection and repository
    fake.repo("globex/secret").files["plan.md"] = b"# Plan\n\nThe merger closes in May.\n"
    conn_a = connect(world)
    conn_b = connect(world, ["globex/secret"], who=world.b)
    world.sync(conn_a)
    world.sync(conn_b)

    # Then each lists, reads and recalls only its own
    store = world.ports.store
    assert [c.id for c in store.list_connections(world.a.organization_id)] == [conn_a.id]
    assert [c.id for c in store.list_connections(world.b.organization_id)] == [conn_b.id]
    assert store.get_connection(world.a.organization_id, conn_b.id) is None
    assert set(world.current(world.b)) == {"plan.md"}
    assert "plan.md" not in world.recall_titles(world.a, "merger closes in May", limit=50)
    assert "src/app.py" not in world.recall_titles(world.b, "refund window days", limit=50)


def test_a_rate_limit_or_an_outage_stops_the_sync_and_keeps_the_cursor(world, fake):
    conn = connect(world)
    # Given GitHub answers the issue listing with a 429 and Retry-After: 120
    fake.fail(f"/repos/{REPO}/issues", 429, {"Retry-After": "120"})
    first = world.sync(conn)

    # Then the files (listed before the issues) are in, the sync says why it stopped, and waits
    assert first.complete is False and first.added == 2
    assert any("429" in e and "120 s" in e for e in first.errors), first.errors
    stored = world.connection(conn)
    assert stored.cursor[REPO]["commit"] and "issues_since" not in stored.cursor[REPO]
    assert stored.next_sync_at == world.clock.now() + timedelta(seconds=120)
    assert not is_due(stored, world.clock.now())

    # When the time has passed and GitHub answers a 503 once
    world.clock.advance(seconds=121)
    assert is_due(world.connection(conn), world.clock.now())
    fake.fail(f"/repos/{REPO}/issues", 503)
    second = world.sync(conn)
    assert second.complete is False and world.connection(conn).consecutive_failures == 1
    assert world.connection(conn).next_sync_at == world.clock.now() + timedelta(minutes=1)

    # Then the next sync after the backoff completes, with every item exactly once
    world.clock.advance(minutes=2)
    third = world.sync(conn)
    assert third.complete and (third.added, third.updated) == (3, 0)
    assert set(world.current(world.a, conn)) == EXPECTED_TITLES
    assert len(world.documents(world.a, conn)) == 5


def test_github_primary_rate_limit_403_is_a_rate_limit(world, fake):
    conn = connect(world)
    reset = int(world.clock.now().timestamp()) + 300
    fake.fail(f"/repos/{REPO}", 403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)})
    result = world.sync(conn)
    assert result.complete is False and result.added == 0
    wait = world.connection(conn).next_sync_at - world.clock.now()
    assert timedelta(seconds=299) <= wait <= timedelta(seconds=300), "until GitHub's x-ratelimit-reset"
    assert world.connection(conn).status == ConnectionStatus.ACTIVE


def test_an_expired_token_is_refreshed_and_a_revoked_one_asks_to_reconnect(world, fake):
    conn = connect(world)
    sealed_before = world.connection(conn).sealed_tokens
    # Given GitHub no longer accepts the access token (expired early)
    fake.revoke_access_tokens()

    # When the sync runs, it refreshes once (the refresh token rotates) and goes on
    result = world.sync(conn)
    assert result.errors == [] and result.added == 5
    refreshes = [r for r in fake.token_requests if r.get("grant_type") == "refresh_token"]
    assert len(refreshes) == 1
    assert world.connection(conn).sealed_tokens != sealed_before, "the rotated tokens were stored"

    # When the token is about to expire (8 h tokens, 5 minutes' margin), it is refreshed before use
    world.clock.advance(hours=8)
    fake.repo(REPO).files["NOTES.md"] = b"# Notes\n\nRefunds need a receipt.\n"
    assert world.sync(conn).added == 1
    assert len([r for r in fake.token_requests if r.get("grant_type") == "refresh_token"]) == 2

    # When the user revoked the app at GitHub (no token works any more)
    fake.revoke_everything()
    failed = world.sync(conn)

    # Then the connection asks to be connected again and stops syncing
    stored = world.connection(conn)
    assert failed.complete is False and stored.status == ConnectionStatus.ERROR
    assert "connect again" in stored.status_reason
    assert not is_due(stored, world.clock.now())
    assert len(world.current(world.a, conn)) == 6, "what was synced stays"


def test_one_failing_file_does_not_block_the_others_and_is_retried(world, fake):
    conn = connect(world)
    blob = blob_sha(APP)
    # Given GitHub refuses one blob (twice: the sync and nothing else)
    fake.fail(f"/repos/{REPO}/git/blobs/{blob}", 422)
    first = world.sync(conn)

    # Then everything else is in and the file is reported and kept for a retry
    assert first.added == 4 and first.complete
    assert [e for e in first.errors if "src/app.py" in e and "will retry" in e]
    assert world.connection(conn).pending_items == {f"{REPO}:file:src/app.py": 1}
    assert "src/app.py" not in world.current(world.a, conn)

    # When the next sync runs (nothing changed at GitHub), the file is retried and written
    second = world.sync(conn)
    assert (second.added, second.errors) == (1, []) and world.connection(conn).pending_items == {}
    assert set(world.current(world.a, conn)) == EXPECTED_TITLES


def test_a_truncated_tree_is_walked_one_level_at_a_time(world, fake):
    fake.truncate_trees = True
    fake.repo(REPO).files["src/deep/nested/util.py"] = b"def helper():\n    return 1\n"
    conn = connect(world)
    assert world.sync(conn).errors == []
    assert {"src/app.py", "src/deep/nested/util.py", "README.md"} <= set(world.current(world.a, conn))


def _deliver(world: World, conn, event: str, payload: dict, secret: str):
    body = json.dumps(payload).encode()
    headers = {"X-GitHub-Event": event, "X-Hub-Signature-256": github_signature(secret.encode(), body)}
    return handle_github(world.svc, conn.id, headers, body)


def test_webhook_push_and_issue_events_apply_at_once_and_bad_signatures_are_refused(world, fake):
    conn = connect(world)
    secret = world.last_start.webhook.secret
    world.sync(conn)
    before = world.current(world.a, conn)
    fake.reset()

    # When GitHub delivers a signed push that changes one file and removes another
    fake.repo(REPO).files["src/app.py"] = b"def refund_window_days():\n    return 45  # holiday season\n"
    del fake.repo(REPO).files["README.md"]
    push = {"ref": "refs/heads/main", "after": "abc123",
            "repository": {"full_name": REPO, "default_branch": "main"},
            "commits": [{"added": [], "modified": ["src/app.py"], "removed": ["README.md"]}]}
    out = _deliver(world, conn, "push", push, secret)

    # Then both are applied in that request: a new version, and a removal; recall finds the new text
    assert out.applied is not None and (out.applied.updated, out.applied.deleted) == (1, 1)
    now = world.current(world.a, conn)
    assert "README.md" not in now and "holiday season" in now["src/app.py"].content
    world.assert_gone(world.a, [before["README.md"].id])
    assert "src/app.py" in world.recall_titles(world.a, "holiday season refund window")
    assert fake.hits(f"/repos/{REPO}/contents/src/app.py") == 1

    # When an issue is deleted at GitHub
    fake.repo(REPO).issues[3].deleted = True
    out = _deliver(world, conn, "issues", {"action": "deleted", "issue": {"number": 3},
                                           "repository": {"full_name": REPO}}, secret)
    assert out.applied.deleted == 1
    world.assert_gone(world.a, [before["acme/billing#3: Typo in receipt footer"].id])

    # Then deliveries with a wrong signature, no signature or an unknown connection are refused alike
    body = json.dumps(push).encode()
    for conn_id, headers in ((conn.id, {"X-GitHub-Event": "push", "X-Hub-Signature-256": github_signature(b"x", body)}),
                             (conn.id, {"X-GitHub-Event": "push"}),
                             ("00000000-0000-0000-0000-000000000000",
                              {"X-GitHub-Event": "push", "X-Hub-Signature-256": github_signature(secret.encode(), body)})):
        with pytest.raises(AuthenticationError) as refused:
            handle_github(world.svc, conn_id, headers, body)
        assert "X-Hub-Signature-256" in refused.value.message
    # and a push to another branch or repository changes nothing
    other = {**push, "ref": "refs/heads/feature"}
    assert _deliver(world, conn, "push", other, secret).applied is None
