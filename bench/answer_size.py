"""`python -m bench.answer_size`: how big raged's /query answer gets, and how much the server's
memory grows for it (issue 34, finding 4).

The attack as filed: one /ingest item of ~180 KB of text with a 1 MB metadata value, then /query
at topK 100 (a 96 MB answer, +265 MB of server RSS on d10c8d6). Here: the same item with the
largest metadata a memory may now hold (64 KB), and the 1 MB item's answer (refused at ingest).

A real server in a process of its own (the embedded default: MiniLM, SQLite, on loopback), so its
RSS is the server's alone: VmRSS before and after the query (what the request left behind) and the
growth of VmHWM (the peak while it ran, reset just before). Targets: the answer under 5 MB, RSS growth at most 50 MB.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.common import free_port, machine, write_section

TEXT_CHARS = 180_000
LINE = "The retry loop backs off exponentially before the job lands in the dead-letter queue.\n"
_SERVER = """
import sys
from pathlib import Path
from memlane.adapters.local.embedder import MiniLMEmbedder
from memlane.config import Settings
from memlane.local.server import LocalServer
from memlane.services.keys import create_key
server = LocalServer(Settings(data_dir=Path(sys.argv[1])), port=int(sys.argv[2]), embedder=MiniLMEmbedder())
server.prepare()
secret, _, _ = create_key(server.stack.metadata, "bench", "bench", rate_limit_per_minute=1_000_000)
print(secret, flush=True)
server.serve_forever()
"""


def _status(pid: int, field: str) -> float:
    """A /proc/<pid>/status figure in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak(pid: int) -> None:
    """VmHWM back to the current RSS (Linux: 5 > clear_refs), so its rise is this request's peak."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


def _metadata(n_bytes: int) -> dict:
    base = {"repoId": "acme/app", "path": "src/retry.py", "lang": "py", "blob": ""}
    return {**base, "blob": "m" * max(0, n_bytes - len(json.dumps(base, separators=(",", ":"))))}


def measure(url: str, key: str, pid: int, metadata_bytes: int, collection: str) -> dict:
    headers = {"Authorization": f"Bearer {key}"}
    text = (LINE * (TEXT_CHARS // len(LINE) + 1))[:TEXT_CHARS]
    with httpx.Client(base_url=url, headers=headers, timeout=600) as c:
        ingest = c.post("/ingest", json={"collection": collection, "items": [
            {"id": "retry", "text": text, "metadata": _metadata(metadata_bytes)}]})
        row = {"metadata": f"{metadata_bytes / 1024:,.0f} KB", "ingest": ingest.status_code}
        if ingest.status_code != 200:
            return {**row, "error": ingest.json().get("error", "").split(";")[0]}
        c.post("/query", json={"collection": collection, "query": "warm up", "topK": 1})
        time.sleep(0.5)
        _reset_peak(pid)
        rss, peak = _status(pid, "VmRSS"), _status(pid, "VmHWM")
        started = time.perf_counter()
        answer = c.post("/query", json={"collection": collection, "query": "retry loop dead-letter queue",
                                        "topK": 100})
        took = time.perf_counter() - started
        time.sleep(0.5)
        results = answer.json()["results"]
        omitted = sum(1 for r in results if r["payload"].get("metadataOmitted"))
        return {**row, "chunks": ingest.json()["upserted"], "results": len(results), "omitted": omitted,
                "answer_mb": len(answer.content) / 1024 / 1024, "rss_growth_mb": _status(pid, "VmRSS") - rss,
                "peak_growth_mb": _status(pid, "VmHWM") - peak, "seconds": took}


def run(sizes: list[int]) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-c", _SERVER, str(Path(tmp) / "data"), str(port)],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            key = proc.stdout.readline().strip()
            url = f"http://127.0.0.1:{port}"
            for _ in range(600):
                try:
                    if httpx.get(url + "/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            return [measure(url, key, proc.pid, size, f"c{i}") for i, size in enumerate(sizes)]
        finally:
            proc.terminate()
            proc.wait(30)


def render(rows: list[dict], command: str) -> str:
    lines = [
        "## raged /query at topK 100: answer size and server memory (issue 34, finding 4)",
        "",
        f"Machine: {machine()}. Date: {datetime.now(UTC):%Y-%m-%d}.",
        "",
        f"Reproduce: `{command}`.",
        "",
        "A real server in its own process (MiniLM, SQLite, loopback). One /ingest item of 180,000 characters "
        "(100 chunks) with metadata of the size shown, then /query `topK: 100`. RSS growth: VmRSS after the "
        "query minus before; peak growth: VmHWM's rise during it (reset before it). Targets: answer < 5 MB, RSS growth ≤ 50 MB.",
        "",
        "| metadata | ingest | results | metadata omitted | answer | RSS growth | peak growth | time |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['metadata']} | {r['ingest']}: {r['error']} | – | – | – | – | – | – |")
            continue
        lines.append(f"| {r['metadata']} | {r['ingest']} | {r['results']} of {r['chunks']} chunks | {r['omitted']} "
                     f"| {r['answer_mb']:.2f} MB | {r['rss_growth_mb']:+.1f} MB | {r['peak_growth_mb']:+.1f} MB "
                     f"| {r['seconds'] * 1000:.0f} ms |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", type=Path, help="BENCHMARKS.md to update")
    parser.add_argument("--sizes", default="1024,65536,1048576", help="metadata bytes per run")
    args = parser.parse_args()
    rows = run([int(s) for s in args.sizes.split(",")])
    text = render(rows, "python -m bench.answer_size --write BENCHMARKS.md")
    print(text)
    if args.write:
        write_section(args.write, "answer-size", text)


if __name__ == "__main__":
    main()
