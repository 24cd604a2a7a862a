"""robots.txt rules (RFC 9309) and how robots.txt responses map to a policy."""

from __future__ import annotations

import pytest

from memlane.crawl.errors import FetchError, TooManyRedirectsError, UnsafeURLError
from memlane.crawl.robots import RobotsPolicy, load_robots, robots_url
from memlane.ports import FetchResult

SITE = "https://docs.example.com"

ROBOTS = """\
# comments and blank lines are ignored
User-agent: *
Disallow: /private/
Disallow: /search
Allow: /private/open/
Crawl-delay: 10

User-agent: OtherBot
Disallow: /

Sitemap: https://docs.example.com/sitemap.xml
Sitemap: https://docs.example.com/sitemap-api.xml.gz
"""


def test_star_group_applies_when_our_agent_is_not_named() -> None:
    policy = RobotsPolicy.parse(ROBOTS)
    assert policy.allowed(f"{SITE}/docs/intro")
    assert not policy.allowed(f"{SITE}/private/keys")
    assert policy.allowed(f"{SITE}/private/open/readme")  # longer Allow beats shorter Disallow
    assert not policy.allowed(f"{SITE}/search?q=x")
    assert not policy.allowed(f"{SITE}/searching")  # plain prefix match
    assert policy.crawl_delay == 10.0
    assert policy.sitemaps == [
        "https://docs.example.com/sitemap.xml",
        "https://docs.example.com/sitemap-api.xml.gz",
    ]
    assert policy.temporary is False


def test_our_own_group_wins_over_star_and_groups_merge() -> None:
    text = """\
User-agent: *
Disallow: /

User-agent: Memlane-Crawler
Disallow: /drafts/

User-agent: memlane-crawler/0.1
User-agent: somebot
Disallow: /tmp/
Crawl-delay: 2.5
"""
    policy = RobotsPolicy.parse(text)
    assert policy.allowed(f"{SITE}/docs/")
    assert not policy.allowed(f"{SITE}/drafts/x")
    assert not policy.allowed(f"{SITE}/tmp/x")
    assert policy.crawl_delay == 2.5


def test_wildcards_and_end_anchor() -> None:
    text = """\
User-agent: *
Disallow: /*.pdf$
Disallow: /*?print=
Disallow: /api/*/internal
Allow: /api/v1/internal/public$
"""
    policy = RobotsPolicy.parse(text)
    assert not policy.allowed(f"{SITE}/guide/manual.pdf")
    assert policy.allowed(f"{SITE}/guide/manual.pdf.html")
    assert not policy.allowed(f"{SITE}/page?print=1")
    assert policy.allowed(f"{SITE}/page?lang=en")
    assert not policy.allowed(f"{SITE}/api/v2/internal/x")
    assert policy.allowed(f"{SITE}/api/v1/internal/public")
    assert not policy.allowed(f"{SITE}/api/v1/internal/public/more")


def test_allow_wins_a_tie_and_empty_disallow_allows_all() -> None:
    tie = RobotsPolicy.parse("User-agent: *\nDisallow: /page\nAllow: /page\n")
    assert tie.allowed(f"{SITE}/page")
    empty = RobotsPolicy.parse("User-agent: *\nDisallow:\n")
    assert empty.allowed(f"{SITE}/anything")


def test_percent_encoding_is_compared_normalised() -> None:
    policy = RobotsPolicy.parse("User-agent: *\nDisallow: /caf%c3%a9/\nDisallow: /a%7eb\n")
    assert not policy.allowed(f"{SITE}/café/menu")
    assert not policy.allowed(f"{SITE}/a~b")


def test_robots_txt_itself_is_always_allowed() -> None:
    policy = RobotsPolicy.parse("User-agent: *\nDisallow: /\n")
    assert not policy.allowed(f"{SITE}/docs")
    assert policy.allowed(f"{SITE}/robots.txt")


def test_rules_before_any_user_agent_and_unknown_lines_are_ignored() -> None:
    policy = RobotsPolicy.parse("Disallow: /\nNoindex: /x\nUser-agent: *\nDisallow: /y\n")
    assert policy.allowed(f"{SITE}/x")
    assert not policy.allowed(f"{SITE}/y")


def test_no_rules_allows_everything() -> None:
    assert RobotsPolicy.parse("").allowed(f"{SITE}/x")
    assert RobotsPolicy.parse(b"\xef\xbb\xbfUser-agent: other\nDisallow: /\n").allowed(f"{SITE}/x")


def test_hostile_pattern_is_matched_quickly() -> None:
    pattern = "/" + "*a" * 200 + "*b"
    policy = RobotsPolicy.parse(f"User-agent: *\nDisallow: {pattern}\n")
    assert policy.allowed(f"{SITE}/" + "a" * 5000)


@pytest.mark.parametrize(
    ("status", "allowed", "temporary"),
    [
        (404, True, False),
        (410, True, False),
        (400, True, False),
        (401, False, False),
        (403, False, False),
        (429, False, True),
        (500, False, True),
        (503, False, True),
    ],
)
def test_status_mapping(status: int, allowed: bool, temporary: bool) -> None:
    policy = RobotsPolicy.from_status(status)
    assert policy.allowed(f"{SITE}/docs") is allowed
    assert policy.temporary is temporary
    assert policy.reason == f"robots.txt answered HTTP {status}"


class _FakeFetcher:
    def __init__(self, outcome: FetchResult | Exception) -> None:
        self.outcome = outcome
        self.urls: list[str] = []

    def fetch(self, url: str, *, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        self.urls.append(url)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def _result(status: int, body: bytes = b"") -> FetchResult:
    return FetchResult(f"{SITE}/robots.txt", status, body, "text/plain", None, None)


def test_load_robots_fetches_the_site_root_robots_txt() -> None:
    fetcher = _FakeFetcher(_result(200, b"User-agent: *\nDisallow: /private\n"))
    policy = load_robots(fetcher, "https://docs.example.com:443/guide/start?x=1")
    assert fetcher.urls == ["https://docs.example.com/robots.txt"]
    assert not policy.allowed(f"{SITE}/private/x")
    assert policy.allowed(f"{SITE}/guide/start")


def test_load_robots_maps_failures() -> None:
    assert load_robots(_FakeFetcher(_result(404)), SITE).allowed(f"{SITE}/x")
    forbidden = load_robots(_FakeFetcher(_result(403)), SITE)
    assert not forbidden.allowed(f"{SITE}/x") and not forbidden.temporary
    down = load_robots(_FakeFetcher(FetchError("HTTP 503", transient=True, status=503)), SITE)
    assert not down.allowed(f"{SITE}/x") and down.temporary
    assert down.reason == "robots.txt unreachable: HTTP 503"
    timeout = load_robots(_FakeFetcher(FetchError("timed out", transient=True)), SITE)
    assert timeout.temporary
    bad_request = load_robots(_FakeFetcher(FetchError("HTTP 400", transient=False, status=400)), SITE)
    assert bad_request.allowed(f"{SITE}/x")
    loop = load_robots(_FakeFetcher(TooManyRedirectsError("more than 5 redirects")), SITE)
    assert loop.allowed(f"{SITE}/x")


def test_load_robots_does_not_swallow_ssrf_refusals() -> None:
    with pytest.raises(UnsafeURLError):
        load_robots(_FakeFetcher(UnsafeURLError("http://10.0.0.1/robots.txt", "private")), "http://10.0.0.1/")


def test_robots_url() -> None:
    assert robots_url("HTTP://Docs.Example.com:8080/a/b?c#d") == "http://docs.example.com:8080/robots.txt"
    with pytest.raises(ValueError):
        robots_url("mailto:x@y")
