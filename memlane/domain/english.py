"""English text as the search legs read it.

OpenSearch's `english` analyzer (the AWS text leg) drops a word's possessive `'s` before anything
else, so "Caroline's" is searched as "caroline". The embedded text leg's FTS5 tokenizer splits at the
apostrophe instead and would search for a word `s` that every possessive in the corpus holds. Query
text goes through `drop_possessives` on both hosts' shared paths, so a question about "Maria's family"
asks for "maria" and "family" everywhere.
"""

from __future__ import annotations

import re

_POSSESSIVE = re.compile(r"(?<=\w)['\u2019\uff07]s\b", re.IGNORECASE)


def drop_possessives(text: str) -> str:
    """`text` without the possessive `'s` of its words (straight, curly and full-width apostrophes)."""
    return _POSSESSIVE.sub("", text)
