"""The documentation's pages (README.md and docs/*.md) and the code blocks they show.

Every shell, Python and JavaScript/TypeScript block a page shows is either run by a test or says why
not, in an HTML comment on the line just above its opening fence:

    <!-- example: KIND -->           run by the test for KIND (see KINDS)
    <!-- not-run: REASON -->         not run, for this reason (AWS only, a server that runs until stopped…)

tests/docs/test_site.py checks that every such block carries one; tests/docs/test_examples.py runs
the `shell` ones and tests/integration/clients/test_readme_examples.py the clients' ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

# The languages of blocks that are something to run (a block in another language, or none, is output,
# a configuration file or a diagram).
CODE_LANGUAGES = {"sh", "bash", "shell", "console", "zsh", "python", "py", "python3", "js", "javascript", "mjs",
                  "ts", "typescript", "node"}
KINDS = {
    "shell": "bash, against a local server, in a checkout, with a fresh home directory (tests/docs/test_examples.py)",
    "python": "the Python client's examples, in the environment `install-python` made",
    "python-integrations": "LangChain and LlamaIndex examples, in .venv-integrations",
    "node": "the TypeScript client's examples, in the project `install-typescript` made",
    "install-python": "installs the Python client from the checkout (run first by the clients' examples test)",
    "install-typescript": "packs and installs the TypeScript client (run first by the clients' examples test)",
}
MARKER = re.compile(r"^<!-- (?:example: (?P<kind>[\w-]+)|not-run: (?P<reason>.+?)) -->$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,}|~{3,})(?P<lang>[\w+-]*)")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    kind: str | None  # from `<!-- example: KIND -->`
    reason: str | None  # from `<!-- not-run: REASON -->`

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def is_code(self) -> bool:
        return self.lang.lower() in CODE_LANGUAGES


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/ (not docs/BENCHMARKS.md, a link to the
    measurement log at the root, which shows no examples and keeps its own history)."""
    return [README, *sorted(p for p in DOCS.rglob("*.md") if not p.is_symlink())]


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        close = re.compile(rf"^\s*{re.escape(opening['ticks'])}\s*$")
        end = next((j for j in range(i + 1, len(lines)) if close.match(lines[j])), len(lines))
        marker = MARKER.match(lines[i - 1].strip()) if i > 0 else None
        found.append(Block(page, i + 1, opening["lang"], "\n".join(lines[i + 1:end]),
                           marker["kind"] if marker else None, marker["reason"] if marker else None))
        i = end + 1
    return found


def all_blocks() -> list[Block]:
    return [b for p in pages() for b in blocks(p)]


def examples(*kinds: str) -> list[Block]:
    return [b for b in all_blocks() if b.kind in kinds]
