"""robots.txt for the crawler, following RFC 9309 (the Robots Exclusion Protocol).

- Groups: the crawler obeys every group whose user-agent matches its product token
  ``memlane-crawler`` (case-insensitive), merged; only when there is none, every ``*`` group.
- Rules: ``*`` matches any run of characters and a trailing ``$`` anchors the end; the longest
  matching pattern wins and Allow wins a tie; ``/robots.txt`` itself is always allowed. Matching is
  linear (no regular expressions), so a hostile robots.txt cannot make it slow.
- ``Crawl-delay`` (non-standard, widely used) is reported for the matched groups; ``Sitemap:``
  lines are collected from anywhere in the file.
- Only the first 500 KiB are parsed (the RFC's minimum).

How the robots.txt *response* maps to a policy (`RobotsPolicy.from_status`, `load_robots`):

====================================  =====================================================
robots.txt answer                     policy
====================================  =====================================================
2xx                                   the parsed rules
404, 410 and other 4xx                allow everything (there are no rules)
401, 403                              disallow everything (conservative: access is restricted)
429, 5xx, network error, timeout      disallow everything, ``temporary=True``: retry later
====================================  =====================================================
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from memlane.crawl.errors import FetchError, TooManyRedirectsError
from memlane.crawl.urls import PATH_SAFE, QUERY_SAFE, normalize_url, percent_normalize
from memlane.ports import Fetcher

ROBOTS_PRODUCT_TOKEN = "memlane-crawler"
MAX_ROBOTS_BYTES = 500 * 1024


@dataclass(frozen=True)
class RobotsRule:
    allow: bool
    pattern: str  # percent-normalised path pattern, may contain "*" and a trailing "$"

    @property
    def specificity(self) -> int:
        return len(self.pattern)

    def matches(self, target: str) -> bool:
        return _wildcard_match(self.pattern, target)


def _wildcard_match(pattern: str, target: str) -> bool:
    """Does `pattern` (with "*" and a trailing "$") match a prefix of `target` (all of it with "$")?
    Greedy leftmost matching of the pieces between stars is exact for this pattern language."""
    anchored = pattern.endswith("$")
    if anchored:
        pattern = pattern[:-1]
    pieces = pattern.split("*")
    first = pieces[0]
    if not target.startswith(first):
        return False
    if len(pieces) == 1:
        return len(target) == len(first) if anchored else True
    position = len(first)
    for piece in pieces[1:-1]:
        found = target.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    last = pieces[-1]
    if anchored:
        return target.endswith(last) and len(target) - len(last) >= position
    return target.find(last, position) >= 0


@dataclass
class _Group:
    agents: list[str]
    rules: list[RobotsRule]
    crawl_delay: float | None = None


def _directives(text: str) -> Iterator[tuple[str, str]]:
    """Each `field: value` line as (field in lower case, value), comments and other lines left out."""
    for raw_line in text.splitlines():
        key, sep, value = raw_line.split("#", 1)[0].strip().partition(":")
        if sep:
            yield key.strip().lower(), value.strip()


def _parse_lines(text: str) -> tuple[list[_Group], list[str]]:
    groups: list[_Group] = []
    sitemaps: list[str] = []
    current: _Group | None = None
    in_agent_lines = False
    for key, value in _directives(text):
        if key == "user-agent":
            if current is None or not in_agent_lines:
                current = _Group(agents=[], rules=[])
                groups.append(current)
            current.agents.append(value.lower())
            in_agent_lines = True
        elif key in ("allow", "disallow"):
            in_agent_lines = False
            if current is not None and value:  # an empty Disallow allows everything: no rule
                current.rules.append(RobotsRule(allow=key == "allow", pattern=_normalize_pattern(value)))
        elif key == "crawl-delay":
            in_agent_lines = False
            if current is not None and current.crawl_delay is None:
                current.crawl_delay = _parse_delay(value)
        elif key == "sitemap":
            if value:
                sitemaps.append(value)
        else:
            in_agent_lines = False
    return groups, sitemaps


def _normalize_pattern(value: str) -> str:
    if not value.startswith(("/", "*")):
        value = "/" + value
    return percent_normalize(value, QUERY_SAFE)


def _parse_delay(value: str) -> float | None:
    try:
        delay = float(value)
    except ValueError:
        return None
    return delay if math.isfinite(delay) and delay >= 0 else None


def _agent_matches(agent: str, token: str) -> bool:
    # "memlane-crawler/0.1" and "memlane-crawler" both name our product token.
    return agent.split("/", 1)[0].strip() == token


class RobotsPolicy:
    """What robots.txt lets the crawler fetch on one host. Build it with `parse`, `from_status`,
    `allow_all` or `disallow_all`."""

    def __init__(
        self,
        rules: Iterable[RobotsRule] = (),
        *,
        crawl_delay: float | None = None,
        sitemaps: Iterable[str] = (),
        disallow_everything: bool = False,
        temporary: bool = False,
        reason: str | None = None,
    ) -> None:
        self._rules = tuple(rules)
        self._disallow_everything = disallow_everything
        self.crawl_delay = crawl_delay
        self.sitemaps: list[str] = list(sitemaps)
        #: True when everything is disallowed only for now (robots.txt answered 5xx/429 or was
        #: unreachable): the caller reports it and tries again later.
        self.temporary = temporary
        self.reason = reason

    @classmethod
    def parse(cls, text: str | bytes, *, user_agent: str = ROBOTS_PRODUCT_TOKEN) -> RobotsPolicy:
        if isinstance(text, bytes):
            text = text[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace")
        else:
            text = text[:MAX_ROBOTS_BYTES]
        text = text.lstrip("\ufeff")
        groups, sitemaps = _parse_lines(text)
        token = user_agent.lower()
        matched = [g for g in groups if any(_agent_matches(a, token) for a in g.agents)]
        if not matched:
            matched = [g for g in groups if "*" in g.agents]
        rules = [rule for group in matched for rule in group.rules]
        delays = [g.crawl_delay for g in matched if g.crawl_delay is not None]
        return cls(rules, crawl_delay=delays[0] if delays else None, sitemaps=sitemaps)

    @classmethod
    def allow_all(cls, reason: str | None = None) -> RobotsPolicy:
        return cls(reason=reason)

    @classmethod
    def disallow_all(cls, reason: str, *, temporary: bool = False) -> RobotsPolicy:
        return cls(disallow_everything=True, temporary=temporary, reason=reason)

    @classmethod
    def from_status(
        cls, status: int, body: bytes | str = b"", *, user_agent: str = ROBOTS_PRODUCT_TOKEN
    ) -> RobotsPolicy:
        """The policy for a robots.txt answered with `status` (see the module docstring)."""
        if 200 <= status < 300:
            return cls.parse(body, user_agent=user_agent)
        if status in (401, 403):
            return cls.disallow_all(f"robots.txt answered HTTP {status}")
        if status == 429 or status >= 500:
            return cls.disallow_all(f"robots.txt answered HTTP {status}", temporary=True)
        if 400 <= status < 500:
            return cls.allow_all(f"robots.txt answered HTTP {status}")
        return cls.disallow_all(f"robots.txt answered unexpected HTTP {status}", temporary=True)

    @property
    def disallows_everything(self) -> bool:
        return self._disallow_everything

    def allowed(self, url: str) -> bool:
        if self._disallow_everything:
            return False
        try:
            parts = urlsplit(url)
        except ValueError:
            return False
        path = percent_normalize(parts.path or "/", PATH_SAFE)
        if path == "/robots.txt":
            return True
        target = f"{path}?{percent_normalize(parts.query, QUERY_SAFE)}" if parts.query else path
        best: RobotsRule | None = None
        for rule in self._rules:
            if not rule.matches(target):
                continue
            if (
                best is None
                or rule.specificity > best.specificity
                or (rule.specificity == best.specificity and rule.allow and not best.allow)
            ):
                best = rule
        return best is None or best.allow


def robots_url(site_url: str) -> str:
    """Where the robots.txt for `site_url`'s scheme, host and port lives."""
    normalized = normalize_url(site_url)
    if normalized is None:
        raise ValueError(f"not an absolute http(s) URL: {site_url!r}")
    parts = urlsplit(normalized)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, "/robots.txt", "", ""))


def load_robots(fetcher: Fetcher, site_url: str, *, user_agent: str = ROBOTS_PRODUCT_TOKEN) -> RobotsPolicy:
    """Fetch and interpret robots.txt for `site_url`. Raises UnsafeURLError when the SSRF guard
    refuses the site; every other failure becomes a policy (see the module docstring)."""
    url = robots_url(site_url)
    try:
        result = fetcher.fetch(url)
    except TooManyRedirectsError as exc:
        # RFC 9309 2.3.1.2: after five redirects the file counts as unavailable, which allows all.
        return RobotsPolicy.allow_all(f"robots.txt: {exc.message}")
    except FetchError as exc:
        if exc.transient:
            return RobotsPolicy.disallow_all(f"robots.txt unreachable: {exc.message}", temporary=True)
        if exc.status is not None:
            return RobotsPolicy.from_status(exc.status, user_agent=user_agent)
        return RobotsPolicy.disallow_all(f"robots.txt unusable: {exc.message}")
    return RobotsPolicy.from_status(result.status, result.content, user_agent=user_agent)
