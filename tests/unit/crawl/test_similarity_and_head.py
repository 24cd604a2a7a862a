"""Shingle samples (how much of a page another page holds) and the head signals a page carries."""

from __future__ import annotations

from memlane.crawl.head import head_signals
from memlane.crawl.similarity import MAX_SAMPLE, Sketch, containment
from memlane.docsets.duplicates import KnownPage, SketchIndex, aggregates_holding, judge


def text(word: str, n: int = 40) -> str:
    return " ".join(f"the {word} value {word}{i} controls {word} step {i}." for i in range(n))


def test_containment_is_asymmetric_for_a_concatenation():
    a, b = Sketch.of_text(text("walrus")), Sketch.of_text(text("pelican"))
    whole = Sketch.of_text(" ".join([text("walrus"), text("pelican"), text("narwhal")]))
    assert containment(a, whole) == 1.0
    share = containment(whole, a)
    assert share is not None and 0.25 < share < 0.42
    assert containment(a, b) == 0.0


def test_a_capped_stored_sample_still_measures_containment():
    big = " ".join(text(f"w{i}", 60) for i in range(20))
    stored = Sketch.of_stored(Sketch.of_text(big).stored())
    assert len(stored.hashes) == MAX_SAMPLE  # capped
    assert containment(Sketch.of_text(text("w7", 60)), stored) == 1.0
    assert containment(Sketch.of_text(text("elsewhere", 60)), stored) == 0.0


def test_short_texts_are_never_judged():
    assert containment(Sketch.of_text("a few words only"), Sketch.of_text("a few words only")) is None
    assert judge("p", Sketch.of_text("a few words only"), SketchIndex()) is None


def test_judge_names_the_page_repeated_and_the_aggregate():
    known = [KnownPage(w, f"https://d.test/{w}", Sketch.of_text(text(w))) for w in ("walrus", "pelican")]
    both = SketchIndex(known)
    assert judge("copy", Sketch.of_text(text("walrus")), both) == "same text as https://d.test/walrus: indexed there"
    whole = Sketch.of_text(text("walrus") + " " + text("pelican"))
    assert judge("print", whole, both).startswith("holds the text of 2 other pages of the set")
    assert judge("print", whole, SketchIndex(known[:1])) is None  # one page held is a page quoting another
    # Indexed first, the print page is found again when its second chapter arrives.
    printed = KnownPage("print", "https://d.test/print.html", whole)
    assert aggregates_holding(known[1], SketchIndex([known[0], printed])) == [(printed, 2)]
    assert aggregates_holding(known[1], SketchIndex([printed])) == []


def test_head_signals():
    page = b'<html><head><link rel="Canonical" href="../guide/"><meta name="robots" content="noindex, follow">' \
           b'</head><body><link rel="canonical" href="/ignored"></body></html>'
    signals = head_signals(page, "https://d.test/docs/v1/page.html")
    assert signals.canonical == "https://d.test/docs/guide/"
    assert signals.noindex is True
    assert head_signals(b"<html><body>plain</body></html>", "https://d.test/").canonical is None
    assert head_signals(b"<html><head><meta name=robots content=all>", "https://d.test/").noindex is False


def test_a_giant_print_page_indexed_first_is_found_once_its_chapters_are():
    chapters = [KnownPage(f"c{i}", f"https://d.test/c{i}", Sketch.of_stored(Sketch.of_text(text(f"w{i}", 60)).stored()))
                for i in range(40)]
    whole = Sketch.of_text(" ".join(text(f"w{i}", 60) for i in range(40)))
    printed = KnownPage("print", "https://d.test/print.html", Sketch.of_stored(whole.stored()))
    assert printed.sketch.size > 16 * 1024  # too long to tell which pages it holds one by one
    index = SketchIndex([printed, chapters[0]])
    assert aggregates_holding(chapters[0], index) == []  # one chapter is not enough
    for chapter in chapters[1:]:
        index.add(chapter)
    found = aggregates_holding(chapters[-1], index)
    assert [(page.page_id, held > 30) for page, held in found] == [("print", True)]
