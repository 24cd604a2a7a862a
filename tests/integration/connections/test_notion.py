"""Notion connections against a fake Notion on loopback: pages and database rows as markdown, the
search API read incrementally by last_edited_time, trash, rate limits and expired tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from connection_world import World
from fake_notion import FakeNotion, block

from memlane.domain.connections import Provider


@pytest.fixture(scope="module")
def fake():
    f = FakeNotion().start()
    yield f
    f.stop()


@pytest.fixture
def world(tmp_path, fake):
    fake.reset_data()
    fake.add_page("Onboarding", [
        block("heading_1", "First week"),
        block("paragraph", "Meet the support team on Monday."),
        block("bulleted_list_item", "Laptop setup", children=[block("to_do", "Install the VPN", checked=True)]),
        block("numbered_list_item", "Read the refund policy"),
        block("numbered_list_item", "Shadow a support call"),
        block("code", "make run", language="shell"),
        block("table", children=[
            {"id": "r1", "type": "table_row", "table_row": {"cells": [[{"plain_text": "Day"}], [{"plain_text": "Task"}]]},
             "has_children": False},
            {"id": "r2", "type": "table_row", "table_row": {"cells": [[{"plain_text": "Tue"}], [{"plain_text": "Billing"}]]},
             "has_children": False}]),
    ])
    fake.add_page("Deal: Acme", [block("paragraph", "Champion is the CFO.")], database_id="db-deals", properties={
        "Stage": {"type": "select", "select": {"name": "Negotiation"}},
        "Amount": {"type": "number", "number": 42000},
        "Close": {"type": "date", "date": {"start": "2025-06-30"}}})
    fake.add_page("Team lunch", [block("paragraph", "Thursdays at noon.")])
    w = World(tmp_path, fake, Provider.NOTION)
    yield w
    w.close()


def test_pages_and_rows_become_markdown_then_change_and_leave(world, fake):
    # Given a Notion connection (code flow; Notion takes JSON and HTTP Basic at its token endpoint)
    conn = world.connect(world.a)
    assert conn.account == "Acme HQ" and conn.name == "Notion: Acme HQ"

    # When it syncs the first time
    first = world.sync(conn)

    # Then each page and the database row is one memory, rendered as markdown
    assert (first.added, first.updated, first.deleted, first.errors) == (3, 0, 0, [])
    docs = world.current(world.a, conn)
    assert set(docs) == {"Onboarding", "Deal: Acme", "Team lunch"}
    onboarding = docs["Onboarding"].content
    for line in ("## First week", "Meet the support team on Monday.", "- Laptop setup", "  - [x] Install the VPN",
                 "1. Read the refund policy", "2. Shadow a support call", "```shell", "| Day | Task |", "| Tue | Billing |"):
        assert line in onboarding, line
    deal = docs["Deal: Acme"].content
    assert "| Stage | Negotiation |" in deal and "| Amount | 42000 |" in deal and "| Close | 2025-06-30 |" in deal
    assert world.document(world.a, docs["Deal: Acme"].id).metadata["kind"] == "database_row"

    # When a page is edited, and another is edited again within the same minute as the last sync
    pages = {p.title: p for p in fake.pages.values()}
    fake.edit(pages["Team lunch"], [block("paragraph", "Thursdays at one o'clock now.")])
    lunch_stamp = pages["Team lunch"].last_edited_time
    second = world.sync(conn)
    assert (second.added, second.updated, second.deleted) == (0, 1, 0)
    pages["Team lunch"].blocks = [block("paragraph", "Fridays at one, in the garden.")]  # same minute, same stamp
    assert pages["Team lunch"].last_edited_time == lunch_stamp
    third = world.sync(conn)

    # Then both edits became versions (the minute-precision stamp is re-read and compared by content)
    assert (third.added, third.updated, third.deleted) == (0, 1, 0)
    lunch = world.current(world.a, conn)["Team lunch"]
    assert "in the garden" in lunch.content
    versions = [d for d in world.documents(world.a, conn) if d.title == "Team lunch"]
    assert len(versions) == 3 and sum(v.current for v in versions) == 1

    # When a page is moved to the trash (it leaves Notion's search)
    pages["Deal: Acme"].in_trash = True
    assert world.sync(conn).deleted == 0, "an incremental listing cannot see what left"
    world.clock.advance(minutes=61)
    fourth = world.sync(conn)

    # Then the hourly full listing finds it gone, and it is removed everywhere
    assert fourth.deleted == 1
    world.assert_gone(world.a, [docs["Deal: Acme"].id])
    assert set(world.current(world.a, conn)) == {"Onboarding", "Team lunch"}
    # and the other organization sees nothing
    assert world.documents(world.b) == []
    assert "Onboarding" not in world.recall_titles(world.b, "support team refund policy", limit=50)


def test_a_rate_limit_keeps_the_cursor_and_an_expired_token_is_refreshed(world, fake):
    conn = world.connect(world.a)
    world.sync(conn)
    since = world.connection(conn).cursor["since"]
    page = next(p for p in fake.pages.values() if p.title == "Onboarding")
    fake.edit(page, [block("paragraph", "Meet the support team on Tuesday instead.")])

    # Given Notion answers 429 with Retry-After: 30
    fake.fail("/v1/search", 429, {"Retry-After": "30"})
    stopped = world.sync(conn)

    # Then nothing is lost: the cursor stays, the next attempt waits 30 s
    assert stopped.complete is False and (stopped.updated, stopped.deleted) == (0, 0)
    assert world.connection(conn).cursor["since"] == since
    assert world.connection(conn).next_sync_at == world.clock.now() + timedelta(seconds=30)

    # When the token has expired meanwhile (Notion refuses it), the sync refreshes and completes
    fake.revoke_access_tokens()
    world.clock.advance(seconds=31)
    done = world.sync(conn)
    assert done.complete and done.updated == 1 and done.errors == []
    assert [r["grant_type"] for r in fake.token_requests] == ["authorization_code", "refresh_token"]
    assert "Tuesday instead" in world.current(world.a, conn)["Onboarding"].content
