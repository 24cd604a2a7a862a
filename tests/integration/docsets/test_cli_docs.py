"""`memlane docs index|list|status|refresh|delete` against a local server (MEMLANE_API_URL) and,
without it, the local runtime in process crawling itself; the site is served on loopback."""

from __future__ import annotations

import pytest
from docsets_site import FAST
from fakes import HashEmbedder

import memlane.cli.docs as cli_docs
from memlane.cli import main

pytestmark = pytest.mark.integration


@pytest.fixture
def against_server(docs_server, monkeypatch):
    monkeypatch.setenv("MEMLANE_API_URL", docs_server.url)
    monkeypatch.setenv("MEMLANE_API_KEY", docs_server.key)
    return docs_server


def run(capsys, *argv: str) -> tuple[int, list[str], str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


def test_docs_commands_against_a_server(against_server, site, capsys):
    # index follows the crawl to the end; stdout is not a terminal, so progress is plain lines
    code, lines, _ = run(capsys, "docs", "index", f"{site.url}/docs/", "--name", "Frob Docs")
    assert code == 0
    docset_id = lines[0].split()[2]
    assert lines[0] == f"Frob Docs  {docset_id}  {site.url}/docs/"
    progress = [line for line in lines if line.endswith(" done")]
    assert progress and progress[-1] == "7/7 pages done"
    assert lines[-1] == "ready: 5 indexed, 2 skipped, 0 errors; 10 chunks"

    code, lines, _ = run(capsys, "docs", "list")
    assert code == 0
    assert lines == [f"{docset_id}  Frob Docs  ready  7/7 pages  10 chunks  {site.url}/docs/"]

    code, lines, _ = run(capsys, "docs", "status", docset_id[:8])
    assert code == 0
    assert lines[:5] == [f"Frob Docs  {docset_id}", f"  site:    {site.url}/docs/", "  status:  ready",
                         "  pages:   7 pages: 5 indexed, 0 pending, 2 skipped, 0 errors", "  chunks:  10"]
    assert lines[5:] == ["  skipped:", f"    {site.url}/docs/missing  HTTP 404",
                         f"    {site.url}/docs/old  redirects to {site.url}/docs/new"]
    assert f"    {site.url}/docs/old  redirects to {site.url}/docs/new" in lines

    site.html("/docs/config", "Configuration", "Tune the quux deadline with QUUX_DEADLINE.", etag='"c2"')
    code, lines, _ = run(capsys, "docs", "refresh", "Frob Docs")
    assert code == 0
    assert lines[0] == "Refreshing 7 pages from Frob Docs (incremental mode)"
    assert lines[-1].startswith("ready: 5 indexed, 2 skipped, 0 errors; ")

    code, lines, _ = run(capsys, "docs", "delete", docset_id)
    assert code == 0
    assert lines[0].startswith(f"deleted Frob Docs ({docset_id}): 7 pages, ")
    assert "deletion receipt" in lines[0]
    assert run(capsys, "docs", "list")[1] == ["no documentation sets (add one with `memlane docs index URL`)"]
    code, _, error = run(capsys, "docs", "status", docset_id)
    assert code == 1 and error.strip() == f"memlane: docset: no documentation set {docset_id!r} (see `memlane docs list`)"


def test_docs_index_rejects_a_url_that_is_not_one(against_server, capsys):
    code, _, error = run(capsys, "docs", "index", "docs.example.com/guide")
    assert code == 2 and error.strip() == "memlane: url: must be an absolute http or https URL, not 'docs.example.com/guide'"


def test_docs_index_without_a_server_crawls_in_process(tmp_path, site, capsys, monkeypatch):
    monkeypatch.delenv("MEMLANE_API_URL", raising=False)
    real = cli_docs.local_runtime
    monkeypatch.setattr(cli_docs, "local_runtime",
                        lambda args, **options: real(args, embedder=HashEmbedder(), docset_settings=FAST, **options))
    data = str(tmp_path / "data")
    code, lines, _ = run(capsys, "--data-dir", data, "docs", "index", f"{site.url}/docs/",
                         "--allow-private-network")
    assert code == 0, lines
    assert lines[-1] == "ready: 5 indexed, 2 skipped, 0 errors; 10 chunks"
    code, lines, _ = run(capsys, "--data-dir", data, "docs", "list")
    assert code == 0 and lines[0].endswith(f"ready  7/7 pages  10 chunks  {site.url}/docs/")
    # Without --allow-private-network the loopback site is refused, naming the field.
    code, _, error = run(capsys, "--data-dir", str(tmp_path / "other"), "docs", "index", f"{site.url}/docs/")
    assert code == 1 and error.startswith("memlane: baseUrl: ")
