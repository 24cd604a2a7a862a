"""The in-memory crawl planner for one docset."""

from __future__ import annotations

import pytest

from memlane.crawl.frontier import CrawlPlan
from memlane.domain.errors import InvalidInputError


def test_seed_is_resolved_against_the_base_url_and_queued_first() -> None:
    plan = CrawlPlan("https://NextJS.org", "/docs/getting-started", ["/docs"])
    assert plan.seed_url == "https://nextjs.org/docs/getting-started"
    assert plan.pop() == "https://nextjs.org/docs/getting-started"
    assert plan.pop() is None


def test_add_normalises_dedupes_and_filters_scope_and_binaries() -> None:
    plan = CrawlPlan("https://nextjs.org", "/docs/getting-started", ["/docs"])
    assert plan.add("https://nextjs.org/docs/app#routing") is True
    assert plan.add("HTTPS://nextjs.org:443/docs/app") is False  # same page
    assert plan.add("/docs/pages") is True  # relative to the base URL
    assert plan.add("https://nextjs.org/blog/next-15") is False  # outside allowedPaths
    assert plan.add("https://vercel.com/docs") is False  # another host
    assert plan.add("http://nextjs.org/docs/x") is False  # another scheme
    assert plan.add("https://nextjs.org/docs/diagram.png") is False  # binary
    assert plan.add("mailto:docs@nextjs.org") is False
    assert plan.add("https://nextjs.org/docs/getting-started") is False  # the seed
    assert list(plan) == [
        "https://nextjs.org/docs/getting-started",
        "https://nextjs.org/docs/app",
        "https://nextjs.org/docs/pages",
    ]
    assert "https://nextjs.org/docs/app#other" in plan
    assert plan.accepted_count == 3
    assert plan.pending_count == 3


def test_default_scope_is_the_base_directory() -> None:
    plan = CrawlPlan("https://docs.python.org/3/library/", "index.html")
    assert plan.seed_url == "https://docs.python.org/3/library/index.html"
    assert plan.add("https://docs.python.org/3/library/os.html") is True
    assert plan.add("https://docs.python.org/3/tutorial/") is False


def test_page_cap() -> None:
    plan = CrawlPlan("https://docs.example.com/", "/", max_pages=3)
    assert plan.add_all(["/a", "/b", "/c", "/d"]) == 2
    assert plan.is_full
    assert [plan.pop(), plan.pop(), plan.pop(), plan.pop()] == [
        "https://docs.example.com/",
        "https://docs.example.com/a",
        "https://docs.example.com/b",
        None,
    ]
    assert plan.add("/e") is False  # the cap counts accepted pages, not pending ones


@pytest.mark.parametrize(
    ("base_url", "seed", "allowed", "max_pages", "field"),
    [
        ("ftp://docs.example.com/", "/", None, 10, "baseUrl"),
        ("docs.example.com", "/", None, 10, "baseUrl"),
        ("https://user:pw@docs.example.com/", "/", None, 10, "baseUrl"),
        ("https://docs.example.com/", "/blog/x", ["/docs"], 10, "seedSlug"),
        ("https://docs.example.com/", "https://other.example.com/docs", None, 10, "seedSlug"),
        ("https://docs.example.com/", "javascript:alert(1)", None, 10, "seedSlug"),
        ("https://docs.example.com/", "/", None, 0, "maxPages"),
    ],
)
def test_invalid_inputs_name_the_field(
    base_url: str, seed: str, allowed: list[str] | None, max_pages: int, field: str
) -> None:
    with pytest.raises(InvalidInputError) as info:
        CrawlPlan(base_url, seed, allowed, max_pages)
    assert info.value.field == field
