"""How the crawl's duplicate check (memlane.docsets.duplicates) judges a real documentation site,
offline: every HTML page of a directory is read as the crawler reads it (main content, links as
text), sampled, and judged against the pages before it, as a crawl in that order would. Prints the
pages that would be skipped and why, and the cost per page.

    python -m bench.docs_duplicates /usr/share/doc/python3.11/html [--reverse] [--print-of tutorial/ [--first]]

--print-of adds a print-everything page made of every page under that prefix, one after the other
(what mdBook's print.html is), judged after them, or before them with --first.

No embedding, no server: the decision alone. Pages the crawl leaves out anyway (navigation pages:
mostly links) are left out here too."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from memlane.config.docsets import DocsetSettings
from memlane.crawl.similarity import Sketch
from memlane.docsets.duplicates import KnownPage, SketchIndex, aggregates_holding, judge
from memlane.docsets.pages import link_density, strip_markdown_links
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType
from memlane.ingest.pipeline import prepare


def page_texts(root: Path, reverse: bool) -> list[tuple[str, str]]:
    threshold = DocsetSettings().navigation_link_density
    out: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*.html"), reverse=reverse):
        if "_sources" in path.parts or "_static" in path.parts:
            continue
        try:
            prepared = prepare(path.read_bytes(), ContentType.HTML, None, path.as_uri())
        except InvalidInputError:
            continue
        text, linked = strip_markdown_links(prepared.extracted.text)
        if text.strip() and link_density(linked, text) < threshold:
            out.append((str(path.relative_to(root)), text))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("--reverse", action="store_true", help="judge the pages in reverse path order")
    parser.add_argument("--print-of", metavar="PREFIX", help="add a print page of the pages under PREFIX")
    parser.add_argument("--first", action="store_true", help="judge the print page before its chapters")
    args = parser.parse_args()
    pages = page_texts(args.root, args.reverse)
    if args.print_of:
        chapters = [text for url, text in pages if url.startswith(args.print_of)]
        printed = ("print.html", "\n\n".join(chapters))
        pages = [printed, *pages] if args.first else [*pages, printed]
        print(f"print.html: {len(chapters)} pages under {args.print_of}, {len(printed[1].split())} words")
    known = SketchIndex()
    skipped: list[tuple[str, str]] = []
    sketch_s = judge_s = 0.0
    for url, text in pages:
        t0 = time.perf_counter()
        sketch = Sketch.of_text(text)
        t1 = time.perf_counter()
        reason = judge(url, sketch, known)
        page = KnownPage(url, url, Sketch.of_stored(sketch.stored()))
        retired = [] if reason else aggregates_holding(page, known)
        t2 = time.perf_counter()
        sketch_s += t1 - t0
        judge_s += t2 - t1
        if reason:
            skipped.append((url, reason))
            continue
        for aggregate, held in retired:
            known.remove(aggregate.page_id)
            skipped.append((aggregate.url, f"taken out: holds {held} pages"))
        known.add(page)
    n = len(pages)
    print(f"{n} content pages; {len(skipped)} would be skipped")
    for url, reason in skipped:
        print(f"  {url}: {reason}")
    print(f"sample: {1000 * sketch_s / n:.2f} ms/page; judge against the pages before: {1000 * judge_s / n:.2f} "
          f"ms/page (last page against {len(known)})")


if __name__ == "__main__":
    main()
