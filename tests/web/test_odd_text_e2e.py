"""Odd text on a phone: unbroken long words and URLs, right-to-left scripts, emoji and character
references in the places a person types them (project names, titles, tags, memories, keys, the
search box), on every page at 390 px and 1280 px: nothing scrolls sideways and the text is shown as
typed."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

LONG_WORD = "Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherungsanstalt" * 2
LONG_URL = "https://example.com/" + "a-very-long-path-segment/" * 12 + "?query=" + "x" * 80
RTL = "مذكرة عن تجديد جواز السفر قبل السفر إلى القاهرة"
HEBREW = "פגישה עם דנה בתל אביב ביום שלישי"
EMOJI = "🚀🔥👩‍👩‍👧‍👦🇯🇵 release notes ✨"
PAGES_AT = (390, 1280)


def _save(server, body: dict) -> dict:
    r = server.api().post("/v3/memory", json=body)
    assert r.status_code in (200, 201), r.text
    return r.json()


@pytest.fixture(scope="module")
def odd(web_server) -> dict[str, str]:
    api = web_server.api()
    project = api.post("/v3/projects", json={"name": f"{LONG_WORD} {EMOJI}"}).json()
    rtl = _save(web_server, {"content": f"{RTL}\n\n{HEBREW}. {LONG_URL}", "title": RTL, "project_id": project["id"],
                             "tags": [LONG_WORD[:60], "سفر", "🚀"]})
    long = _save(web_server, {"content": f"# {LONG_WORD}\n\n{LONG_WORD} {EMOJI} &amp; &copy; {LONG_URL}\n\n"
                                         f"`{LONG_WORD}`\n\n> {LONG_WORD}",
                              "project_id": project["id"], "content_type": "markdown"})
    api.post("/v3/keys", json={"name": f"{LONG_WORD[:80]} {EMOJI}"})
    return {"project": project["id"], "rtl": rtl["id"], "long": long["id"]}


def test_odd_text_fits_every_page_at_phone_and_desktop_widths(page, web_server, odd, screenshot) -> None:
    paths = {
        "dashboard": "/",
        "projects": "/projects",
        "project": f"/projects/{odd['project']}",
        "project-settings": f"/projects/{odd['project']}/settings",
        "memory-rtl": f"/memories/{odd['rtl']}",
        "memory-long": f"/memories/{odd['long']}",
        "search": f"/search?q={LONG_WORD[:40]}",
        "graph": "/graph",
        "settings": "/settings",
    }
    wide: dict[str, int] = {}
    for width in PAGES_AT:
        page.set_viewport_size({"width": width, "height": 844 if width < 600 else 900})
        for name, path in paths.items():
            page.goto(f"{web_server.url}{path}")
            expect(page.locator("main h1").first).to_be_visible()
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(150)  # late layout (the graph's simulation)
            scroll, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            if scroll > inner:
                wide[f"{name}@{width}"] = scroll
            screenshot(page, f"odd-{name}-{width}")
    assert wide == {}, f"pages wider than the viewport: {wide}"


def test_odd_text_is_shown_as_typed(page, web_server, odd) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{web_server.url}/memories/{odd['rtl']}")
    title = page.get_by_role("heading", level=1)
    expect(title).to_have_text(RTL)
    expect(page.get_by_role("article")).to_contain_text(HEBREW)
    # right-to-left text reads and starts from the right: the title, and the Arabic paragraph of a
    # memory whose text is shown as left-to-right markdown around it
    assert title.evaluate("e => getComputedStyle(e).direction") == "rtl"
    paragraph = page.get_by_role("article").locator("p", has_text=RTL).first
    gap_right, gap_left = paragraph.evaluate("""p => {
        const r = document.createRange(); r.selectNodeContents(p);
        const text = r.getBoundingClientRect(), box = p.getBoundingClientRect();
        return [box.right - text.right, text.left - box.left];
    }""")
    assert gap_right < 2 < gap_left, (gap_right, gap_left)
    page.goto(f"{web_server.url}/memories/{odd['long']}")
    article = page.get_by_role("article")
    expect(article).to_contain_text(f"{EMOJI} & ©")
    expect(article.get_by_role("link", name=LONG_URL)).to_have_attribute("href", LONG_URL)
    page.goto(f"{web_server.url}/projects")
    expect(page.get_by_role("link", name=f"{LONG_WORD} {EMOJI}", exact=True)).to_be_visible()
