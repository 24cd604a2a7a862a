"""The memory graph (spec §5 GET /v3/memory-graph, §6 memory-graph tool): topics, the entities
memories name, and the memories that connect them.

Nodes are the tags of documents (`concept`, kind `tag`) and the entities extracted at ingestion:
the programming language of code (`technology`, kind `tool`), the author (`person`) and
`metadata.entities` — `{text, kind}` objects from the summarizer (memlane.ingest.entities: kind
`person`, `place`, `organization` or `tool`), or strings, or `{name, type}` objects an LLM gave.
A node's `document_count` is how many documents mention it; a `co_occurs` edge joins two nodes that
occur in the same document, weighted by how many documents they share. Memories that name a kept
entity are nodes too (type and kind `memory`, with `document_id`), joined to each entity they name
by a `mentions` edge (memory → entity). Every list is capped, most frequent (or, for memories,
most connected and newest) first, so a large store still gives a graph a client can draw.
Synthetic filter tags (raged collections) are bookkeeping, not topics, and are left out.

Tags are what people gave (generated keyphrases are not nodes). A tag and an entity of the same
word ("lisbon", "Lisbon") are one node, the entity's. When the documents name entities, at least a
third of the topic nodes (ENTITY_SHARE) are entities, so the tags of many memories cannot push every
person, place and tool out of the picture.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from itertools import combinations
from typing import Any

from pydantic import BaseModel, Field

from memlane.domain.errors import NotFoundError
from memlane.domain.models import ContentType, Document
from memlane.domain.principal import Principal
from memlane.domain.quoting import for_assistant_data
from memlane.ports import RecallFilters, Services

MAX_DOCUMENTS = 2000  # newest documents read to build the graph
MAX_NODES = 50
MAX_EDGES = 200
MAX_NODES_PER_DOCUMENT = 25  # bounds the pairs one document contributes (25·24/2 = 300)
MAX_MENTIONS_PER_MEMORY = 12
EDGE_RELATION = "co_occurs"
MENTION_RELATION = "mentions"
ENTITY_KINDS = ("person", "place", "organization", "tool")
ENTITY_SHARE = 1 / 3  # of the topic nodes, kept for entities when there are that many
TAG_TYPE = "concept"


class GraphNode(BaseModel):
    id: str
    label: str
    type: str
    document_count: int
    kind: str = Field(default="tag", description="What the node is, for colouring: tag, memory, person, place, "
                                                 "organization, tool, or another entity type.")
    document_id: str | None = Field(default=None, description="A memory node's document.")


class GraphEdge(BaseModel):
    source: str
    target: str
    relation: str
    weight: int


class MemoryGraphOut(BaseModel):
    nodes: list[GraphNode]
    edges: list[GraphEdge]


def _synthetic_tags(doc: Document) -> set[str]:
    raged = doc.metadata.get("raged")
    tags = raged.get("tags") if isinstance(raged, dict) else None
    return {t for t in tags if isinstance(t, str)} if isinstance(tags, list) else set()


def _kind_of(node_type: str) -> str:
    return {"concept": "tag", "technology": "tool"}.get(node_type, node_type)


def _entities(doc: Document) -> dict[str, tuple[str, str]]:
    """node id → (label, type) for everything this document mentions."""
    found: dict[str, tuple[str, str]] = {}

    def add(label: Any, kind: str) -> None:
        if not isinstance(label, str):
            return
        label = " ".join(label.split())
        if label and len(label) <= 100:
            found.setdefault(f"{kind}:{label.lower()}", (label, kind))

    skip = _synthetic_tags(doc)
    for tag in doc.tags:
        if tag not in skip:
            add(tag, TAG_TYPE)
    if doc.content_type is ContentType.CODE:
        add(doc.language, "technology")
    add(doc.metadata.get("author"), "person")
    for label, kind in _listed_entities(doc.metadata.get("entities")):
        add(label, kind)
    return found


def _listed_entities(entities: Any) -> Iterator[tuple[Any, str]]:
    """metadata.entities as (label, type): a string is an entity; an object gives its text (or
    name) and its kind (or type), lower case."""
    if not isinstance(entities, list):
        return
    for e in entities:
        if isinstance(e, str):
            yield e, "entity"
        elif isinstance(e, dict):
            given = e.get("kind") or e.get("type")
            kind = given if isinstance(given, str) and given else "entity"
            yield e.get("text") or e.get("name"), str(kind).lower()[:40]


def _tags_named_by_entities(labels: dict[str, tuple[str, str]]) -> dict[str, str]:
    """tag node id → the id of an entity of the same word (ignoring case), which it joins."""
    entity_of_word: dict[str, str] = {}
    for node_id, (label, node_type) in sorted(labels.items()):
        if node_type != TAG_TYPE:
            entity_of_word.setdefault(label.lower(), node_id)
    return {node_id: entity_of_word[label.lower()] for node_id, (label, node_type) in labels.items()
            if node_type == TAG_TYPE and label.lower() in entity_of_word}


def _kept_nodes(counts: Counter[str], labels: dict[str, tuple[str, str]], max_nodes: int) -> list[str]:
    """The `max_nodes` most mentioned nodes, of which at least ENTITY_SHARE entities when there are."""
    ranked = [node for node, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    entities = [node for node in ranked if labels[node][1] != TAG_TYPE]
    reserved = set(entities[:math.ceil(max_nodes * ENTITY_SHARE)])
    rest = [node for node in ranked if node not in reserved][:max_nodes - len(reserved)]
    kept = reserved | set(rest)
    return [node for node in ranked if node in kept]


def build_memory_graph(
    svc: Services,
    who: Principal,
    project_id: str | None = None,
    *,
    max_nodes: int = MAX_NODES,
    max_edges: int = MAX_EDGES,
) -> MemoryGraphOut:
    """The graph of one project (or, with None, all the caller's projects). An unknown project
    (or another tenant's) is a NotFoundError, as everywhere else."""
    if project_id is None:
        project_ids = [p.id for p in svc.metadata.list_projects(who.organization_id)]
    elif svc.metadata.get_project(who.organization_id, project_id) is None:
        raise NotFoundError(f"project_id: project {project_id} not found")
    else:
        project_ids = [project_id]
    if not project_ids:
        return MemoryGraphOut(nodes=[], edges=[])
    docs = svc.metadata.recent_documents(who.organization_id, project_ids, RecallFilters(), svc.clock.now(),
                                         MAX_DOCUMENTS)

    labels: dict[str, tuple[str, str]] = {}
    found = [_entities(doc) for doc in docs]
    for ents in found:
        labels.update({k: v for k, v in ents.items() if k not in labels})
    same_word = _tags_named_by_entities(labels)
    counts: Counter[str] = Counter()
    per_doc: list[list[str]] = []
    for ents in found:
        ids = list(dict.fromkeys(same_word.get(i, i) for i in ents))
        counts.update(ids)
        per_doc.append(ids)

    kept = _kept_nodes(counts, labels, max(0, max_nodes))
    kept_set = set(kept)
    pairs: Counter[tuple[str, str]] = Counter()
    for ids in per_doc:
        present = sorted((i for i in ids if i in kept_set), key=lambda i: (-counts[i], i))
        pairs.update((min(a, b), max(a, b)) for a, b in combinations(present[:MAX_NODES_PER_DOCUMENT], 2))

    nodes = [GraphNode(id=n, label=labels[n][0], type=labels[n][1], document_count=counts[n],
                       kind=_kind_of(labels[n][1])) for n in kept]
    top_pairs = sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[:max(0, max_edges)]
    edges = [GraphEdge(source=a, target=b, relation=EDGE_RELATION, weight=w) for (a, b), w in top_pairs]

    # Memories and the entities they name (not tags: every memory has those).
    entity_ids = {n.id for n in nodes if n.kind != "tag"}
    linked = []
    for position, (doc, ids) in enumerate(zip(docs, per_doc, strict=True)):
        named = sorted((i for i in ids if i in entity_ids), key=lambda i: (-counts[i], i))
        if named:
            linked.append((len(named), position, doc, named[:MAX_MENTIONS_PER_MEMORY]))
    linked.sort(key=lambda item: (-item[0], item[1]))  # most connected, then newest (docs come newest first)
    for _, _, doc, named in linked[:max(0, max_nodes)]:
        memory_id = f"memory:{doc.id}"
        nodes.append(GraphNode(id=memory_id, label=doc.title or "Untitled", type="memory", document_count=1,
                               kind="memory", document_id=doc.id))
        edges.extend(GraphEdge(source=memory_id, target=i, relation=MENTION_RELATION, weight=1) for i in named)
    # Labels and ids are stored text (tags, entities, titles) and the graph is an MCP tool's answer:
    # cleaned alike, ids and the edges naming them, so every edge still names its nodes.
    graph = MemoryGraphOut(nodes=nodes, edges=edges)
    return MemoryGraphOut.model_validate(for_assistant_data(graph.model_dump()))
