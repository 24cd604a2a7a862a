"""Every client and integration example in README.md ("Clients and integrations") runs as written
against a local server on loopback: each fenced block after an `<!-- example: KIND -->` marker is
extracted and run — `python` with this environment, `python-integrations` in .venv-integrations
(LangChain, LlamaIndex), `node` inside clients/typescript (so `@memlane/client` resolves to the
package itself, built first, and `ai` to its devDependency)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
TS = ROOT / "clients" / "typescript"
INTEGRATIONS_PYTHON = ROOT / ".venv-integrations" / "bin" / "python"
EXAMPLE = re.compile(r"<!-- example: (?P<kind>[\w-]+) -->\n```(?P<lang>\w+)\n(?P<code>.*?)\n```", re.S)


def _examples() -> list[tuple[str, str]]:
    return [(m["kind"], m["code"]) for m in EXAMPLE.finditer((ROOT / "README.md").read_text(encoding="utf-8"))]


def test_the_readme_has_an_example_for_each_client_and_integration():
    codes = "\n".join(code for _, code in _examples())
    for needle in ("MemlaneClient(", "AsyncMemlaneClient(", "from '@memlane/client'", "integrations.langchain",
                   "integrations.llamaindex", "@memlane/client/ai", "openai_tools"):
        assert needle in codes, f"README.md has no runnable example using {needle}"


EXAMPLES = _examples()


@pytest.fixture(scope="module")
def built_typescript_client():
    if not (TS / "node_modules" / "ai").exists() or shutil.which("node") is None:
        pytest.skip("clients/typescript/node_modules is not installed (make installs it: npm ci there)")
    build = subprocess.run(["npm", "run", "--silent", "build"], cwd=TS, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr


@pytest.mark.parametrize(("kind", "code"), EXAMPLES, ids=[f"{i}-{kind}" for i, (kind, _) in enumerate(EXAMPLES)])
def test_a_readme_example_runs_against_a_local_server(kind, code, hash_server, tmp_path, request):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NLTK_DATA", "TIKTOKEN_CACHE_DIR"))}
    env.update(MEMLANE_URL=hash_server.url, MEMLANE_API_KEY=hash_server.key, HF_HUB_OFFLINE="1")
    if kind == "python":
        env["PYTHONPATH"] = str(ROOT / "clients" / "python")
        command, cwd = [sys.executable, "-c", code], tmp_path
    elif kind == "python-integrations":
        if not INTEGRATIONS_PYTHON.exists():
            pytest.skip(".venv-integrations is missing (`make integrations-env` builds it; `make test` does)")
        env["PYTHONPATH"] = str(ROOT / "clients" / "python")
        command, cwd = [str(INTEGRATIONS_PYTHON), "-c", code], tmp_path
    elif kind == "node":
        request.getfixturevalue("built_typescript_client")
        folder = TS / ".readme-examples"
        folder.mkdir(exist_ok=True)
        script = folder / f"{tmp_path.name}.mjs"
        script.write_text(code + "\n", encoding="utf-8")
        request.addfinalizer(lambda: script.unlink(missing_ok=True))
        command, cwd = ["node", str(script)], TS
    else:
        pytest.fail(f"unknown example kind {kind!r} in README.md")
    run = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"the README example failed:\n{code}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"
    assert run.stdout.strip(), "the example printed nothing"
