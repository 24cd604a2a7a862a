"""HTML: a page's main content as markdown (spec §3.2's cleaning algorithm), and its title.

Page chrome (navigation, headers, footers, forms, permalinks) goes; links become absolute; code
blocks keep the language the docs generator put on them.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup, Tag
from markdownify import MarkdownConverter

from memlane.domain.models import ContentType
from memlane.ingest.extract.result import Extracted
from memlane.ingest.extract.text import derived_title, first_line_title, normalize_whitespace
from memlane.ingest.html_parser import HTML_PARSER
from memlane.ingest.languages import normalize_language

# Page chrome that never belongs to the content being saved.
_CHROME_TAGS = [
    "script", "style", "noscript", "template", "svg", "iframe", "nav", "aside", "button",
    "input", "select", "textarea", "dialog", "object", "embed", "canvas", "link", "meta",
]  # fmt: skip
# Elements that are chrome by their attributes: [role=navigation|banner|contentinfo|search],
# [aria-hidden="true"], [hidden]. Matched by a predicate in one pass of bs4's find_all: a CSS
# selector through soupsieve did the same at several times the cost (a fifth of the extraction
# time on the Python docs' large pages).
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "search"})


def _is_chrome_by_attributes(tag: Tag) -> bool:
    attrs = tag.attrs
    return bool(attrs) and (
        attrs.get("role") in _CHROME_ROLES or attrs.get("aria-hidden") == "true" or "hidden" in attrs
    )


def _is_main_role(tag: Tag) -> bool:
    return tag.attrs.get("role") == "main"


# Heading anchors inserted by Sphinx, MkDocs, Docusaurus, GitHub and friends.
_PERMALINK_SYMBOLS = {"¶", "#", "§", "🔗"}
_PERMALINK_WORDS = {"link", "permalink", "direct link", "anchor"}
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), None)
_LANGUAGE_CLASS = re.compile(
    r"^(?:(?:language|lang|highlight)-(?:source-)?|brush:\s*)([\w+#-]+)$", re.IGNORECASE
)
_NOT_A_LANGUAGE = {"default", "none", "text", "plain", "plaintext", "nohighlight", "notranslate", "source"}


def extract_html(raw: str, content_type: ContentType, title: str | None, source_url: str | None) -> Extracted:
    text, derived = html_to_markdown(raw, source_url=source_url)
    return Extracted(text=text, content_type=content_type, title=derived or first_line_title(text),
                     title_from_heading=derived is not None)


def html_to_markdown(html: str, *, source_url: str | None = None) -> tuple[str, str | None]:
    """Spec §3.2's cleaning algorithm: the page's main content as markdown, and its title."""
    soup = BeautifulSoup(html, HTML_PARSER)
    page_title = soup.title.get_text(" ", strip=True) if soup.title else None
    _remove_chrome(soup)
    root = _main_content(soup)
    _remove_permalinks(root)
    _simplify_links_and_images(root, source_url)
    h1 = root.find("h1") or soup.find("h1")
    heading = h1.get_text(" ", strip=True) if isinstance(h1, Tag) else None
    text = normalize_whitespace(_MARKDOWN.convert_soup(root).replace("\u00a0", " "))
    return text, derived_title(heading or "") or derived_title(page_title or "")


def _remove_chrome(soup: BeautifulSoup) -> None:
    for tag in soup.find_all(_CHROME_TAGS):
        tag.decompose()
    for tag in soup.find_all(_is_chrome_by_attributes):
        tag.decompose()
    # A <header> inside the article is the article's own title block (h1, byline): keep it.
    # Site-wide headers and footers go.
    for tag in soup.find_all(["header", "footer"]):
        if tag.name == "footer" or tag.find_parent(["article", "main"]) is None:
            tag.decompose()
    # Small forms (search boxes, newsletter sign-ups) are chrome; some frameworks wrap the whole
    # page in a <form>, which must then be kept.
    for form in soup.find_all("form"):
        if form.find(["main", "article", "h1", "h2"]) is None:
            form.decompose()
        else:
            form.unwrap()


def _main_content(soup: BeautifulSoup) -> Tag:
    body = soup.body or soup
    candidates: list[Tag] = [tag for tag in soup.find_all("main")]
    candidates += [tag for tag in soup.find_all(_is_main_role) if tag not in candidates]
    if not candidates:
        # Several sibling articles make an index page: keep them all (the body).
        articles = [a for a in soup.find_all("article") if a.find_parent("article") is None]
        if len(articles) == 1:
            candidates = articles
    candidates = [tag for tag in candidates if tag.get_text(strip=True)]
    if not candidates:
        return body
    return max(candidates, key=lambda tag: len(tag.get_text()))


def _remove_permalinks(root: Tag) -> None:
    for anchor in root.find_all("a"):
        label = anchor.get_text().translate(_ZERO_WIDTH).strip().lower()
        in_page = str(anchor.get("href") or "").startswith("#")
        if (
            label in _PERMALINK_SYMBOLS
            or (not label and anchor.find("img") is None)  # an icon link whose <svg> is gone
            or (label in _PERMALINK_WORDS and in_page)
        ):
            anchor.decompose()


def _simplify_links_and_images(root: Tag, base_url: str | None) -> None:
    """Links become absolute (relative ones mean nothing once the page is gone); in-page and script
    links become plain text; images become their alt text (their URLs are noise to both search legs)."""
    for anchor in root.find_all("a"):
        href = str(anchor.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:")):
            anchor.unwrap()
        elif base_url and not urlsplit(href).scheme:
            anchor["href"] = urljoin(base_url, href)
    for image in root.find_all("img"):
        alt = str(image.get("alt") or "").strip()
        if alt:
            image.replace_with(alt)
        else:
            image.decompose()


def _code_block_language(pre: Tag) -> str | None:
    """The language of a <pre> code block from the class names docs generators put on it."""
    nodes: list[Tag] = [pre]
    code = pre.find("code")
    if isinstance(code, Tag):
        nodes.append(code)
    parent = pre.parent
    for _ in range(2):  # Sphinx: <div class="highlight-python3"><div class="highlight"><pre>
        if isinstance(parent, Tag):
            nodes.append(parent)
            parent = parent.parent
    for node in nodes:
        classes: list[str] = list(node.get_attribute_list("class") or [])
        for cls in classes:
            match = _LANGUAGE_CLASS.match(cls)
            if match:
                language = normalize_language(match.group(1))
                if language and language not in _NOT_A_LANGUAGE:
                    return language
        lang = node.get("data-lang") or node.get("data-language")
        if lang:
            return normalize_language(str(lang))
    return None


# markdownify tuned for indexing: ATX headings, "-" bullets, fenced code with its language, and no
# backslash escapes (text is indexed and read, not re-rendered; `snake\_case` would hurt search).
_MARKDOWN = MarkdownConverter(
    heading_style="ATX",
    bullets="-",
    escape_asterisks=False,
    escape_underscores=False,
    escape_misc=False,
    code_language_callback=_code_block_language,
    table_infer_header=True,
)
