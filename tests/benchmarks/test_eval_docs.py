"""The documentation workload of the recall suite (bench.eval.workloads.docs): the docsets section it
puts into BENCHMARKS.md, the pages it saves as memories, and its /retrieve figures."""

from __future__ import annotations

from bench.eval.scoring import Record
from bench.eval.workloads.docs import (
    CrawlReport,
    doc_pages,
    floor_markdown,
    report_markdown,
    retrieve_results,
    targets_markdown,
)

CRAWL = CrawlReport(
    docset_id="d",
    seconds=500.0,
    pages_total=528,
    pages_indexed=459,
    pages_skipped=69,
    pages_error=0,
    pages_stuck=0,
    chunks=6530,
)


def results(
    hybrid: tuple[float, float],
    vector: tuple[float, float] = (0.95, 0.85),
    bm25: tuple[float, float] = (0.9, 0.8),
) -> dict[str, dict[str, float]]:
    return {
        name: {"hit@5": h, "mrr@10": m}
        for name, (h, m) in (("bm25", bm25), ("vector", vector), ("hybrid", hybrid))
    }


def test_targets_say_met_or_not_met_with_the_figures():
    met = targets_markdown(results((1.0, 0.95)), CRAWL)
    assert "hit@5 ≥ 0.975 **met (1.000)**" in met
    assert "MRR@10 ≥ 0.89 **met (0.950)**" in met
    assert "both measures **met" in met
    assert "≤ 10 minutes with 0 stuck and 0 error pages **met (500 s, 0 stuck, 0 errors)**" in met

    missed = targets_markdown(results((0.975, 0.84), vector=(0.975, 0.82)), CRAWL)
    assert "MRR@10 ≥ 0.89 **not met (0.840)**" in missed
    assert "both measures **not met" in missed  # a tie on hit@5 is not better

    slow = CrawlReport(**{**CRAWL.__dict__, "seconds": 700.0})
    assert "**not met (700 s, 0 stuck, 0 errors)**" in targets_markdown(results((1.0, 0.95)), slow)
    stuck = CrawlReport(**{**CRAWL.__dict__, "pages_stuck": 1})
    assert "**not met (500 s, 1 stuck, 0 errors)**" in targets_markdown(results((1.0, 0.95)), stuck)


def test_report_has_both_tables_the_settings_the_load_and_the_targets():
    text = report_markdown(CRAWL, results((1.0, 0.95)), 40, "make eval", {"fusion": "0.8·vector"}, 2.5)
    assert "| hybrid (memlane fusion) | 1.000 | 0.950 |" in text
    assert "| 528 | 459 | 69 | 0 | 0 | 6530 | 500 s | 0.92 | 13.1 |" in text
    assert "Settings: fusion 0.8·vector." in text
    assert "load average 2.5" in text
    assert text.rstrip().endswith("errors)**.")


def test_retrieve_figures_are_page_level_hit_at_5_and_mrr_at_10_per_mode():
    # Given two questions asked in hybrid mode: one answered at rank 2, one at rank 7
    records = [
        Record("docs-retrieve", "retrieve-hybrid", "", "q1", ["a.html", "b.html"], [["b.html", "z.html"]]),
        Record("docs-retrieve", "retrieve-hybrid", "", "q2", [f"p{i}.html" for i in range(10)], [["p6.html"]]),
        Record("docs", "bm25", "", "q1", ["b.html"], [["b.html"]]),  # another workload: not counted
    ]
    out = retrieve_results(records)
    # Then hit@5 counts the first, MRR@10 averages 1/2 and 1/7, and modes without records are absent
    assert out == {"hybrid": {"hit@5": 0.5, "mrr@10": (1 / 2 + 1 / 7) / 2}}


def test_the_pages_saved_as_memories_leave_out_the_generated_indexes(tmp_path):
    for page in ("index.html", "library/json.html", "genindex-A.html", "genindex.html", "search.html",
                 "py-modindex.html", "_static/x.html", "library/notes.txt"):
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text("<html></html>")
    assert doc_pages(tmp_path) == ["index.html", "library/json.html"]


def test_the_documentation_floor_is_the_highest_that_keeps_the_targets_and_says_what_abstains():
    # Given 40 answered questions whose relevant page is first at relevance 0.4 (a weaker page after
    # it at 0.1), and questions nothing answers whose best result sits at 0.08 (nonsense) or 0.2
    def answered(i):
        return Record("docs-retrieve", "retrieve-hybrid", "", f"q{i}", [f"p{i}.html", "x.html"], [[f"p{i}.html"]],
                      [0.4, 0.1])

    records = [answered(i) for i in range(40)]
    records += [Record("docs-retrieve", "retrieve-hybrid", "nonsense", f"n{i}", ["x.html"], [], [0.08]) for i in range(10)]
    records += [Record("docs-retrieve", "retrieve-hybrid", "off-domain", f"o{i}", ["y.html"], [], [0.2]) for i in range(10)]
    records += [Record("docs-retrieve", "retrieve-hybrid-floor", "", f"q{i}", [f"p{i}.html"], [[f"p{i}.html"]], [0.4])
                for i in range(40)]
    text = "\n".join(floor_markdown(records, 0.3))
    # Then every floor up to the answers' 0.4 keeps the targets: 0.40 is chosen, where all abstain
    assert "**0.40** (hit@5 1.000, MRR@10 1.000; abstains: nonsense 1.000, off-domain 1.000)" in text
    assert "| 0.10 | 1.000 | 1.000 | 1.000 | 1.000 | 0.000 |" in text
    assert "the server's documentation floor, 0.3, applies): hit@5 1.000" in text
    # and a run without relevance (an older one) gets no floor section
    assert floor_markdown([Record("docs-retrieve", "retrieve-hybrid", "", "q", ["a"], [["a"]])], None) == []
