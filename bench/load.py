"""Concurrent clients saving and recalling against a running server (reliability row 19).

Each client saves unique notes and recalls them, with its own key so per-key rate limits stay
out of the way; afterwards every acknowledged save must exist exactly once.
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid
from dataclasses import dataclass, field

import httpx


@dataclass
class LoadReport:
    clients: int
    seconds: float
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    save_ms: list[float] = field(default_factory=list)
    recall_ms: list[float] = field(default_factory=list)
    saved_ids: list[str] = field(default_factory=list)

    @staticmethod
    def _pct(values: list[float], q: float) -> float:
        if not values:
            return 0.0
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))]

    def summary(self) -> dict:
        return {
            "clients": self.clients,
            "seconds": round(self.seconds, 1),
            "requests": self.requests,
            "errors": len(self.errors),
            "saves": len(self.save_ms),
            "recalls": len(self.recall_ms),
            "throughput_rps": round(self.requests / self.seconds, 1) if self.seconds else 0.0,
            "save_p50_ms": round(statistics.median(self.save_ms), 1) if self.save_ms else 0.0,
            "save_p95_ms": round(self._pct(self.save_ms, 0.95), 1),
            "recall_p50_ms": round(statistics.median(self.recall_ms), 1) if self.recall_ms else 0.0,
            "recall_p95_ms": round(self._pct(self.recall_ms, 0.95), 1),
        }


def run_load(base_url: str, keys: list[str], seconds: float, rounds: int | None = None) -> LoadReport:
    """Every client saves a note and recalls it, again and again, until `seconds` have passed
    (a benchmark) or it has done `rounds` of them (a test: the same work however busy the machine)."""
    report = LoadReport(clients=len(keys), seconds=seconds)
    lock = threading.Lock()
    deadline = time.monotonic() + seconds if rounds is None else float("inf")

    def client(n: int, key: str) -> None:
        with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
            i = 0
            while time.monotonic() < deadline and (rounds is None or i < rounds):
                marker = uuid.uuid4().hex[:10]
                body = {"content": f"Load client {n} note {i} marker {marker}: the tide was {i % 7} metres."}
                t = time.perf_counter()
                try:
                    r = c.post("/v3/memory", json=body)
                    save_ms = (time.perf_counter() - t) * 1000
                    t = time.perf_counter()
                    q = c.post("/v3/recall", json={"query": f"marker {marker}", "limit": 3})
                    recall_ms = (time.perf_counter() - t) * 1000
                except httpx.HTTPError as exc:
                    with lock:
                        report.errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                with lock:
                    report.requests += 2
                    if r.status_code not in (200, 201, 202):
                        report.errors.append(f"save {r.status_code}: {r.text[:200]}")
                    else:
                        report.save_ms.append(save_ms)
                        report.saved_ids.append(r.json()["id"])
                    if q.status_code != 200:
                        report.errors.append(f"recall {q.status_code}: {q.text[:200]}")
                    else:
                        report.recall_ms.append(recall_ms)
                i += 1

    threads = [threading.Thread(target=client, args=(n, k)) for n, k in enumerate(keys)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report.seconds = time.monotonic() - started
    return report
