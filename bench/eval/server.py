"""The server a suite run talks to: memlane's LocalServer on 127.0.0.1 with the embedded default,
its embedder wrapped in the evaluation's embedding cache (bench only), and an HTTP client with a
key; plus what every workload does through the API: projects, saves, waiting, recall."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import free_port
from bench.eval.cache import CachedEmbedder, EmbeddingCache

LIMIT = 10


@dataclass
class Api:
    client: httpx.Client
    settings: Any
    embedder: Any  # the server's embedder (cached)
    memory_fields: frozenset[str] = frozenset()
    recall_fields: frozenset[str] = frozenset()
    recall_ms: list[float] = field(default_factory=list)
    services: Any = None  # the server's services, in this process (bench.recall_record asks the pipeline itself)
    organization_id: str = ""  # the organization of the key the client holds

    @property
    def conversation_signal(self) -> bool:
        return {"conversation_id", "message_index"} <= self.memory_fields

    @property
    def min_relevance(self) -> bool:
        return "min_relevance" in self.recall_fields

    def project(self, name: str) -> str:
        """The project of that name, created when missing (a kept data directory reuses it)."""
        r = self.client.get("/v3/projects")
        r.raise_for_status()
        found = [p["id"] for p in r.json()["projects"] if p["name"] == name]
        if found:
            return str(found[0])
        r = self.client.post("/v3/projects", json={"name": name})
        r.raise_for_status()
        return str(r.json()["id"])

    def save_all(self, bodies: list[dict[str, Any]], refused: list[str] | None = None) -> list[str]:
        """Each body through POST /v3/memory, one after another; waits until every one is ready.
        Identical content is deduplicated by the product: both saves name one document. With
        `refused`, a save the API answers with a 4xx gets "" for its id and its error appended there
        (and a document that fails to index is left out the same way); without, either stops the run."""
        ids: list[str] = []
        queued: list[str] = []
        for body in bodies:
            r = self.client.post("/v3/memory", json=body)
            if 400 <= r.status_code < 500 and refused is not None:
                refused.append(f"{r.status_code}: {r.text[:200]}")
                ids.append("")
                continue
            if r.status_code >= 400:
                raise RuntimeError(f"POST /v3/memory {r.status_code}: {r.text[:300]}")
            out = r.json()
            ids.append(str(out["id"]))
            if out["status"] != "ready":
                queued.append(str(out["id"]))
        failed = self.wait_ready(queued, tolerate_failures=refused is not None)
        if refused is not None:
            refused += [f"document {d} failed to index" for d in failed]
        return ["" if d in failed else d for d in ids]

    def wait_ready(self, document_ids: list[str], timeout_s: float = 1800.0, tolerate_failures: bool = False) -> set[str]:
        """Waits until each document is ready; returns those that failed (only with tolerate_failures)."""
        deadline = time.monotonic() + timeout_s
        pending = list(document_ids)
        failed: set[str] = set()
        while pending:
            status = self.client.get(f"/v3/documents/{pending[0]}").json()["status"]
            if status == "ready":
                pending.pop(0)
            elif status == "failed" and tolerate_failures:
                failed.add(pending.pop(0))
            elif status == "failed" or time.monotonic() > deadline:
                raise RuntimeError(f"document {pending[0]} not indexed: {status}")
            else:
                time.sleep(0.2)
        return failed

    def recall(self, query: str, project_id: str, *, default_floor: bool = False) -> tuple[list[str], list[float] | None]:
        """The ranked document ids and, when the server gives one, each result's relevance (with
        min_relevance 0 so that every result is seen and floors are applied offline; with
        `default_floor`, as a client sends it: the server's floor applies and later results move up)."""
        ranked, relevance, _ = self.recall_with_match(query, project_id, default_floor=default_floor)
        return ranked, relevance

    def recall_with_match(self, query: str, project_id: str, *, default_floor: bool = False
                          ) -> tuple[list[str], list[float] | None, list[str] | None]:
        """`recall`, and each result's `match` ("strong" or "weak") when the server marks it."""
        body: dict[str, Any] = {"query": query, "project_id": project_id, "limit": LIMIT}
        if self.min_relevance and not default_floor:
            body["min_relevance"] = 0
        t0 = time.perf_counter()
        r = self.client.post("/v3/recall", json=body)
        self.recall_ms.append((time.perf_counter() - t0) * 1000)
        if r.status_code >= 400:
            raise RuntimeError(f"POST /v3/recall {r.status_code}: {r.text[:300]}")
        results = r.json()["results"]
        ranked = [str(d["document_id"]) for d in results]
        relevance = [d.get("relevance") for d in results]
        match = [d.get("match") for d in results]
        marked = [str(m) for m in match] if results and all(isinstance(m, str) for m in match) else None
        if results and all(isinstance(v, int | float) for v in relevance):
            return ranked, [float(v) for v in relevance], marked
        return ranked, None, marked


def schema_properties(openapi: dict[str, Any], name: str) -> frozenset[str]:
    schema = openapi.get("components", {}).get("schemas", {}).get(name, {})
    return frozenset(schema.get("properties", {}))


@contextmanager
def running_server(
    cache: EmbeddingCache,
    *,
    data_dir: Path | None = None,
    allow_private_network: bool = False,
    docset_settings: Any = None,
    search_index: Callable[[Any], Any] | None = None,
    **overrides: Any,
) -> Iterator[Api]:
    """A LocalServer with the cached embedded default; settings from the environment, then `overrides`.
    `search_index(embedder)`: another SearchIndex for the server (bench.s3vectors_spread: S3 Vectors)."""
    from memlane.adapters.local.embedder import MiniLMEmbedder
    from memlane.config import Settings
    from memlane.local.server import LocalServer
    from memlane.services.keys import create_key

    with tempfile.TemporaryDirectory(prefix="memlane-eval-") as tmp:
        settings = Settings.from_env(data_dir=data_dir or Path(tmp) / "data", embedder="local", **overrides)
        embedder = CachedEmbedder(MiniLMEmbedder(window=settings.embedder_window), cache)
        server = LocalServer(
            settings,
            host="127.0.0.1",
            port=free_port(),
            embedder=embedder,
            allow_private_network=allow_private_network,
            docset_settings=docset_settings,
            search_index=search_index(embedder) if search_index is not None else None,
        )
        server.prepare()
        server.start_in_thread()
        key, _, org = create_key(server.stack.metadata, "eval", "eval", rate_limit_per_minute=10_000_000)
        try:
            with httpx.Client(
                base_url=f"http://127.0.0.1:{server.port}", headers={"Authorization": f"Bearer {key}"}, timeout=300
            ) as client:
                openapi = client.get("/openapi.json").json()
                yield Api(
                    client,
                    settings,
                    embedder,
                    schema_properties(openapi, "MemoryIn"),
                    schema_properties(openapi, "RecallIn"),
                    services=server.stack.services,
                    organization_id=org.id,
                )
        finally:
            server.shutdown()


def describe_settings(settings: Any) -> str:
    """The fusion and the recall stages after it, as configured."""
    w = settings.fusion
    parts = [f"fusion {w.vector}·vector + {w.text}·bm25 + {w.recency}·recency"
             + (" (a code chunk's bm25 share by its own evidence, 1 − exp(−bm25 per query word / 5), not over "
                "the batch maximum)" if getattr(w, "code_text_evidence", False) else "")]
    c = settings.context
    if not c.active:
        parts.append("contextual indexing off")
    else:
        sides = "the memory saved before and the one after" if c.sides == "both" else "the memory saved before"
        how = [f"a text field at {c.text_weight:g}× a body word" if c.text else "",
               "its window's embedding added to the memory's own" if c.vector else ""]
        parts.append(f"contextual indexing: {sides} it, as " + " and ".join(h for h in how if h))
    n = settings.neighbours
    if not n.active:
        parts.append("neighbouring memories off")
    else:
        parts.append(
            f"neighbouring messages + {n.weight} × the best fused score within {n.window} places "
            f"of the same conversation (× {n.decay} per further place)"
        )
    return "; ".join(parts)
