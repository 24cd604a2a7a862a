"""memlane_client against a real local server on loopback (the hashing embedder: fast, and
lexical enough that a query with a memory's words finds it): saves with idempotency keys,
recall with filters and the floor, pagination, typed errors with the server's text, the async
client, the OpenAI tools run through /mcp, the package built as a wheel and imported from it; and
retries over real HTTP against a fake server on loopback that answers 429 and 5xx."""

from __future__ import annotations

import asyncio
import http.server
import json
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest
from memlane_client import (
    AsyncMemlaneClient,
    AuthenticationError,
    BadRequest,
    MemlaneClient,
    NotFound,
    RetryPolicy,
    ServerError,
)
from memlane_client.openai_tools import openai_tools, run_tool_call

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def memlane(hash_server):
    with MemlaneClient(hash_server.url, hash_server.key, timeout=30) as client:
        yield client


def test_save_recall_and_typed_errors_against_a_server(memlane, hash_server):
    project = memlane.create_project("Travel")
    first = memlane.remember("The ferry to Vashon leaves at nine from Fauntleroy.", title="Ferry",
                             project_id=project["id"], tags=["boat"], idempotency_key="ferry-1")
    again = memlane.remember("The ferry to Vashon leaves at nine from Fauntleroy.", title="Ferry",
                             project_id=project["id"], tags=["boat"], idempotency_key="ferry-1")
    assert first["status"] == "ready" and again["id"] == first["id"]
    memlane.remember("Pack the passport and the charger.", project_id=project["id"], tags=["packing"])

    found = memlane.recall("ferry Vashon Fauntleroy", project_id=project["id"], filters={"tags": ["boat"]},
                           min_relevance=0)
    assert [r["document_id"] for r in found["results"]] == [first["id"]]
    assert found["floor"] == 0 and found["results"][0]["relevance"] is not None

    with pytest.raises(BadRequest) as bad:
        memlane.recall("ferry", min_relevance=5)
    assert bad.value.status == 400 and bad.value.error.startswith("min_relevance"), bad.value.error
    with pytest.raises(NotFound):
        memlane.document("00000000-0000-4000-8000-000000000000")
    with MemlaneClient(hash_server.url, "mlk_not_a_key") as stranger, pytest.raises(AuthenticationError):
        stranger.whoami()

    deleted = memlane.delete_document(first["id"])
    assert deleted["deleted"] is True and memlane.deletion(deleted["receipt"]["id"])["verified"] is True


def test_pagination_walks_every_document_of_a_project(memlane):
    pid = memlane.create_project("Many")["id"]
    saved = {memlane.remember(f"Note number {i} about topic {i}.", project_id=pid)["id"] for i in range(5)}
    assert memlane.project_documents(pid, limit=2)["next_cursor"]
    listed = [d["id"] for d in memlane.iter_project_documents(pid, page_size=2)]
    assert len(listed) == 5 and set(listed) == saved


def test_the_async_client_against_a_server(hash_server):
    async def run() -> tuple[str, list[str], str]:
        async with AsyncMemlaneClient(hash_server.url, hash_server.key, timeout=30) as m:
            pid = await m.project_id("Async")
            assert pid is not None
            saved = await asyncio.gather(*(m.remember(f"Async note {w}", project_id=pid)
                                           for w in ("alpha", "bravo", "charlie")))
            found = await m.recall("Async note bravo", project_id=pid, limit=1, min_relevance=0)
            listed = [d["id"] async for d in m.iter_project_documents(pid, page_size=2)]
            who = await m.whoami()
            assert sorted(listed) == sorted(s["id"] for s in saved)
            return found["results"][0]["title"], listed, who["organization_id"]

    title, listed, org = asyncio.run(run())
    assert "bravo" in title.lower() and len(listed) == 3 and org


def test_openai_tools_run_the_mcp_tools_on_the_server(memlane):
    names = [t["function"]["name"] for t in openai_tools(["memory", "recall"])]
    assert names == ["memory", "recall"]
    saved = run_tool_call(memlane, "memory", json.dumps({"content": "The office wifi password is on the fridge.",
                                                         "title": "Wifi", "project": "Office"}))
    assert "Wifi" in saved
    recalled = run_tool_call(memlane, "recall", {"query": "office wifi password fridge", "project": "Office"})
    assert "> The office wifi password is on the fridge." in recalled.splitlines()
    failed = run_tool_call(memlane, "recall", {"query": "x", "project": "No such project"})
    assert failed.startswith("Error") and "No such project" in failed
    with pytest.raises(ValueError, match="no memlane tool named 'shell'"):
        run_tool_call(memlane, "shell", {})


def test_the_package_builds_as_a_wheel_and_imports_from_it(tmp_path, hash_server):
    """pip wheel offline (no build isolation: setuptools from this environment), installed into
    a folder of its own; the client, its models and its MCP tool schemas come from the wheel."""
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(wheels), str(ROOT / "clients" / "python")], check=True, cwd=tmp_path)
    [wheel] = wheels.glob("memlane_client-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"memlane_client/models.py", "memlane_client/mcp_tools.json", "memlane_client/py.typed",
            "memlane_client/integrations/langchain.py"} <= set(names)
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target",
                    str(site), str(wheel)], check=True)
    probe = (
        "import memlane_client, sys; from memlane_client.openai_tools import openai_tools\n"
        f"assert memlane_client.__file__.startswith({str(site)!r}), memlane_client.__file__\n"
        f"c = memlane_client.MemlaneClient({hash_server.url!r}, {hash_server.key!r})\n"
        "print(memlane_client.API_VERSION, len(openai_tools()), c.whoami()['organization_id'] != '')\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], env={"PYTHONPATH": str(site)}, capture_output=True,
                         text=True, check=True, cwd=tmp_path)
    version, tools, ok = out.stdout.split()
    assert version == json.loads((ROOT / "clients/typescript/openapi.json").read_text())["info"]["version"]
    assert int(tools) >= 5 and ok == "True"


class _Scripted(http.server.BaseHTTPRequestHandler):
    """A fake memlane on loopback that answers from a script: (status, body, headers) per request."""

    script: list[tuple[int, dict, dict[str, str]]] = []
    seen: list[tuple[str, str, str | None]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.seen.append((self.command, self.path, self.headers.get("Idempotency-Key")))
        status, body, headers = self.script.pop(0) if self.script else (500, {"error": "script ran out"}, {})
        data = json.dumps(body).encode()
        self.send_response(status)
        for k, v in {"Content-Type": "application/json", "Content-Length": str(len(data)), **headers}.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def fake_memlane():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Scripted.script, _Scripted.seen = [], []
    yield f"http://127.0.0.1:{server.server_address[1]}", _Scripted
    server.shutdown()
    server.server_close()


def test_retries_over_http_honour_retry_after_and_keep_the_idempotency_key(fake_memlane):
    url, fake = fake_memlane
    fake.script = [(429, {"error": "rate limit of 60 requests per minute exceeded"}, {"Retry-After": "1"}),
                   (503, {"error": "busy"}, {}),
                   (201, {"id": "d1", "status": "ready"}, {})]
    started = time.monotonic()
    with MemlaneClient(url, "mlk_x", retry=RetryPolicy(max_retries=2, base=0.05)) as memlane:
        assert memlane.remember("Ferry at nine.")["id"] == "d1"
    assert time.monotonic() - started >= 1.0  # Retry-After: 1 was waited for
    keys = [key for _, _, key in fake.seen]
    assert len(keys) == 3 and keys[0] and len(set(keys)) == 1

    fake.script = [(502, {"error": "bad gateway"}, {}), (500, {"error": "internal error (r-2)"}, {})]
    fake.seen = []

    async def spent() -> None:
        async with AsyncMemlaneClient(url, "mlk_x", retry=RetryPolicy(max_retries=1, base=0.05)) as m:
            await m.whoami()

    with pytest.raises(ServerError) as exc:
        asyncio.run(spent())
    assert exc.value.error == "internal error (r-2)" and len(fake.seen) == 2
