"""The /v3 API (spec §5): memory, recall, projects, documents, whoami."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import Router
from pydantic import ValidationError

from memlane.api.auth import principal_of
from memlane.api.errors import describe_validation_errors, status_for
from memlane.documents import receipts
from memlane.documents.receipts import DeletionReceipt
from memlane.domain.errors import MemlaneError, NotFoundError
from memlane.domain.models import DocumentStatus
from memlane.domain.requests import (
    BulkItemOut,
    BulkMemoriesIn,
    BulkMemoriesOut,
    ContextIn,
    ContextOut,
    DeletedOut,
    DocumentOut,
    MemoryIn,
    MemoryOut,
    ProjectIn,
    ProjectListOut,
    ProjectOut,
    RecallIn,
    RecallOut,
    UUIDStr,
    WhoAmIOut,
)
from memlane.domain.tuning import RECALL_FUSION, NeighbourWeights
from memlane.ports import Services
from memlane.recall.relevance import MINILM
from memlane.recall.service import recall as recall_service
from memlane.services import bulk, graph, idempotency, memory, projects

router = Router()


def services() -> Services:
    return router.context["services"]


def _json(status: int, model) -> Response:
    return Response(status_code=status, content_type="application/json", body=model.model_dump(mode="json"))


@router.post(
    "/v3/memory",
    tags=["memory"],
    summary="Save content",
    responses={201: {"description": "Processed"}, 202: {"description": "Queued"}},
)
def save_memory(body: MemoryIn) -> Response[MemoryOut]:
    svc, who = services(), principal_of(router)

    def save() -> dict:
        out = memory.save_memory(svc, who, body)
        status = 200 if out.duplicate else 201 if out.status == DocumentStatus.READY else 202
        return {"status": status, "body": out.model_dump(mode="json")}

    key = router.current_event.headers.get("Idempotency-Key")  # case-insensitive in Powertools v3
    result = idempotency.run_once(svc.platform.idempotency, who.organization_id, key, body.model_dump(mode="json"), save)
    return Response(status_code=result["status"], content_type="application/json", body=result["body"])


@router.post(
    "/v3/memories",
    tags=["memory"],
    summary="Save up to 100 memories, each answered on its own",
    description="Each item is a POST /v3/memory body and counts as one request against the key's rate limit "
                "(and the body as one per 100 KB, whichever is more: memlane.api.weights). "
                "Items are written together (their chunks embedded in shared batches); one item's error "
                "does not stop the others.",
)
def save_memories(body: BulkMemoriesIn) -> BulkMemoriesOut:
    svc, who = services(), principal_of(router)
    results = []
    for outcome in bulk.save_memories(svc, who, body):
        if outcome.saved is not None:
            out = outcome.saved
            code = 200 if out.duplicate else 201 if out.status == DocumentStatus.READY else 202
            results.append(BulkItemOut(index=outcome.index, status_code=code, id=out.id, status=out.status,
                                       duplicate=out.duplicate, chunk_count=out.chunk_count))
        else:
            code, message = describe_item_error(outcome.error)
            results.append(BulkItemOut(index=outcome.index, status_code=code, error=message))
    return BulkMemoriesOut(
        results=results,
        saved=sum(1 for r in results if r.id and not r.duplicate),
        duplicates=sum(1 for r in results if r.duplicate),
        failed=sum(1 for r in results if r.error),
    )


def describe_item_error(exc: Exception | None) -> tuple[int, str]:
    if isinstance(exc, ValidationError):
        return 400, describe_validation_errors([dict(e) for e in exc.errors()])
    if isinstance(exc, MemlaneError):
        return status_for(exc), exc.message
    return 500, "internal error"


def recall_description() -> str:
    """/v3/recall's description in the OpenAPI document, written from the defaults (memlane.domain.tuning)
    that Settings gives a server unless its environment says otherwise."""
    fusion, neighbours, bm25_scale = RECALL_FUSION, NeighbourWeights(), MINILM.bm25_scale
    places = {1: "one place", 2: "two places", 3: "three places"}.get(neighbours.window, f"{neighbours.window} places")
    divisor = (f"max(max BM25 of the batch, {fusion.text_reference:g} · query words)" if fusion.text_reference
               else "max BM25 of the batch")
    covered = (f" × (share of the question's content words the chunk holds)^{fusion.text_coverage:g}"
               if fusion.text_coverage else "")
    return (
        f"Chunks ranked by {fusion.vector:g} · cosine + {fusion.text:g} · BM25 / {divisor}{covered} + "
        f"{fusion.recency:g} · exp(−age_days / {fusion.recency_days:g}) "
        f"(a chunk of a code memory: {fusion.text:g} · (1 − exp(−BM25 per query word / {bm25_scale:g})) instead of "
        "the batch share, unless MEMLANE_FUSION_CODE_TEXT_EVIDENCE=0; a message of a conversation is not scaled by "
        "the words it holds, since its text entry also holds its neighbours'), grouped by document (best chunk first). "
        "Then neighbouring messages as context: a memory saved with a conversation_id gains "
        f"MEMLANE_RECALL_NEIGHBOUR_WEIGHT ({neighbours.weight:g}) × the fused score of the best message within "
        f"{places} of it in the same conversation ({neighbours.decay:g} of that {places} away); a memory without "
        "one gains nothing. Chunk scores are the fused scores; document scores include the neighbours' share; "
        "`stages` says which stages applied."
    )


@router.post(
    "/v3/recall",
    tags=["memory"],
    summary="Hybrid recall",
    description=recall_description(),
)
def recall(body: RecallIn) -> RecallOut:
    return recall_service(services(), principal_of(router), body)


@router.post(
    "/v3/context",
    tags=["memory"],
    summary="A context pack: memories and documentation for a query, packed to a budget with sources",
)
def context(body: ContextIn) -> ContextOut:
    from memlane.services.context_pack import build_context  # the docs ranking loads on first use

    return build_context(services(), principal_of(router), body, router.context.get("docsets"))


@router.get("/v3/projects", tags=["projects"], summary="List projects with document counts")
def list_projects() -> ProjectListOut:
    return projects.list_projects(services(), principal_of(router))


@router.post("/v3/projects", tags=["projects"], summary="Create a project")
def create_project(body: ProjectIn) -> Response[ProjectOut]:
    return _json(201, projects.create_project(services(), principal_of(router), body))


@router.get("/v3/documents/<document_id>", tags=["documents"], summary="A document with its chunks")
def get_document(
    document_id: Annotated[UUIDStr, Path()], include_versions: Annotated[bool, Query()] = False
) -> DocumentOut:
    return memory.get_document(services(), principal_of(router), document_id, include_versions)


@router.delete(
    "/v3/documents/<document_id>",
    tags=["documents"],
    summary="Delete a document everywhere, with a receipt",
    description="The receipt lists every store read back after the delete and what each still holds; "
                "`verified` is true only when none holds anything. GET /v3/deletions/{receipt.id} reads it again.",
)
def delete_document(document_id: Annotated[UUIDStr, Path()]) -> DeletedOut:
    receipt = memory.delete_document(services(), principal_of(router), document_id)
    return DeletedOut(id=document_id, deleted=True, receipt=receipt)


@router.get("/v3/deletions/<receipt_id>", tags=["documents"], summary="A deletion receipt")
def get_deletion(receipt_id: Annotated[UUIDStr, Path()]) -> DeletionReceipt:
    return receipts.get_receipt(services(), principal_of(router), receipt_id)


@router.get("/v3/memory-graph", tags=["memory"], summary="Topics and entities with their co-occurrence")
def memory_graph(
    project_id: Annotated[UUIDStr | None, Query()] = None,
    max_nodes: Annotated[int, Query(ge=1, le=500)] = graph.MAX_NODES,
    max_edges: Annotated[int, Query(ge=0, le=5000)] = graph.MAX_EDGES,
) -> graph.MemoryGraphOut:
    return graph.build_memory_graph(
        services(), principal_of(router), project_id, max_nodes=max_nodes, max_edges=max_edges
    )


@router.get("/v3/whoami", tags=["identity"], summary="The organization behind the API key")
def whoami() -> WhoAmIOut:
    who = principal_of(router)
    org = services().metadata.get_organization(who.organization_id)
    if org is None:
        raise NotFoundError("organization not found")
    return WhoAmIOut(user_id=who.user_id, organization_id=org.id, organization_name=org.name, key_id=who.key_id,
                  can_manage_keys=who.can_manage_keys)
