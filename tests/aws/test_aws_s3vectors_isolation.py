"""Isolation on S3 Vectors, on every read path: a local memlane server on 127.0.0.1 whose search index
is S3VectorsIndex (moto + the fake QueryVectors of tests/s3vectors_fake.py), two organizations with the
same words and the other one's matches better. Recall, the context pack, related memories, a docset's
/retrieve and a collection's /query answer with the asking organization's data only, and every
QueryVectors those requests sent named the asking organization's own index (its filter names the
organization too)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest_helpers import free_port
from fakes import HashEmbedder
from s3vectors_fake import FakeS3Vectors

from memlane.adapters.aws import s3vectors_layout as lay
from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.s3vectors_index import S3VectorsIndex
from memlane.config import Settings
from memlane.domain.docsets import Docset
from memlane.local.server import LocalServer
from memlane.services.keys import create_key

pytestmark = pytest.mark.integration

BUCKET = "memlane-isolation-vectors"
SECRET = "The vault code is 4711 and the vault opens at dawn."
LOUDER = "vault vault code code 4711 4711 the vault code"
MANUAL = "Manual, chapter 2: the vault code 4711 is changed on the first of every month."


class World:
    def __init__(self, server: LocalServer, fake: FakeS3Vectors, index: S3VectorsIndex, keys: dict[str, str]) -> None:
        self.server, self.fake, self.index, self.keys = server, fake, index, keys
        self.url = f"http://127.0.0.1:{server.port}"
        self.orgs: dict[str, str] = {}
        self.docs: dict[str, set[str]] = {"a": set(), "b": set()}
        self.projects: dict[str, str] = {}

    def client(self, who: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.keys[who]}"}, timeout=60)

    def queries_since(self, mark: int) -> list[dict[str, Any]]:
        return [p for op, p in self.fake.calls[mark:] if op == "QueryVectors"]


@pytest.fixture
def world(aws: None, tmp_path) -> Iterator[World]:
    embedder = HashEmbedder()
    fake = FakeS3Vectors(new_client("s3vectors"))
    fake.create_vector_bucket(vectorBucketName=BUCKET)
    index = S3VectorsIndex(fake, BUCKET, embedder.dimension, embedder_id=embedder.id)
    server = LocalServer(Settings(data_dir=tmp_path / "data"), host="127.0.0.1", port=free_port(), embedder=embedder,
                         search_index=index)
    key_a = server.prepare()
    server.start_in_thread()
    key_b, _, _ = create_key(server.stack.metadata, "other organization")
    w = World(server, fake, index, {"a": str(key_a), "b": key_b})
    try:
        _fill(w)
        yield w
    finally:
        server.shutdown()


def _fill(w: World) -> None:
    """Both organizations: a project of the same name, the same memory, a docset, a collection; B also
    has many memories that match better. Writes are checked indexed before the reads start."""
    for who, extra in (("a", 0), ("b", 12)):
        with w.client(who) as c:
            w.orgs[who] = c.get("/v3/whoami").json()["organization_id"]
            project = c.post("/v3/projects", json={"name": "Plans"}).json()["id"]
            w.projects[who] = project
            bodies = [{"content": SECRET, "project_id": project, "title": "Vault"},
                      {"content": "We keep the vault code in the safe near the vault door.", "project_id": project}]
            bodies += [{"content": f"{LOUDER} {i}", "project_id": project} for i in range(extra)]
            for body in bodies:
                r = c.post("/v3/memory", json=body)
                assert r.status_code in (200, 201), r.text
                w.docs[who].add(r.json()["id"])
            docs_project = c.post("/v3/projects", json={"name": "Vault manual"}).json()["id"]
            docset = Docset(organization_id=w.orgs[who], project_id=docs_project, name="Vault manual",
                            base_url="https://docs.example/", seed_url="https://docs.example/", seed_slug="",
                            created_at=int(time.time() * 1000), updated_at=int(time.time() * 1000))
            w.server.docsets.store.create_docset(docset)
            for text in (MANUAL, *(f"{LOUDER} manual {i}" for i in range(extra))):
                r = c.post("/v3/memory", json={"content": text, "project_id": docs_project, "title": "Manual"})
                w.docs[who].add(r.json()["id"])
            r = c.post("/ingest", json={"collection": "vault", "items": [
                {"id": f"item-{i}", "text": text, "metadata": {"lang": "en"}}
                for i, text in enumerate([SECRET, *(f"{LOUDER} item {i}" for i in range(extra))])]})
            assert r.status_code == 200, r.text
    for who in ("a", "b"):  # everything saved is in its organization's index (the collection items too)
        indexed = w.index.document_ids(w.orgs[who])
        assert indexed >= w.docs[who] and len(indexed) > len(w.docs[who])
        w.docs[who] = indexed
    assert not w.docs["a"] & w.docs["b"]


def _own(w: World, who: str, mark: int) -> None:
    sent = w.queries_since(mark)
    assert sent, "the request ran no search"
    for request in sent:
        assert request["indexName"] == w.index.index_for(w.orgs[who])
        assert {lay.ORGANIZATION: {"$eq": w.orgs[who]}} in request["filter"]["$and"]


def ask(w: World, method: str, path: str, **kwargs: Any) -> Any:
    """Organization A's request; its answer, after checking that every search it ran was A's own."""
    mark = len(w.fake.calls)
    with w.client("a") as a:
        r = a.request(method, path, **kwargs)
    assert r.status_code == 200, r.text
    _own(w, "a", mark)
    return r.json()


def test_recall_answers_with_the_asking_organizations_memories_only(world):
    with world.client("b") as b:  # B's own recall finds B's louder memories (they are searchable)
        theirs = {r["document_id"] for r in b.post("/v3/recall", json={"query": "vault code 4711", "limit": 20,
                                                                         "min_relevance": 0}).json()["results"]}
        assert len(theirs & world.docs["b"]) >= 10
    answer = ask(world, "POST", "/v3/recall", json={"query": "vault code 4711", "limit": 20, "min_relevance": 0})
    found = {d["document_id"] for d in answer["results"]}
    assert found and found <= world.docs["a"] and not found & world.docs["b"]
    assert "4711" in json.dumps(answer["results"])


def test_the_context_pack_holds_the_asking_organizations_pieces_only(world):
    pieces = ask(world, "POST", "/v3/context", json={"query": "vault code 4711", "min_relevance": 0,
                                                     "budget": 50_000})["pieces"]
    assert pieces and {p["document_id"] for p in pieces} <= world.docs["a"]
    assert {"memory", "docs"} <= {p["kind"] for p in pieces}  # both memories and the docset were searched


def test_related_memories_are_the_asking_organizations_only(world):
    with world.client("a") as a:
        secret_id = next(d for d in world.docs["a"]
                         if a.get(f"/v3/documents/{d}").json().get("title") == "Vault"
                         and a.get(f"/v3/documents/{d}").json()["project_id"] == world.projects["a"])
    related = {d["document_id"] for d in ask(world, "GET", f"/v3/documents/{secret_id}/related",
                                             params={"limit": 20})["related"]}
    assert related <= world.docs["a"] - {secret_id} and not related & world.docs["b"]


def test_a_docsets_retrieve_returns_the_asking_organizations_pages_only(world):
    results = ask(world, "POST", "/retrieve", json={"query": "vault code 4711", "topK": 20,
                                                     "minRelevance": 0})["results"]
    assert results and {x["pageId"] for x in results} <= world.docs["a"]
    assert all("4711" in x["content"] for x in results)


def test_a_collections_query_returns_the_asking_organizations_items_only(world):
    answer = ask(world, "POST", "/query", json={"collection": "vault", "query": "vault code 4711", "topK": 20,
                                                "strategy": "hybrid"})
    assert [x["id"] for x in answer["results"]] == ["item-0:0"]  # A has one item; B's twelve louder ones never appear
