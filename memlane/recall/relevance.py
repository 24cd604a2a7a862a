"""A result's relevance in [0, 1], from raw evidence, and the floor below which recall says nothing.

The spec's fused `score` (memlane.recall.fusion) orders results, but it cannot say whether the best
result is any good: its text share is BM25 divided by the batch maximum, so the best keyword match of
a nonsense query scores as much as the best match of a real one. Relevance is built only from
evidence that means the same whatever else the batch holds:

- the cosine similarity of the chunk to the query, rescaled per embedder from where the model puts
  unrelated text (`cosine_zero`: MiniLM's cosines of unrelated sentences sit around 0.0-0.25) to
  where it puts a close paraphrase (`cosine_one`); for a chunk of a code memory, on the embedder's
  code scale where it has one (`code`: a question in prose sits at lower cosines against the code
  that answers it than against a note that does);
- the chunk's unnormalised BM25 per query term (`bm25 / terms`), saturating: `1 − exp(−x / bm25_scale)`.
  Dividing by the query's terms rewards covering the query with rare words, not a long query. The BM25
  is the ranking's own, over the searched projects' statistics (N, df, avgdl), not the organization's:
  a project's relevance then does not move when another project saves (a person's 60 notes beside a
  documentation set of 7,700 long chunks scored 2.5 × the BM25 per word, mostly from N through idf, and
  half of their unanswerable questions turned strong: BENCHMARKS.md, "Recall that answers, third round");
- an exact match in the chunk's text (title and content) of a distinctive query term (an
  identifier, a code, a number, an acronym: a word with a digit, an inner capital, `_`, `-`, `.` or
  `/` between letters, or all capitals; not a year), or of every content word of the query:
  `exact_match` (so a keyword-only match, spec §13 "keyword-only match", passes the floor even in a
  project too small for BM25's idf to mean anything: there a word in every memory has an idf of 0).

Related memories (a whole document as the query) leave the exact part out: some word of a long
text is always in some memory.

- how far the chunk stands above what this store gives the query (`Background`): its cosine minus the
  median cosine of the vector leg's candidates (the store's k nearest chunks, most of them unrelated
  to any one question), rescaled from `elevation_zero` → 0 to `elevation_one` → 1. A clear winner is
  relevant even at a low absolute cosine (a person's paraphrase of their own note sits at 0.3-0.45,
  the rest of their notes near 0.1); a flat distribution of weak matches (nonsense, a question about
  something never saved) is not. The median is read only with at least MIN_BACKGROUND candidates: with
  fewer there is no "rest of the store", and a chunk stands above the best chunk of any *other*
  document instead (a stricter reference: the runner-up is never below the median), and only when its
  own cosine reaches `clear_cosine`, above the band where the model puts unrelated text (three memories
  and a nonsense query: the least unrelated one can stand 0.1-0.2 above the others). A person's first
  memories are a small store: "what medication does my pet take daily?" of a note about a cat's pill
  (cosine 0.55) and two unrelated ones (0.13, 0.09) is a clear answer, and now says so.
- a title that holds every content word of the query (`titled`): the memory's own name is what was
  asked ("checklist" of a memory titled Checklist, "wifi password" of "Home wifi password"); relevance
  is then at least `strong`. A title names one memory, where a tag files many (memlane.recall.pipeline
  `filed_under`: an exact match, not a strong one).

relevance = max(vector part, text part, exact part, elevation part): each is evidence on its own; none
is averaged away by the absence of another (a keyword-only match has no cosine to speak of). A chunk
that lacks a name the question gives (memlane.recall.names: "Aylin", "Spotify", "3PL") is then held at
`named_cap`, just below the strong threshold: close in meaning, possibly related, not the answer.

Two thresholds read it (memlane.recall.pipeline, memlane.recall.service): at or above `strong` a
result is a strong match; between `floor` and `strong` a weak one (returned, marked "weak": the
floor decides how sure an answer is, not whether a stored answer may be seen); below `floor` nothing.

Calibration (BENCHMARKS.md, "Relevance floor"): per embedder id, on LoCoMo's dev conversations asked
of their own project (answerable) and of another conversation's (unanswerable), plus seeded nonsense
queries (`python -m bench.calibrate_floor`). Embedders not measured here (OpenAI, Bedrock) get
conservative values: a lower floor, so they return more rather than less.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from memlane.domain.english import drop_possessives
from memlane.domain.requests import Match


@dataclass(frozen=True)
class CosineScale:
    """Where an embedder puts unrelated text (relevance 0) and a close match (relevance 1)."""

    zero: float
    one: float


@dataclass(frozen=True)
class Calibration:
    """How one embedder's evidence maps to relevance, and the floors that apply."""

    cosine_zero: float  # cosine of unrelated text: relevance 0 from the vector leg
    cosine_one: float  # cosine of a close paraphrase: relevance 1 from the vector leg
    bm25_scale: float  # BM25 per query term at which the text part reaches 1 − 1/e
    exact_match: float  # relevance of a chunk holding a distinctive query term verbatim
    floor: float  # recall, MCP recall and the context pack (memories): below it nothing is returned
    strong: float  # at or above it a memory is a strong match; between the floor and it, a weak one
    # /retrieve and the context pack's documentation. MiniLM's is 0, measured (BENCHMARKS.md,
    # "Documentation sets", the floor's curve): the 40 documentation questions keep their figures up to
    # 0.24, where 70 % of nonsense queries but only 15 % of questions from another domain get nothing
    # (a large documentation set holds most ordinary words, so BM25 evidence stays high), while a
    # documentation page answering a paraphrase can sit at a cosine of 0.26-0.37, below the nonsense
    # queries' best matches on the Python docs (90th percentile 0.34): both answers of
    # tests/integration/docsets/test_docsets_semantic.py fall below 0.24 (relevance 0.0 and 0.20).
    # `minRelevance` sets one per request.
    docs_floor: float
    related_floor: float  # related memories (a whole document is the query)
    calibrated: bool  # measured on this repository's data (False: a conservative guess)
    # Code chunks' vector part, when it differs from prose: a question in prose sits at lower cosines
    # against the code that answers it than against a note that does. None: the prose scale.
    code: CosineScale | None = None
    # The elevation part: a chunk's cosine above the median of the query's candidates, at relevance 0
    # and 1 (0 and 0: no elevation part).
    elevation_zero: float = 0.0
    elevation_one: float = 0.0
    # When nothing reaches the floor, the best match is still returned (weak) when its cosine stands at
    # least `clear_margin` above every other document's and reaches `clear_cosine` (above the band where
    # the model puts unrelated text: the best of a few unrelated memories for nonsense is no match): a
    # clear best match is never hidden (clear_margin 0: never).
    clear_margin: float = 0.0
    clear_cosine: float = 0.0

    @property
    def named_cap(self) -> float:
        """The most a chunk that lacks a name the question gives can be (memlane.recall.names): just
        below the strong threshold, so it is shown as a weak match, never as the answer; never below
        the floor, so the rule changes no result's place and hides nothing."""
        return max(self.floor, self.strong - NAMED_MARGIN)


# How far below the strong threshold a chunk lacking a name of the question is held (Calibration.named_cap).
NAMED_MARGIN = 0.01


# MiniLM (the embedded default, every variant): measured on every workload at once (BENCHMARKS.md, "Recall:
# the floor and the strong threshold"; `make eval-floor`: bench.recall_record, then bench.calibrate_relevance).
# The floor is the highest at which no workload answers more than 5 % of its answerable questions with
# nothing: 0.20 (the personal notes 3.7 % there, 6.2 % at 0.22, once relevance's BM25 became the searched
# project's, not the organization's: 5.0 % at 0.22 before, with the other workloads' words counted); the
# strong threshold the lowest (in steps of 0.05) at which
# questions the store cannot answer (LoCoMo asked of another conversation or of the notes, the notes' own
# unanswerable questions) get a strong result at most 25 % of the time and nonsense at most 1 %: 0.65.
# Code: a prose question meets the code that answers it ~0.1 lower than a note that does (the 10th/25th
# percentiles of the answers' cosines: 0.31/0.39 for code, 0.41/0.49 for conversation turns), so code's
# scale is prose's moved down by 0.15. Related memories: 0.5, where related recall@10 loses 0.005 (a
# whole memory as the query: cosines run higher than a question's).
MINILM = Calibration(cosine_zero=0.3, cosine_one=0.7, bm25_scale=5.0, exact_match=0.6,
                     floor=0.2, strong=0.65, docs_floor=0.0, related_floor=0.5, calibrated=True,
                     code=CosineScale(0.15, 0.55), elevation_zero=0.1, elevation_one=0.5, clear_margin=0.08,
                     clear_cosine=0.25)
# OpenAI text-embedding-3-* puts unrelated text lower than MiniLM (around 0.0-0.2) and paraphrases
# lower too (0.4-0.6); not measured here, so the floors are lower than MiniLM's (they return more).
OPENAI = Calibration(cosine_zero=0.15, cosine_one=0.55, bm25_scale=5.0, exact_match=0.6,
                     floor=0.18, strong=0.2, docs_floor=0.0, related_floor=0.35, calibrated=False)
# Bedrock (Titan Text Embeddings v2, Cohere embed): not measured here; conservative like OpenAI's.
BEDROCK = Calibration(cosine_zero=0.15, cosine_one=0.6, bm25_scale=5.0, exact_match=0.6,
                      floor=0.18, strong=0.2, docs_floor=0.0, related_floor=0.35, calibrated=False)
# Anything else (a test's fake embedder, a model not listed): relevance is reported but no floor
# applies, since nothing says where this model puts unrelated text.
UNKNOWN = Calibration(cosine_zero=0.1, cosine_one=0.7, bm25_scale=5.0, exact_match=0.6,
                      floor=0.0, strong=0.0, docs_floor=0.0, related_floor=0.0, calibrated=False)


@dataclass(frozen=True)
class Background:
    """What this store gives the query besides its answer: the cosines of the vector leg's
    candidates (its k nearest chunks in the searched scope), best first, and each candidate
    document's best cosine. Both hosts return them (SQLite's exact k-NN or ANN locally, OpenSearch's
    k-NN on AWS: memlane.ports.SearchIndex.search), so relevance reads the same everywhere; nothing is
    stored per store, and a recall pays a sort of at most 2k numbers."""

    cosines: tuple[float, ...]
    documents: tuple[tuple[str, float], ...] = ()  # (document id, its best candidate's cosine)

    @classmethod
    def of(cls, candidates: list[tuple[str, float]], k: int) -> Background:
        """From the vector leg's (document id, cosine) pairs."""
        best: dict[str, float] = {}
        for document_id, cosine in candidates:
            best[document_id] = max(cosine, best.get(document_id, cosine))
        return cls(tuple(sorted((c for _, c in candidates), reverse=True)[:k]), tuple(best.items()))

    def reference(self, document_id: str | None) -> float | None:
        """What a chunk of `document_id` must stand above: the median candidate, or, with fewer than
        MIN_BACKGROUND candidates, the best chunk of another document (None: no other document)."""
        if self.median is not None:
            return self.median
        others = [c for d, c in self.documents if d != document_id]
        return max(others) if others and document_id is not None else None

    @cached_property
    def median(self) -> float | None:
        """The typical candidate's cosine; None with fewer than MIN_BACKGROUND candidates (read once per
        recall, for every candidate)."""
        n = len(self.cosines)
        if n < MIN_BACKGROUND:
            return None
        mid = n // 2
        return self.cosines[mid] if n % 2 else (self.cosines[mid - 1] + self.cosines[mid]) / 2

    def as_json(self) -> list[float]:
        return [round(c, 5) for c in self.cosines]


# Candidates below which a store has no "rest" for a result to stand above: the median of a handful is
# noise (`memlane check`'s six memories: a nonsense query's best stood 0.2 above the median of six).
MIN_BACKGROUND = 10


def elevation_part(cosine: float, background: Background | None, c: Calibration,
                   document_id: str | None = None) -> float:
    """How far a chunk (of `document_id`) stands above what this store gives the query, in [0, 1]."""
    if background is None or c.elevation_one <= c.elevation_zero:
        return 0.0
    reference = background.reference(document_id)
    if reference is None or (background.median is None and cosine < c.clear_cosine):
        return 0.0
    return min(1.0, max(0.0, (cosine - reference - c.elevation_zero) / (c.elevation_one - c.elevation_zero)))


def match_of(relevance: float, strong: float) -> Match:
    """A result's `match`: strong at or above the strong threshold, else weak (what passed the floor)."""
    return "strong" if relevance >= strong - 1e-9 else "weak"


def calibration_for(embedder_id: str) -> Calibration:
    if embedder_id.startswith("local/all-MiniLM-L6-v2"):
        return MINILM
    if embedder_id.startswith("openai/"):
        return OPENAI
    if embedder_id.startswith("bedrock/"):
        return BEDROCK
    return UNKNOWN


_WORD = re.compile(r"[\w][\w.\-/]*[\w]|[\w]", re.UNICODE)
_TERM = re.compile(r"\w+", re.UNICODE)
_YEAR = re.compile(r"(19|20)\d\d")
# Too common to be evidence of anything (the text leg's tokenizer keeps them).
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "she", "he", "so", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your"]
)


def query_terms(query: str) -> int:
    """How many content words the query has (at least 1): what BM25 evidence is divided by."""
    return max(1, sum(1 for t in _TERM.findall(drop_possessives(query).lower()) if t not in STOPWORDS))


def distinctive_terms(query: str) -> list[str]:
    """Query words that are unlikely to appear by chance: identifiers, codes, numbers, acronyms."""
    out = []
    for word in _WORD.findall(query):
        if len(word) < 3:
            continue
        inner = word[1:]
        if _YEAR.fullmatch(word):
            continue  # a year names a time, not a thing: memories' titles and dates are full of them
        if word.isupper() and word.isalpha():
            out.append(word)  # an acronym: matched in capitals only ("ARM" is not "arm")
        elif (any(ch.isdigit() for ch in word) or any(ch in "_-./" for ch in word)
                or any(ch.isupper() for ch in inner)):
            out.append(word.lower())
    return list(dict.fromkeys(out))


def content_words(query: str) -> list[str]:
    """The query's words that are not stopwords, in order, once each."""
    return list(dict.fromkeys(t for t in _TERM.findall(drop_possessives(query).lower()) if t not in STOPWORDS))


@lru_cache(maxsize=1024)
def _term_pattern(term: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])" + re.escape(term) + r"(?:s|es)?(?![\w])")


def contains_term(text: str, term: str, lowered: str | None = None) -> bool:
    """`term` in `text` as a whole token, or with a plural ending (case-insensitive, except for a term
    in capitals: an acronym). `lowered`: `text.lower()`, when the caller already has it."""
    haystack = text if term.isupper() else (text.lower() if lowered is None else lowered)
    # the term itself must be there for the pattern to match: a substring test first rules out most
    # chunks without running the pattern
    return term in haystack and _term_pattern(term).search(haystack) is not None


def exact_match(text: str, distinctive: list[str], words: list[str]) -> bool:
    """A distinctive query term, or every content word of the query, in `text` (lowered once, not
    once per term: this runs for each text-leg candidate of every recall)."""
    lowered = text.lower()
    if any(contains_term(text, t, lowered) for t in distinctive):
        return True
    return bool(words) and all(contains_term(text, w, lowered) for w in words)


def vector_part(cosine: float, c: Calibration, code: bool = False) -> float:
    zero, one = (c.code.zero, c.code.one) if code and c.code is not None else (c.cosine_zero, c.cosine_one)
    return min(1.0, max(0.0, (cosine - zero) / (one - zero)))


def text_part(bm25: float, terms: int, c: Calibration) -> float:
    if bm25 <= 0:
        return 0.0
    return 1.0 - math.exp(-(bm25 / max(1, terms)) / c.bm25_scale)


def titled(title: str, words: list[str]) -> bool:
    """Whether a title holds every content word of the query (`words`: `content_words`)."""
    return bool(words) and bool(title) and all(contains_term(title, w) for w in words)


def relevance(cosine: float, bm25: float, terms: int, exact: bool, c: Calibration, *, code: bool = False,
              background: Background | None = None, document_id: str | None = None) -> float:
    return max(vector_part(cosine, c, code), text_part(bm25, terms, c), c.exact_match if exact else 0.0,
               elevation_part(cosine, background, c, document_id))
