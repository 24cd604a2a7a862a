"""`make bench-entities`: the offline entity extractor scored against a labelled set, precision and
recall per kind → BENCHMARKS.md (section `entities`).

Data: bench/data/entities_labelled.json: the 60 notes of shared/eval/personal-notes-dev.jsonl and
notes written for the set (conversation messages, mail, HTML, markdown; names in German, French,
Portuguese, Spanish, Polish and Turkish), each with the entities a person would accept as nodes of
the memory graph, by the kinds the API exposes (person, place, organization, tool).

Each note goes through what a save does (memlane.ingest.pipeline.prepare, then the local summarizer
with the MiniLM embedder, `--no-embedder` without it), and the entities it stores are compared with
the labels:
- a found entity matches a labelled one when their texts are equal ignoring case, surrounding
  punctuation and a possessive "'s", or the found text is one of the label's `alt` spellings;
- it is right when its kind is the label's kind or one of its `also` kinds; a found entity of the
  wrong kind counts against the precision of the kind it was given and the recall of the right one;
- a found entity that matches a label's `optional` span is left out of both counts; anything else
  found is an error of the kind it was given.

Precision of a kind = right entities given that kind / all entities given that kind (optional ones
left out); recall = labelled entities of the kind found with it / labelled entities of the kind.
`--baseline FILE` adds the figures of an earlier run (`--json FILE` writes one) beside today's. Two
more rows say where the gain comes from: today's extractor without the embedder (patterns, shapes and
cues alone), and today's rules with the word lists of before (bench/data/entity_lists_before.json:
the well-known names the lists gained since count for nothing there).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import machine, write_section
from memlane.domain.models import ContentType
from memlane.ingest import entity_words
from memlane.ingest.entities import KINDS
from memlane.ingest.pipeline import prepare
from memlane.ingest.summarize import LocalSummarizer

LABELLED = Path(__file__).parent / "data" / "entities_labelled.json"
LISTS_BEFORE = Path(__file__).parent / "data" / "entity_lists_before.json"
SECTION = "entities"


def normalise(text: str) -> str:
    text = " ".join(text.split()).strip(" .,;:!?\"'’()[]").casefold()
    for suffix in ("'s", "’s"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
    return text


def load_cases(path: Path = LABELLED) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["cases"])


def extract(case: dict[str, Any], summarizer: LocalSummarizer) -> list[dict[str, str]]:
    """The entities a save of this note stores (its metadata.entities)."""
    content_type = ContentType(case["content_type"]) if case.get("content_type") else None
    prepared = prepare(case["content"], content_type, case.get("title"), None)
    extracted = prepared.extracted
    summary = summarizer.summarize(prepared.title, extracted.text, extracted.content_type, extracted.language)
    return [e for e in summary.metadata.get("entities", []) if isinstance(e, dict)]


def score_case(case: dict[str, Any], found: list[dict[str, str]]) -> dict[str, Any]:
    """Counts per kind for one note: right, given (found with that kind), labelled; and the errors."""
    labels = []
    for label in case["entities"]:
        spellings = {normalise(label["text"]), *(normalise(a) for a in label.get("alt", []))}
        labels.append((spellings, {label["kind"], *label.get("also", [])}, label["kind"]))
    optional = {normalise(o) for o in case.get("optional", [])}
    right: Counter[str] = Counter()
    given: Counter[str] = Counter()
    labelled = Counter(kind for _, _, kind in labels)
    matched: set[int] = set()
    errors: list[str] = []
    for entity in found:
        text, kind = normalise(entity["text"]), entity["kind"]
        index = next((i for i, (spellings, _, _) in enumerate(labels) if text in spellings), None)
        if index is None and text in optional:
            continue
        given[kind] += 1
        if index is not None and kind in labels[index][1] and index not in matched:
            matched.add(index)
            right[labels[index][2]] += 1
            continue
        errors.append(f"{entity['text']} ({kind})")
    missed = [f"{case['entities'][i]['text']} ({kind})" for i, (_, _, kind) in enumerate(labels) if i not in matched]
    return {"right": right, "given": given, "labelled": labelled, "errors": errors, "missed": missed}


def evaluate(cases: list[dict[str, Any]], summarizer: LocalSummarizer) -> dict[str, Any]:
    right: Counter[str] = Counter()
    given: Counter[str] = Counter()
    labelled: Counter[str] = Counter()
    errors: dict[str, list[str]] = {}
    missed: dict[str, list[str]] = {}
    started = time.perf_counter()
    for case in cases:
        scored = score_case(case, extract(case, summarizer))
        right.update(scored["right"])
        given.update(scored["given"])
        labelled.update(scored["labelled"])
        if scored["errors"]:
            errors[case["id"]] = scored["errors"]
        if scored["missed"]:
            missed[case["id"]] = scored["missed"]
    per_kind = {kind: _figures(right[kind], given[kind], labelled[kind]) for kind in KINDS}
    per_kind["all"] = _figures(sum(right.values()), sum(given.values()), sum(labelled.values()))
    return {"kinds": per_kind, "errors": errors, "missed": missed, "notes": len(cases),
            "seconds": round(time.perf_counter() - started, 2)}


@contextmanager
def lists_before(path: Path = LISTS_BEFORE) -> Iterator[None]:
    """entity_words' well-known names as they were before (no multi-word names), for the duration."""
    before = json.loads(path.read_text())
    names = ("KNOWN_TOOLS", "KNOWN_ORGS", "KNOWN_PLACES", "FIRST_NAMES", "KNOWN_TOOL_PHRASES", "KNOWN_ORG_PHRASES",
             "KNOWN_PLACE_PHRASES")
    saved = {name: getattr(entity_words, name) for name in names}
    for name in ("KNOWN_TOOLS", "KNOWN_ORGS", "KNOWN_PLACES"):
        setattr(entity_words, name, {w.lower(): w for w in before[name]})
    entity_words.FIRST_NAMES = frozenset(before["FIRST_NAMES"])
    for name in ("KNOWN_TOOL_PHRASES", "KNOWN_ORG_PHRASES", "KNOWN_PLACE_PHRASES"):
        setattr(entity_words, name, {})
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(entity_words, name, value)


def _figures(right: int, given: int, labelled: int) -> dict[str, Any]:
    return {"right": right, "given": given, "labelled": labelled,
            "precision": round(right / given, 3) if given else None,
            "recall": round(right / labelled, 3) if labelled else None}


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def report(result: dict[str, Any], baseline: dict[str, Any] | None, command: str,
           variants: dict[str, dict[str, Any]] | None = None) -> str:
    kinds = [*KINDS, "all"]
    lines = [
        "## Entities: precision and recall per kind (labelled set)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {machine()}. Reproduce: `{command}`.",
        f"Data: bench/data/entities_labelled.json, {result['notes']} notes (the 60 of "
        "shared/eval/personal-notes-dev.jsonl and 27 written for the set: conversation messages, mail, HTML, "
        "markdown, names in six languages), "
        f"{sum(result['kinds'][k]['labelled'] for k in KINDS)} labelled entities. Each note goes through a save's "
        "extraction and the local summarizer with MiniLM; scoring rules in bench/entities.py.",
        "",
    ]
    if baseline:
        lines += ["| kind | labelled | precision before | recall before | precision after | recall after |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for kind in kinds:
            b, a = baseline["kinds"][kind], result["kinds"][kind]
            lines.append(f"| {kind} | {a['labelled']} | {_pct(b['precision'])} ({b['right']}/{b['given']}) | "
                         f"{_pct(b['recall'])} | {_pct(a['precision'])} ({a['right']}/{a['given']}) | "
                         f"{_pct(a['recall'])} |")
    else:
        lines += ["| kind | labelled | given | right | precision | recall |", "| --- | --- | --- | --- | --- | --- |"]
        for kind in kinds:
            a = result["kinds"][kind]
            lines.append(f"| {kind} | {a['labelled']} | {a['given']} | {a['right']} | {_pct(a['precision'])} | "
                         f"{_pct(a['recall'])} |")
    if variants:
        lines += ["", "Where the gain comes from (all kinds):", "",
                  "| extractor | precision | recall |", "| --- | --- | --- |"]
        for name, variant in variants.items():
            a = variant["kinds"]["all"]
            lines.append(f"| {name} | {_pct(a['precision'])} ({a['right']}/{a['given']}) | {_pct(a['recall'])} |")
        lines += ["", "The word lists gained well-known tools, companies, cities and first names of the six languages, "
                  "some of which the labelled notes name: the last row is what the rules do for names no list "
                  "knows. MiniLM's kind prototypes decide only what no rule decided; on these notes the rules "
                  "alone do as well."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LABELLED)
    parser.add_argument("--no-embedder", action="store_true", help="patterns and shapes alone decide kinds")
    parser.add_argument("--baseline", type=Path, help="an earlier run's --json, shown beside this one")
    parser.add_argument("--json", type=Path, help="write this run's figures and errors here")
    parser.add_argument("--write", type=Path, help="BENCHMARKS.md: replace the section `entities`")
    parser.add_argument("--errors", action="store_true", help="print every wrong and missed entity")
    args = parser.parse_args(argv)
    embedder = None
    if not args.no_embedder:
        from memlane.adapters.local.embedder import MiniLMEmbedder

        embedder = MiniLMEmbedder()
        embedder.load()
    cases = load_cases(args.data)
    result = evaluate(cases, LocalSummarizer(embedder))
    baseline = json.loads(args.baseline.read_text()) if args.baseline else None
    variants = {"today's, without the embedder": evaluate(cases, LocalSummarizer())}
    with lists_before():
        variants["today's rules, the word lists of before"] = evaluate(cases, LocalSummarizer(embedder))
    command = "make bench-entities"
    text = report(result, baseline, command, variants)
    print(text)
    if args.errors:
        for case_id, errors in result["errors"].items():
            print(f"{case_id} wrong: {'; '.join(errors)}")
        for case_id, missed in result["missed"].items():
            print(f"{case_id} missed: {'; '.join(missed)}")
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    if args.write:
        write_section(args.write, SECTION, text)


if __name__ == "__main__":
    main()
