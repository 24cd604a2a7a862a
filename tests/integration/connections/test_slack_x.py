"""Slack saved items and X bookmarks against fakes on loopback: both list everything each sync, so
an item no longer saved is deleted; an edited message becomes a version; rate limits wait; a stale
token is refreshed (Slack says so with HTTP 200 and ok: false)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from connection_world import World
from fake_slack_x import FakeSlack, FakeX

from memlane.domain.connections import Provider


@pytest.fixture(scope="module")
def slack():
    f = FakeSlack().start()
    yield f
    f.stop()


@pytest.fixture(scope="module")
def x():
    f = FakeX().start()
    yield f
    f.stop()


def test_slack_saved_items_are_synced_versioned_and_unsaved(tmp_path, slack):
    slack.reset_data()
    slack.save_message("C01", "1700000000.000100", "U7", "The deploy freeze starts Friday at 18:00.")
    slack.save_message("C02", "1700000100.000200", "U8", "Invoices for March are in the shared drive.")
    slack.save_file("F1", "Runbook", "Restart the queue worker, then check the DLQ.")
    world = World(tmp_path, slack, Provider.SLACK)
    try:
        # Given a Slack connection: the user token comes nested under authed_user
        conn = world.connect(world.a)
        assert "user_scope=stars%3Aread" in world.last_start.authorization_url
        assert conn.account == "U42 in Acme"

        # When it syncs the first time
        first = world.sync(conn)
        assert (first.added, first.updated, first.deleted, first.errors) == (3, 0, 0, [])
        docs = world.current(world.a, conn)
        freeze = next(d for d in docs.values() if "deploy freeze" in d.content)
        assert freeze.source_url == "https://acme.slack.com/archives/C01/p1700000000000100"
        assert "Runbook" in docs

        # When a message is edited, one is unsaved, another saved
        slack.saved[0]["message"].update(text="The deploy freeze starts Friday at 16:00.",
                                         edited={"user": "U7", "ts": "1700000500.000000"})
        del slack.saved[1]
        slack.save_message("C03", "1700000200.000300", "U9", "Offsite is on the 12th.")
        second = world.sync(conn)

        # Then exactly one version, one removal, one addition
        assert (second.added, second.updated, second.deleted, second.errors) == (1, 1, 1, [])
        texts = sorted(d.content.splitlines()[0] for d in world.current(world.a, conn).values())
        assert texts == ["# Runbook", "Offsite is on the 12th.", "The deploy freeze starts Friday at 16:00."]
        world.assert_gone(world.a, [next(d.id for d in docs.values() if "Invoices for March" in d.content)])

        # When Slack says the token expired (HTTP 200, ok false), the sync refreshes and goes on
        slack.revoke_access_tokens()
        assert world.sync(conn).errors == []
        assert [r["grant_type"] for r in slack.token_requests][-1] == "refresh_token"

        # When Slack rate-limits the listing, nothing is deleted for not being listed
        slack.fail("/stars.list", 429, {"Retry-After": "20"}, after=1)
        limited = world.sync(conn)
        assert limited.complete is False and limited.deleted == 0
        assert len(world.current(world.a, conn)) == 3
        assert world.connection(conn).next_sync_at == world.clock.now() + timedelta(seconds=20)
        assert world.documents(world.b) == []
    finally:
        world.close()


def test_x_bookmarks_with_their_thread_are_synced_and_removed(tmp_path, x):
    x.reset_data()
    parent = x.post("100", "2", "Most bugs are in the code you did not test.")
    x.bookmarks += [x.post("101", "3", "Agreed, and the tests you wrote for the happy path only.", replying_to="100"),
                    x.post("102", "2", "A ship in port is safe, but that is not what ships are built for."),
                    x.post("103", "1", "Reading list: SRE book, chapter 6.")]
    assert parent["id"] not in {b["id"] for b in x.bookmarks}
    world = World(tmp_path, x, Provider.X)
    try:
        # Given an X connection (PKCE, confidential client with HTTP Basic)
        conn = world.connect(world.a)
        assert conn.account == "ana" and "code_challenge_method=S256" in world.last_start.authorization_url
        assert x.token_requests[0]["code_verifier"]

        # When it syncs: three bookmarks, two pages; the reply carries the post it answers
        first = world.sync(conn)
        assert (first.added, first.deleted, first.errors) == (3, 0, [])
        docs = {d.source_url: d for d in world.current(world.a, conn).values()}
        reply = docs["https://x.com/linus/status/101"]
        assert "happy path" in reply.content and "> Most bugs are in the code you did not test." in reply.content
        assert world.document(world.a, reply.id).content_type.value == "tweet"

        # When a bookmark is removed and X rate-limits with x-rate-limit-reset
        x.bookmarks.pop(1)
        reset = int(world.clock.now().timestamp()) + 900
        x.fail("/2/users/1/bookmarks", 429, {"x-rate-limit-reset": str(reset)})
        limited = world.sync(conn)
        assert limited.complete is False and limited.deleted == 0
        wait = world.connection(conn).next_sync_at - world.clock.now()
        assert timedelta(seconds=899) <= wait <= timedelta(seconds=900)

        # Then after the reset (and with the two-hour token expired), the removal is applied
        world.clock.advance(hours=2)
        done = world.sync(conn)
        assert (done.added, done.deleted, done.errors) == (0, 1, [])
        assert set(d.source_url for d in world.current(world.a, conn).values()) == {
            "https://x.com/linus/status/101", "https://x.com/ana/status/103"}
        world.assert_gone(world.a, [docs["https://x.com/grace/status/102"].id])
        assert [r["grant_type"] for r in x.token_requests][-1] == "refresh_token"
    finally:
        world.close()
