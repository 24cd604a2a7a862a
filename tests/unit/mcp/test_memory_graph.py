"""The memory graph behind the memory-graph tool and GET /v3/memory-graph: nodes from tags and
extracted entities with document counts, co-occurrence edges, caps, tenant scope."""

from __future__ import annotations

import pytest

from memlane.collections import service as collections
from memlane.collections.models import IngestIn
from memlane.domain.errors import NotFoundError
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn
from memlane.services.graph import build_memory_graph
from memlane.services.keys import ensure_organization
from memlane.services.memory import save_memory


def remember(stack, who, content, tags, content_type=None, **metadata):
    body = MemoryIn(content=content, content_type=content_type, metadata={"tags": tags, **metadata})
    return save_memory(stack.services, who, body, inline=True)


def test_nodes_count_documents_and_edges_weigh_shared_documents(stack, who):
    remember(stack, who, "Transformers changed NLP.", ["machine learning", "transformers"], author="Ada")
    remember(stack, who, "TensorFlow trains transformers.",
             ["machine learning", "transformers", "tensorflow"])
    remember(stack, who, "Gradient descent basics.", ["machine learning"],
             entities=[{"name": "Adam", "type": "Algorithm"}, "SGD"])
    remember(stack, who, "def fit(model):\n    return model.train()\n", ["training"], content_type="code",
             language="python")
    graph = build_memory_graph(stack.services, who)
    nodes = {n.id: (n.label, n.type, n.document_count) for n in graph.nodes}
    assert nodes["concept:machine learning"] == ("machine learning", "concept", 3)
    assert nodes["concept:transformers"] == ("transformers", "concept", 2)
    assert nodes["person:ada"] == ("Ada", "person", 1)
    assert nodes["algorithm:adam"] == ("Adam", "algorithm", 1)
    assert nodes["entity:sgd"] == ("SGD", "entity", 1)
    # the language of code is a technology (prose's "en" is not)
    assert [n for n in nodes if n.startswith("technology:")] == ["technology:python"]
    assert nodes["technology:python"] == ("python", "technology", 1)
    assert graph.nodes[0].id == "concept:machine learning"  # most frequent first
    edges = {(e.source, e.target): (e.relation, e.weight) for e in graph.edges}
    assert edges[("concept:machine learning", "concept:transformers")] == ("co_occurs", 2)
    # the tag "tensorflow" and the tool TensorFlow the text names are one node, the entity's
    assert "concept:tensorflow" not in nodes and nodes["tool:tensorflow"][2] == 1
    assert edges[("concept:transformers", "tool:tensorflow")] == ("co_occurs", 1)
    assert graph.edges[0].weight == 2


def test_caps_and_scope(stack, who, org):
    for i in range(6):
        remember(stack, who, f"note number {i}", [f"topic{i}", "shared"])
    capped = build_memory_graph(stack.services, who, max_nodes=3, max_edges=1)
    assert len(capped.nodes) == 3 and capped.nodes[0].id == "concept:shared"
    assert len(capped.edges) == 1
    kept = {n.id for n in capped.nodes}
    assert all(e.source in kept and e.target in kept for e in capped.edges)
    # another tenant's project is a 404, like one that does not exist
    other, _ = ensure_organization(stack.metadata, "other")
    them = Principal(organization_id=other.id, key_id="k2")
    default = stack.metadata.list_projects(org.id)[0]
    with pytest.raises(NotFoundError):
        build_memory_graph(stack.services, them, default.id)
    assert build_memory_graph(stack.services, them).nodes == []


def test_raged_filter_tags_are_not_topics(stack, who):
    collections.ingest(stack.services, who, IngestIn(items=[{
        "id": "a", "text": "hello", "metadata": {"repoId": "repo", "lang": "ts", "path": "src/a.ts",
                                                 "tags": ["frontend"]}}]))
    ids = {n.id for n in build_memory_graph(stack.services, who).nodes}
    assert "concept:frontend" in ids
    assert not any(i.startswith("concept:raged-") for i in ids)


def test_extracted_entities_are_nodes_by_kind_with_memory_edges(stack, who):
    """The local summarizer's entities ({text, kind}) become nodes a client colours by kind, and
    each memory that names one is a node with a `mentions` edge to it."""
    lease = save_memory(stack.services, who, MemoryIn(content=(
        "Lease for the flat on Baker Street. Signed with Dr. Ana Ruiz of Acme Properties Ltd on 3 May 2026. "
        "Notice period: three months. Rent is paid through Stripe."), title="Flat lease"), inline=True)
    trip = save_memory(stack.services, who, MemoryIn(content=(
        "Trip planning: Ana Ruiz recommends visiting Lisbon in June; book the hotel near the river."),
        title="Lisbon trip"), inline=True)
    graph = build_memory_graph(stack.services, who)
    by_id = {n.id: n for n in graph.nodes}
    assert by_id["person:ana ruiz"].kind == "person" and by_id["person:ana ruiz"].document_count == 2
    assert by_id["organization:acme properties ltd"].kind == "organization"
    assert by_id["place:baker street"].kind == "place"
    assert by_id["place:lisbon"].kind == "place"
    assert by_id["tool:stripe"].kind == "tool"
    assert by_id[f"memory:{lease.id}"].kind == "memory" and by_id[f"memory:{lease.id}"].label == "Flat lease"
    mentions = {(e.source, e.target) for e in graph.edges if e.relation == "mentions"}
    assert (f"memory:{lease.id}", "person:ana ruiz") in mentions
    assert (f"memory:{trip.id}", "person:ana ruiz") in mentions
    assert (f"memory:{trip.id}", "place:lisbon") in mentions
    assert (f"memory:{trip.id}", "place:baker street") not in mentions
    # tags stay tags
    assert all(n.kind == "tag" for n in graph.nodes if n.type == "concept")


def test_a_tag_and_an_entity_of_the_same_word_are_one_node(stack, who):
    remember(stack, who, "Flights to Lisbon on 15 May, apartment in Alfama.", ["lisbon", "travel"])
    remember(stack, who, "Portuguese course before the trip.", ["lisbon"])
    graph = build_memory_graph(stack.services, who)
    lisbon = [n for n in graph.nodes if n.label.lower() == "lisbon"]
    assert [(n.id, n.kind, n.document_count) for n in lisbon] == [("place:lisbon", "place", 2)]


def test_entities_get_a_third_of_the_nodes_when_tags_are_many(stack, who):
    """Forty memories with two tags each, shared by many, and a few naming tools: the tags alone
    would fill every node; a third of them go to the entities."""
    for i in range(40):
        remember(stack, who, f"Note {i} about the weekly report.", [f"topic{i % 20}", f"area{i % 10}"])
    for tool in ("Terraform", "Postgres", "Stripe", "MySQL", "Kubernetes", "Grafana", "Airflow", "Redis"):
        remember(stack, who, f"We moved the billing jobs to {tool} last week.", [])
    graph = build_memory_graph(stack.services, who, max_nodes=24)
    topics = [n for n in graph.nodes if n.kind != "memory"]
    assert len(topics) == 24
    assert sum(1 for n in topics if n.kind != "tag") >= 8
    assert {"Terraform", "Postgres", "Stripe"} <= {n.label for n in topics}
