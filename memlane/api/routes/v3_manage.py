"""The /v3 routes behind the web app (spec §8): the dashboard's figures, a project's pages,
editing a document and its related memories, the forgotten log, and an organization's keys.

Like every /v3 route, each is scoped by the key that calls it: another organization's project,
document or key is a 404.
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import Router
from pydantic import BaseModel

from memlane.api.auth import principal_of
from memlane.documents import forget
from memlane.domain.requests import (
    DocumentListOut,
    DocumentOut,
    DocumentPatchIn,
    ForgottenOut,
    ForgottenRecord,
    KeyCreateIn,
    ProjectDeletedOut,
    ProjectOut,
    ProjectPatchIn,
    RelatedOut,
    StatsOut,
    UUIDStr,
)
from memlane.ports import Services
from memlane.services import key_admin, memory, projects, related

router = Router()

MAX_PAGE = 100


def services() -> Services:
    return router.context["services"]


def _json(status: int, model: BaseModel, headers: dict[str, str] | None = None) -> Response:
    return Response(status_code=status, content_type="application/json", body=model.model_dump(mode="json"),
                    headers=headers)


class KeyListOut(BaseModel):
    keys: list[key_admin.KeyOut]


class KeyCreatedOut(BaseModel):
    key: key_admin.KeyOut
    secret: str


class KeyRevokedOut(BaseModel):
    id: str
    revoked: bool


# --------------------------------------------------------------------------- dashboard


@router.get("/v3/stats", tags=["projects"], summary="The organization's figures: memories, this week, storage")
def stats() -> StatsOut:
    docsets = router.context.get("docsets")  # their pages are counted apart from memories
    return projects.organization_stats(services(), principal_of(router), docsets.store if docsets else None)


# --------------------------------------------------------------------------- projects


@router.get("/v3/projects/<project_id>", tags=["projects"], summary="A project with its document count")
def get_project(project_id: Annotated[UUIDStr, Path()]) -> ProjectOut:
    return projects.get_project(services(), principal_of(router), project_id)


@router.patch("/v3/projects/<project_id>", tags=["projects"], summary="Rename or describe a project")
def update_project(project_id: Annotated[UUIDStr, Path()], body: ProjectPatchIn) -> ProjectOut:
    return projects.update_project(services(), principal_of(router), project_id, body)


@router.delete("/v3/projects/<project_id>", tags=["projects"],
               summary="Delete a project and every document in it (not the default project)")
def delete_project(project_id: Annotated[UUIDStr, Path()]) -> ProjectDeletedOut:
    docsets = router.context.get("docsets")
    receipt = projects.delete_project(services(), principal_of(router), project_id,
                                      docsets.store if docsets is not None else None)
    return ProjectDeletedOut(id=project_id, deleted=True, documents_deleted=len(receipt.documents), receipt=receipt)


@router.get("/v3/projects/<project_id>/documents", tags=["projects"],
            summary="A project's documents, newest first, a page at a time")
def list_project_documents(
    project_id: Annotated[UUIDStr, Path()],
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 25,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
    include_versions: Annotated[bool, Query()] = False,
) -> DocumentListOut:
    return projects.list_project_documents(services(), principal_of(router), project_id, limit=limit,
                                           cursor=cursor, include_versions=include_versions)


# --------------------------------------------------------------------------- documents


@router.patch("/v3/documents/<document_id>", tags=["documents"],
              summary="Edit a document's title, tags or forget_after (title and tags reprocess it)")
def update_document(document_id: Annotated[UUIDStr, Path()], body: DocumentPatchIn) -> DocumentOut:
    return memory.update_document(services(), principal_of(router), document_id, body)


@router.get("/v3/documents/<document_id>/related", tags=["documents"],
            summary="Related memories: the document's semantic neighbours")
def related_documents(document_id: Annotated[UUIDStr, Path()],
                      limit: Annotated[int, Query(ge=1, le=20)] = 5) -> RelatedOut:
    return related.related_documents(services(), principal_of(router), document_id, limit)


@router.get("/v3/forgotten", tags=["documents"],
            summary="What auto-forget removed: ids, when and why (never the content), newest first")
def forgotten(limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> ForgottenOut:
    who = principal_of(router)
    records = forget.forgotten_log(services(), who.organization_id, limit)
    return ForgottenOut(forgotten=[ForgottenRecord.model_validate(r) for r in records])


# --------------------------------------------------------------------------- keys


@router.get("/v3/keys", tags=["identity"], summary="The organization's API keys (needs a key that manages keys)")
def list_keys() -> KeyListOut:
    return KeyListOut(keys=key_admin.list_organization_keys(services(), principal_of(router)))


@router.post("/v3/keys", tags=["identity"], summary="Create an API key; the secret is in this answer only",
             responses={201: {"description": "Created"}})
def create_key(body: KeyCreateIn) -> Response[KeyCreatedOut]:
    secret, key = key_admin.create_organization_key(services(), principal_of(router), body.name,
                                                    body.can_manage_keys)
    # The secret exists in clear in this answer only: no cache may keep it.
    return _json(201, KeyCreatedOut(key=key, secret=secret), headers={"Cache-Control": "no-store"})


@router.delete("/v3/keys/<key_id>", tags=["identity"], summary="Revoke an API key of the organization")
def revoke_key(key_id: Annotated[UUIDStr, Path()]) -> KeyRevokedOut:
    key_admin.revoke_organization_key(services(), principal_of(router), key_id)
    return KeyRevokedOut(id=key_id, revoked=True)
