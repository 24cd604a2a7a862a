"""The `memlane` command line, and queued work surviving a killed server (reliability row 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest_helpers import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MEMLANE = [sys.executable, "-m", "memlane.cli"]
EXTENSION_ORIGIN = "chrome-extension://ibjigdcepmcfoplhobofpgjnoibiglci"


def run(
    args: list[str], data_dir: Path, stdin: str | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "MEMLANE_DATA_DIR": str(data_dir), **(env or {})}
    full_env.pop("MEMLANE_API_URL", None) if not (env and "MEMLANE_API_URL" in env) else None
    return subprocess.run(
        [*MEMLANE, *args], input=stdin, capture_output=True, text=True, env=full_env, timeout=300
    )


def test_keys_create_list_revoke(tmp_path):
    out = run(["keys", "create", "--org", "Research Lab"], tmp_path)
    assert out.returncode == 0, out.stderr
    secret = out.stdout.strip().splitlines()[-1]
    assert secret.startswith("mlk_") and len(secret) > 40
    listed = run(["keys", "list"], tmp_path).stdout
    assert "org=Research Lab" in listed and "active" in listed and secret not in listed
    key_id = listed.split()[0]
    assert run(["keys", "revoke", key_id], tmp_path).returncode == 0
    assert "revoked" in run(["keys", "list"], tmp_path).stdout
    missing = run(["keys", "revoke", "nope"], tmp_path)
    assert missing.returncode == 1 and "no active key" in missing.stderr


def test_remember_and_recall_against_a_data_directory(tmp_path):
    note = tmp_path / "boat.md"
    note.write_text("# Boat maintenance\n\nThe outboard motor needs new spark plugs every spring.\n")
    saved = run(["remember", "--file", str(note), "--tags", "boat,engine", "--json"], tmp_path)
    assert saved.returncode == 0, saved.stderr
    doc = json.loads(saved.stdout)
    assert (
        doc["title"] == "Boat maintenance"  # the file's own heading beats its name
        and doc["status"] == "ready"
        and doc["metadata"]["tags"] == ["boat", "engine"]
    )
    piped = run(
        ["remember", "--title", "Dentist", "--project", "Health"],
        tmp_path,
        stdin="Dentist appointment moved to Thursday at 3pm.",
    )
    assert piped.returncode == 0 and "Dentist" in piped.stdout
    found = run(["recall", "when do the engine plugs get replaced?", "--json"], tmp_path)
    results = json.loads(found.stdout)["results"]
    assert results[0]["document_id"] == doc["id"]
    readable = run(["recall", "dentist", "--project", "Health"], tmp_path)
    assert readable.returncode == 0 and readable.stdout.startswith("[1] Dentist")
    bad = run(["remember", "   "], tmp_path)
    assert bad.returncode == 1 and "content" in bad.stderr


def _start(data_dir: Path, port: int) -> tuple[subprocess.Popen, str | None]:
    proc = subprocess.Popen(
        [*MEMLANE, "serve", "--port", str(port), "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "MEMLANE_INLINE_MAX_CHARS": "10"},
    )
    key = None
    deadline = time.time() + 120
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"server exited: {proc.poll()}")
        if "API key:" in line:
            key = line.rsplit("API key:", 1)[1].strip()
            break  # printed after "listening on"
        if "memlane keys create" in line:
            break
    # the banner is printed just before uvicorn binds; wait for the socket
    while time.time() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc, key
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError("server did not come up")


def test_serve_prints_url_and_key_and_queued_work_survives_a_kill(tmp_path, minilm):
    # (`minilm`: the model's ONNX export is cached before the server process starts, so a fresh
    # machine's one-time export does not count against the start-up deadline)
    data = tmp_path / "data"
    port = free_port()
    proc, key = _start(data, port)
    try:
        assert key and key.startswith("mlk_")
        assert (data / "local-api-key").stat().st_mode & 0o777 == 0o600
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"x-api-key": key}, timeout=30)
        # MEMLANE_INLINE_MAX_CHARS=10 queues every save; kill the server before the worker can run them all
        ids = [
            client.post(
                "/v3/memory", json={"content": f"Harbour log {i}: the ferry left at {i} o'clock."}
            ).json()["id"]
            for i in range(8)
        ]
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    proc2, key2 = _start(data, port)
    try:
        assert key2 == key, "the first-start key is shown again on later starts"
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"x-api-key": key}, timeout=30)
        deadline = time.time() + 120
        statuses: dict[str, str] = {}
        while time.time() < deadline:
            statuses = {i: client.get(f"/v3/documents/{i}").json()["status"] for i in ids}
            if all(s == "ready" for s in statuses.values()):
                break
            time.sleep(0.3)
        assert set(statuses.values()) == {"ready"}, statuses
        for i in ids:
            doc = client.get(f"/v3/documents/{i}").json()
            assert doc["chunk_count"] == 1 and len(doc["chunks"]) == 1  # processed exactly once
        res = client.post("/v3/recall", json={"query": "ferry harbour log", "limit": 20}).json()
        assert sorted(r["document_id"] for r in res["results"]) == sorted(ids)
        # The browser extension, not yet allowed: refused, and the person running serve is told the setting
        refused = client.post("/v3/recall", json={"query": "ferry"}, headers={"Origin": EXTENSION_ORIGIN})
        assert refused.status_code == 403
    finally:
        proc2.terminate()
        proc2.wait(20)
    output = proc2.stdout.read()
    assert (f"refused a request from the browser extension {EXTENSION_ORIGIN}: to let it in, start memlane "
            f"with --allow-origin {EXTENSION_ORIGIN} (or add it to MEMLANE_ALLOWED_ORIGINS)") in output
