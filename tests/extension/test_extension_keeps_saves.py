"""The browser extension keeps what was saved (issue 39), end to end: the built extension in headless
Chromium against a real local memlane. A selection is a memory of its own beside its page; a save
made while memlane cannot be used (down, or the key refused) goes to the project the user picked;
a save's ✓ stays on the toolbar; a title and tags typed for content memlane already holds are
applied, at once or from the outbox; the options page and the popup say in words what is wrong and
how to fix it."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.integration

NEWS = "/news/solar-sail.html"
BOARD = "/boards/launch.html"
WIND = "Wind limit for the pad is 35 km/h at 60 metres."
RANGE = "Range safety call at T-minus 20 minutes."

MENU_CLICK = """async ([info, tabId]) => {
    const outcome = await self.memlane.onContextMenuClicked(info, await chrome.tabs.get(tabId));
    await self.memlane.outbox.status();  // after the outbox's own work that follows a save
    return { outcome, text: await chrome.action.getBadgeText({}), title: await chrome.action.getTitle({}) };
}"""
SHORTCUT = """async (tabId) => {
    const outcome = await self.memlane.onCommand('save-page', await chrome.tabs.get(tabId));
    await self.memlane.outbox.status();
    return { outcome, text: await chrome.action.getBadgeText({}), title: await chrome.action.getTitle({}) };
}"""


def select(page, text: str) -> str:
    """Selects the element whose text is `text`, as a user's drag would; returns the selection."""
    return page.evaluate("""(text) => {
        const el = [...document.querySelectorAll('li, p')].find((e) => e.textContent.trim() === text);
        const range = document.createRange();
        range.selectNodeContents(el);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        return getSelection().toString();
    }""", text)


def menu_info(url: str, selection: str | None = None) -> dict:
    info = {"menuItemId": "save-to-memory", "pageUrl": url, "frameId": 0, "editable": False}
    if selection:
        info["selectionText"] = selection
    return info


def add_card(page, text: str) -> None:
    """Content of its own for a test: memlane keeps identical content once."""
    page.evaluate("(text) => document.getElementById('cards').insertAdjacentHTML('beforeend', "
                  "`<li class=\"card\">${text}</li>`)", text)


def recall_ids(memlane, query: str) -> list[str]:
    with memlane.api() as api:
        r = api.post("/v3/recall", json={"query": query, "limit": 10})
        r.raise_for_status()
        return [d["document_id"] for d in r.json()["results"]]


def badge(browser) -> tuple[str, str]:
    return tuple(browser.call(
        "async () => [await chrome.action.getBadgeText({}), await chrome.action.getTitle({})]"))


def wait_for_badge(browser, text: str, timeout_s: float = 30.0) -> tuple[str, str]:
    deadline = time.monotonic() + timeout_s
    while True:
        shown = badge(browser)
        if shown[0] == text or time.monotonic() > deadline:
            return shown
        time.sleep(0.2)


# ------------------------------------------------------------------------- 1. a selection is its own


def test_a_page_and_a_selection_of_it_are_two_current_memories(configured, pages, memlane):
    url = pages.loopback(BOARD)
    page, tab_id = configured.open(url)
    # Given the page saved from the popup (nothing selected: the popup offers the page alone)
    popup = configured.popup(tab_id)
    assert popup.is_hidden("#what") and popup.inner_text("#page-info").startswith("Page text · ")
    popup.close()
    page_id = configured.save_from_popup(tab_id)

    # When a row is selected and the popup opened, Then it offers the selection, titled by its first words
    assert select(page, WIND) == WIND
    popup = configured.popup(tab_id)
    assert popup.is_visible("#what") and popup.is_checked("#what-selection")
    assert popup.inner_text("#page-info") == f"Selection · {len(WIND)} characters"
    assert popup.input_value("#title") == WIND and popup.text_content("#save-heading") == "Save this selection?"
    popup.close()
    popup_selection_id = configured.save_from_popup(tab_id)
    # and another row saved from the context menu
    select(page, RANGE)
    menu = configured.call(MENU_CLICK, [menu_info(url, RANGE), tab_id])["outcome"]
    assert menu["state"] == "saved", menu
    menu_selection_id = menu["memory"]["id"]

    # Then memlane holds three memories, each current: no selection is a version of the page
    page_doc = memlane.document(page_id)
    assert page_doc["superseded_by"] is None and [v["id"] for v in page_doc["versions"]] == [page_id]
    assert [d["id"] for d in memlane.documents(url)] == [page_id]
    for selection_id, text in ((popup_selection_id, WIND), (menu_selection_id, RANGE)):
        doc = memlane.document(selection_id)
        assert (doc["content"], doc["title"], doc["superseded_by"], doc["updates_memory_id"]) == (text, text, None, None)
        assert doc["source_url"].startswith(f"{url}#:~:text=") and doc["metadata"]["kind"] == "selection"
        assert doc["metadata"]["page_url"] == url and doc["metadata"]["page_title"] == "Launch checklist board"
    # and each is found: the page by what only it holds, a selection by its own words
    assert page_id in recall_ids(memlane, "fuel loaded percent signed off by Mira")
    wind = recall_ids(memlane, "wind limit for the pad")
    assert popup_selection_id in wind and page_id in wind
    assert menu_selection_id in recall_ids(memlane, "range safety call T-minus")

    # and quick search shows the page and the selection under titles of their own (6: distinct titles)
    popup = configured.popup(tab_id)
    popup.fill("#query", "wind limit for the pad")
    popup.press("#query", "Enter")
    popup.wait_for_selector(f'#results button.result[data-id="{popup_selection_id}"]')
    titles = dict(popup.eval_on_selector_all(
        "#results button.result", "bs => bs.map(b => [b.dataset.id, b.querySelector('.result-title').textContent])"))
    assert (titles[page_id], titles[popup_selection_id]) == ("Launch checklist board", WIND)
    popup.close()
    page.close()


def test_the_popup_offers_the_selection_on_an_article_too(configured, pages, memlane):
    url = pages.loopback(NEWS)
    page, tab_id = configured.open(url)
    article_id = configured.save_from_popup(tab_id)
    passage = page.evaluate("""() => {
        const p = document.querySelectorAll('.story-body > p')[1];
        const range = document.createRange();
        range.selectNodeContents(p);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        return getSelection().toString();
    }""")
    popup = configured.popup(tab_id)
    # Given an article with a paragraph selected, Then the popup offers the selection first
    assert popup.inner_text("#page-info") == f"Selection · {len(passage.strip())} characters"
    # and the whole article one click away, under its own title
    popup.check("#what-page")
    assert popup.inner_text("#page-info").startswith("Article · ")
    assert popup.input_value("#title") == "Solar sail reaches record speed on its first orbit"
    popup.check("#what-selection")
    title = popup.input_value("#title")  # the passage's first words
    assert title.endswith("…") and len(title) <= 61 and " ".join(passage.split()).startswith(title[:-1]), title
    popup.click("#save")
    popup.wait_for_selector("#save-status.ok")
    selection_id = popup.get_attribute("#save-status", "data-memory-id")
    popup.close()
    # Then the article is still the current memory of its page, and the selection one of its own
    assert memlane.document(article_id)["superseded_by"] is None
    selection = memlane.document(selection_id)
    assert selection["content"] == passage.strip() and selection["updates_memory_id"] is None
    assert selection["source_url"].startswith(f"{url}#:~:text=")
    page.close()


# --------------------------------------------------- 2. the project picked, with memlane unreachable


def test_a_save_made_while_memlane_is_down_goes_to_the_project_picked_before(configured, pages, memlane):
    with memlane.api() as api:
        research = api.post("/v3/projects", json={"name": "Research"}).json()
    # Given a save to "Research" while memlane is up (the popup keeps the list and the choice)
    page, tab_id = configured.open(pages.loopback(BOARD) + "?desk=2")
    add_card(page, "Desk two: the project list is kept for offline saves.")
    configured.save_from_popup(tab_id, project="Research (0 memories)")
    page.close()

    page, tab_id = configured.open(pages.loopback(BOARD) + "?offline=2")
    add_card(page, "Offline two: this save must land in Research.")
    memlane.stop()
    try:
        # When the popup opens with memlane down
        popup = configured.popup(tab_id)
        # Then it says it is offline, and offers the projects as last listed, "Research" chosen
        expect(popup.locator("#connection")).to_be_visible()
        text = popup.inner_text("#connection-text")
        assert text.startswith(f"Offline: memlane is not reachable at {memlane.url}"), text
        assert "Projects as memlane listed them on " in text and "Saves wait here" in text
        assert popup.eval_on_selector("#project", "s => s.selectedOptions[0].textContent") == "Research (1 memory)"
        assert any(o.startswith("Default") for o in popup.eval_on_selector_all(
            "#project option", "os => os.map(o => o.textContent)"))
        # When the page is saved, Then it waits with its project
        popup.click("#save")
        popup.wait_for_selector("#save-status.warn")
        waiting = configured.call("async () => (await self.memlane.outbox.status()).pending")
        assert waiting == 1
    finally:
        memlane.start()
    popup.click("#retry")
    expect(popup.locator("#sent-list li")).to_have_text('Sent ✓ "Launch checklist board"')
    popup.close()
    docs = memlane.documents(pages.loopback(BOARD) + "?offline=2")
    assert [d["project_id"] for d in docs] == [research["id"]]
    assert "Offline two: this save must land in Research." in docs[0]["content"]
    page.close()


def test_with_a_wrong_key_the_popup_says_so_and_the_save_waits_for_the_right_one(
        configured, pages, memlane, use_server):
    with memlane.api() as api:
        archive = api.post("/v3/projects", json={"name": "Archive"}).json()["id"]
    page, tab_id = configured.open(pages.loopback(BOARD) + "?key=1")
    add_card(page, "Key one: saved to Archive while the key is right.")
    configured.save_from_popup(tab_id, project="Archive (0 memories)")
    page.close()
    # Given the extension set up with a key memlane does not know
    options = configured.options()
    options.fill("#api-key", "mlk_" + "x" * 40)
    options.click("#save")
    options.wait_for_selector("#status.ok")
    options.close()
    try:
        page, tab_id = configured.open(pages.loopback(BOARD) + "?key=2")
        add_card(page, "Wrong key: this save waits for the right key.")
        # When the popup opens, Then it says the key is refused, with the projects as last listed
        popup = configured.popup(tab_id)
        text = popup.inner_text("#connection-text")
        assert text.startswith("memlane refused the API key (invalid or revoked API key): fix it in the options."), text
        assert popup.eval_on_selector("#project", "s => s.selectedOptions[0].textContent") == "Archive (1 memory)"
        # and a save waits instead of being lost
        popup.click("#save")
        popup.wait_for_selector("#save-status.warn")
        popup.close()
        assert memlane.documents(pages.loopback(BOARD) + "?key=2") == []
    finally:
        # When the right key is saved (the options send what waits at once)
        use_server(configured, memlane)
    deadline = time.monotonic() + 30
    while not (docs := memlane.documents(pages.loopback(BOARD) + "?key=2")) and time.monotonic() < deadline:
        time.sleep(0.2)
    # Then it arrives in the project picked
    assert [d["project_id"] for d in docs] == [archive]
    page.close()


# ------------------------------------------------------------------------- 3. success stays visible


def test_the_toolbar_shows_a_saves_tick_for_a_few_seconds_then_clears(configured, pages):
    url = pages.loopback(BOARD) + "?badge=1"
    page, tab_id = configured.open(url)
    add_card(page, "Badge note: the tick must stay long enough to be seen.")
    # When the page is saved from the context menu, Then once the outbox has done what follows a
    # save, the toolbar still shows ✓ with the title
    shown = configured.call(MENU_CLICK, [menu_info(url), tab_id])
    assert shown["outcome"]["state"] == "saved", shown
    assert (shown["text"], shown["title"]) == ("✓", 'memlane: saved "Launch checklist board"')
    # and it goes after a few seconds, as a person watching the toolbar sees it
    assert wait_for_badge(configured, "") == ("", "memlane")
    # The same for the keyboard shortcut
    add_card(page, "Badge note two: the shortcut's tick as well.")
    shown = configured.call(SHORTCUT, tab_id)
    assert shown["outcome"]["state"] == "saved", shown
    assert (shown["text"], shown["title"]) == ("✓", 'memlane: saved "Launch checklist board"')
    assert wait_for_badge(configured, "") == ("", "memlane")
    page.close()


# ---------------------------------------------------------- 4. a duplicate's new title and tags


def test_saving_again_with_a_new_title_and_tags_updates_them_online_and_from_the_outbox(
        configured, pages, memlane):
    url = pages.loopback(BOARD) + "?again=1"
    page, tab_id = configured.open(url)
    add_card(page, "Again note: saved twice, renamed the second time.")
    memory_id = configured.save_from_popup(tab_id)

    # When the same page is saved again with a title and tags typed
    popup = configured.popup(tab_id)
    popup.fill("#title", "Pad day checklist")
    popup.fill("#tags", "launch, pad")
    popup.click("#save")
    popup.wait_for_selector("#save-status.ok")
    # Then the popup says what happened, and memlane's memory (the same one) has them
    assert popup.get_attribute("#save-status", "data-memory-id") == memory_id
    assert popup.inner_text("#save-status").startswith('Saved ✓ "Pad day checklist" (already saved: title and tags updated)')
    popup.close()
    doc = memlane.document(memory_id)
    assert (doc["title"], doc["metadata"]["tags"]) == ("Pad day checklist", ["launch", "pad"])
    assert [d["id"] for d in memlane.documents(url)] == [memory_id]

    # When it is saved again with nothing new, Then nothing changes, and the popup says so
    popup = configured.popup(tab_id)
    popup.click("#save")
    popup.wait_for_selector("#save-status.ok")
    assert "(already saved: nothing changed)" in popup.inner_text("#save-status")
    popup.close()
    assert memlane.document(memory_id)["title"] == "Pad day checklist"

    # When it is saved with another title and a tag while memlane is down
    memlane.stop()
    try:
        popup = configured.popup(tab_id)
        popup.fill("#title", "Pad day (renamed offline)")
        popup.fill("#tags", "offline")
        popup.click("#save")
        popup.wait_for_selector("#save-status.warn")
    finally:
        memlane.start()
    # Then once memlane is back the waiting save applies them, and the popup says so
    popup.click("#retry")
    expect(popup.locator("#sent-list li")).to_have_text(
        'Sent ✓ "Pad day (renamed offline)" (already saved: title and tags updated)')
    popup.close()
    doc = memlane.document(memory_id)
    assert (doc["title"], doc["metadata"]["tags"]) == ("Pad day (renamed offline)", ["launch", "pad", "offline"])
    assert doc["status"] == "ready" and [d["id"] for d in memlane.documents(url)] == [memory_id]
    page.close()


# ------------------------------------------------------------------------- 5. readable errors


def test_the_options_page_says_what_is_wrong_with_the_url(configured, pages, memlane):
    options = configured.options()
    # Given an address that is not one
    options.fill("#url", "127.0.0.1 7432")
    options.click("#test")
    options.wait_for_selector("#status.bad")
    assert options.inner_text("#status") == (
        'Connection failed: the memlane URL "127.0.0.1 7432" is not a web address: '
        "enter it as http://127.0.0.1:7432 or https://…")
    options.click("#save")
    expect(options.locator("#status")).to_have_text(re.compile(r'^Not saved: the memlane URL "127.0.0.1 7432" is not'))
    # Given a web server that is not memlane (its 404 page is not shown)
    other = pages.loopback("")
    options.fill("#url", other)
    options.click("#test")
    expect(options.locator("#status")).to_have_text(
        f"Connection failed: {other} does not answer as memlane: GET /v3/whoami gave HTTP 404 with a page "
        "that is not memlane's. Check the memlane URL in the options.")
    options.close()
    # and nothing was saved: the extension still talks to memlane
    options = configured.options()
    assert options.input_value("#url") == memlane.url
    options.close()


def test_the_popup_shows_a_refused_origin_with_the_command_and_serve_names_the_setting(
        configured, pages, memlane, other_memlane, use_server, extension_origin, caplog):
    # Given the extension pointed at a memlane started without --allow-origin
    use_server(configured, other_memlane)
    try:
        page, tab_id = configured.open(pages.loopback(BOARD) + "?origin=1")
        with caplog.at_level("WARNING", logger="memlane.local.gateway"):
            popup = configured.popup(tab_id)
        # Then the popup says memlane refuses this extension, with the command that fixes it
        expect(popup.locator("#connection")).to_be_visible()
        assert popup.inner_text("#connection-text").startswith(
            f"memlane refuses requests from this extension ({extension_origin}). Start memlane with:")
        assert popup.inner_text("#allow-command") == f"memlane serve --allow-origin {extension_origin}"
        # and a search names the fix too
        popup.fill("#query", "launch")
        popup.press("#query", "Enter")
        expect(popup.locator("#search-status")).to_have_text(
            f"Search failed: memlane refuses requests from this extension ({extension_origin}). "
            f"Start it with: memlane serve --allow-origin {extension_origin}")
        popup.close()
        page.close()
        # and the server's log names the extension and the setting, once
        told = [r.getMessage() for r in caplog.records if r.name == "memlane.local.gateway"]
        assert told == [f"refused a request from the browser extension {extension_origin}: to let it in, start "
                        f"memlane with --allow-origin {extension_origin} (or add it to MEMLANE_ALLOWED_ORIGINS)"]
    finally:
        use_server(configured, memlane)


# ----------------------------------------------------------------- 6. keys and text sizes


def test_arrow_keys_move_through_results_and_text_comes_in_two_sizes(configured, pages, memlane):
    # Given two boards saved (the second with a card of its own: memlane keeps identical content once)
    for query in ("?arrows=1", "?arrows=2"):
        board, board_tab = configured.open(pages.loopback(BOARD) + query)
        add_card(board, f"Arrow keys board {query}: the checklist again.")
        configured.save_from_popup(board_tab)
        board.close()
    page, tab_id = configured.open(pages.loopback(NEWS))
    popup = configured.popup(tab_id)
    popup.fill("#query", "launch checklist fuel loaded wind limit")
    popup.press("#query", "Enter")
    popup.wait_for_selector("#results li:nth-child(2) button.result")
    ids = popup.eval_on_selector_all("#results button.result", "bs => bs.map(b => b.dataset.id)")
    focused = "() => document.activeElement.dataset.id ?? document.activeElement.id"
    # ↓ from the search box to the first result, ↓ to the next, ↑ back, ↑ to the search box
    popup.press("#query", "ArrowDown")
    assert popup.evaluate(focused) == ids[0]
    popup.keyboard.press("ArrowDown")
    assert popup.evaluate(focused) == ids[1]
    popup.keyboard.press("ArrowUp")
    assert popup.evaluate(focused) == ids[0]
    popup.keyboard.press("ArrowUp")
    assert popup.evaluate(focused) == "query"
    # Secondary text (notes, snippets, statuses, the outbox) shares one size; the rest the body's
    sizes = popup.evaluate("""() => Object.fromEntries(['#page-info', '.snippet', '#outbox-text', '#search-status',
        '#save-status', 'body', 'label', '#title', '.result-title', '#query'].map(
            (s) => [s, getComputedStyle(document.querySelector(s)).fontSize]))""")
    small = {sizes[s] for s in ("#page-info", ".snippet", "#outbox-text", "#search-status", "#save-status")}
    body = {sizes[s] for s in ("body", "label", "#title", ".result-title", "#query")}
    assert len(small) == 1 and len(body) == 1, sizes
    assert float(next(iter(small))[:-2]) < float(next(iter(body))[:-2])
    popup.close()
    page.close()
