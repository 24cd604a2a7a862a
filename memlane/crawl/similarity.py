"""How much of one page's text another page holds: word shingles, sampled.

A page's text becomes its 5-word shingles (lower-cased words), each hashed to 32 bits. The share of
page A's shingles found in page B's is the share of A's text that B holds (its containment),
whatever their lengths: a print-everything page (mdBook's print.html, Sphinx's singlehtml) holds
nearly all of each chapter, a chapter holds a small part of the print page.

A page keeps at most MAX_SAMPLE hashes, the smallest ones (a page of up to ~1,000 words keeps all
of them: exact). Sampling by value, not by position, means two pages keep the same hashes for the
same shingles: a comparison with a capped sample looks only at hashes up to its largest, which both
samples hold completely, so the estimate stays unbiased. Pages too short to judge (fewer than
MIN_SAMPLE comparable shingles) are never called duplicates.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

SHINGLE_WORDS = 5
MAX_SAMPLE = 1024
MIN_SAMPLE = 20
HASH_SPACE = 2**32

_WORD = re.compile(r"\w+", re.UNICODE)


def shingle_sample(text: str) -> set[int]:
    """The hashes of the text's 5-word shingles (a text shorter than 5 words: none)."""
    words = [w.lower() for w in _WORD.findall(text)]
    sample: set[int] = set()
    for i in range(len(words) - SHINGLE_WORDS + 1):
        shingle = " ".join(words[i:i + SHINGLE_WORDS]).encode("utf-8")
        sample.add(int.from_bytes(hashlib.blake2b(shingle, digest_size=4).digest(), "big"))
    return sample


@dataclass(frozen=True)
class Sketch:
    """A page's sample: every hash up to `limit` (all of them when `limit` is HASH_SPACE), sorted."""

    ordered: tuple[int, ...]
    limit: int = HASH_SPACE

    @classmethod
    def of_text(cls, text: str) -> Sketch:
        return cls(tuple(sorted(shingle_sample(text))))

    @classmethod
    def of_stored(cls, stored: Iterable[int]) -> Sketch:
        hashes = tuple(sorted(set(stored)))
        return cls(hashes, hashes[-1] if len(hashes) >= MAX_SAMPLE else HASH_SPACE)

    @cached_property
    def hashes(self) -> frozenset[int]:
        return frozenset(self.ordered)

    def stored(self) -> list[int]:
        """What a page record keeps: the MAX_SAMPLE smallest hashes, sorted."""
        return list(self.ordered[:MAX_SAMPLE])

    def count_upto(self, limit: int) -> int:
        """How many of the sample's hashes are at most `limit`."""
        return len(self.ordered) if limit >= HASH_SPACE else bisect.bisect_right(self.ordered, limit)

    @property
    def size(self) -> float:
        """Estimated number of distinct shingles of the text."""
        if self.limit >= HASH_SPACE:
            return float(len(self.ordered))
        return len(self.ordered) * HASH_SPACE / (self.limit + 1)

    def judgeable(self) -> bool:
        return len(self.ordered) >= MIN_SAMPLE


def share(inner: Sketch, outer: Sketch, common: int) -> float | None:
    """The share of `inner`'s text that `outer` holds, given how many hashes they have in common
    (`common`: any common hash is below both limits, since each sample holds none above its own);
    None when too little of `inner` is comparable to tell."""
    compared = inner.count_upto(min(inner.limit, outer.limit))
    if compared < MIN_SAMPLE:
        return None
    return common / compared


def containment(inner: Sketch, outer: Sketch) -> float | None:
    """Estimated share of `inner`'s text that `outer` holds; None when too little of `inner` is
    comparable to tell."""
    small, large = (inner.hashes, outer.hashes) if len(inner.ordered) <= len(outer.ordered) else (outer.hashes,
                                                                                                  inner.hashes)
    return share(inner, outer, sum(1 for h in small if h in large))
