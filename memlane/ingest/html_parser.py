"""The parser BeautifulSoup builds with: lxml when it is installed (several times faster on large
pages), otherwise the standard library's html.parser. The local install has lxml; the Lambda layer
leaves it out (size), so the extractor and the crawler's link finder fall back there."""

from __future__ import annotations

try:
    import lxml  # noqa: F401

    HTML_PARSER = "lxml"
except ImportError:  # pragma: no cover - depends on the installation
    HTML_PARSER = "html.parser"
