"""Issue 34, finding 8, in the browser: a memory the markdown renderer cannot take (3,000 nested
quotes overflowed its stack and blanked the whole app; 20,000 `*` around a word froze it) opens as
plain text, the page around it works, and the memory can be deleted from it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

HOSTILE = {
    "quotes": ">" * 3000 + " deep",
    "stars": "*" * 20000 + "word" + "*" * 20000,
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_memory_that_cannot_be_formatted_opens_as_text_and_can_be_deleted(page, web_server, name) -> None:
    saved = web_server.api().post("/v3/memory", json={"content": HOSTILE[name], "title": f"hostile {name}",
                                                     "content_type": "markdown"})
    assert saved.status_code in (201, 202), saved.text
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{web_server.url}/memories/{saved.json()['id']}")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"hostile {name}")
    plain = page.get_by_test_id("plain-content")
    expect(plain).to_contain_text("Shown as plain text")
    assert plain.locator("pre").text_content() == HOSTILE[name]
    page.get_by_role("button", name="Delete this memory…").click()
    page.get_by_role("button", name="Delete memory").click()
    expect(page).to_have_url(re.compile(r"/deletions/[0-9a-f-]+$"))
    assert web_server.api().get(f"/v3/documents/{saved.json()['id']}").status_code == 404
    assert errors == []
