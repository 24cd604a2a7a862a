"""The web app in headless Chromium against a real local server (embedded default, real MiniLM):
what a person does in the browser, step by step, and what the page must never do."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.web]

KEY_STORAGE = "memlane.apiKey"  # web/src/auth.ts
WebServer = Any  # tests/web/conftest.py


def save(server: WebServer, content: str, **fields) -> dict:
    r = server.api().post("/v3/memory", json={"content": content, **fields})
    assert r.status_code in (200, 201), r.text
    return r.json()


def search_for(page: Page, server: WebServer, query: str) -> None:
    page.goto(f"{server.url}/search")
    page.get_by_label("Search across your memories").fill(query)
    expect(page.get_by_test_id("search-status")).to_have_text(re.compile(r"^\d+ results? in \d+ ms$"))


# --------------------------------------------------------------------------- signing in and out


def test_the_sign_in_link_signs_in_once_and_leaves_no_code_behind(context, web_server) -> None:
    # Given the link `make run` prints
    link = web_server.sign_in_link()
    code = link.split("#code=")[1]
    requests: list[str] = []
    page = context.new_page()
    page.on("request", lambda r: requests.append(r.url))
    # When it is opened
    page.goto(link)
    # Then the dashboard shows, the address bar holds no code, and the key is in this origin's storage
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    assert page.url == f"{web_server.url}/"
    assert page.evaluate(f"window.localStorage.getItem({KEY_STORAGE!r})") == web_server.key
    # and neither the code nor the key was ever part of a URL the browser requested
    assert not [u for u in requests if code in u or web_server.key in u]
    # and the same link does not sign anyone in a second time
    other = context.browser.new_context()
    try:
        again = other.new_page()
        again.goto(link)
        expect(again.get_by_role("alert")).to_contain_text("already used or has expired")
        assert again.evaluate(f"window.localStorage.getItem({KEY_STORAGE!r})") is None
    finally:
        other.close()


def test_signing_in_with_a_key_and_out_again(context, web_server) -> None:
    page = context.new_page()
    page.goto(f"{web_server.url}/graph")  # signed out: sent to the login page, and back afterwards
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fgraph"))
    page.get_by_label("API key").fill("mlk_not_a_key")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Invalid or revoked API key")
    page.get_by_label("API key").fill(web_server.key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Memory graph")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(f"{web_server.url}/login")
    expect(page.get_by_role("status")).to_have_text("You signed out. The API key is no longer kept in this browser.")
    assert page.evaluate(f"window.localStorage.getItem({KEY_STORAGE!r})") is None


def test_a_revoked_key_signs_the_app_out_saying_why(context, web_server) -> None:
    # Given the app signed in with a key that is then revoked (in another browser, or `memlane keys revoke`)
    with web_server.api() as admin:
        created = admin.post("/v3/keys", json={"name": "revoked-e2e"}).json()
    page = context.new_page()
    page.goto(f"{web_server.url}/login")
    page.get_by_label("API key").fill(created["secret"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    with web_server.api() as admin:
        assert admin.delete(f"/v3/keys/{created['key']['id']}").status_code == 200
    # When the app next asks the server anything
    page.goto(f"{web_server.url}/projects")
    # Then it is on the sign-in page, which says why
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fprojects"))
    expect(page.get_by_role("status")).to_contain_text(
        "You were signed out: the server no longer accepts the API key this browser used")


# --------------------------------------------------------------------------- a memory's whole life


def test_a_memory_is_saved_found_versioned_edited_and_deleted_from_the_ui(page, web_server, screenshot) -> None:
    save(web_server, "The bakery on Elm Street sells rye bread on Saturdays only.", metadata={"tags": ["food"]})
    save(web_server, "Backups of the photo library run every Sunday night to the NAS.", metadata={"tags": ["home"]})
    # Save a memory from the dashboard's form
    page.goto(web_server.url)
    page.get_by_label("Content").fill("Our cat Miso needs her thyroid pill every morning with food.")
    page.get_by_label("Title (optional)").fill("Miso meds")
    page.get_by_label("Tags (comma-separated)").fill("cat, health")
    page.get_by_role("button", name="Save memory").click()
    expect(page.get_by_role("status").filter(has_text="Saved")).to_contain_text("Miso meds")
    expect(page.get_by_test_id("recent-list")).to_contain_text("Miso meds")
    expect(page.get_by_test_id("stat-total")).to_have_text("3")
    screenshot(page, "dashboard")

    # Find it by a paraphrase that shares none of its words
    search_for(page, web_server, "what medication does my pet take daily?")
    first = page.get_by_test_id("search-results").locator("li").first
    expect(first.get_by_role("link")).to_have_text("Miso meds")
    expect(first.locator(".score").first).to_have_text(re.compile(r"^0\.\d{3}$"))
    expect(first.get_by_test_id("snippet")).to_contain_text("thyroid pill every morning")
    screenshot(page, "search")

    # Open it: content, details, tags
    first.get_by_role("link", name="Miso meds").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Miso meds")
    expect(page.get_by_role("article")).to_contain_text("thyroid pill every morning with food")
    expect(page.get_by_test_id("doc-tags")).to_have_text("cathealth")
    first_id = page.url.rsplit("/", 1)[1]

    # Save a new version: the page moves to it, and both versions are listed
    page.get_by_text("Save a new version").click()
    page.get_by_label("Content of the new version").fill(
        "Our cat Miso needs her thyroid pill every morning and evening with food (vet, March).")
    page.get_by_role("button", name="Save new version").click()
    expect(page).not_to_have_url(re.compile(first_id))
    versions = page.get_by_test_id("versions-list")
    expect(versions.locator("li")).to_have_count(2)
    expect(versions.get_by_role("link", name="Version 1: Miso meds")).to_have_attribute("href", f"/memories/{first_id}")
    expect(page.get_by_role("article")).to_contain_text("morning and evening")
    latest_id = page.url.rsplit("/", 1)[1]
    screenshot(page, "memory")

    # Edit its tags
    page.get_by_text("Edit title, tags and expiry").click()
    page.get_by_label("Tags (comma-separated)").fill("cat, vet, medication")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_test_id("doc-tags")).to_have_text("catvetmedication")
    expect(page.get_by_test_id("doc-status")).to_have_text("ready")
    stored = web_server.api().get(f"/v3/documents/{latest_id}").json()
    assert stored["metadata"]["tags"] == ["cat", "vet", "medication"]

    # Delete it: the receipt shows, every store read back and verified empty
    page.get_by_role("button", name="Delete this memory…").click()
    page.get_by_role("button", name="Delete memory").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Deletion receipt")
    expect(page.get_by_role("status").filter(has_text=JUST_DELETED)).to_have_text(
        "Deleted “Miso meds”. Back to its project")
    receipt_id = page.url.rsplit("/deletions/", 1)[1]
    shown = expect_verified_receipt(page, receipt_id, documents=1)
    stored = web_server.api().get(f"/v3/deletions/{receipt_id}").json()
    assert stored["documents"] == [latest_id] and stored["reason"] == "api" and stored["verified"] is True
    # reloaded, and opened by its URL in another tab (nothing carried over): the same receipt, read back
    page.reload()
    assert expect_verified_receipt(page, receipt_id, documents=1) == shown
    again = page.context.new_page()
    again.goto(f"{web_server.url}/deletions/{receipt_id}")
    assert expect_verified_receipt(again, receipt_id, documents=1) == shown
    expect(again.get_by_role("status").filter(has_text=JUST_DELETED)).to_have_count(0)
    again.close()

    # and it is gone from search (the older version is what remains of that memory)
    search_for(page, web_server, "what medication does my pet take daily?")
    results = page.get_by_test_id("search-results")
    expect(results.get_by_role("link", name="Miso meds")).to_have_count(1)
    expect(results.get_by_role("link", name="Miso meds")).to_have_attribute("href", f"/memories/{first_id}")
    assert web_server.api().get(f"/v3/documents/{latest_id}").status_code == 404


JUST_DELETED = re.compile(r"^Deleted ")  # the line above a receipt the app has just been given
RECEIPT_STORES = ["metadata", "content", "text index", "vector index", "cache", "staging"]


def expect_verified_receipt(page: Page, receipt_id: str, documents: int) -> list[list[str]]:
    """The receipt on screen is verified and lists every store with nothing left; returns its rows."""
    receipt = page.get_by_test_id("receipt")
    expect(receipt.get_by_test_id("receipt-verdict")).to_have_text(
        f"Verified: all 6 stores, read back after the delete, hold nothing of the {documents} deleted "
        f"document{'' if documents == 1 else 's'}.")
    expect(receipt.get_by_role("alert")).to_have_count(0)
    expect(receipt.get_by_test_id("receipt-id")).to_have_text(receipt_id)
    expect(receipt.get_by_test_id("receipt-documents")).to_have_text(str(documents))
    rows = receipt.get_by_role("table").locator("tbody tr")
    expect(rows).to_have_count(len(RECEIPT_STORES))
    cells = [rows.nth(i).locator("th, td").all_inner_texts() for i in range(len(RECEIPT_STORES))]
    assert [c[0] for c in cells] == RECEIPT_STORES
    assert all(c[2] == "nothing left" for c in cells), cells
    return cells


def _nodes_outside_the_drawing(page: Page) -> list[str]:
    return page.evaluate("""() => {
        const box = document.querySelector('[data-testid=graph]').getBoundingClientRect()
        return [...document.querySelectorAll('[data-testid=graph-node] circle')].filter(c => {
            const r = c.getBoundingClientRect()
            return r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1
        }).map(c => c.parentNode.textContent)
    }""")


def test_the_graph_draws_nodes_and_a_click_searches_for_one(page, web_server, screenshot) -> None:
    for text, tags in (("Rust borrow checker notes: lifetimes and references.", ["rust", "programming"]),
                       ("Python typing: Protocols and generics.", ["python", "programming"]),
                       ("Sourdough: feed the starter with rye.", ["baking"])):
        save(web_server, text, metadata={"tags": tags})
    page.goto(f"{web_server.url}/graph")
    nodes = page.get_by_test_id("graph-node")
    expect(nodes.first).to_be_visible()
    assert nodes.count() >= 4
    expect(page.get_by_role("button", name=re.compile(r"^programming \(tag, 2 memories\)"))).to_be_visible()
    assert page.locator("[data-testid=graph] line").count() >= 1
    screenshot(page, "graph")
    # every node is inside the drawing when it opens
    assert _nodes_outside_the_drawing(page) == []
    # zoom moves the drawing, and Reset fits every node again
    layer = page.locator("[data-testid=graph] > g").first
    fitted = layer.get_attribute("transform")
    for _ in range(4):
        page.get_by_role("button", name="Zoom in").click()
    expect(layer).not_to_have_attribute("transform", fitted)
    assert _nodes_outside_the_drawing(page) != []
    page.get_by_role("button", name="Reset view").click()
    expect(layer).to_have_attribute("transform", fitted)
    assert _nodes_outside_the_drawing(page) == []
    page.get_by_role("button", name=re.compile(r"^programming ")).click()
    expect(page).to_have_url(f"{web_server.url}/search?tags=programming")
    expect(page.get_by_test_id("search-results")).to_contain_text("borrow checker")


# --------------------------------------------------------------------------- keys


def test_a_key_created_in_settings_works_until_it_is_revoked(page, web_server) -> None:
    page.goto(f"{web_server.url}/settings")
    page.get_by_label("New key name").fill("e2e laptop")
    page.get_by_role("button", name="Create key").click()
    secret = page.get_by_test_id("new-secret").input_value()
    assert secret.startswith("mlk_")
    assert httpx.get(f"{web_server.url}/v3/whoami", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    row = page.get_by_test_id("keys-table").locator("tr", has_text="e2e laptop")
    expect(row).to_contain_text("active")
    row.get_by_role("button", name="Revoke e2e laptop").click()
    row.get_by_role("button", name="Revoke e2e laptop").click()  # the confirmation names the key
    expect(row).to_contain_text("revoked")
    refused = httpx.get(f"{web_server.url}/v3/whoami", headers={"Authorization": f"Bearer {secret}"})
    assert refused.status_code == 401 and refused.json() == {"error": "invalid or revoked API key"}
    # the key itself is not in the page any more once dismissed, nor in the list
    page.get_by_role("button", name="Done").click()
    assert secret not in page.content()


# --------------------------------------------------------------------------- untrusted content


HOSTILE = "\n\n".join([
    "# Field notes",
    "<script>window.__pwned = 'script'</script>",
    '<img src="x" onerror="window.__pwned = \'img\'">',
    "[click me](javascript:window.__pwned='link')",
    "<a href=\"javascript:window.__pwned='anchor'\">raw anchor</a>",
    "![pixel](https://tracker.invalid/pixel.png)",
])


def test_a_memory_holding_script_handlers_and_javascript_links_renders_inert(page, web_server) -> None:
    doc = save(web_server, HOSTILE, title="Hostile <b>title</b>", content_type="markdown")
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{web_server.url}/memories/{doc['id']}")
    article = page.get_by_role("article")
    expect(article.get_by_role("heading", name="Field notes")).to_be_visible()
    # the raw HTML is shown as text, never as elements
    expect(article).to_contain_text("<script>window.__pwned = 'script'</script>")
    expect(page.get_by_role("heading", level=1)).to_have_text("Hostile <b>title</b>")
    assert page.evaluate("document.querySelectorAll('main script, main img, main iframe, main object').length") == 0
    handlers = page.evaluate("""[...document.querySelectorAll('*')].flatMap(
        el => el.getAttributeNames().filter(n => n.startsWith('on')))""")
    assert handlers == []
    protocols = page.evaluate("[...document.querySelectorAll('a[href]')].map(a => new URL(a.href).protocol)")
    assert set(protocols) <= {"http:", "https:", "mailto:"}
    # the javascript: link is not a link: clicking it goes nowhere and runs nothing
    refused = article.locator(".refused-link", has_text="click me")
    expect(refused).to_be_visible()
    url_before = page.url
    refused.click()
    page.wait_for_timeout(200)  # a navigation or script would have happened by now
    assert page.url == url_before
    assert page.evaluate("window.__pwned") is None and dialogs == []
    # no remote image was fetched
    assert not [u for u in requests if "tracker.invalid" in u]


ENTITIES = "\n\n".join([
    "# R&amp;D &gt; sales",
    "Tom &amp; Jerry &copy; 2026 &mdash; caf&eacute; &euro;5 &frac12; &hellip; &NotNestedGreaterGreater;",
    "Numeric &#169; &#x1F600; and unknown &notanentity; and bare &amp",
    "[Q&amp;A](https://example.com/?a=1&amp;b=2) and `&amp; in code`",
    "| a &amp; b | &copy; |\n|---|---|\n| &lt;td&gt; | x |",
    "<div title=\"&amp;\">raw &amp; html</div>",
    "> quote &hearts;\n\n- item &check;\n\n~~strike &amp;~~",
    "```\n&amp; in a fence\n```",
])


def test_a_memory_holding_character_references_raw_html_and_edge_cases_renders(page, web_server) -> None:
    # Named references are decoded without the DOM: the page's Trusted Types policy would refuse it
    doc = save(web_server, ENTITIES, title="Tom &amp; Jerry", content_type="markdown")
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{web_server.url}/memories/{doc['id']}")
    article = page.get_by_role("article")
    expect(article.get_by_role("heading", name="R&D > sales")).to_be_visible()
    expect(article).to_contain_text("Tom & Jerry © 2026 — café €5 ½ … ⪢̸")
    expect(article).to_contain_text("Numeric © 😀 and unknown &notanentity; and bare &amp")
    expect(article.get_by_role("link", name="Q&A")).to_have_attribute("href", "https://example.com/?a=1&b=2")
    expect(article.locator("code", has_text="&amp; in code")).to_be_visible()
    expect(article.locator("th").first).to_have_text("a & b")
    expect(article).to_contain_text('<div title="&amp;">raw &amp; html</div>')
    expect(article.locator("del")).to_have_text("strike &")
    # and the page still works: it can be edited and deleted
    expect(page.get_by_role("button", name="Delete this memory…")).to_be_visible()
    assert errors == []


def test_the_page_policy_forbids_inline_script_and_html_sinks(page, web_server) -> None:
    response = page.goto(web_server.url)
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "require-trusted-types-for 'script'" in csp
    assert response.headers["x-frame-options"] == "DENY"
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    # Even script already in the page cannot turn a string into HTML (Trusted Types)
    outcome = page.evaluate("""() => {
        try { document.body.insertAdjacentHTML('beforeend', '<img src=x onerror="window.__pwned=1">'); return 'inserted' }
        catch (e) { return e.name }
    }""")
    assert outcome == "TypeError"
    # and an inline script added to the page does not run
    page.evaluate("""() => { const s = document.createElement('script');
        s.appendChild(document.createTextNode('window.__inline = 1')); document.body.appendChild(s) }""")
    assert page.evaluate("window.__inline") is None


# --------------------------------------------------------------------------- projects


def test_a_project_is_renamed_and_deleted_after_a_confirmation_naming_what_goes(page, web_server) -> None:
    project = web_server.api().post("/v3/projects", json={"name": "Garden"}).json()
    save(web_server, "Tomatoes need staking in June.", project_id=project["id"])
    save(web_server, "Water the basil every other day.", project_id=project["id"])
    page.goto(f"{web_server.url}/projects/{project['id']}")
    expect(page.get_by_test_id("document-list").locator("li")).to_have_count(2)
    page.get_by_role("link", name="Project settings").click()
    name = page.get_by_label("Name", exact=True)
    expect(name).to_have_value("Garden")
    name.fill("Vegetable garden")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("Saved: Vegetable garden")
    page.get_by_role("button", name="Delete project…").click()
    expect(page.get_by_role("alertdialog")).to_contain_text("Delete the project Vegetable garden and its 2 documents")
    page.get_by_role("button", name="Delete Vegetable garden and 2 documents").click()
    # the receipt of its documents shows, verified, and leads back to the projects
    expect(page).to_have_url(re.compile(r"/deletions/[0-9a-f-]{36}$"))
    expect(page.get_by_role("status").filter(has_text=JUST_DELETED)).to_have_text(
        "Deleted the project “Vegetable garden” and 2 documents. Back to your projects")
    expect_verified_receipt(page, page.url.rsplit("/", 1)[1], documents=2)
    expect(page.get_by_test_id("receipt")).to_contain_text(f"a project and its documents (id {project['id']})")
    page.get_by_role("link", name="Back to your projects").click()
    expect(page).to_have_url(f"{web_server.url}/projects")
    expect(page.get_by_role("link", name="Vegetable garden")).to_have_count(0)
    assert web_server.api().get(f"/v3/projects/{project['id']}").status_code == 404


# --------------------------------------------------------------------------- accessibility


def test_every_page_has_no_serious_or_critical_accessibility_violation(page, web_server, axe_source) -> None:
    project = web_server.api().post("/v3/projects", json={"name": "Axe checks"}).json()
    doc = save(web_server, "## Checklist\n\n- contrast\n- labels\n\n```python\nprint('ok')\n```",
               project_id=project["id"], metadata={"tags": ["a11y"]})
    gone = save(web_server, "A note deleted for its receipt.", project_id=project["id"])
    receipt = web_server.api().delete(f"/v3/documents/{gone['id']}").json()["receipt"]
    pages = {
        "/": ("heading", "Dashboard"),
        "/projects": ("heading", "Projects"),
        f"/projects/{project['id']}": ("heading", "Axe checks"),
        f"/projects/{project['id']}/settings": ("heading", "Project settings"),
        "/search?q=checklist": ("testid", "search-results"),
        f"/memories/{doc['id']}": ("heading", "Checklist"),
        f"/deletions/{receipt['id']}": ("testid", "receipt-checks"),
        "/graph": ("testid", "graph"),
        "/settings": ("heading", "API keys"),
    }
    failures = {}
    for path, (kind, name) in pages.items():
        page.goto(f"{web_server.url}{path}")
        target = page.get_by_role("heading", name=name).first if kind == "heading" else page.get_by_test_id(name)
        expect(target).to_be_visible()
        failures[path] = _serious_violations(page, axe_source)
    # the login page, signed out
    signed_out = page.context.browser.new_context()
    try:
        login = signed_out.new_page()
        login.goto(f"{web_server.url}/login")
        expect(login.get_by_label("API key")).to_be_visible()
        failures["/login"] = _serious_violations(login, axe_source)
    finally:
        signed_out.close()
    assert {p: v for p, v in failures.items() if v} == {}


def _serious_violations(page: Page, axe_source: str) -> list[str]:
    page.evaluate(axe_source)  # through the debugging protocol: the page's policy still holds for its own scripts
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['id']} ({v['impact']}): {json.dumps([n['target'] for n in v['nodes']])[:300]}"
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


# --------------------------------------------------------------------------- every page, phone and desktop

WIDTHS = (1280, 390)


def _every_page(server: WebServer) -> dict[str, tuple[str, str, str]]:
    """name → (path, how to know it is shown, what): every page of the app, with content in it."""
    project = server.api().post("/v3/projects", json={"name": "Layout checks with a fairly long project name"}).json()
    doc = save(server, "## Passport renewal\n\nThe passport expires on 2027-03-14; renew it by January. "
               + "A very-long-unbroken-identifier-" * 6 + "\n\n```python\nprint('a rather long line of code that does not wrap at all on a phone')\n```\n\n"
               "| column one | column two | column three | column four |\n|---|---|---|---|\n| a | b | c | d |",
               project_id=project["id"], metadata={"tags": ["travel", "documents"]})
    for i in range(3):
        save(server, f"Note {i} about the passport and travel plans.", project_id=project["id"])
    gone = save(server, "A note deleted for its receipt.", project_id=project["id"])
    receipt = server.api().delete(f"/v3/documents/{gone['id']}").json()["receipt"]
    server.api().post("/v3/keys", json={"name": "laptop key with a long descriptive name"})
    return {
        "dashboard": ("/", "heading", "Dashboard"),
        "projects": ("/projects", "heading", "Projects"),
        "project": (f"/projects/{project['id']}", "heading", project["name"]),
        "project-settings": (f"/projects/{project['id']}/settings", "heading", "Project settings"),
        "search-empty": ("/search", "heading", "What to type"),
        "search": ("/search?q=passport%20renewal", "testid", "snippet"),
        "memory": (f"/memories/{doc['id']}", "heading", "Passport renewal"),
        "deletion": (f"/deletions/{receipt['id']}", "testid", "receipt-checks"),
        "graph": ("/graph", "testid", "graph"),
        "settings": ("/settings", "heading", "API keys"),
        "profile": ("/profile", "heading", "Profile"),
        "not-found": ("/no/such/page", "heading", "Page not found"),
    }


def test_every_page_fits_a_phone_and_a_desktop_without_sideways_scroll(page, web_server, screenshot) -> None:
    pages = _every_page(web_server)
    wide: dict[str, int] = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900 if width > 600 else 844})
        for name, (path, kind, what) in pages.items():
            page.goto(f"{web_server.url}{path}")
            target = page.get_by_role("heading", name=what).first if kind == "heading" else page.get_by_test_id(what).first
            expect(target).to_be_visible()
            page.wait_for_timeout(150)  # late layout (the graph's simulation, fonts)
            scroll, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            if scroll > inner:
                wide[f"{name}@{width}"] = scroll
            screenshot(page, f"{name}-{width}")
    assert wide == {}, f"pages wider than the viewport: {wide}"


def test_an_unknown_path_shows_the_app_s_page_not_found_and_the_api_keeps_json(page, web_server) -> None:
    response = page.goto(f"{web_server.url}/no/such/page")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    expect(page.get_by_role("link", name="Back to the dashboard")).to_be_visible()
    api = web_server.api().get("/v3/no-such-route")
    assert api.status_code == 404 and api.json()["error"]


def test_with_the_server_unreachable_one_banner_offers_a_retry(page, web_server) -> None:
    page.goto(f"{web_server.url}/")
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    # The server goes away: every API call fails (memlane's /v3 and Mem-Oracle's /status alike)
    for pattern in ("**/v3/**", "**/status**"):
        page.route(pattern, lambda route: route.abort("connectionrefused"))
    page.reload()
    banner = page.get_by_test_id("offline")
    expect(banner).to_contain_text("Cannot reach memlane")
    expect(page.get_by_role("alert")).to_have_count(1)
    expect(page.locator("body")).not_to_contain_text("Failed to fetch")
    for pattern in ("**/v3/**", "**/status**"):
        page.unroute(pattern)
    page.get_by_role("button", name="Retry").click()
    expect(banner).to_have_count(0)
    expect(page.get_by_test_id("stat-total")).not_to_have_text("…")
