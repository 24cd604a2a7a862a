"""The LangChain and LlamaIndex integrations (memlane_client.integrations) with the real packages
from PyPI, which live in their own environment (.venv-integrations, `make integrations-env`), never
the main one: this test starts a local server on loopback and runs
clients/python/tests_integrations there against it, with the network limited to loopback."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
VENV_PYTHON = ROOT / ".venv-integrations" / "bin" / "python"


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_framework_integration_against_a_local_server(framework, hash_server):
    if not VENV_PYTHON.exists():
        pytest.skip(".venv-integrations is missing (`make integrations-env` builds it; `make test` does)")
    # llama-index-core ships the NLTK stopwords and tiktoken's cl100k_base in its package and points
    # NLTK_DATA / TIKTOKEN_CACHE_DIR there unless they are set: left unset, nothing is fetched (set
    # elsewhere, it downloads cl100k_base on first use; the loopback-only conftest fails that run)
    dropped = ("PYTEST_", "VIRTUAL_ENV", "NLTK_DATA", "TIKTOKEN_CACHE_DIR", "LLAMA_INDEX_CACHE_DIR")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(MEMLANE_URL=hash_server.url, MEMLANE_API_KEY=hash_server.key,
               PYTHONPATH=str(ROOT / "clients" / "python"), HF_HUB_OFFLINE="1")
    run = subprocess.run([str(VENV_PYTHON), "-m", "pytest", f"clients/python/tests_integrations/test_{framework}.py",
                          "-q", "-p", "no:cacheprovider", "-c", "clients/python/tests_integrations/pytest.ini"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout
