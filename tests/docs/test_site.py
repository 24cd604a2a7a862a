"""The documentation site (mkdocs.yml, docs/) and the README: the site builds with `--strict`, which
fails on a broken link or anchor and on a page missing from the navigation (and those failures are
checked to happen); every example a page shows is run or says why not; the README stays a two-minute
read; no paragraph is written twice; the configuration page names every variable the code reads and
the pages name every route of the API."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from docs_pages import DOCS, KINDS, README, ROOT, all_blocks, pages
from markdown.extensions.toc import slugify

MKDOCS = [sys.executable, "-m", "mkdocs", "build", "--strict"]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MKDOCS, "-f", str(config), "-d", str(site)], cwd=config.parent, env=ENV,
                          capture_output=True, text=True, timeout=300)


def test_the_site_builds_with_strict_checks(tmp_path):
    run = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert run.returncode == 0, run.stdout + run.stderr
    # the API reference is rendered from the OpenAPI document: a heading per operation
    reference = (tmp_path / "site" / "api-reference" / "index.html").read_text(encoding="utf-8")
    spec = json.loads((ROOT / "clients" / "typescript" / "openapi.json").read_text(encoding="utf-8"))
    operations = sum(len(methods) for methods in spec["paths"].values())
    assert len(re.findall(r'<h3 id="[^"]+"><span class="http-', reference)) == operations
    assert 'id="post-v3recall"' in reference and 'id="get-v3conversationsconversation_id"' in reference
    # the measurement log is part of the site
    assert (tmp_path / "site" / "BENCHMARKS" / "index.html").exists()


def test_the_strict_build_fails_on_a_broken_link_an_anchor_or_a_page_left_out(tmp_path):
    """One copy of the site with three faults (mkdocs reports every warning before it aborts)."""
    copy = tmp_path / "copy"
    shutil.copytree(DOCS, copy / "docs", symlinks=False)
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    (copy / "clients").symlink_to(ROOT / "clients")  # the OpenAPI document the reference renders
    api = copy / "docs" / "api.md"
    api.write_text(api.read_text(encoding="utf-8") + "\n[gone](no-such-page.md) [x](concepts.md#no-such-heading)\n",
                   encoding="utf-8")
    (copy / "docs" / "orphan.md").write_text("# A page nobody links to\n", encoding="utf-8")
    run = build(copy / "mkdocs.yml", copy / "site")
    assert run.returncode != 0
    said = run.stdout + run.stderr
    assert "Doc file 'api.md' contains a link 'no-such-page.md', but the target is not found" in said
    assert "does not contain an anchor '#no-such-heading'" in said
    assert 'are not included in the "nav" configuration:\n  - orphan.md' in said


def test_every_shell_python_and_typescript_block_is_run_or_says_why():
    unmarked = [b.where for b in all_blocks() if b.is_code and b.kind is None and b.reason is None]
    assert not unmarked, ("these blocks are neither `<!-- example: KIND -->` (run by a test) nor "
                          f"`<!-- not-run: REASON -->` on the line above the fence: {unmarked}")
    unknown = [(b.where, b.kind) for b in all_blocks() if b.kind is not None and b.kind not in KINDS]
    assert not unknown, f"unknown example kinds (known: {sorted(KINDS)}): {unknown}"
    vague = [b.where for b in all_blocks() if b.reason is not None and len(b.reason.split()) < 4]
    assert not vague, f"say why a block is not run, in a few words: {vague}"


def test_the_readme_is_a_two_minute_read():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert len(text.split()) <= 2000
    for section in ("## Two commands", "## A first save and recall", "## MCP", "## Deploy to AWS",
                    "## Dependencies, and why", "## Documentation"):
        assert section in text
    # the cost a newcomer looks for, as docs/deploy.md's "Cost" section computes it
    deploy = (DOCS / "deploy.md").read_text(encoding="utf-8")
    idle = re.search(r"\| \*\*total\*\* \| \*\*≈ \$(\d+)\*\* \|", deploy)
    per_million = re.search(r"\| \*\*total\*\* \| \*\*≈ \$(\d+)\*\* \| \*\*≈ \$(\d+)\*\* \|\n\nBefore", deploy)
    assert idle and per_million
    plain = " ".join(text.replace("**", "").split())
    assert f"about ${idle[1]} a month" in plain
    assert f"about ${per_million[1]} per million saves" in plain
    assert f"about ${per_million[2]} per million recalls" in plain


def _links(page: Path) -> list[tuple[str, str]]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [(m[1], m[2] or "") for m in re.finditer(r"\]\((?!https?:|mailto:)([^)#\s]*)(?:#([^)\s]+))?\)", text)]


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S),
                          re.M)
    return {slugify(re.sub(r"[`*]", "", h), "-") for h in headings}


def test_the_readme_links_resolve_to_pages_and_their_headings():
    """The README is read on the repository's front page, outside the site, so mkdocs does not check it."""
    broken = []
    for target, anchor in _links(README):
        path = (ROOT / target) if target else README
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{target}#{anchor}")
    assert not broken


def _paragraphs(page: Path) -> list[str]:
    text = re.sub(r"^(`{3,}).*?^\1\s*$", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return [p.strip() for p in re.split(r"\n\s*\n", text)
            if len(p.strip()) >= 150 and not p.lstrip().startswith(("|", "#", "<!--", "!", ">"))]


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i:i + 5]) for i in range(len(words) - 4)}


def test_no_paragraph_is_written_twice():
    """Two paragraphs sharing 40 % of their five-word runs say the same thing twice (the README held
    one paragraph twice, reworded: 59 % shared; unrelated paragraphs share under 20 %)."""
    paragraphs = [(page, p, _shingles(p)) for page in pages() for p in _paragraphs(page)]
    repeated = []
    for i, (page_a, a, sa) in enumerate(paragraphs):
        for page_b, b, sb in paragraphs[i + 1:]:
            shared = len(sa & sb) / max(1, min(len(sa), len(sb)))
            if shared >= 0.4:
                repeated.append((page_a.name, a[:70], page_b.name, b[:70], round(shared, 2)))
    assert not repeated


VARIABLE = re.compile(r"\b(?:MEMLANE_[A-Z0-9_]*[A-Z0-9]|OPENAI_API_KEY|POWERTOOLS_[A-Z_]+|LOG_LEVEL)\b")


def test_the_configuration_page_names_every_variable_the_code_reads():
    sources = [*(ROOT / "memlane").rglob("*.py"), *(ROOT / "functions").rglob("*.py"), *(ROOT / "infra").rglob("*.py"),
               *(ROOT / "clients" / "python" / "memlane_client").rglob("*.py")]
    read = {name for path in sources for name in VARIABLE.findall(path.read_text(encoding="utf-8"))}
    assert {"MEMLANE_DATA_DIR", "MEMLANE_TABLE", "MEMLANE_OAUTH_ISSUER"} <= read  # the scan finds them
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    missing = sorted(name for name in read if name not in page)
    assert not missing, f"docs/configuration.md does not name: {missing}"


def test_the_pages_name_every_route_of_the_api():
    """Every path of the OpenAPI document the resolver generates (its committed copy, kept current by
    tests/unit/test_generated_clients.py) is described somewhere in the pages, not only in the
    rendered reference; path parameters may be named differently (`{id}`)."""
    spec = json.loads((ROOT / "clients" / "typescript" / "openapi.json").read_text(encoding="utf-8"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages())
    def shape(path: str) -> str:
        return re.sub(r"\{[^}]+\}", "{}", path)
    described = {shape(m) for m in re.findall(r"(/[\w./{}-]*)", text)}
    missing = sorted(path for path in spec["paths"] if shape(path) not in described)
    assert not missing, f"no page describes: {missing}"
