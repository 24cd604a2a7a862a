"""@memlane/client (clients/typescript) built and run with Node's test runner against a local server
on loopback: the client (and a fake server for 429/5xx, started by the test itself) and the Vercel
AI SDK tools with the real `ai` package and its mock model."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
CLIENT = Path(__file__).resolve().parents[3] / "clients" / "typescript"


def test_the_typescript_client_and_ai_sdk_tools_against_a_local_server(hash_server):
    if not (CLIENT / "node_modules" / "ai").exists() or shutil.which("node") is None:
        pytest.skip("clients/typescript/node_modules is not installed (make installs it: npm ci there)")
    env = {**os.environ, "MEMLANE_URL": hash_server.url, "MEMLANE_API_KEY": hash_server.key}
    build = subprocess.run(["npm", "run", "--silent", "build"], cwd=CLIENT, env=env, capture_output=True, text=True,
                           timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run(["node", "--test", "--test-reporter=spec", "test/"], cwd=CLIENT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout or "ℹ fail 0" in run.stdout, run.stdout[-2000:]


def test_the_conversation_calls_and_the_profile_tool_against_a_server_with_an_llm(llm_server):
    """clients/typescript/test-facts: saveConversation (a conversation sent again whole stores only its new
    messages), conversation, extraction, recall by kind and asOf, profile, and the AI SDK's memoryProfile,
    the server's LLM the fake one on loopback."""
    if not (CLIENT / "node_modules" / "ai").exists() or shutil.which("node") is None:
        pytest.skip("clients/typescript/node_modules is not installed (make installs it: npm ci there)")
    url, key, _ = llm_server
    env = {**os.environ, "MEMLANE_URL": url, "MEMLANE_API_KEY": key}
    build = subprocess.run(["npm", "run", "--silent", "build"], cwd=CLIENT, env=env, capture_output=True, text=True,
                           timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run(["node", "--test", "--test-reporter=spec", "test-facts/"], cwd=CLIENT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "ℹ pass 3" in run.stdout and "ℹ fail 0" in run.stdout, run.stdout[-2000:]
