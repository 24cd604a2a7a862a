"""The Mem-Oracle API (seed mem-oracle-api.txt): documentation sets on the same server as /v3.

Paths, fields, defaults, clamps and response shapes as the seed documents them; errors are
`{"error": "..."}`. Like every memlane route these need an API key (the organization scopes every
docset); /health is shared and defined in memlane.api.app.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import Router

from memlane.api.auth import principal_of
from memlane.docsets import schemas as s
from memlane.domain.errors import DependencyUnavailableError
from memlane.domain.fields import MAX_SAFE_INT

# memlane.docsets.service and .retrieval import the crawler (bs4, lxml): each route imports them
# where it runs, so they load on the first docs request, not when the API Lambda starts.
if TYPE_CHECKING:
    from memlane.docsets.service import DocsetContext


router = Router()

_TAGS = ["mem-oracle"]
DocsetId = Annotated[str, Path(max_length=100)]


def _without_absent(model: s.StatusOut | s.DocsetOut) -> Response:
    """stuckPages and stuckPageDetails are left out, not null, when not reported (the seed's rule)."""
    body = model.model_dump(mode="json")
    for docset in body.get("docsets", [body]):
        if docset.get("stuckPageDetails") is None:
            docset.pop("stuckPageDetails", None)
        if docset["indexStatus"].get("stuckPages") is None:
            docset["indexStatus"].pop("stuckPages", None)
    return Response(status_code=200, content_type="application/json", body=json.dumps(body))


def _schema(model: type) -> dict[int, Any]:
    # These two answer with a Response (see _without_absent); the schema is declared here instead.
    return {200: {"description": "OK", "content": {"application/json": {"model": model}}}}


def docsets() -> DocsetContext:
    ctx = router.context.get("docsets")
    if ctx is None:
        raise DependencyUnavailableError("documentation sets are not configured on this deployment")
    return ctx


@router.post("/index", tags=_TAGS, summary="Index a documentation site")
def index(body: s.IndexIn) -> s.IndexOut:
    from memlane.docsets import service

    return service.index_docset(docsets(), principal_of(router), body)


@router.post("/retrieve", tags=_TAGS, summary="Search for relevant snippets (diversity, character budget)")
def retrieve(body: s.RetrieveIn) -> s.RetrieveOut:
    from memlane.docsets import retrieval

    return retrieval.retrieve(docsets(), principal_of(router), body)


@router.get("/status", tags=_TAGS, summary="Get indexing status", responses=_schema(s.StatusOut))
def status(docsetId: Annotated[str | None, Query(max_length=100)] = None,  # noqa: N803 - the seed's name
           includeStuck: Annotated[bool, Query()] = False):  # noqa: N803, ANN201 - schema in responses=
    from memlane.docsets import service

    return _without_absent(service.status(docsets(), principal_of(router), docsetId, includeStuck))


@router.post("/refresh", tags=_TAGS, summary="Refresh a docset (by id or baseUrl)")
def refresh(body: s.RefreshIn) -> s.RefreshOut:
    from memlane.docsets import service

    return service.refresh(docsets(), principal_of(router), body)


@router.post("/refresh-all", tags=_TAGS, summary="Refresh all docsets that are stale (all with force)")
def refresh_all(body: s.RefreshAllIn) -> s.RefreshAllOut:
    from memlane.docsets import service

    return service.refresh_all(docsets(), principal_of(router), body)


@router.get("/docset/<docset_id>", tags=_TAGS, summary="Get a docset and its index status",
            responses=_schema(s.DocsetOut))
def get_docset(docset_id: DocsetId):  # noqa: ANN201 - schema in responses=
    from memlane.docsets import service

    return _without_absent(service.get_docset(docsets(), principal_of(router), docset_id))


@router.get("/docset/<docset_id>/pages", tags=_TAGS, summary="List pages in a docset")
def list_pages(docset_id: DocsetId,
               status: Annotated[str | None, Query(max_length=20)] = None,
               limit: Annotated[int, Query()] = 100,
               offset: Annotated[int, Query(le=MAX_SAFE_INT)] = 0) -> s.PagesOut:
    from memlane.docsets import service

    return service.list_pages(docsets(), principal_of(router), docset_id, status, limit, offset)


@router.delete("/docset/<docset_id>", tags=_TAGS, summary="Delete a docset and all its indexed content")
def delete_docset(docset_id: DocsetId) -> s.DeleteOut:
    from memlane.docsets import service

    return service.delete_docset(docsets(), principal_of(router), docset_id)


@router.post("/session/register", tags=_TAGS, summary="Register a client session")
def register_session(body: s.SessionRegisterIn) -> s.RegisterOut:
    from memlane.docsets import service

    return service.register_session(docsets(), principal_of(router), body)


@router.post("/session/unregister", tags=_TAGS, summary="Unregister a client session")
def unregister_session(body: s.SessionUnregisterIn) -> s.UnregisterOut:
    from memlane.docsets import service

    return service.unregister_session(docsets(), principal_of(router), body)


@router.get("/sessions", tags=_TAGS, summary="List active sessions")
def list_sessions() -> s.SessionsOut:
    from memlane.docsets import service

    return service.list_sessions(docsets(), principal_of(router))
