"""The names a question gives, and whether a chunk holds them: what a strong match must name.

A question that names something ("when does Aylin's passport expire?", "wifi password at Mama's
flat", "PIN for my bank card", "3PL Poznań support hotline") asks about that thing. A memory that
never names it can be close in meaning (the person's own passport, their own wifi) and is then worth
showing, but it is not the answer to that question: at most a weak match (memlane.recall.relevance,
`named_cap`). Meaning decides what is found; a name decides whether a result can be called the
answer. The rule needs no statistics of the store and reads the same on every host (the chunk's own
title and text).

A name is a word the question writes in a way that marks it (memlane.recall.relevance
`distinctive_terms`: an identifier, a code, a number, an acronym), or a capitalised word that does not
open the question or one of its sentences (a proper name: "Aylin", "Copenhagen", "Kindle", "DC"). A
question whose every word is capitalised (Title Case, shouting) says nothing by its case, so only the
marked words count there. The word that opens a question is never read as a name by its case ("Remind
me…", "Spotify password"): nothing tells a name from a capitalised first word. A paraphrase names nothing of its note by nature (it shares no content
word with it), so a question without names is never held back by this rule.
"""

from __future__ import annotations

import re

from memlane.domain.english import drop_possessives
from memlane.recall.relevance import STOPWORDS, contains_term, distinctive_terms

_WORD = re.compile(r"(?<![\w\-])[^\W\d_][\w\-]*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?:;\n]\s*$")
# Marked words that are no name: a hyphenated word in lower case ("tax-free", "ten-visit"), a number with
# an ordinal or a unit ("8th", "21k", "5pm": a date or an amount, written many ways).
_NOT_A_NAME = re.compile(r"[a-z]+(?:-[a-z]+)+|\d+(?:st|nd|rd|th|k|m|am|pm|s|h)?")


def _shouted(text: str) -> bool:
    return not any(ch.islower() for ch in text)


def _capitalised(query: str) -> list[str]:
    """Capitalised words that open neither the question nor a sentence of it, when the case means
    something (not every word is capitalised)."""
    words = list(_WORD.finditer(query))
    content = [m for m in words if m.group().lower() not in STOPWORDS]
    capitals = [m for m in content if m.group()[0].isupper()]
    if _shouted(query) or (len(content) > 1 and len(capitals) == len(content)):
        return []
    out = []
    for m in capitals:
        before = query[: m.start()]
        if not before.strip() or _SENTENCE_END.search(before) or m.group() == "I":
            continue
        out.append(m.group().lower())
    return out


def named_terms(query: str) -> list[str]:
    """The names the question gives, in lower case, once each."""
    text = drop_possessives(query)
    shouted = _shouted(text)  # every word in capitals: no word is an acronym by its case
    marked = [t.lower() for t in distinctive_terms(text)
              if not _NOT_A_NAME.fullmatch(t) and not (shouted and t.isalpha())]
    return list(dict.fromkeys([*marked, *_capitalised(text)]))


def names_all(text: str, names: list[str]) -> bool:
    """Whether `text` (a chunk's title and text) holds every name, each as a whole word in any case (a
    name in the plural also as its singular: "Sundays" is named by "Sunday")."""
    lowered = text.lower()
    return all(contains_term(lowered, name, lowered)
               or (len(name) > 3 and name.endswith("s") and contains_term(lowered, name[:-1], lowered))
               for name in names)
