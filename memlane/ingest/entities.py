"""Named entities (people, places, organizations, tools) found offline, for the memory graph.

No maintained PyPI package ships an entity model that loads offline within memlane's install (spaCy's
models are not on the package index), so this is a documented method rather than a trained tagger:

1. Spans: runs of capitalised words of any script ("Bürgeramt Friedrichshain", "Şule Yıldız",
   "Fritz!Box" whole), joined by "of", "de", "van", "&", ...; a house number after a street stays
   with it. Weekdays, months (and their plurals), units ("GHz"), link schemes ("javascript:"),
   pronouns and family words are never part of a name and split a run; a possessive's "'s" is
   dropped ("Aylin's" → Aylin). Title-case lines (headings) are skipped; well-known tools are also
   found in lower case when unambiguous ("kubernetes", not "go").
2. A word that only opens a sentence or a line is dropped unless something says it is a name: it
   is a well-known name, it also appears capitalised mid-sentence, or it has a name's shape
   ("WireGuard", "1Password", "Weserstraße"). An unknown word in capitals ("VPN", "ETF") is not
   taken: acronyms name things and formats as often as organizations.
3. The kind, by the first rule that applies: a title before it ("Dr.", "Frau", "Señora" → person);
   a well-known tool, organization or place (memlane.ingest.entity_words); a word that ends or opens
   names of one kind ("Acme Inc", "Hotel Rathaus", "Kleintierzentrum" → organization; "Baker
   Street", "Rua dos Remédios", "Weserstraße 58" → place); a known first name (person).
4. Otherwise MiniLM decides: the closest of four kind prototypes (the mean vector of a short
   description and ten example names of that kind; one batch of short texts per document, the
   prototypes once per embedder), nudged by the words around it ("in", "at" → place; "with",
   "told", a role like "therapist", a possessive → person; "via", "through", "app" → tool).
   Without an embedder, that cue or the span's shape decides.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import regex

from memlane.ingest import entity_words as words
from memlane.ingest.facts import is_key_value

KINDS = ("person", "place", "organization", "tool")
MAX_ENTITIES = 12
MAX_EMBEDDED = 5
CUE_BONUS = 0.1

# Each kind is the mean of its description's and its examples' vectors (a prototype): on names
# alone, MiniLM tells kinds apart better by their likeness to examples than to a description.
KIND_EXAMPLES = {
    "person": ["Maria Garcia", "John Smith", "Aiko Tanaka", "Olivia", "Mohammed Ali", "Dr. Jones", "Grandma",
               "Pierre Dubois", "Emily", "Raj Patel"],
    "place": ["Paris", "Lake Como", "Kyoto", "Nairobi", "Bavaria", "Mount Fuji", "Reykjavik", "Chiang Mai",
              "Patagonia", "Sevilla"],
    "organization": ["Acme Corporation", "Deutsche Bank", "Oxford University", "Harbor Logistics", "Smith & Sons",
                     "Red Cross", "City Council", "Bluewave Consulting", "Allianz Insurance", "Nordic Airlines"],
    "tool": ["PostgreSQL", "Kubernetes", "NumPy", "Photoshop", "VS Code", "pytest", "React", "Jenkins", "Redis",
             "Webpack"],
}
KIND_DESCRIPTIONS = {
    "person": "a person's name, a first name or a full name of a man or a woman",
    "place": "a place: a city, a country, a region, a street or a landmark",
    "organization": "an organization: a company, a business, an agency, a school or an institution",
    "tool": "a software tool, a programming language, an app, a framework or a database",
}

# A word: letters of any script (with the marks of decomposed ones), digits, and inner apostrophes,
# hyphens, "!" and "&" ("Karl-Marx-Straße", "Fritz!Box", "1&1"); not the middle of an e-mail
# address, a path or a URL.
_WORD = regex.compile(r"(?<![\p{L}\p{M}\p{N}_@/.!&-])[\p{L}\p{N}][\p{L}\p{M}\p{N}]*+(?:['’!&-][\p{L}\p{N}][\p{L}\p{M}\p{N}]*+)*+"
                       r"(?![_@])")
_HANDLE = regex.compile(r"(?<![\w@.])@(\p{L}[\p{L}\p{N}_]{1,30})\b")
_HOUSE_NUMBER = regex.compile(r"\s+\d{1,4}(?:\s?[a-zA-Z])?(?:\s?[–-]\s?\d{1,4})?\b")
_ACRONYM = regex.compile(r"^\p{Lu}{2,}s?$")
_CONNECTORS = frozenset(["of", "de", "del", "della", "van", "von", "da", "di", "du", "la", "le", "der", "den", "dos", "das", "do", "am", "an", "&", "y", "e"])
_SENTENCE_START = regex.compile(r"(?:^|[.!?:;•]\s+['\"‘“(]?|\n\s*(?:[-*+•>#|]+\s*|\d+[.)]\s*)?|^\s*(?:[-*+•>#|]+\s*|\d+[.)]\s*))$")
_PLACE_CUE = regex.compile(r"\b(?:in|at|to|near|visit(?:ed|ing)?|via|around|across|outside)\s+(?:the\s+)?$",
                           regex.IGNORECASE)
_PERSON_CUE = regex.compile(
    r"\b(?:with|met|told|asked|ask|tell|called|emailed|thanks|thank|and|by|dear|hi|hello|cc|for)\s+$"
    rf"|\b(?:{'|'.join(words.PERSON_ROLES)})\s+$", regex.IGNORECASE)
_TOOL_CUE = regex.compile(r"\b(?:via|through|using|into|in the|on the)\s+$", regex.IGNORECASE)
_TOOL_AFTER = regex.compile(r"^\s+(?:app|portal|account|login|dashboard|dashboards|workspace|plugin)\b",
                            regex.IGNORECASE)


@dataclass(frozen=True)
class Entity:
    text: str
    kind: str

    def as_dict(self) -> dict[str, str]:
        return {"text": self.text, "kind": self.kind}


@dataclass
class _Found:
    text: str
    kind: str | None  # None: to be decided by the embedder (or the fallback)
    count: int
    first: int
    cue: str | None
    # The kinds the embedder may choose from: a word with inner capitals ("HanseMerkur", "WireGuard")
    # is a product or a company, never a person or a place.
    kinds: tuple[str, ...] = KINDS


@dataclass(frozen=True)
class _Span:
    """Capitalised words in a row, as they stand in the text."""

    words: tuple[str, ...]
    start: int
    end: int
    sentence_start: bool


def find(text: str, limit: int = MAX_ENTITIES) -> list[_Found]:
    """Entity candidates, most mentioned first (kind None where no rule decided it)."""
    found: dict[str, _Found] = {}
    mid_sentence = _mid_sentence_capitalised(text)
    for name, kind, at, end in _candidates(text, mid_sentence):
        _add(found, text, name, kind, at, end)
    _merge_first_names(found)
    ranked = sorted(found.values(), key=lambda f: (-f.count, f.first))
    return ranked[:limit]


def _candidates(text: str, mid_sentence: set[str]) -> Iterator[tuple[str, str | None, int, int]]:
    for match in _HANDLE.finditer(text):
        yield "@" + match.group(1), "person", match.start(), match.end()
    for line_start, line in _lines(text):
        if _title_case(line) and not is_key_value(line):
            continue
        for span in _spans(line, line_start, text):
            named = _name_of(span, mid_sentence)
            if named is not None:
                yield named[0], named[1], span.start, span.end
        yield from _lower_case_tools(line, line_start)


def _add(found: dict[str, _Found], text: str, name: str, kind: str | None, at: int, end: int) -> None:
    key = name.lower()
    if key in found:
        found[key].count += 1
        found[key].kind = found[key].kind or kind
        return
    kinds = ("organization", "tool") if _inner_capital(name) else KINDS
    found[key] = _Found(name, kind, 1, at, _cue(text, at, end), kinds)


def _cue(text: str, start: int, end: int) -> str | None:
    before, after = text[max(0, start - 24):start], text[end:end + 16]
    if after[:2] in ("'s", "’s") or _PERSON_CUE.search(before):
        return "person"
    if _TOOL_AFTER.match(after) or _TOOL_CUE.search(before):
        return "tool"
    return "place" if _PLACE_CUE.search(before) else None


# --------------------------------------------------------------------------- spans


def _spans(line: str, offset: int, text: str) -> Iterator[_Span]:
    """Runs of capitalised words (connectors inside), split at words that are never a name."""
    run: list[tuple[str, int, int]] = []
    for match in _WORD.finditer(line):
        word = match.group()
        gap = line[run[-1][2]:match.start()] if run else ""
        joined = bool(run) and _joins(run[-1][0], gap)
        if _is_title(word):  # "Dr.", "Frau", "Uncle": a title opens a name, never continues one
            yield from _close(run, line, offset, text)
            run = [(word, match.start(), match.end())]
            continue
        if joined and gap == " & ":  # "Novak & Partners", "Brandt & Söhne GmbH"
            run.append(("&", match.start() - 2, match.start() - 1))
        if _may_name(word, line, match.end()) and (joined or not run):
            run.append((word, match.start(), match.end()))
            continue
        if joined and word in _CONNECTORS and len(run) < 6:
            run.append((word, match.start(), match.end()))
            continue
        yield from _close(run, line, offset, text)
        run = [(word, match.start(), match.end())] if _may_name(word, line, match.end()) else []
    yield from _close(run, line, offset, text)


def _joins(previous: str, gap: str) -> bool:
    """Whether two words with this between them are one name: a space, " & ", or the full stop of a
    title ("Dr. Okafor")."""
    return gap in (" ", " & ") or (gap == ". " and previous.lower() in words.TITLES)


def _is_title(word: str) -> bool:
    return word[:1].isupper() and word.lower() in words.TITLES


def _may_name(word: str, line: str, end: int) -> bool:
    """A capitalised word that can be part of a name: not a weekday, unit, ... nor a link's scheme."""
    if not _is_capitalised(word) or _is_scheme(line, end):
        return False
    plain = _without_possessive(word)
    if _known(plain) or plain.lower() in words.ORG_PREFIXES:
        return True
    # Codes and acronyms ("2271349X", "DCs", "VPN") name a thing or a format as often as an organization.
    return plain.lower() not in words.NEVER and not any(c.isdigit() for c in plain) and not _ACRONYM.match(plain)


def _is_scheme(line: str, end: int) -> bool:
    """"javascript:alert(1)", "mailto:x": a word glued to what follows its colon."""
    return line[end:end + 1] == ":" and line[end + 1:end + 2] not in ("", " ", "\t")


def _close(run: list[tuple[str, int, int]], line: str, offset: int, text: str) -> Iterator[_Span]:
    while run and run[-1][0] in _CONNECTORS:
        run = run[:-1]
    if not run:
        return
    joint = _person_joint(run)
    if joint:  # "Dr. Ana Ruiz of Acme Properties Ltd": a person, then an organization
        yield from _close(run[:joint], line, offset, text)
        yield from _close(run[joint + 1:], line, offset, text)
        return
    start, end = offset + run[0][1], offset + run[-1][2]
    number = _HOUSE_NUMBER.match(line, run[-1][2])
    names = [w for w, _, _ in run]
    if number and _is_place_name(names):
        end = offset + number.end()
        names = [*names, number.group().strip()]
    opener = bool(_SENTENCE_START.search(text[max(0, start - 12):start]))
    yield _Span(tuple(names), start, end, opener)


def _person_joint(run: list[tuple[str, int, int]]) -> int:
    """Where "of" or "&" joins a person's name to another name (0: it does not)."""
    first = run[0][0].rstrip(".").lower()
    if first not in words.TITLES and first not in words.FIRST_NAMES:
        return 0
    return next((i for i, (w, _, _) in enumerate(run) if i > 0 and w in ("of", "&", "from", "at")), 0)


def _is_capitalised(word: str) -> bool:
    return word[0].isupper() or (word[0].isdigit() and any(c.isupper() for c in word))


# --------------------------------------------------------------------------- names and kinds


def _name_of(span: _Span, mid_sentence: set[str]) -> tuple[str, str | None] | None:
    """The name a span holds and its kind (None: undecided), or None when it holds no name."""
    names = list(span.words)
    names[-1] = _without_possessive(names[-1])
    if names[0].rstrip(".").lower() in words.TITLES:
        rest = names[1:]
        return (" ".join(rest), "person") if rest and not _is_number(rest[-1]) else None
    if span.sentence_start and not _opens_a_name(names, mid_sentence):
        names = names[1:]
        if not names or names[0] in _CONNECTORS:
            return None
    name = " ".join(names)
    if len(names) == 1 and len(name) <= 3 and not (_known(name) or name.lower() in words.FIRST_NAMES):
        return None  # "Gen", "Nk": too short to tell from an abbreviation
    return name, _kind_of(names)


def _opens_a_name(names: list[str], mid_sentence: set[str]) -> bool:
    """Whether a span's first word, at the start of a sentence, belongs to the name."""
    first = names[0]
    if _known(first) or first.lower() in words.FIRST_NAMES or first in mid_sentence or _shaped(first):
        return True
    if len(names) == 1:
        return False
    # "Lent Ole", "Visited Coimbra": the rest is a name on its own; "Ökostrom Nord": the whole is.
    rest = names[1:]
    return not (_known(" ".join(rest)) or rest[0].lower() in words.FIRST_NAMES or rest[0] in mid_sentence)


def _kind_of(names: list[str]) -> str | None:
    name = " ".join(names)
    return _known(name) or _marked_kind(names) or ("person" if _first_name(names) else None)


def _known(name: str) -> str | None:
    key = name.lower()
    if key in words.KNOWN_TOOLS or key in words.KNOWN_TOOL_PHRASES:
        return "tool"
    if key in words.KNOWN_ORGS or key in words.KNOWN_ORG_PHRASES:
        return "organization"
    if key in words.KNOWN_PLACES or key in words.KNOWN_PLACE_PHRASES:
        return "place"
    return None


def _marked_kind(names: list[str]) -> str | None:
    """The kind the words at either end of a name mark."""
    first, last = names[0].lower(), names[-1].lower()
    several = len(names) > 1
    if several and (last in words.ORG_SUFFIXES or first in words.ORG_PREFIXES or _known(last) == "organization"):
        return "organization"
    if _is_place_name(names):
        return "place"
    if first.endswith(words.ORG_ENDINGS) and len(first) > 6:
        return "organization"
    return None


def _is_place_name(names: list[str]) -> bool:
    if len(names) > 1 and _is_number(names[-1]):
        return True  # the house number _close keeps only after a street
    first, last = names[0].lower(), names[-1].lower()
    several = len(names) > 1
    return (several and (last in words.PLACE_SUFFIXES or first in words.PLACE_PREFIXES)
            or (last.endswith(words.PLACE_ENDINGS) and len(last) > 6))


def _first_name(names: list[str]) -> bool:
    return names[0].lower() in words.FIRST_NAMES and len(names) <= 3


def _shaped(word: str) -> bool:
    """A name's shape that no ordinary word has: inner capitals, digits with letters, a street's ending."""
    return _inner_capital(word) or any(c.isdigit() for c in word) or word.lower().endswith(words.PLACE_ENDINGS)


def _inner_capital(name: str) -> bool:
    return " " not in name and any(c.isupper() for c in name[1:]) and not name.isupper()


def _is_number(word: str) -> bool:
    return word[:1].isdigit()


def _without_possessive(word: str) -> str:
    return word[:-2] if word.endswith(("'s", "’s")) and len(word) > 3 else word


def _lower_case_tools(line: str, offset: int) -> Iterator[tuple[str, str | None, int, int]]:
    """Well-known tools written in lower case, when the word is no ordinary one ("kubernetes", not "go")."""
    for match in _WORD.finditer(line):
        word = match.group()
        if word[0].isupper() or word.lower() not in words.KNOWN_TOOLS or _is_scheme(line, match.end()):
            continue
        known = words.KNOWN_TOOLS[word.lower()]
        if word == known or (len(word) >= 5 and word.lower() not in words.AMBIGUOUS_LOWER):
            yield known, "tool", offset + match.start(), offset + match.end()


def _merge_first_names(found: dict[str, _Found]) -> None:
    """"Caroline" after "Caroline Smith": the same person, counted with the full name."""
    for key, item in list(found.items()):
        if " " in key or key not in found:
            continue
        longer = [o for k, o in found.items() if k != key and key in k.split()]
        if len(longer) == 1 and (item.kind is None or item.kind == longer[0].kind):
            longer[0].count += item.count
            del found[key]


def _lines(text: str) -> list[tuple[int, str]]:
    out = []
    offset = 0
    for line in text.split("\n"):
        out.append((offset, line))
        offset += len(line) + 1
    return out


def _title_case(line: str) -> bool:
    """A heading written in title case ("Research Notes: Vector Databases") names no one."""
    found = regex.findall(r"\p{L}[\w'’-]*", line.lstrip("#>*-• "))
    if len(found) < 3:
        return False
    capitalised = sum(1 for w in found if w[0].isupper())
    return capitalised / len(found) >= 0.7 and not regex.search(r"[.!?]\s*$", line.strip())


def _mid_sentence_capitalised(text: str) -> set[str]:
    """Capitalised words after a lower-case word, a number or a comma: a name, not a sentence's opener."""
    return {m.group(1) for m in _MID_SENTENCE.finditer(text)}


_MID_SENTENCE = regex.compile(
    r"(?<=(?<![\p{L}\p{M}])\p{Ll}[\p{L}\p{M}'’]*[,;]?[ \t]|[0-9,;)][ \t])(\p{Lu}[\p{Ll}\p{M}'’]+)")


def _normalise(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def decide(found: list[_Found], vectors: Sequence[Sequence[float]] | None,
           kind_vectors: dict[str, list[float]] | None) -> list[Entity]:
    """Kinds for the undecided candidates (the first len(vectors) of them, in order), by MiniLM
    similarity to the kind descriptions plus the cue word; without vectors, by cue and shape."""
    undecided = [f for f in found if f.kind is None]
    if vectors and kind_vectors:
        units = dict(kind_vectors)  # prototypes: means of unit vectors, kept unnormalised
        for item, vector in zip(undecided, vectors, strict=False):
            unit = _normalise(vector)
            scores = {k: sum(a * b for a, b in zip(unit, kv, strict=True)) for k, kv in units.items()
                      if k in item.kinds}
            if item.cue in scores:
                scores[item.cue] += CUE_BONUS
            item.kind = max(scores, key=lambda k: scores[k])
    for item in undecided:
        if item.kind is None:
            item.kind = item.cue or ("person" if len(item.text.split()) == 2 else "organization")
    return [Entity(f.text, f.kind or "organization") for f in found]


def extract_entities(text: str, embedder: object | None = None, kind_vectors: dict | None = None,
                     limit: int = MAX_ENTITIES) -> list[Entity]:
    """find + decide, embedding the undecided spans itself (tests and the bench; the summarizer
    batches them with the keyphrases instead)."""
    found = find(text, limit)
    undecided = [f.text for f in found if f.kind is None][:MAX_EMBEDDED]
    if embedder is not None and undecided and kind_vectors is None:
        kind_vectors = kind_prototypes(embedder)
    vectors = None
    if embedder is not None and undecided and kind_vectors:
        vectors = embedder.embed_documents(undecided)  # type: ignore[attr-defined]
    return decide(found, vectors, kind_vectors)


def kind_prototypes(embedder: object) -> dict[str, list[float]]:
    """kind → the mean of its description's and examples' unit vectors."""
    out: dict[str, list[float]] = {}
    for kind in KINDS:
        texts = [KIND_DESCRIPTIONS[kind], *KIND_EXAMPLES[kind]]
        vectors = [_normalise(v) for v in embedder.embed_documents(texts)]  # type: ignore[attr-defined]
        out[kind] = [sum(column) / len(vectors) for column in zip(*vectors, strict=True)]
    return out


def count_kinds(entities: Sequence[Entity]) -> Counter[str]:
    return Counter(e.kind for e in entities)
