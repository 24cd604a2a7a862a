"""The local `Summarizer` (spec §3.6/§3.7 without an LLM): what the embedded default uses, and
what the OpenAI summarizer falls back to.

Summary: extractive. Sentences (a short "Key: value" line counts as one) are scored by how
central their content words are to the document, by whether they state a fact a person looks a
note up for (a date, a time, a number, an amount, a name: memlane.ingest.facts), by the words they
share with the title, and by position; the best two or three within SUMMARY_MAX_CHARS are kept in
document order. A JSON document is summarised by its top-level keys and values instead.

Tags: keyphrases (memlane.ingest.keyphrases): candidate noun phrases scored statistically and,
with an embedder, re-ranked by MiniLM similarity. Entities: memlane.ingest.entities, their kinds
decided by MiniLM similarity to kind descriptions. Both use one batch of short texts per
document, so the embedder's extra work stays small (BENCHMARKS.md, ingestion overhead). Code keeps
the identifier-based tags.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any

import regex

from memlane.domain.models import ContentType
from memlane.ingest import entities as entity_finder
from memlane.ingest import keyphrases
from memlane.ingest.chunking import sentence_spans
from memlane.ingest.facts import has_fact, has_name, is_key_value
from memlane.ingest.summary_code import summarize_code
from memlane.ingest.summary_json import json_prose, summarize_json
from memlane.ingest.text import plain_text, shorten
from memlane.ports import Embedder, Summary

SUMMARY_MAX_CHARS = 400
FALLBACK_CHARS = 200
SUMMARY_SENTENCES = 3
MAX_TAGS = 5
NOTE_MAX_CHARS = 600  # shorter than this, a text is a note
ANALYSED_CHARS = 200_000  # enough to characterise a document; keeps huge inputs cheap
PHRASE_CACHE_ENTRIES = 4096  # phrase → vector (MiniLM: 384 floats)


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


STOPWORDS = _wordset(
    """a about above after again against all almost also although always am among an and another any
    anyone anything are around as at be became because been before being below between both but by can
    cannot could did do does doing done down during each either else enough etc even ever every few for
    from further get gets getting given go goes going got had has have having he her here hers herself
    him himself his how however i if in into is it its itself just least less let like likely made make
    makes many may me might mine more most much must my myself near need needs neither never new next no
    nor not now of off often on once one only onto or other others our ours ourselves out over own per
    perhaps put rather really said same say says see seen shall she should since so some something still
    such than that the their theirs them themselves then there therefore these they thing things this
    those though through thus to too toward under until up upon us use used uses using very via was way
    we well were what whatever when whenever where whether which while who whom whose why will with
    within without would yet you your yours yourself yourselves able across already anyway back become
    becomes best better come comes different done either first good great know last long lot lots might
    much new old part right second see since take takes three two want wants way ways without work
    works year years yes http https www com org html htm"""
)
# Words every program is full of; they say nothing about what this one does.
CODE_STOPWORDS = _wordset(
    """def class return import from self cls none true false null nil undefined function const let var
    func fn pub impl struct enum trait mod use public private protected static void int str string bool
    float double char long new this super if else elif for while do try catch except finally raise throw
    throws async await yield lambda pass break continue switch case default package interface extends
    implements type args kwargs err error ctx println printf print console log main value values result
    data item items obj object list dict map len range end begin then require module exports todo"""
)
_API_WORDS = _wordset(
    """api function functions method methods parameter parameters param params argument arguments returns
    return class module modules install installation configure configuration option options example
    examples usage endpoint endpoints reference syntax default defaults deprecated attribute attributes
    library package command commands flag flags cli sdk version"""
)

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_FENCED_BLOCK = re.compile(r"^ {0,3}(```|~~~).*?(?:^ {0,3}\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]+.*$", re.MULTILINE)
_TABLE_LINE = re.compile(r"^\s*\|.*$", re.MULTILINE)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"\b(?:https?://|www\.)\S+")
_EMPHASIS = re.compile(r"(\*\*|__|`)")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+", re.MULTILINE)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_CAMEL = regex.compile(r"(?<=[\p{Ll}0-9])(?=\p{Lu})")  # "straßeName" → "straße Name": letters of any script



class LocalSummarizer:
    """Extractive summary, keyphrase tags and entities; implements the `Summarizer` port.

    `embedder` (the one the stack already loaded) re-ranks the tags and decides entity kinds;
    without one (the OpenAI summarizer's fallback, tests) the statistical scores and patterns
    alone decide. An embedder that fails leaves the statistical result: a summary never fails a save.
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder
        self._kind_vectors: dict[str, list[float]] | None = None
        self._lock = threading.Lock()
        # Phrases and names recur across documents (tags do, by design): a vector computed once
        # is reused, so most documents embed only the few phrases that are new.
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()

    def summarize(self, title: str, text: str, content_type: ContentType, language: str | None) -> Summary:
        sample = text[:ANALYSED_CHARS]
        metadata = self.metadata(title, sample, content_type, language)
        if not needs_summary(sample, content_type):
            return Summary(summary="", metadata=metadata)  # the note is its own summary
        if content_type is ContentType.CODE:
            summary = summarize_code(sample, language, SUMMARY_MAX_CHARS)
        elif content_type is ContentType.JSON:
            summary = summarize_json(sample, SUMMARY_MAX_CHARS) or summarize_prose(sample, title)
        else:
            summary = summarize_list(sample) or summarize_prose(sample, title)
        if not summary:
            summary = _fallback_summary(title, sample, content_type)
        # Whatever the path, what is generated is plain text (a JSON value or a docstring may hold markup);
        # a list's lines stay lines.
        lines = (" ".join(line.split()) for line in plain_text(summary).split("\n"))
        return Summary(summary="\n".join(line for line in lines if line), metadata=metadata)

    def metadata(
        self, title: str, text: str, content_type: ContentType, language: str | None
    ) -> dict[str, Any]:
        """keyphrases, category, language and entities (spec §3.7's fields computed without an LLM;
        the spec's generated `tags` are `keyphrases` here: tags are what a person gives)."""
        is_code = content_type is ContentType.CODE
        metadata: dict[str, Any] = {}
        if is_code:
            tags = extract_tags(title, text, code=True)
            if language and language not in tags:
                tags = [language, *tags][:MAX_TAGS]
        else:
            source = json_prose(text) if content_type is ContentType.JSON else text
            headings = [h.strip().lstrip("#").strip() for h in _HEADING_LINE.findall(source[:50_000])[:6]]
            # Headings name the topics: they count with the title for the tags.
            topic = plain_text(". ".join([title, *headings]) if headings else title)
            tags, entities = self._tags_and_entities(topic, plain_prose(source))
            if entities:
                metadata["entities"] = [e.as_dict() for e in entities]
        metadata = {"keyphrases": tags, "category": categorize(text, content_type), **metadata}
        # No language detector for prose (not worth a dependency): memlane's users write English.
        if language or not is_code:
            metadata["language"] = language or "en"
        return metadata

    def _tags_and_entities(self, title: str, prose: str) -> tuple[list[str], list[entity_finder.Entity]]:
        found = keyphrases.candidates(title, prose, STOPWORDS)
        pool = found[: keyphrases.CANDIDATES_EMBEDDED]
        spans = entity_finder.find(prose)
        undecided = [f.text for f in spans if f.kind is None][: entity_finder.MAX_EMBEDDED]
        vectors: list[list[float]] | None = None
        kind_vectors = None
        if self.embedder is not None and (len(pool) > 2 or undecided):
            try:
                kind_vectors = self._kinds() if undecided else None
                # One batch of short texts: the candidate phrases and the entity spans not seen lately.
                vectors = self._embed([*(c.phrase for c in pool), *undecided])
            except Exception:  # noqa: BLE001 - the statistical result stands; a summary never fails a save
                vectors, kind_vectors = None, None
        if vectors is not None:
            phrase_vectors = vectors[: len(pool)] if len(pool) > 2 else None
            tags = keyphrases.rank(found, MAX_TAGS, vectors=phrase_vectors)
            entities = entity_finder.decide(spans, vectors[len(pool):], kind_vectors)
        else:
            tags = keyphrases.rank(found, MAX_TAGS)
            entities = entity_finder.decide(spans, None, None)
        return tags, entities

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        assert self.embedder is not None
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        fresh = self.embedder.embed_documents(missing) if missing else []
        with self._lock:
            self._vectors.update(zip(missing, fresh, strict=True))
            out = []
            for text in texts:
                self._vectors.move_to_end(text)
                out.append(self._vectors[text])
            while len(self._vectors) > PHRASE_CACHE_ENTRIES:
                self._vectors.popitem(last=False)
        return out

    def _kinds(self) -> dict[str, list[float]]:
        with self._lock:
            if self._kind_vectors is None:
                assert self.embedder is not None
                self._kind_vectors = entity_finder.kind_prototypes(self.embedder)
            return self._kind_vectors


# --------------------------------------------------------------------------- prose summary


def needs_summary(text: str, content_type: ContentType) -> bool:
    """Whether a summary would say less than the text: a note no longer than a summary (its prose
    within SUMMARY_MAX_CHARS) gets none, so its page does not show it twice. Code and JSON always
    get one: theirs describes the structure, it does not repeat the text."""
    if content_type in (ContentType.CODE, ContentType.JSON):
        return True
    return len(" ".join(plain_prose(text, keep_lists=True).split())) > SUMMARY_MAX_CHARS


def plain_prose(text: str, *, keep_lists: bool = False) -> str:
    """Markdown reduced to its sentences: no code blocks, headings, tables, link targets or markup
    (HTML tags, scripts and character references included: memlane.ingest.text.plain_text);
    `keep_lists` keeps list markers ("1.", "-") at the start of their lines."""
    text = plain_text(_FENCED_BLOCK.sub("\n", text))
    text = _HEADING_LINE.sub("\n", text)
    text = _TABLE_LINE.sub("\n", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _URL.sub("", text)
    if not keep_lists:
        text = _LIST_MARKER.sub("", text)
    return _EMPHASIS.sub("", text)


_LIST_ITEM = re.compile(r"^\s*(\d{1,3}[.)]|[-*+•])\s+(\S.*)$")
LIST_INTRO_CHARS = 160


def summarize_list(text: str, limit: int = SUMMARY_MAX_CHARS) -> str:
    """A text that is mostly a list (a runbook's steps, a checklist) summarised as its list: the line
    that introduces it, then its items in order, one a line with their own numbers or bullets, as many
    as fit, then how many more. "" when the text is not mostly a list."""
    lines = [line.strip() for line in plain_prose(text, keep_lists=True).split("\n") if line.strip()]
    items = [m for m in (_LIST_ITEM.match(line) for line in lines) if m]
    if len(items) < 3 or 2 * len(items) < len(lines):
        return ""
    intro = next((line for line in lines if not _LIST_ITEM.match(line)), "")
    out = [shorten(intro, LIST_INTRO_CHARS)] if intro else []
    for shown, item in enumerate(items):
        line = f"{'•' if item.group(1) in '-*+•' else item.group(1)} {shorten(item.group(2), 120)}"
        more = f"… and {len(items) - shown} more"
        if sum(len(x) + 1 for x in out) + len(line) + len(more) + 2 > limit:
            out.append(more)
            break
        out.append(line)
    return "\n".join(out)


def content_words(text: str, *, extra_stopwords: frozenset[str] = frozenset()) -> list[str]:
    words = []
    for match in _WORD.finditer(text):
        word = match.group().lower().strip("'’-")
        if word.endswith(("'s", "’s")):
            word = word[:-2]
        if len(word) >= 3 and word not in STOPWORDS and word not in extra_stopwords:
            words.append(word)
    return words


def summary_sentences(text: str) -> list[str]:
    """The sentences of prose, a short line that stands on its own ("Notice period: three
    months", "Expires 14 March 2027") counting as one even without a full stop."""
    units: list[str] = []
    lines = text.split("\n")
    buffer: list[str] = []

    def flush() -> None:
        if buffer:
            block = " ".join(buffer)
            units.extend(" ".join(block[a:b].split()) for a, b in sentence_spans(block))
            buffer.clear()

    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        standalone = (is_key_value(stripped) and len(stripped) <= 160) or (
            len(stripped) <= 80 and not stripped.endswith((",", "-")) and (not following or following[0].isupper()
                                                                          or is_key_value(following))
            and not buffer)
        if standalone:
            flush()
            units.append(" ".join(stripped.split()))
        else:
            buffer.append(stripped)
            if stripped.endswith((".", "!", "?")) and (not following or following[0].isupper()):
                flush()
    flush()
    return units


def summarize_prose(text: str, title: str = "") -> str:
    """The 2–3 sentences that best state the point and its facts, in document order, within
    SUMMARY_MAX_CHARS."""
    prose = plain_prose(text)
    sentences = [s for s in summary_sentences(prose) if _worth_summarizing(s)]
    if not sentences:
        return ""
    scored = _scored(sentences, prose, title)
    chosen = _chosen(sentences, scored)
    if not chosen:  # even the best sentence is too long: shorten it
        return shorten(sentences[scored[0][1]] if scored else sentences[0], SUMMARY_MAX_CHARS)
    return " ".join(_sentence(sentences[i]) for i in sorted(chosen))


def _worth_summarizing(sentence: str) -> bool:
    """A sentence of some length, or a short one that states a fact (a date, an amount)."""
    word_count = len(sentence.split())
    return (len(sentence) >= 20 and word_count >= 4) or (word_count >= 2 and len(sentence) >= 8 and has_fact(sentence))


def _scored(sentences: list[str], prose: str, title: str) -> list[tuple[float, int]]:
    """(weight, index) of each sentence said once, best first: its words' frequency in the text,
    raised for facts, key-value lines, names, the title's words and an early place."""
    frequencies = Counter(content_words(prose))
    title_words = set(content_words(title))
    scored = []
    seen: set[frozenset[str]] = set()
    for index, sentence in enumerate(sentences):
        words = frozenset(content_words(sentence))
        if not words or words in seen:
            continue  # a repeated sentence (boilerplate, a refrain) is said once
        seen.add(words)
        weight = sum(frequencies[w] for w in words) / math.sqrt(len(words))
        weight /= max(frequencies.most_common(1)[0][1], 1) ** 0.5  # comparable across documents
        weight *= _bonus(sentence, words, title_words) * (1 + 0.5 / (1 + index))  # an opening says what it is about
        scored.append((weight, index))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return scored


def _bonus(sentence: str, words: frozenset[str], title_words: set[str]) -> float:
    bonus = 1.0
    if has_fact(sentence):
        bonus += 0.8  # the date, the amount, the deadline: what the note is looked up for
    if is_key_value(sentence):
        bonus += 0.3
    if has_name(sentence):
        bonus += 0.2
    if title_words & words:
        bonus += 0.5 * len(title_words & words) / len(title_words)
    return bonus


def _chosen(sentences: list[str], scored: list[tuple[float, int]]) -> list[int]:
    """The best sentences that fit SUMMARY_MAX_CHARS, until SUMMARY_SENTENCES are taken."""
    chosen: list[int] = []
    length = 0
    taken = 0.0
    for _, index in scored:
        sentence = sentences[index]
        sentence_length = len(sentence) + (1 if chosen else 0)
        if length + sentence_length <= SUMMARY_MAX_CHARS:
            chosen.append(index)
            length += sentence_length
            # A short "Key: value" line ("Notice period: three months") is half a sentence.
            taken += 0.5 if is_key_value(sentence) and len(sentence) <= 60 else 1.0
        if taken >= SUMMARY_SENTENCES:
            break
    return chosen


def _sentence(text: str) -> str:
    """A unit as it reads inside a summary: a line without a full stop gets one."""
    return text if text.endswith((".", "!", "?", "…", ":")) else text + "."


def _fallback_summary(title: str, text: str, content_type: ContentType) -> str:
    head = shorten(plain_prose(text) if content_type is not ContentType.CODE else text, FALLBACK_CHARS)
    if head:
        return head
    if title.strip():
        return shorten(title, FALLBACK_CHARS)
    return f"An empty {content_type.value} document."


# --------------------------------------------------------------------------- metadata


def extract_tags(title: str, text: str, *, code: bool = False, limit: int = MAX_TAGS) -> list[str]:
    """3–5 lowercase keyword tags: frequent content words and word pairs, longer words weighing more."""
    source = text if code else plain_prose(text)
    if code:  # identifiers carry the vocabulary of code: parse_config → parse config
        source = _CAMEL.sub(" ", source).replace("_", " ")
    extra = CODE_STOPWORDS if code else frozenset()
    title_words = content_words(title, extra_stopwords=extra)
    counts: Counter[str] = Counter(content_words(source, extra_stopwords=extra))
    for word in title_words:
        counts[word] += 2  # the title names the topic
    scores: dict[str, float] = {word: count * _length_weight(word) for word, count in counts.items()}
    if not code:
        for phrase, count in _word_pairs(source).items():
            if count >= 2:  # a pair seen once is a coincidence, not a term
                first, second = phrase.split()
                scores[phrase] = count * 1.3 * (_length_weight(first) + _length_weight(second)) / 2
    ranked = sorted(scores, key=lambda tag: (-scores[tag], tag))
    tags: list[str] = []
    chosen_words: set[str] = set()
    for tag in ranked:
        words = tag.split()
        if any(word in chosen_words for word in words):
            continue  # "sourdough" and "sourdough starter" say the same thing twice
        tags.append(tag)
        chosen_words.update(words)
        if len(tags) == limit:
            break
    return tags


def _length_weight(word: str) -> float:
    return 1.0 + min(len(word), 12) / 6


def _word_pairs(text: str) -> Counter[str]:
    """Adjacent content words, counted only when nothing (no stopword, no punctuation) separates them."""
    pairs: Counter[str] = Counter()
    for sentence in re.split(r"[.!?;:,()\[\]\n]+", text):
        previous: str | None = None
        for match in _WORD.finditer(sentence):
            word = match.group().lower().strip("'’-")
            if len(word) >= 3 and word not in STOPWORDS:
                if previous:
                    pairs[f"{previous} {word}"] += 1
                previous = word
            else:
                previous = None
    return pairs


def categorize(text: str, content_type: ContentType) -> str:
    """'code', 'documentation', 'note' or 'article', from the shape of the text."""
    if content_type is ContentType.CODE:
        return "code"
    headings = len(_HEADING_LINE.findall(text))
    fences = len(_FENCED_BLOCK.findall(text))
    inline_code = len(_INLINE_CODE.findall(text))
    words = [match.group().lower() for match in _WORD.finditer(text)]
    api_ratio = sum(1 for word in words if word in _API_WORDS) / max(len(words), 1)
    if (
        fences >= 2
        or (fences >= 1 and headings >= 1)
        or (headings >= 3 and (api_ratio >= 0.01 or inline_code >= 3))
        or (len(words) >= 50 and api_ratio >= 0.03)
    ):
        return "documentation"
    if len(text) < NOTE_MAX_CHARS or content_type in (ContentType.NOTE, ContentType.TWEET):
        return "note"
    return "article"
