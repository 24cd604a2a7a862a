"""The shell examples of README.md and docs/ run as a reader runs them, and `memlane serve` prints
what the README says `make run` prints.

A reader has run `make run` (a server on 127.0.0.1:7432 with its data directory in ~/.memlane and the
key it printed in $KEY) and types the commands in a checkout, with `.venv/bin` on PATH. Here: a
server on loopback on a free port, with the embedded default's model, whose data directory is the
~/.memlane of a fresh home directory; each `<!-- example: shell -->` block runs in bash, in page
order, in a folder standing for the checkout (its `.venv` is this one), with `localhost:7432` and
`127.0.0.1:7432` pointing at that server. A block must exit 0 and no answer it prints may be an
API error.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest_helpers import free_port
from docs_pages import README, Block, blocks, examples

from memlane.config import Settings
from memlane.local.server import LocalServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]
VENV_BIN = Path(sys.executable).parent
SHELL_EXAMPLES = examples("shell")


def reader_environment(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a reader's terminal: no memlane variables of this process, a home of its
    own, the virtualenv on PATH; the model cache stays this machine's (exported once per machine)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMLANE_", "PYTEST_"))}
    env.update(HOME=str(home), PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}", XDG_CACHE_HOME=cache, **extra)
    return env


class Reader:
    def __init__(self, root: Path, server: LocalServer, key: str) -> None:
        self.home = root / "home"
        self.checkout = root / "memlane"
        self.checkout.mkdir()
        (self.checkout / ".venv").symlink_to(VENV_BIN.parent)
        self.port = server.port
        self.key = key

    def run(self, block: Block) -> subprocess.CompletedProcess[str]:
        code = re.sub(r"\b(localhost|127\.0\.0\.1):7432\b", f"127.0.0.1:{self.port}", block.code)
        return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=self.checkout,
                              env=reader_environment(self.home, KEY=self.key), capture_output=True, text=True,
                              timeout=300)


@pytest.fixture(scope="module")
def reader(tmp_path_factory, minilm) -> Iterator[Reader]:
    root = tmp_path_factory.mktemp("reader")
    server = LocalServer(Settings(data_dir=root / "home" / ".memlane"), host="127.0.0.1", port=free_port(),
                         embedder=minilm)
    key = server.prepare()
    assert key, "the first start of a data directory creates its key"
    server.start_in_thread()
    try:
        yield Reader(root, server, key)
    finally:
        server.shutdown()


def test_the_pages_show_shell_examples():
    where = {b.page.name for b in SHELL_EXAMPLES}
    assert {"README.md", "getting-started.md", "cli.md", "api.md", "conversations.md"} <= where


@pytest.mark.parametrize("block", SHELL_EXAMPLES, ids=[b.where for b in SHELL_EXAMPLES])
def test_a_shell_example_runs_as_written(reader, block):
    run = reader.run(block)
    said = f"{block.where}:\n{block.code}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"
    assert run.returncode == 0, said
    assert '{"error"' not in run.stdout, said


def test_the_readmes_first_recall_finds_the_first_save_by_meaning(reader):
    """The README's promise: the recall finds the memory although the question shares no word with it."""
    first = next(b for b in SHELL_EXAMPLES if b.page == README and "/v3/recall" in b.code)
    run = reader.run(first)
    assert run.returncode == 0, run.stderr
    decoder = json.JSONDecoder()
    saved, end = decoder.raw_decode(run.stdout)  # curl prints the two answers with no newline between
    recalled, _ = decoder.raw_decode(run.stdout[end:].lstrip())
    assert saved["title"] == "Miso meds" and saved["status"] == "ready"
    best = recalled["results"][0]
    assert best["document_id"] == saved["id"]
    assert best["relevance"] >= recalled["floor"] > 0


def test_the_clients_setup_line_points_the_examples_at_the_server(reader):
    """The clients page's one line that prints nothing: it must leave what the examples read."""
    setup = next(b for b in SHELL_EXAMPLES if b.page.name == "clients.md" and "export MEMLANE_URL" in b.code)
    run = reader.run(Block(setup.page, setup.line, setup.lang, setup.code + '\necho "$MEMLANE_URL $MEMLANE_API_KEY"',
                           setup.kind, None))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [f"http://127.0.0.1:{reader.port}", reader.key]


def _shown_serve_lines() -> list[str]:
    """The lines the README shows `make run` printing (its first `text` block of `memlane:` lines)."""
    shown = next(b for b in blocks(README) if b.lang == "text" and b.code.startswith("memlane:"))
    return shown.code.splitlines()


def _pattern(line: str, port: int) -> re.Pattern[str]:
    """A shown line as a pattern: `…` stands for what differs per run (a key, a code, a home)."""
    line = line.replace("/home/you", "\0").replace(":7432", f":{port}")
    parts = [re.escape(p) for p in re.split(r"…|\0", line)]
    return re.compile(".+".join(parts) + "$")


def test_memlane_serve_prints_what_the_readme_shows(tmp_path):
    """`make run` is `memlane serve --host 127.0.0.1 --port 7432` once .venv and web/dist are built."""
    web = tmp_path / "web-dist"
    web.mkdir()
    (web / "index.html").write_text("<!doctype html><title>memlane</title>", encoding="utf-8")
    port = free_port()
    shown = _shown_serve_lines()
    serve = subprocess.Popen([str(VENV_BIN / "memlane"), "serve", "--host", "127.0.0.1", "--port", str(port)],
                             env=reader_environment(tmp_path / "home", MEMLANE_WEB_DIR=str(web)),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    printed: list[str] = []
    try:
        deadline = time.monotonic() + 120
        assert serve.stdout is not None
        while len(printed) < len(shown) and time.monotonic() < deadline:
            line = serve.stdout.readline()
            if not line:
                break
            printed.append(line.rstrip("\n"))
    finally:
        serve.terminate()
        serve.wait(timeout=30)
    assert len(printed) == len(shown), printed
    for wanted, got in zip(shown, printed, strict=True):
        assert _pattern(wanted, port).match(got), f"the README shows {wanted!r}; memlane serve printed {got!r}"
    key = (tmp_path / "home" / ".memlane" / "local-api-key").read_text(encoding="utf-8").strip()
    assert f"memlane: API key: {key}" in printed  # the key the README's curl lines read from that file
