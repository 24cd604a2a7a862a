"""Tags as keyphrases: candidate noun phrases, scored statistically, then (when an embedder is at
hand) re-ranked by how close each is to what the document is about in MiniLM's space.

Method (no part-of-speech tagger, no model download):
1. Candidates are runs of one to three content words inside a clause (no stopword, punctuation,
   number or filler word between them), whose last word is not a verb or adverb form (-ed, -ly)
   and that are not filler: weekdays, months, "example", "compared", "init", ...
2. A statistical score: occurrences × a length bonus (a two-word phrase says more than a word),
   × 3 when the title holds it, × a bonus for appearing early. A longer phrase takes the counts of
   the shorter ones it contains only once, so "vector databases" beats "databases".
3. The cheap path to semantics: only the best CANDIDATES_EMBEDDED candidates are embedded, in one
   batch of short texts (a few word pieces each), and a phrase's vector is reused across
   documents (LocalSummarizer keeps the recent ones), so a document mostly embeds only its new
   phrases. The document is represented by the candidates' vectors weighted by their statistical
   score (their centroid: no extra embedding of the document itself), and each candidate's final
   score mixes its cosine to that centroid with its statistical score: phrases central to what
   the others say rise, stray ones sink. A phrase too close to one already chosen (a shared word,
   or cosine ≥ 0.85) is skipped (diversity). With a title vector (optional) it joins the centroid.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import regex

CANDIDATES_EMBEDDED = 6
MAX_PHRASE_WORDS = 3
SEMANTIC_WEIGHT = 0.5
DUPLICATE_COSINE = 0.85

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that never make a tag on their own nor inside a phrase: a person files nothing under them.
FILLER = _words(
    """monday tuesday wednesday thursday friday saturday sunday january february march april june july
    august september october november december today tomorrow yesterday tonight morning evening afternoon
    night week weeks weekend month months day days hour hours minute minutes time times example examples
    e.g i.e etc compared compare init todo fixme note notes thanks please hello hi okay ok sure yeah
    stuff thing things something anything everything nothing someone everyone lot lots bit kind sort
    type types case cases way ways point points number numbers part parts place today's around maybe
    actually basically really pretty quite instead already also always usually often sometimes currently
    recently finally simply just still even ever never later soon early earlier whole total main
    another each every several various certain different same other such own following follows
    above below within without via per based using used use uses able available possible likely
    important new old good great big small large little high low long short full free true false
    null none yes no want need needs needed make makes made get gets got take takes took give gives
    gave keep keeps kept let lets went go goes come comes came look looks looked find finds found
    think thinks thought know knows knew said says say tell tells told seem seems seemed feel feels felt
    try tries tried start starts started stop stops stopped show shows showed ask asks asked
    call calls confirm run runs love loves due whichever end half three four five six seven eight nine ten
    eleven twelve twenty thirty hundred thousand million eur usd gbp chf jpy yen kg km cm mb gb txt json md pdf
    htm html csv doc docx file files name names"""
)
_VERBISH_ENDINGS = ("ed", "ly")
# A word of any script ("Bürgeramt", "Weserstraße", "Łódź"), with the marks of decomposed letters.
_TOKEN = regex.compile(r"\p{L}[\p{L}\p{M}\p{N}+#'’.-]*[\p{L}\p{M}\p{N}+#]|\p{L}")
_BREAK = re.compile(r"[.!?;:,()\[\]{}\"“”|/\n•]+|\s[-–—]\s")


@dataclass(frozen=True)
class Candidate:
    phrase: str
    score: float


def _is_content(word: str, stopwords: frozenset[str]) -> bool:
    return len(word) >= 3 and word not in stopwords and word not in FILLER and not word[0].isdigit()


def _clean(word: str) -> str:
    word = word.lower().strip("'’.-")
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    return word


def candidates(title: str, text: str, stopwords: frozenset[str], limit: int = 40) -> list[Candidate]:
    """Candidate phrases with their statistical score, best first."""
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    position = 0
    for clause in [*_BREAK.split(title), *_BREAK.split(text)]:
        run: list[str] = []
        for match in _TOKEN.finditer(clause):
            word = _clean(match.group())
            position += 1
            if _is_content(word, stopwords):
                run.append(word)
                continue
            _count_run(run, counts, first_seen, position)
            run = []
        _count_run(run, counts, first_seen, position)
    if not counts:
        return []
    title_words = {_clean(m.group()) for m in _TOKEN.finditer(title)}
    title_lower = " ".join(_clean(m.group()) for m in _TOKEN.finditer(title))
    total = max(position, 1)
    scored: dict[str, float] = {}
    for phrase, count in counts.items():
        words = phrase.split()
        if words[-1].endswith(_VERBISH_ENDINGS) or words[0].endswith("ly"):
            continue
        if phrase not in title_lower and (len(words) == 3 and count < 2 or len(words) == 2 and count < 2
                                          and len(counts) > 60):
            continue  # a three-word run seen once (a pair, in a long text) is a coincidence, not a term
        score = count * (1.0 + 0.6 * (len(words) - 1))
        if phrase in title_lower:
            score *= 3.0
        elif title_words & set(words):
            score *= 1.5
        score *= 1.0 + 0.5 * (1 - first_seen[phrase] / total)  # what is said early is what it is about
        scored[phrase] = score
    # A word that only ever appears inside a kept longer phrase adds nothing on its own.
    absorbed = {word for phrase in scored if " " in phrase for word in phrase.split()
                if word in scored and counts[word] <= counts[phrase]}
    for word in absorbed:
        scored[word] *= 0.5
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [Candidate(p, s) for p, s in ranked]


def _count_run(run: list[str], counts: Counter[str], first_seen: dict[str, int], position: int) -> None:
    for size in range(1, MAX_PHRASE_WORDS + 1):
        for start in range(0, len(run) - size + 1):
            phrase = " ".join(run[start : start + size])
            counts[phrase] += 1
            first_seen.setdefault(phrase, position)


def _normalise(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=False))


def rank(
    found: list[Candidate],
    limit: int,
    *,
    title_vector: Sequence[float] | None = None,
    vectors: Sequence[Sequence[float]] | None = None,
) -> list[str]:
    """The `limit` best phrases. With `vectors` (one per candidate in `found`, for the first
    len(vectors) of them) the semantic re-ranking of the module's docstring applies."""
    if not found:
        return []
    top = found[0].score
    if vectors:
        pool = found[: len(vectors)]
        unit = [_normalise(v) for v in vectors]
        centroid = [0.0] * len(unit[0])
        for candidate, vector in zip(pool, unit, strict=True):
            weight = candidate.score / top
            centroid = [c + weight * x for c, x in zip(centroid, vector, strict=True)]
        if title_vector is not None:
            centroid = [c + 2.0 * x for c, x in zip(centroid, _normalise(title_vector), strict=True)]
        centroid = _normalise(centroid)
        scores = [
            (1 - SEMANTIC_WEIGHT) * (c.score / top) + SEMANTIC_WEIGHT * cosine(v, centroid)
            for c, v in zip(pool, unit, strict=True)
        ]
        order = sorted(range(len(pool)), key=lambda i: -scores[i])
        return _select([pool[i].phrase for i in order], [scores[i] for i in order], limit,
                       lambda a, b: cosine(unit[order[a]], unit[order[b]]) >= DUPLICATE_COSINE)
    return _select([c.phrase for c in found], [c.score / top for c in found], limit, lambda a, b: False)


def _select(phrases: list[str], scores: list[float], limit: int, similar) -> list[str]:  # noqa: ANN001
    """Best first, no two saying the same thing; a phrase that contains a chosen single word
    ("passport renewal" after "passport") takes its place when it scores at least half as well."""
    chosen: list[int] = []
    for i, phrase in enumerate(phrases):
        clash = [j for j in chosen if _overlaps(phrase, phrases[j]) or similar(i, j)]
        if not clash:
            chosen.append(i)
        elif (len(clash) == 1 and " " not in phrases[clash[0]] and phrases[clash[0]] in phrase.split()
              and scores[i] >= 0.5 * scores[clash[0]]):
            chosen[chosen.index(clash[0])] = i
        if len(chosen) == limit:
            break
    return [phrases[i] for i in chosen]


def _overlaps(a: str, b: str) -> bool:
    """Whether two phrases share a word, near enough ("starter", "starters"; "renew", "renewal")."""
    wa = {w.rstrip("s")[:5] for w in a.split()}
    wb = {w.rstrip("s")[:5] for w in b.split()}
    return bool(wa & wb)
