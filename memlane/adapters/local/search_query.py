"""What a text query searches for: its words, lower-cased, stopwords dropped, at most 32; and the
same query as FTS5 would run it."""

from __future__ import annotations

import re

from memlane.domain.english import drop_possessives

# Words that carry no topic; dropping them keeps OR-queries from matching half the corpus.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me
    more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word per line would fill 130 lines
)
_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_WORDS = 32


def query_words(text: str) -> list[str]:
    """The words a text query searches for: lower-cased, stopwords dropped (unless nothing else is
    left), each once, at most 32. Any of them may match (OR)."""
    words = [w.lower() for w in _WORD.findall(drop_possessives(text))]
    terms = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(terms))[:MAX_QUERY_WORDS]


def fts_query(text: str) -> str | None:
    """The same query as an FTS5 OR-query of quoted terms (quoting makes every word literal, so
    user input can never inject FTS5 syntax): what the BM25 leg computes, as FTS5 would run it."""
    words = query_words(text)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)
