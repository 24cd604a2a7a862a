"""The words of code identifiers, as extra text for the text (BM25) index only.

A person asks in words ("read the user's name"); code writes them joined (`getUserName`,
`read_user_name`, `os.path.join`). The index tokenizers do not agree on where such a name breaks:
SQLite FTS5's unicode61 (the embedded default) splits `_` and `.` but not camelCase, and
OpenSearch's `english` analyzer (the standard tokenizer, AWS) keeps `read_user_name` and
`os.path.join` whole. So a code chunk gets, next to its own text, the words of its identifiers
(`get user name`), and both hosts index those words in the chunk's body, while the chunk's own
tokens stay as they are (a query naming `getUserName` still matches it whole).

This text is never shown (snippets and recall answers read the chunk's content) and never embedded
(what the embedder sees is memlane.documents.writer.embedding_text, unchanged). A query gets the
same treatment (`query_identifier_words`), so `getUserName` in a question also searches for
`get`, `user` and `name`; a query without identifiers is searched exactly as written.

Both are on when the composition says so (`Settings.index_identifier_words`,
MEMLANE_INDEX_IDENTIFIER_WORDS; off by default, see BENCHMARKS.md's recall suite for why): the
writer passes the words as `IndexedChunk.identifiers`, and the recall pipeline widens the query.
"""

from __future__ import annotations

import re

import regex

from memlane.domain.models import Chunk, ContentType

# An identifier: letters, digits and `_`, possibly dotted (`os.path.join`, `self._cache`).
_IDENTIFIER = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*", re.UNICODE)
# The parts of one `_`/`.`-free name: an acronym before a capitalised word ("HTTP" of "HTTPServer"),
# a capitalised or lower-case word, a run of capitals, a run of digits.
# Letters of any script: "Weserstraße" is one part, "straßeName" two (the `regex` module's classes).
_PART = regex.compile(r"\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?[\p{Ll}\p{M}]+|\p{Lu}+|\d+|[^\W\d_]+")
_CAMEL = regex.compile(r"[\p{Ll}\d]\p{Lu}|\p{Lu}\p{Lu}\p{Ll}")
# What one chunk may add: a limit on pathological input (a minified file), far above a function's.
MAX_IDENTIFIERS = 2_000


def identifier_words(identifier: str) -> list[str]:
    """The words of one identifier, lower-cased, in order: `getUserName` → get, user, name;
    `read_user_name` → read, user, name; `HTTPServer.serve_forever` → http, server, serve,
    forever. One-letter parts (`getX`'s `x`) carry no topic and are left out; a plain word gives
    itself."""
    words: list[str] = []
    for piece in re.split(r"[._]+", identifier):
        for part in _PART.findall(piece):
            if len(part) > 1:
                words.append(part.lower())
    return words


def _is_compound(token: str) -> bool:
    """Whether a token joins several words: camelCase, snake_case (an inner `_`) or dotted."""
    core = token.strip("_")
    return "." in core or "_" in core or _CAMEL.search(core) is not None


def split_identifiers(text: str) -> str:
    """The words of the compound identifiers in `text`, each identifier once (in first-seen
    order), as one line of space-separated words; "" when there are none."""
    seen: dict[str, None] = {}
    for token in _IDENTIFIER.findall(text):
        if token not in seen and _is_compound(token):
            seen[token] = None
            if len(seen) >= MAX_IDENTIFIERS:
                break
    words = [w for token in seen for w in identifier_words(token)]
    return " ".join(words)


def index_words(chunk: Chunk) -> str:
    """The extra text the text index holds for a chunk: its identifiers' words for code, nothing
    for any other content (prose is searched as written)."""
    if chunk.content_type is not ContentType.CODE:
        return ""
    return split_identifiers(chunk.content)


def query_identifier_words(query: str) -> str:
    """A query with the words of its compound identifiers added (`how does getUserName work` →
    `how does getUserName work get user name`); a query without any comes back unchanged."""
    extra = split_identifiers(query)
    return f"{query} {extra}" if extra else query
