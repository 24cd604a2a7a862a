"""How much of a question a chunk's words account for: the share of the question's content words the
chunk holds (title, text and given tags), each compared by its stem.

The fusion's word share (memlane.recall.fusion) is BM25, which sums the evidence of whichever query
words a chunk holds. One rare word is enough for a high score, so a chunk holding one incidental word
of the question ("apartment" of "what's the key for the wireless at our apartment?") can outvote the
chunk whose meaning answers it and shares no word with it (the router note). A question's content words
are its constraints: a chunk holding one of four of them accounts for a quarter of what was asked.
Scaling the word share by that fraction (`FusionWeights.text_coverage`) keeps a keyword match of the
whole question at full weight and turns an incidental word into the small evidence it is, whatever the
store holds: it reads only the question and the chunk, never the rest of the batch or the corpus.

Words are compared by their Snowball English stem, as both text legs match them (FTS5's porter
tokenizer, OpenSearch's english analyzer): "parked" holds "parking", "vaccinations" holds
"vaccinated". Only the chunk words that start like a query word's stem are stemmed, so a recall reads
its candidates' text once with a regular expression per query word and stems a handful of words.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import snowballstemmer

from memlane.recall.relevance import content_words

_local = threading.local()


def _stemmer() -> snowballstemmer.stemmer:  # a Snowball stemmer keeps state while it works: one per thread
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word."""
    return str(_stemmer().stemWord(word))


@lru_cache(maxsize=4_096)
def _prefix_pattern(prefixes: tuple[str, ...]) -> re.Pattern[str]:
    """Words opening with any of `prefixes`, longest first (one scan of a text for every query word)."""
    alternatives = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    return re.compile(r"(?<!\w)(?:" + alternatives + r")\w*")


def _prefix(word_stem: str) -> str:
    """A stem is its word's opening letters but for its last (Snowball turns a final y into i: "happy" →
    "happi"), so only words opening with those are stemmed."""
    return word_stem[:-1] if len(word_stem) > 3 else word_stem


def question_stems(query: str) -> tuple[str, ...]:
    """The stems of the question's content words (memlane.recall.relevance.content_words), once each."""
    return tuple(dict.fromkeys(stem(w) for w in content_words(query)))


def holds_stem(lowered: str, word_stem: str) -> bool:
    """Whether lower-case `lowered` holds a word whose stem is `word_stem`."""
    return coverage(lowered, (word_stem,)) == 1.0


def coverage(text: str, stems: tuple[str, ...]) -> float:
    """The share of `stems` (question_stems) that `text` holds, in [0, 1]; 1 for a question with no
    content word (nothing to account for). One scan of the text finds the words opening like any stem;
    only those are stemmed (cached), and the scan stops once every stem is found."""
    if not stems:
        return 1.0
    wanted, found = set(stems), set()
    for m in _prefix_pattern(tuple(sorted({_prefix(s) for s in stems}))).finditer(text.lower()):
        word_stem = stem(m.group())
        if word_stem in wanted:
            found.add(word_stem)
            if len(found) == len(wanted):
                break
    return len(found) / len(wanted)
