"""The raged API (seed raged-api.md): POST /ingest, POST /query, GET /healthz.

The bearer token raged clients send is a memlane API key; the collection is a project of the
key's organization.
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler.router import Router

from memlane.api.auth import principal_of
from memlane.collections import service
from memlane.collections.models import IngestIn, IngestOut, QueryIn, QueryOut
from memlane.ports import Services

router = Router()


def services() -> Services:
    return router.context["services"]


@router.get("/healthz", tags=["raged"], summary="Liveness for raged clients (no key needed)")
def healthz() -> dict[str, bool]:
    return {"ok": True}


@router.post("/ingest", tags=["raged"], summary="Chunk (~1800 chars, line boundaries), embed, upsert items",
             description="Up to 1,000 items. Against the key's rate limit it counts once per 25 items or per "
                         "100 KB of body, whichever is more.")
def ingest(body: IngestIn) -> IngestOut:
    return service.ingest(services(), principal_of(router), body)


@router.post("/query", tags=["raged"], summary="Query a collection: semantic, metadata or hybrid (routed)")
def query(body: QueryIn) -> QueryOut:
    return service.query(services(), principal_of(router), body)
