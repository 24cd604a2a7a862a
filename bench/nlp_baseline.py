"""Today's method, frozen for bench/nlp.py's side-by-side: memlane/ingest/summarize.py as it was
before issue 23 (not used by memlane itself). Its original docstring follows.

A local, model-free `Summarizer` (spec §3.6/§3.7 without the LLM).

Extractive: the summary is the two or three most representative sentences of the text, scored by
how frequent their content words are in the whole document. Tags are the most frequent content
words and word pairs. It is deterministic, fast, and what the OpenAI summarizer falls back to.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from memlane.domain.models import ContentType
from memlane.ingest.chunking import find_code_units, sentence_spans
from memlane.ingest.languages import DISPLAY_NAMES
from memlane.ports import Summary

SUMMARY_MAX_CHARS = 400
FALLBACK_CHARS = 200
SUMMARY_SENTENCES = 3
MAX_TAGS = 5
NOTE_MAX_CHARS = 600  # shorter than this, a text is a note
ANALYSED_CHARS = 200_000  # enough to characterise a document; keeps huge inputs cheap


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
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

_KIND_WORDS = {
    "function": ("function", "functions"),
    "class": ("class", "classes"),
    "type": ("type", "types"),
    "module": ("module", "modules"),
}


class LocalSummarizer:
    """Extractive summary and heuristic metadata; implements the `Summarizer` port."""

    def summarize(self, title: str, text: str, content_type: ContentType, language: str | None) -> Summary:
        sample = text[:ANALYSED_CHARS]
        if content_type is ContentType.CODE:
            summary = summarize_code(sample, language)
        else:
            summary = summarize_prose(sample)
        if not summary:
            summary = _fallback_summary(title, sample, content_type)
        return Summary(summary=summary, metadata=self.metadata(title, sample, content_type, language))

    def metadata(
        self, title: str, text: str, content_type: ContentType, language: str | None
    ) -> dict[str, Any]:
        """tags, category and language (spec §3.7's fields that can be computed without a model)."""
        is_code = content_type is ContentType.CODE
        tags = extract_tags(title, text, code=is_code)
        if is_code and language and language not in tags:
            tags = [language, *tags][:MAX_TAGS]
        metadata: dict[str, Any] = {"tags": tags, "category": categorize(text, content_type)}
        # No language detector for prose (not worth a dependency): memlane's users write English.
        if language or not is_code:
            metadata["language"] = language or "en"
        return metadata


# --------------------------------------------------------------------------- prose summary


def plain_prose(text: str) -> str:
    """Markdown reduced to its sentences: no code blocks, headings, tables, link targets or markup."""
    text = _FENCED_BLOCK.sub("\n", text)
    text = _HEADING_LINE.sub("\n", text)
    text = _TABLE_LINE.sub("\n", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _URL.sub("", text)
    text = _LIST_MARKER.sub("", text)
    return _EMPHASIS.sub("", text)


def content_words(text: str, *, extra_stopwords: frozenset[str] = frozenset()) -> list[str]:
    words = []
    for match in _WORD.finditer(text):
        word = match.group().lower().strip("'’-")
        if word.endswith(("'s", "’s")):
            word = word[:-2]
        if len(word) >= 3 and word not in STOPWORDS and word not in extra_stopwords:
            words.append(word)
    return words


def summarize_prose(text: str) -> str:
    """The 2–3 most representative sentences, in document order, within SUMMARY_MAX_CHARS."""
    prose = plain_prose(text)
    sentences = []
    for start, end in sentence_spans(prose):
        sentence = " ".join(prose[start:end].split())
        if len(sentence) >= 20 and len(sentence.split()) >= 4:
            sentences.append(sentence)
    if not sentences:
        return ""
    frequencies = Counter(content_words(prose))
    scored = []
    seen: set[frozenset[str]] = set()
    for index, sentence in enumerate(sentences):
        words = frozenset(content_words(sentence))
        if not words or words in seen:
            continue  # a repeated sentence (boilerplate, a refrain) is said once
        seen.add(words)
        weight = sum(frequencies[w] for w in words) / math.sqrt(len(words))
        weight *= 1 + 0.3 / (1 + index)  # the opening of a text tends to say what it is about
        scored.append((weight, index))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    chosen: list[int] = []
    length = 0
    for _, index in scored:
        sentence_length = len(sentences[index]) + (1 if chosen else 0)
        if length + sentence_length <= SUMMARY_MAX_CHARS:
            chosen.append(index)
            length += sentence_length
        if len(chosen) == SUMMARY_SENTENCES:
            break
    if not chosen:  # even the best sentence is too long: shorten it
        return _shorten(sentences[scored[0][1]] if scored else sentences[0], SUMMARY_MAX_CHARS)
    return " ".join(sentences[i] for i in sorted(chosen))


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def _fallback_summary(title: str, text: str, content_type: ContentType) -> str:
    head = _shorten(plain_prose(text) if content_type is not ContentType.CODE else text, FALLBACK_CHARS)
    if head:
        return head
    if title.strip():
        return _shorten(title, FALLBACK_CHARS)
    return f"An empty {content_type.value} document."


# --------------------------------------------------------------------------- code summary

_DOCSTRING = re.compile(r"^\s*[rRuU]?(\"\"\"|''')\s*(.+?)\1", re.MULTILINE | re.DOTALL)
_COMMENT_LINE = re.compile(r"^\s*(?:#(?![!\[])|//+!?|/\*+!?|\*(?!/)|--|;+)\s*(?P<text>.*?)\s*(?:\*/)?\s*$")
_BORING_COMMENT = re.compile(
    r"copyright|licen[sc]e|spdx|eslint|noqa|pylint|type:|-\*-|@ts-|prettier|rubocop|nolint|^\s*$|^[-=*#/]+$",
    re.IGNORECASE,
)


def summarize_code(code: str, language: str | None) -> str:
    """'Python source defining functions a, b and class C.' plus the first doc sentence."""
    units = [unit for unit in find_code_units(code, language) if unit.top_level and unit.kind in _KIND_WORDS]
    names: dict[str, list[str]] = {}
    for unit in units:
        if unit.name not in names.setdefault(unit.kind, []):
            names[unit.kind].append(unit.name)
    label = f"{DISPLAY_NAMES.get(language or '', (language or '').capitalize())} source".strip()
    label = label[0].upper() + label[1:] if label != "source" else "Source code"
    parts = []
    for kind in ("function", "class", "type", "module"):
        found = names.get(kind)
        if not found:
            continue
        singular, plural = _KIND_WORDS[kind]
        shown = ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
        parts.append(f"{plural if len(found) > 1 else singular} {shown}")
    if parts:
        joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        summary = f"{label} defining {joined}."
    else:
        lines = sum(1 for line in code.splitlines() if line.strip())
        summary = f"{label} ({lines} lines)."
    doc = first_doc_sentence(code)
    if doc:
        summary = f"{summary} {doc}"
    return _shorten(summary, SUMMARY_MAX_CHARS)


def first_doc_sentence(code: str) -> str | None:
    """The first sentence of the first docstring or meaningful comment, whichever comes first."""
    docstring = _DOCSTRING.search(code, 0, 20_000)
    candidates: list[tuple[int, str]] = []
    if docstring:
        candidates.append((docstring.start(), docstring.group(2)))
    offset = 0
    for line in code[:20_000].splitlines(keepends=True):
        match = _COMMENT_LINE.match(line.rstrip("\n"))
        if match and not _BORING_COMMENT.search(match.group("text")):
            candidates.append((offset, match.group("text")))
            break
        offset += len(line)
    if not candidates:
        return None
    text = " ".join(min(candidates)[1].split())
    sentence_end = re.search(r"[.!?](?:\s|$)", text)
    sentence = text[: sentence_end.end()].strip() if sentence_end else text
    if not sentence:
        return None
    sentence = sentence[0].upper() + sentence[1:]
    if sentence[-1] not in ".!?":
        sentence += "."
    return _shorten(sentence, 200)


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
