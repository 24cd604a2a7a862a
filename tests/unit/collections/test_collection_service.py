"""raged collections through the service: ingest, re-ingest, filters, strategies, tenancy."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from fakes import FixedClock
from pydantic import ValidationError

from memlane.collections import service
from memlane.collections.models import IngestIn, QueryIn
from memlane.documents.embedded_text import embedding_text
from memlane.domain.principal import Principal
from memlane.ports import SearchScope
from memlane.recall.relevance import query_terms
from memlane.services.keys import ensure_organization

AUTH = "export function login(user, password) {\n  return issueToken(user);\n}\n"
BILLING = "def charge(card, amount):\n    return stripe.charge(card, amount)\n"


@pytest.fixture
def clock(stack):
    c = FixedClock()
    stack.services = replace(stack.services, clock=c)
    return c


def ingest(stack, who, *items, collection="docs"):
    return service.ingest(stack.services, who, IngestIn(collection=collection, items=list(items)))


def query(stack, who, **body):
    return service.query(stack.services, who, QueryIn(**{"collection": "docs", **body}))


def item(base_id, text, **metadata):
    source = f"https://github.com/org/repo#{metadata.get('path', base_id)}"
    return {"id": base_id, "text": text, "source": source, "metadata": metadata}


@pytest.fixture
def repo(stack, who, clock):
    """Three items in two repos, ingested a minute apart (newest last)."""
    ingest(stack, who, item("my-repo:src/auth.ts", AUTH, repoId="my-repo", path="src/auth.ts", lang="ts"))
    clock.advance(minutes=1)
    ingest(stack, who, item("my-repo:lib/billing.py", BILLING, repoId="my-repo", path="lib/billing.py",
                            lang="py"))
    clock.advance(minutes=1)
    ingest(stack, who, item("other:src/main.ts", "console.log('hello world')\n", repoId="other",
                            path="src/main.ts", lang="ts"))


def test_ingest_creates_the_collection_and_stores_chunks_with_base_id_chunk_ids(stack, who, clock):
    long_text = "\n".join(f"line {i} " + "y" * 90 for i in range(60))  # ~5,900 chars → 4 chunks
    out = ingest(stack, who, item("big", long_text, repoId="r", path="docs/big.md", lang="md"),
                 item("small", "one line", repoId="r"))
    assert out.model_dump() == {"ok": True, "upserted": 5}
    project = next(p for p in stack.metadata.list_projects(who.organization_id) if p.name == "docs")
    doc = stack.metadata.get_document(who.organization_id, service.document_id_for(project.id, "big"))
    assert doc is not None and doc.chunk_count == 4 and doc.status == "ready"
    assert doc.metadata["raged"] == {"baseId": "big", "source": "https://github.com/org/repo#docs/big.md",
                                     "repoId": "r", "path": "docs/big.md", "lang": "md",
                                     "tags": ["raged-repo:r", "raged-lang:md", "raged-path:docs/"]}
    res = query(stack, who, filter={"path": "docs/"}, topK=10)
    assert [r.id for r in res.results] == ["big:0", "big:1", "big:2", "big:3"]
    first = res.results[0]
    assert first.score == 1.0 and first.source == "https://github.com/org/repo#docs/big.md"
    assert first.payload == {"text": first.text, "source": first.source, "chunkIndex": 0, "baseId": "big",
                             "repoId": "r", "path": "docs/big.md", "lang": "md"}
    assert all(len(r.text) <= 1800 for r in res.results)


def test_reingesting_an_id_replaces_its_chunks(stack, who, clock):
    long_text = "\n".join("z" * 99 for _ in range(40))  # 3 chunks
    assert ingest(stack, who, item("doc-1", long_text)).upserted == 3
    assert ingest(stack, who, item("doc-1", "now a single short line about zebras")).upserted == 1
    res = query(stack, who, query="zebras", strategy="hybrid", topK=10)
    assert [r.id for r in res.results] == ["doc-1:0"]
    assert res.results[0].text == "now a single short line about zebras"
    project = stack.metadata.list_projects(who.organization_id)[-1]
    doc_id = service.document_id_for(project.id, "doc-1")
    assert len(stack.metadata.get_chunks(who.organization_id, doc_id)) == 1
    assert stack.index.document_ids(who.organization_id) == {doc_id}
    assert stack.index.chunk_count() == 1  # the old tail chunks left the index too


def test_filters_on_repo_lang_and_path_prefix(stack, who, repo):
    def ids(**body):
        return [r.id for r in query(stack, who, topK=10, **body).results]

    # filter-only (metadata): newest first
    assert ids(filter={"repoId": "my-repo"}) == ["my-repo:lib/billing.py:0", "my-repo:src/auth.ts:0"]
    assert ids(filter={"lang": "ts"}) == ["other:src/main.ts:0", "my-repo:src/auth.ts:0"]
    assert ids(filter={"path": "src/"}) == ["other:src/main.ts:0", "my-repo:src/auth.ts:0"]
    assert ids(filter={"path": "src/au"}) == ["my-repo:src/auth.ts:0"]  # a prefix, not only a directory
    assert ids(filter={"repoId": "my-repo", "lang": "ts"}) == ["my-repo:src/auth.ts:0"]
    assert ids(filter={"repoId": "MY-REPO"}) == []  # exact, case-sensitive like raged
    # with text, the filter holds for semantic and hybrid alike
    for strategy in ("semantic", "hybrid"):
        assert set(ids(query="login token user", filter={"lang": "ts"}, strategy=strategy)) <= {
            "my-repo:src/auth.ts:0", "other:src/main.ts:0"}
        assert ids(query="charge card amount", filter={"path": "lib/"}, strategy=strategy) == [
            "my-repo:lib/billing.py:0"]


def test_metadata_results_score_one_and_respect_topk(stack, who, repo):
    res = query(stack, who, filter={"path": "src/"}, topK=1)
    assert [(r.id, r.score) for r in res.results] == [("other:src/main.ts:0", 1.0)]
    assert (res.routing.strategy, res.routing.method, res.routing.rule) == ("metadata", "rule", "filter_only")
    assert isinstance(res.routing.durationMs, int) and res.routing.durationMs >= 0


def test_semantic_scores_are_the_cosine_and_hybrid_uses_the_fusion_weights(stack, who, repo):
    emb = stack.services.embedder
    q = "charge card amount"
    sem = query(stack, who, query=q, strategy="semantic", topK=3)
    top = sem.results[0]
    assert top.id == "my-repo:lib/billing.py:0"
    project = next(p for p in stack.metadata.list_projects(who.organization_id) if p.name == "docs")
    chunk = stack.metadata.get_chunks(who.organization_id,
                                      service.document_id_for(project.id, "my-repo:lib/billing.py"))[0]
    cosine = sum(a * b for a, b in zip(emb.embed_query(q), emb.embed_documents([embedding_text(chunk)])[0],
                                       strict=True))
    assert math.isclose(top.score, round(cosine, 6), abs_tol=1e-6)
    hyb = query(stack, who, query=q, strategy="hybrid", topK=3)
    best = hyb.results[0]
    assert best.id == "my-repo:lib/billing.py:0"
    # 0.6 · cosine + 0.4 · BM25 over the batch's best, but over no less than 5 per query word
    # (FusionWeights.text_reference: a weak best match stays weak) + 0.1 · recency (saved one minute
    # before "now")
    scope = SearchScope(organization_id=who.organization_id, project_ids=(project.id,), now=stack.services.clock.now())
    bm25 = max(c.score for c in stack.services.index.search(scope, q, None, 10).text if c.chunk_id == chunk.id)
    text_share = bm25 / max(bm25, stack.services.settings.fusion.text_reference * query_terms(q))
    assert 0 < text_share < 1  # three words of a small corpus: a weak text match
    assert math.isclose(best.score, 0.6 * cosine + 0.4 * text_share + 0.1 * math.exp(-1 / (60 * 24 * 30)),
                        abs_tol=2e-6)
    assert hyb.routing.method == "explicit" and hyb.routing.confidence == 1.0


def test_routing_without_a_strategy(stack, who, repo):
    assert query(stack, who, query="issueToken").routing.strategy == "hybrid"
    nl = query(stack, who, query="how does a user log in with a password")
    assert (nl.routing.strategy, nl.routing.method, nl.routing.confidence) == ("semantic", "rule", 0.9)


def test_unknown_collection_is_empty_and_other_tenants_see_nothing(stack, who, repo):
    assert query(stack, who, collection="nope", query="login").results == []
    other_org, _ = ensure_organization(stack.metadata, "other-tenant")
    them = Principal(organization_id=other_org.id, key_id="k2")
    assert query(stack, them, query="login token user", topK=100).results == []
    assert query(stack, them, filter={"repoId": "my-repo"}).results == []
    # the same collection name in another organization is another project
    ingest(stack, them, item("theirs", "login token user of the other tenant"))
    assert [r.id for r in query(stack, them, query="login token user", topK=100).results] == ["theirs:0"]
    assert "theirs:0" not in [r.id for r in query(stack, who, query="login token user", topK=100).results]


def test_request_validation():
    assert QueryIn(query="x", topK=1000).topK == 100
    assert QueryIn(query="x", topK=0).topK == 1
    assert QueryIn(query="x").topK == 8 and QueryIn(query="x").collection == "docs"
    assert QueryIn(filter={"repoId": "r"}).query is None
    with pytest.raises(ValidationError, match="query: is required"):
        QueryIn(collection="docs")
    with pytest.raises(ValidationError, match="query: is required"):
        QueryIn(filter={})  # an empty filter is no filter
    with pytest.raises(ValidationError, match="required for the semantic strategy"):
        QueryIn(filter={"repoId": "r"}, strategy="semantic")
    with pytest.raises(ValidationError, match="strategy"):
        QueryIn(query="x", strategy="graph")
    with pytest.raises(ValidationError, match="filter"):
        QueryIn(query="x", filter={"owner": "me"})
    with pytest.raises(ValidationError, match="items"):
        IngestIn(items=[])
    with pytest.raises(ValidationError, match="items"):
        IngestIn(items=[{"id": str(i), "text": "t"} for i in range(1001)])
    with pytest.raises(ValidationError, match="text"):
        IngestIn(items=[{"id": "a", "text": "   "}])
    with pytest.raises(ValidationError, match="metadata.repoId: must be a string"):
        IngestIn(items=[{"id": "a", "text": "t", "metadata": {"repoId": 5}}])
    # an item without an id takes its source as base id
    assert IngestIn(items=[{"text": "t", "source": "s.md"}]).items[0].base_id == "s.md"
