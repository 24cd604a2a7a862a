"""Issue 35, third round: a project's relevance does not move with what else its organization holds
(memlane.recall.relevance reads the BM25 the ranking reads, over the searched projects' statistics)."""

from __future__ import annotations

from memlane.domain.requests import MemoryIn, ProjectIn, RecallIn
from memlane.recall.service import recall
from memlane.services.memory import save_memory
from memlane.services.projects import create_project

NOTES = [
    "A kestrel nested on the roof of the barn this spring.",
    "The boiler is serviced every October by the plumber.",
    "Library books are due back on the first Monday of the month.",
    "The car's winter tyres are stored in the garage loft.",
    "Grandma's birthday dinner is at the Italian place on Elm Street.",
    "Passport renewal needs two photos and the old passport.",
]
# long pages of another project: many rows, long rows, none of the notes' words
PAGE = " ".join(f"module{i} function{i} returns value{i} for argument{i} and raises error{i}." for i in range(40))


def _relevance(stack, who, project_id: str, query: str, limit: int) -> dict[str, float]:  # noqa: ANN001
    out = recall(stack.services, who, RecallIn(query=query, project_id=project_id, min_relevance=0, limit=limit))
    return {r.document_id: r.relevance for r in out.results}


def test_a_projects_relevance_does_not_move_when_another_project_of_the_organization_saves(stack, who) -> None:
    # Given a person's notes in a project of their own
    notes = create_project(stack.services, who, ProjectIn(name="Notes")).id
    for text in NOTES:
        save_memory(stack.services, who, MemoryIn(content=text, project_id=notes), inline=True)
    query = "kestrel feathers"  # one word of one note: BM25 evidence, no exact match of every word
    before = _relevance(stack, who, notes, query, 10)
    # When the same organization saves a documentation set into another project (200 long pages)
    docs = create_project(stack.services, who, ProjectIn(name="Docs")).id
    for i in range(200):
        save_memory(stack.services, who, MemoryIn(content=f"Page {i}. {PAGE}", project_id=docs), inline=True)
    after = _relevance(stack, who, notes, query, 9)  # another limit: not the cached answer
    # Then the notes' relevance is what it was (with the organization's statistics the kestrel note's
    # BM25 grew with N and the pages' length, and its relevance with it: 0.18 → 0.66)
    assert before and after.keys() == before.keys()
    for document_id, value in before.items():
        assert abs(after[document_id] - value) <= 1e-6, (document_id, value, after[document_id])


def test_the_recall_cache_keys_every_fusion_setting(stack, who) -> None:
    # A setting changed between two runs of one data directory (MEMLANE_FUSION_TEXT_REFERENCE here)
    # never serves the ranking cached under the other one
    from dataclasses import replace

    from memlane.ports import RecallFilters, SearchScope
    from memlane.recall.recipes import MEMORY_RECALL
    from memlane.recall.service import cache_key

    project = "0b6f6f3e-8a51-4c3e-9d2c-6c1f1d0a9b10"
    scope = SearchScope(who.organization_id, (project,), RecallFilters())
    body = RecallIn(query="kestrel", project_id=project)
    svc = stack.services
    changed = replace(svc, settings=svc.settings.model_copy(update={"fusion_text_reference": 9.0}))
    assert MEMORY_RECALL.weights(changed).text_reference != MEMORY_RECALL.weights(svc).text_reference
    assert cache_key(changed, scope, body) != cache_key(svc, scope, body)
    assert cache_key(svc, scope, body) == cache_key(svc, scope, body)
