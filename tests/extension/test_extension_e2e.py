"""The browser extension end to end (spec §7, the Browser Extension cases of §13): the built
extension in headless Chromium saves real pages to a real local memlane, and every test reads back
what memlane stored through its API."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.integration

NEWS = "/news/solar-sail.html"
BOARD = "/boards/launch.html"
README_URL = "https://github.com/acme/rocket"
ISSUE_URL = "https://github.com/acme/rocket/issues/42"
POST_URL = "https://x.com/ada/status/1790000000000000002"


def test_options_test_connection_shows_whoami(configured, extension_origin, screenshot):
    # Given the extension set up on the options page
    page = configured.options()
    # Then it shows its own origin for the server's allow-list
    assert page.inner_text("#origin") == extension_origin
    assert page.inner_text("#serve-command") == f"memlane serve --allow-origin {extension_origin}"
    assert "A key is saved (mlk_" in page.inner_text("#key-hint")
    # When "Test connection" is clicked, Then it shows who the key belongs to (GET /v3/whoami)
    page.click("#test")
    page.wait_for_selector("#status.ok")
    assert page.inner_text("#status").startswith('Connected: organization "default" (')
    screenshot(page, "options.png")
    page.close()


def test_save_full_page(configured, pages, memlane, screenshot):
    """§13 Browser Extension 1: the popup saves the whole page's content."""
    url = pages.loopback(NEWS)
    page, tab_id = configured.open(url)
    popup = configured.popup(tab_id)
    # The popup reads the page first: the article's title, and what it found
    assert popup.input_value("#title") == "Solar sail reaches record speed on its first orbit"
    assert popup.inner_text("#page-info").startswith("Article · ")
    popup.close()

    memory_id = configured.save_from_popup(tab_id, shot=lambda popup: screenshot(popup, "popup-save.png"))

    doc = memlane.document(memory_id)
    assert doc["title"] == "Solar sail reaches record speed on its first orbit"
    assert doc["source_url"] == url and doc["content_type"] == "markdown"
    # the whole article, first paragraph to last, and nothing of the site around it
    assert "A light-pushed spacecraft the size of a tennis court" in doc["content"]
    assert "## How the sail steers" in doc["content"]
    assert "clean up dead satellites by dragging them into the atmosphere." in doc["content"]
    for noise in ("cookies", "Moon base", "All rights reserved"):
        assert noise not in doc["content"]
    assert doc["metadata"]["extractor"] == "readability" and doc["metadata"]["author"] == "Priya Raman"
    assert doc["forget_after"] is None and doc["status"] == "ready"

    # Saving the page again after it changed makes a new version (memlane versions by source_url)
    page.evaluate("""() => {
        const p = document.createElement('p');
        p.textContent = 'Update: the sail has now completed its second orbit.';
        document.querySelector('.story-body').append(p);
    }""")
    second_id = configured.save_from_popup(tab_id)
    assert second_id != memory_id
    second = memlane.document(second_id)
    assert "completed its second orbit" in second["content"]
    assert second["updates_memory_id"] == memory_id
    assert [v["id"] for v in second["versions"]] == [memory_id, second_id]
    page.close()


def test_save_selection(configured, pages, memlane):
    """§13 Browser Extension 2: right-click on selected text saves only that text."""
    url = pages.loopback(NEWS)
    page, tab_id = configured.open(url)
    # Given two paragraphs selected on the page
    selected = page.evaluate("""() => {
        const paras = document.querySelectorAll('.story-body > p');
        const range = document.createRange();
        range.setStartBefore(paras[1]);
        range.setEndAfter(paras[2]);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        return getSelection().toString();
    }""")
    assert selected.startswith("The craft, built by a university team in Delft") and "\n" in selected
    # When "Save to memlane" is chosen from the context menu (Chrome passes the selection with its
    # line breaks collapsed, as here)
    outcome = configured.call(
        "async ([info, tabId]) => self.memlane.onContextMenuClicked(info, await chrome.tabs.get(tabId))",
        [{"menuItemId": "save-to-memory", "selectionText": " ".join(selected.split()), "pageUrl": url,
          "frameId": 0, "editable": False}, tab_id])
    assert outcome["state"] == "saved", outcome

    # Then memlane holds exactly the selection, pointing at the passage, not a version of the page
    doc = memlane.document(outcome["memory"]["id"])
    assert doc["content"] == selected.strip()
    assert "A light-pushed spacecraft" not in doc["content"] and "Moon base" not in doc["content"]
    words = selected.split()
    fragment = ",".join(quote(" ".join(part), safe="").replace("-", "%2D") for part in (words[:4], words[-4:]))
    assert doc["source_url"] == f"{url}#:~:text={fragment}"
    assert doc["metadata"]["kind"] == "selection" and doc["updates_memory_id"] is None
    page.close()


def test_context_menu_link_and_page_and_the_keyboard_shortcut(configured, pages, memlane):
    url = pages.loopback(BOARD)
    page, tab_id = configured.open(url)
    link = "http://127.0.0.1/weather/pad-39a.html"
    # A link saves the link (its text and address), not the page it is on
    outcome = configured.call(
        "async ([info, tabId]) => self.memlane.onContextMenuClicked(info, await chrome.tabs.get(tabId))",
        [{"menuItemId": "save-to-memory", "linkUrl": link, "pageUrl": url, "frameId": 0, "editable": False},
         tab_id])
    assert outcome["state"] == "saved", outcome
    doc = memlane.document(outcome["memory"]["id"])
    assert (doc["title"], doc["content"], doc["source_url"]) == (
        "Pad weather forecast", f"Pad weather forecast\n{link}", link)
    assert doc["metadata"]["found_on"] == url

    # The keyboard shortcut saves the page in the active tab
    outcome = configured.call(
        "async (tabId) => self.memlane.onCommand('save-page', await chrome.tabs.get(tabId))", tab_id)
    assert outcome["state"] == "saved", outcome
    doc = memlane.document(outcome["memory"]["id"])
    assert doc["source_url"] == url and doc["title"] == "Launch checklist board"
    assert "Wind limit for the pad is 35 km/h at 60 metres." in doc["content"]
    assert "console.log" not in doc["content"]
    page.close()


def test_x_extraction(configured, memlane):
    """§13 Browser Extension 3: on X, the post's text, author and thread context."""
    page, tab_id = configured.open(POST_URL)
    popup = configured.popup(tab_id)
    assert popup.inner_text("#page-info").startswith("X post with 2 more in the thread")
    popup.close()
    memory_id = configured.save_from_popup(tab_id)

    doc = memlane.document(memory_id)
    assert doc["content_type"] == "tweet" and doc["source_url"] == POST_URL
    content = doc["content"]
    assert "Ada Lovelace (@ada) · 2026-05-14T09:30:00.000Z\nWe did. It drifts by one column every 400 turns" in content
    # thread context: the post it answers, and the author's continuation
    assert content.index("Has anyone measured how much the Difference Engine drifts") < content.index("We did.")
    assert "2/ The fix: a locking pawl on the carry lever." in content
    assert "Great thread! Following." not in content  # another person's reply is not the thread
    assert doc["metadata"]["author"] == "@ada" and doc["metadata"]["author_name"] == "Ada Lovelace"
    assert doc["metadata"]["published_at"] == "2026-05-14T09:30:00.000Z"
    assert [t["author"] for t in doc["metadata"]["thread"]] == ["@charles", "@ada", "@ada"]
    page.close()


def test_github_extraction(configured, memlane):
    """§13 Browser Extension 4: on GitHub, the README or issue body with formatting preserved."""
    page, tab_id = configured.open(README_URL)
    readme = memlane.document(configured.save_from_popup(tab_id))
    assert readme["title"] == "acme/rocket: README" and readme["content_type"] == "markdown"
    assert readme["source_url"] == README_URL
    assert "## Install\n\n```shell\npip install acme-rocket\nrocket plan --orbit LEO\n```" in readme["content"]
    assert "| Orbit | Reserve |" in readme["content"] and "**small satellites**" in readme["content"]
    assert "Sign in" not in readme["content"] and "Add orbit planner" not in readme["content"]
    page.close()

    page, tab_id = configured.open(ISSUE_URL)
    issue = memlane.document(configured.save_from_popup(tab_id))
    assert issue["title"] == "Planner crashes when the orbit is GEO · acme/rocket#42"
    assert "### Steps to reproduce\n\n1. Run `rocket plan --orbit GEO`" in issue["content"]
    assert "ZeroDivisionError: division by zero\n```" in issue["content"]
    assert "The **apogee kick** is computed before the margin is known." in issue["content"]
    assert issue["metadata"]["author"] == "octocat" and issue["metadata"]["kind"] == "issue"
    page.close()


def test_project_selection(configured, pages, memlane):
    """§13 Browser Extension 5: the popup's dropdown lists memlane's projects; the save goes there."""
    with memlane.api() as api:
        research = api.post("/v3/projects", json={"name": "Research"}).json()
    page, tab_id = configured.open(pages.loopback(NEWS) + "?edition=weekend")
    popup = configured.popup(tab_id)
    options = popup.eval_on_selector_all("#project option", "os => os.map(o => o.textContent)")
    assert "Research (0 memories)" in options and any(o.startswith("Default") for o in options)
    popup.close()

    memory_id = configured.save_from_popup(tab_id, project="Research (0 memories)", tags="space, sails")

    doc = memlane.document(memory_id)
    assert doc["project_id"] == research["id"]
    assert doc["metadata"]["tags"] == ["space", "sails"]
    with memlane.api() as api:
        in_research = api.post("/v3/recall", json={"query": "solar sail", "project_id": research["id"]}).json()
        projects = {p["name"]: p["memory_count"] for p in api.get("/v3/projects").json()["projects"]}
    assert [r["document_id"] for r in in_research["results"]] == [memory_id]
    assert projects["Research"] == 1
    # the popup remembers the project for next time
    popup = configured.popup(tab_id)
    assert popup.eval_on_selector("#project", "s => s.selectedOptions[0].textContent") == "Research (1 memory)"
    popup.close()
    page.close()


def test_auto_forget_sets_forget_after_30_days_ahead(configured, pages, memlane):
    page, tab_id = configured.open(pages.loopback(BOARD) + "?view=compact")
    before = datetime.now(UTC)
    memory_id = configured.save_from_popup(tab_id, auto_forget=True)
    after = datetime.now(UTC)
    forget_after = datetime.fromisoformat(memlane.document(memory_id)["forget_after"])
    assert before + timedelta(days=30) - timedelta(seconds=1) <= forget_after <= after + timedelta(days=30)
    page.close()


def test_quick_search_returns_a_saved_page(configured, pages, memlane, screenshot):
    # Given the article saved (or saved already: memlane answers with the same memory)
    page, tab_id = configured.open(pages.loopback(NEWS))
    memory_id = configured.save_from_popup(tab_id)
    popup = configured.popup(tab_id)
    # When the user searches, in words the article does not use
    popup.fill("#query", "spacecraft pushed by sunlight")
    popup.press("#query", "Enter")
    popup.wait_for_selector("#results button.result")
    # Then the article is the first result (earlier tests saved it too, from the context menu with
    # the page's <title> "… | The Daily Orbit": either save of it may rank first) and this save is found
    results = popup.eval_on_selector_all(
        "#results button.result", "bs => bs.map(b => [b.dataset.id, b.querySelector('.result-title').textContent])")
    assert results[0][1].startswith("Solar sail reaches record speed on its first orbit"), results
    assert memory_id in [r[0] for r in results]
    screenshot(popup, "popup-search.png")
    # and opening it goes to the web app's page for it when memlane serves the app (its / answers
    # HTML), or shows its text in the popup when it does not
    serves_app = "text/html" in httpx.get(f"{memlane.url}/").headers.get("content-type", "")
    if serves_app:
        with configured.context.expect_page() as opened:
            popup.click(f'#results button.result[data-id="{memory_id}"]')
        assert opened.value.url == f"{memlane.url}/memories/{memory_id}"
        opened.value.close()
    else:
        popup.click(f'#results button.result[data-id="{memory_id}"]')
        expect(popup.locator("#reader-title")).to_have_text("Solar sail reaches record speed on its first orbit")
        expect(popup.locator("#reader-text")).not_to_have_text("Loading…")
        assert popup.inner_text("#reader-text") == memlane.document(memory_id)["content"]
    if not popup.is_closed():
        popup.close()
    page.close()


def test_a_server_that_does_not_allow_the_extension_refuses_it_and_the_save_waits(
        configured, pages, memlane, other_memlane, use_server, extension_origin):
    # Given the extension pointed at a memlane started without --allow-origin
    use_server(configured, other_memlane)
    try:
        # "Test connection" sends what saves send, so it sees the refusal and names the command that allows it
        options = configured.options()
        options.click("#test")
        options.wait_for_selector("#status.bad")
        assert "refuses requests from this extension" in options.inner_text("#status")
        assert options.inner_text("#allow-command") == f"memlane serve --allow-origin {extension_origin}"
        options.close()
        page, tab_id = configured.open(pages.loopback(BOARD) + "?refused=1")
        page.evaluate("""() => document.getElementById('cards').insertAdjacentHTML('beforeend',
            '<li class="card">Refused note: the second pad needs its own origin setting.</li>')""")
        # When a page is saved, Then memlane refuses the extension's origin and stores nothing
        popup = configured.popup(tab_id)
        expect(popup.locator("#save")).to_be_enabled()
        popup.click("#save")
        popup.wait_for_selector("#save-status.warn")
        assert popup.inner_text("#outbox-text") == (
            f"1 save waiting to be sent. Last try: memlane refuses requests from this extension ({extension_origin})."
            f" Start it with: memlane serve --allow-origin {extension_origin}")
        with other_memlane.api() as api:
            assert api.post("/v3/recall", json={"query": ""}).json()["results"] == []
        # When the server is restarted with the extension's origin allowed, Then the kept save arrives
        other_memlane.stop()
        other_memlane.allowed_origins = frozenset({extension_origin})
        other_memlane.start()
        popup.click("#retry")
        expect(popup.locator("#sent-list li")).to_have_text('Sent ✓ "Launch checklist board"')
        expect(popup.locator("#outbox-text")).to_have_text("")
        popup.close()
        docs = other_memlane.documents(pages.loopback(BOARD) + "?refused=1")
        assert len(docs) == 1 and "Refused note" in docs[0]["content"]
        page.close()
    finally:
        use_server(configured, memlane)


def test_a_save_made_while_memlane_is_down_arrives_once_it_is_back(configured, pages, memlane,
                                                                     screenshot):
    url = pages.loopback(BOARD) + "?offline=1"
    page, tab_id = configured.open(url)
    # (content of its own: the board itself is already saved, and memlane keeps identical content once)
    page.evaluate("""() => document.getElementById('cards').insertAdjacentHTML('beforeend',
        '<li class="card">Offline note: hold the count if the pawl sensor reads open.</li>')""")
    # Given memlane stopped
    memlane.stop()
    try:
        # When the page is saved
        popup = configured.popup(tab_id)
        expect(popup.locator("#save")).to_be_enabled()
        popup.click("#save")
        # Then the popup says it is kept, and it waits in the extension
        popup.wait_for_selector("#save-status.warn")
        assert popup.inner_text("#save-status") == "Kept here: it is sent as soon as memlane takes it."
        assert popup.inner_text("#outbox-text").startswith(
            f"1 save waiting to be sent. Last try: memlane is not reachable at {memlane.url}")
        screenshot(popup, "popup-offline.png")
        assert configured.call("() => self.memlane.outbox.status()")["pending"] == 1
        # and still waits after a retry while memlane is down
        popup.click("#retry")
        expect(popup.locator("#outbox-text")).to_have_text(re.compile(r"^1 save waiting to be sent"))
    finally:
        memlane.start()  # same port, same data directory
    assert memlane.documents(url) == []

    # When memlane is back and the user retries (the alarm would do it within a minute)
    popup.click("#retry")
    # Then the popup says it went, once
    expect(popup.locator("#sent-list li")).to_have_text('Sent ✓ "Launch checklist board"')
    expect(popup.locator("#outbox-text")).to_have_text("")
    popup.close()

    # Then memlane has it, exactly once, and nothing waits any more
    docs = memlane.documents(url)
    assert len(docs) == 1 and "Offline note: hold the count if the pawl sensor reads open." in docs[0]["content"]
    status = configured.call("() => self.memlane.outbox.status()")
    assert (status["pending"], status["nextAttemptAt"], status["failed"]) == (0, None, [])
    # and more retries (a flush, a popup opening, which flushes before it is ready) send nothing again
    configured.call("() => self.memlane.outbox.flush(true)")
    configured.popup(tab_id).close()
    assert len(memlane.documents(url)) == 1
    page.close()
