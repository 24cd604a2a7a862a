"""Google Drive connections against a fake Drive on loopback: Docs as text, Sheets as tables, PDFs
through the PDF extractor, the changes feed page by page, trash and permanent deletion, Google's
rate-limit 403 and hour-long tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from connection_world import World
from fake_gdrive import DOC, FOLDER, SHEET, FakeDrive, tiny_pdf

from memlane.domain.connections import Provider
from memlane.domain.models import ContentType


@pytest.fixture(scope="module")
def fake():
    f = FakeDrive().start()
    yield f
    f.stop()


@pytest.fixture
def world(tmp_path, fake):
    fake.reset_data()
    fake.add("Refund policy", DOC, b"Refunds are accepted within 30 days of delivery.\r\nKeep the receipt.")
    fake.add("Q2 pipeline", SHEET, b"Customer,Amount,Stage\r\nAcme,42000,Negotiation\r\nGlobex,9000,Won\r\n")
    fake.add("Contract.pdf", "application/pdf", tiny_pdf("Payment is due within 45 days of the invoice."))
    fake.add("notes.md", "text/markdown", b"# Notes\n\nCall the warehouse about pallets.\n")
    fake.add("Designs", FOLDER, b"")
    fake.add("photo.jpg", "image/jpeg", b"\xff\xd8\xff")
    w = World(tmp_path, fake, Provider.GOOGLE_DRIVE)
    yield w
    w.close()


def by_name(fake: FakeDrive, name: str):
    return next(f for f in fake.files.values() if f.name == name)


def test_docs_sheets_and_pdfs_are_synced_then_follow_the_changes_feed(world, fake):
    # Given a Drive connection (code flow with PKCE and offline access)
    conn = world.connect(world.a)
    assert conn.account == "ana@acme.test"
    assert "access_type=offline" in world.last_start.authorization_url

    # When it syncs the first time
    first = world.sync(conn)

    # Then the Doc, the Sheet, the PDF and the markdown file are memories; the folder and photo are not
    assert (first.added, first.updated, first.deleted, first.errors) == (4, 0, 0, [])
    docs = world.current(world.a, conn)
    assert set(docs) == {"Refund policy", "Q2 pipeline", "Contract.pdf", "notes.md"}
    assert "within 30 days of delivery" in docs["Refund policy"].content
    sheet = docs["Q2 pipeline"].content
    assert "| Customer | Amount | Stage |" in sheet and "| Acme | 42000 | Negotiation |" in sheet
    pdf = world.document(world.a, docs["Contract.pdf"].id)
    assert pdf.content_type == ContentType.PDF and "due within 45 days" in pdf.content
    assert world.connection(conn).cursor["page_token"] == "7", "the feed's position from before the listing"

    # When a Doc is edited, the Sheet trashed, the PDF deleted forever and a file added
    fake.update(by_name(fake, "Refund policy"), b"Refunds are accepted within 60 days of delivery.")
    fake.trash(by_name(fake, "Q2 pipeline"))
    fake.delete_forever(by_name(fake, "Contract.pdf"))
    fake.add("todo.txt", "text/plain", b"Order more boxes.")
    second = world.sync(conn)

    # Then exactly: one new version, two removals, one addition
    assert (second.added, second.updated, second.deleted, second.errors) == (1, 1, 2, [])
    after = world.current(world.a, conn)
    assert set(after) == {"Refund policy", "notes.md", "todo.txt"}
    assert "60 days" in after["Refund policy"].content
    assert world.document(world.a, after["Refund policy"].id).updates_memory_id == docs["Refund policy"].id
    world.assert_gone(world.a, [docs["Q2 pipeline"].id, docs["Contract.pdf"].id])
    assert world.documents(world.b) == []


def test_a_rate_limit_mid_feed_keeps_what_was_applied_and_the_token_is_refreshed(world, fake):
    conn = world.connect(world.a)
    world.sync(conn)
    # Given four changes (two pages of the feed) and Google's rate limit on the second page
    fake.update(by_name(fake, "notes.md"), b"# Notes\n\nCall the warehouse on Friday.\n")
    fake.add("a.txt", "text/plain", b"Alpha memo.")
    fake.add("b.txt", "text/plain", b"Beta memo.")
    fake.trash(by_name(fake, "Refund policy"))
    token = world.connection(conn).cursor["page_token"]
    fake.reset()
    limited = {"error": {"code": 403, "errors": [{"reason": "userRateLimitExceeded", "domain": "usageLimits"}]}}

    fake.fail("/drive/v3/changes", 403, body=limited, after=1)
    stopped = world.sync(conn)

    # Then the first page is applied and its position kept; the sync waits (Google gives no
    # Retry-After: 30 s)
    assert stopped.complete is False and (stopped.added, stopped.updated) == (1, 1)
    assert int(world.connection(conn).cursor["page_token"]) == int(token) + 2
    assert world.connection(conn).next_sync_at == world.clock.now() + timedelta(seconds=30)

    # When an hour has passed (Google's access tokens last an hour), the sync refreshes first, then
    # reads the rest of the feed
    world.clock.advance(hours=1)
    done = world.sync(conn)
    assert done.complete and (done.added, done.deleted, done.errors) == (1, 1, [])
    assert [r["grant_type"] for r in fake.token_requests] == ["refresh_token"]
    assert set(world.current(world.a, conn)) == {"Q2 pipeline", "Contract.pdf", "notes.md", "a.txt", "b.txt"}
