"""What a page's <head> says about indexing it: its canonical URL (<link rel="canonical">) and
whether it asks not to be indexed (<meta name="robots" content="noindex">, which mdBook's
print.html carries). Read with the standard library's tokenizer, stopping at <body>."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

from memlane.crawl.urls import normalize_url

MAX_HEAD_CHARS = 200_000


@dataclass(frozen=True)
class HeadSignals:
    canonical: str | None = None  # normalised, resolved against the page URL
    noindex: bool = False


class _Stop(Exception):
    pass


class _HeadReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.canonical: str | None = None
        self.noindex = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            raise _Stop
        values = {k.lower(): (v or "") for k, v in attrs}
        if tag == "link" and self.canonical is None:
            rels = values.get("rel", "").lower().split()
            if "canonical" in rels and values.get("href", "").strip():
                self.canonical = values["href"].strip()
        elif tag == "meta" and values.get("name", "").lower() == "robots":
            directives = {d.strip() for d in values.get("content", "").lower().split(",")}
            if directives & {"noindex", "none"}:
                self.noindex = True


def head_signals(html: bytes | str, page_url: str) -> HeadSignals:
    text = html if isinstance(html, str) else html[: MAX_HEAD_CHARS * 4].decode("utf-8", errors="replace")
    reader = _HeadReader()
    try:
        reader.feed(text[:MAX_HEAD_CHARS])
        reader.close()
    except _Stop:
        pass
    except Exception:  # noqa: BLE001 - a malformed head says nothing
        return HeadSignals()
    canonical = normalize_url(reader.canonical, page_url) if reader.canonical else None
    return HeadSignals(canonical=canonical, noindex=reader.noindex)
