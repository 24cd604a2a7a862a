"""Page evidence in /retrieve's ranking: a page that several chunks point to outranks a page that
mentions the query once, even when that one mention is the best single chunk."""

from __future__ import annotations

import os

import pytest
from docsets_site import FAST, DocsSite, index, retrieve, start_server

from memlane.domain.tuning import FusionWeights

pytestmark = pytest.mark.integration

FILLER = (
    "The operator reviews the dashboard each morning, notes anything unusual in the shared log and "
    "hands open questions to the next shift before leaving. "
)


def build(site: DocsSite) -> None:
    site.html("/docs/", "Home", "Start here.", links=("/docs/changelog", "/docs/widgets"))
    # One short release note names the topic once: the best single chunk for the query.
    notes = [
        (f"Version 1.{i}", f"Release 1.{i} fixed the spelling of message {i}. " + FILLER * 2)
        for i in range(5)
    ]
    site.html(
        "/docs/changelog",
        "Changelog",
        sections=(("Version 2.0", "Added gizmo calibration. " + FILLER), *notes),
    )
    # The page about the topic: each of its sections (a chunk each) mentions it once, in longer text.
    parts = [
        (f"Part {i}", f"Step {i} of the gizmo calibration procedure. " + FILLER * 2) for i in range(1, 4)
    ]
    site.html("/docs/widgets", "Widgets", sections=tuple(parts))


@pytest.fixture
def ranking_site():
    s = DocsSite()
    build(s)
    yield s
    s.close()


def top_pages(settings, data_dir, site) -> list[str]:
    running = start_server(data_dir, settings=settings)
    try:
        docset_id = index(running, site)["docsetId"]
        running.wait_ready(docset_id)
        out = retrieve(running, "gizmo calibration", mode="bm25", topK=2, maxChunksPerPage=1)
        return [r["url"].removeprefix(site.url) for r in out["results"]]
    finally:
        running.client.close()
        running.server.shutdown()


def test_a_page_about_the_query_outranks_a_single_mention(tmp_path, ranking_site):
    assert FAST.fusion.support > 0  # the docset default
    assert top_pages(FAST, tmp_path / "support", ranking_site) == ["/docs/widgets", "/docs/changelog"]
    # Without page evidence the single best chunk decides.
    chunk_only = FAST.model_copy(update={"weight_support": 0.0})
    assert top_pages(chunk_only, tmp_path / "chunks", ranking_site) == ["/docs/changelog", "/docs/widgets"]


def test_docset_settings_read_page_support_from_the_environment(monkeypatch):
    from memlane.config.docsets import DocsetSettings

    assert DocsetSettings.from_env(os.environ).fusion.support == pytest.approx(0.2)
    monkeypatch.setenv("MEMLANE_DOCSET_WEIGHT_SUPPORT", "0")
    monkeypatch.setenv("MEMLANE_DOCSET_SUPPORT_CHUNKS", "3")
    fusion = DocsetSettings.from_env(os.environ).fusion
    assert fusion == FusionWeights(vector=0.8, text=0.2, recency=0.0, support=0.0, support_chunks=3, complete_legs=False)
