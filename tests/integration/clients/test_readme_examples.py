"""Every client and integration example of the documentation (README.md and docs/*.md, today all on
docs/clients.md) runs as written, where a reader would run it, against a local server on loopback.

The clients are installed first the way the page says, from a copy of this checkout into a fresh
home directory: the `<!-- example: install-python -->` block (a virtualenv, `pip install
./clients/python`) and the `<!-- example: install-typescript -->` block (`npm pack` in
clients/typescript, the package file installed by path into a new project, with `ai` and `zod`).
Then each `<!-- example: KIND -->` block runs: `python` with the installed environment's Python,
`node` as an ES module inside that project, `python-integrations` in .venv-integrations (LangChain,
LlamaIndex, pinned in clients/python/requirements-integrations.txt)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from docs_pages import ROOT, Block, examples

pytestmark = pytest.mark.integration
INTEGRATIONS_PYTHON = ROOT / ".venv-integrations" / "bin" / "python"
EXAMPLES = examples("python", "python-integrations", "node")
NOT_COPIED = shutil.ignore_patterns("node_modules", "dist", "build", "*.egg-info", "*.tgz", ".readme-examples",
                                    "__pycache__")


def test_the_pages_have_an_example_for_each_client_and_integration():
    codes = "\n".join(b.code for b in EXAMPLES)
    for needle in ("MemlaneClient(", "AsyncMemlaneClient(", "from '@memlane/client'", "integrations.langchain",
                   "integrations.llamaindex", "@memlane/client/ai", "openai_tools"):
        assert needle in codes, f"no runnable example uses {needle}"
    assert len(examples("install-python")) == 1 and len(examples("install-typescript")) == 1


@dataclass
class Reader:
    """A reader's machine: a home directory and a copy of the checkout's clients."""

    home: Path
    checkout: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTEST_", "MEMLANE_", "NLTK_DATA", "TIKTOKEN_CACHE_DIR", "VIRTUAL_ENV", "PYTHON"))}
        # npm's download cache stays this machine's (the packages `make` installed are in it)
        cache = os.environ.get("NPM_CONFIG_CACHE") or str(Path.home() / ".npm")
        env.update(HOME=str(self.home), NPM_CONFIG_CACHE=cache, NPM_CONFIG_PREFER_OFFLINE="true",
                   NPM_CONFIG_AUDIT="false", NPM_CONFIG_FUND="false", NPM_CONFIG_UPDATE_NOTIFIER="false", **extra)
        return env

    def install(self, kind: str) -> None:
        (block,) = examples(kind)
        run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.code], cwd=self.checkout, env=self.env(),
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"{block.where} failed:\n{block.code}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"


@pytest.fixture(scope="module")
def reader(tmp_path_factory) -> Reader:
    root = tmp_path_factory.mktemp("reader")
    (root / "home").mkdir()
    shutil.copytree(ROOT / "clients" / "python", root / "memlane" / "clients" / "python", ignore=NOT_COPIED)
    shutil.copytree(ROOT / "clients" / "typescript", root / "memlane" / "clients" / "typescript", ignore=NOT_COPIED)
    return Reader(root / "home", root / "memlane")


@pytest.fixture(scope="module")
def python_client(reader) -> Path:
    """The Python that `pip install ./clients/python` went into."""
    reader.install("install-python")
    python = reader.home / "my-app" / ".venv" / "bin" / "python"
    assert python.exists()
    return python


@pytest.fixture(scope="module")
def typescript_project(reader) -> Iterator[Path]:
    """The project the packed `@memlane/client` (and `ai`, `zod`) were installed into."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("Node.js and npm are needed for the TypeScript client (make installs the web app with them)")
    reader.install("install-typescript")
    project = reader.home / "my-app"
    installed = project / "node_modules" / "@memlane" / "client"
    assert (installed / "dist" / "index.js").exists() and not installed.is_symlink()  # a copy, not a link
    yield project


def _run(block: Block, command: list[str], cwd: Path, env: dict[str, str]) -> None:
    run = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    said = f"{block.where}:\n{block.code}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"
    assert run.returncode == 0, f"the example failed: {said}"
    assert run.stdout.strip(), f"the example printed nothing: {said}"


@pytest.mark.parametrize("block", EXAMPLES, ids=[f"{b.where}-{b.kind}" for b in EXAMPLES])
def test_an_example_runs_against_a_local_server(block, reader, hash_server, tmp_path, request):
    server = {"MEMLANE_URL": hash_server.url, "MEMLANE_API_KEY": hash_server.key}
    if block.kind == "python":
        python = request.getfixturevalue("python_client")
        _run(block, [str(python), "-c", block.code], tmp_path, reader.env(**server))
    elif block.kind == "python-integrations":
        if not INTEGRATIONS_PYTHON.exists():
            pytest.skip(".venv-integrations is missing (`make integrations-env` builds it; `make test` does)")
        env = reader.env(PYTHONPATH=str(ROOT / "clients" / "python"), HF_HUB_OFFLINE="1", **server)
        _run(block, [str(INTEGRATIONS_PYTHON), "-c", block.code], tmp_path, env)
    else:
        project = request.getfixturevalue("typescript_project")
        script = project / f"{tmp_path.name}.mjs"
        script.write_text(block.code + "\n", encoding="utf-8")
        _run(block, ["node", script.name], project, reader.env(**server))
