"""Connections (spec §11): OAuth connections to GitHub, Notion, Google Drive, Slack and X whose
content is synced into a project, and the two routes the providers call without a key: the OAuth
callback and GitHub's webhook."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.router import Router

from memlane.api.auth import principal_of
from memlane.connections import service, webhooks
from memlane.connections.schemas import (
    ConfirmIn,
    ConnectionDeletedOut,
    ConnectionIn,
    ConnectionListOut,
    ConnectionOut,
    ConnectionStartOut,
    SyncRequestedOut,
    WebhookOut,
)
from memlane.domain.requests import UUIDStr
from memlane.ports import Services

router = Router()

# Called by the provider's user agent (the browser coming back) and by GitHub: no memlane key.
CALLBACK_ROUTE = ("GET", "/oauth/callback")
GITHUB_WEBHOOK_ROUTE = ("POST", "/webhooks/github")
PUBLIC = (CALLBACK_ROUTE, GITHUB_WEBHOOK_ROUTE)

MAX_QUERY_VALUE = 2000


def services() -> Services:
    return router.context["services"]


def _json(status: int, model) -> Response:
    return Response(status_code=status, content_type="application/json", body=model.model_dump(mode="json"))


@router.post("/v3/connections", tags=["connections"], summary="Start an OAuth connection",
             responses={201: {"description": "Created; open authorization_url to authorize it"}})
def start_connection(body: ConnectionIn) -> Response[ConnectionStartOut]:
    return _json(201, service.start_connection(services(), principal_of(router), body))


@router.get("/v3/connections", tags=["connections"], summary="List the organization's connections")
def list_connections() -> ConnectionListOut:
    return service.list_connections(services(), principal_of(router))


@router.get("/v3/connections/<connection_id>", tags=["connections"], summary="A connection and its last sync")
def get_connection(connection_id: Annotated[UUIDStr, Path()]) -> ConnectionOut:
    return service.get_connection(services(), principal_of(router), connection_id)


@router.post("/v3/connections/<connection_id>/pause", tags=["connections"], summary="Stop syncing until resumed")
def pause_connection(connection_id: Annotated[UUIDStr, Path()]) -> ConnectionOut:
    return service.pause_connection(services(), principal_of(router), connection_id)


@router.post("/v3/connections/<connection_id>/resume", tags=["connections"], summary="Sync again")
def resume_connection(connection_id: Annotated[UUIDStr, Path()]) -> ConnectionOut:
    return service.resume_connection(services(), principal_of(router), connection_id)


@router.post("/v3/connections/<connection_id>/sync", tags=["connections"], summary="Sync now (in the background)",
             responses={202: {"description": "Requested"}})
def sync_connection(connection_id: Annotated[UUIDStr, Path()]) -> Response[SyncRequestedOut]:
    return _json(202, service.request_sync(services(), principal_of(router), connection_id))


@router.delete("/v3/connections/<connection_id>", tags=["connections"],
               summary="Delete a connection; remove_documents=true also removes what it brought in",
               responses={202: {"description": "Removing its documents goes on in the background"}})
def delete_connection(connection_id: Annotated[UUIDStr, Path()],
                      remove_documents: Annotated[bool, Query()] = False) -> Response[ConnectionDeletedOut]:
    out, finished = service.delete_connection(services(), principal_of(router), connection_id, remove_documents)
    return _json(200 if finished else 202, out)


@router.get("/oauth/callback", tags=["connections"],
            summary="Where the provider sends the user back after authorizing (no API key: bound by the sealed "
                    "state); redirects to the web app's confirmation page",
            responses={302: {"description": "To /connections/confirm?flow=…, where a member confirms"}})
def oauth_callback(
    state: Annotated[str | None, Query(max_length=MAX_QUERY_VALUE)] = None,
    code: Annotated[str | None, Query(max_length=MAX_QUERY_VALUE)] = None,
    error: Annotated[str | None, Query(max_length=MAX_QUERY_VALUE)] = None,
    error_description: Annotated[str | None, Query(max_length=MAX_QUERY_VALUE)] = None,
) -> Response[dict]:
    url = service.receive_callback(services(), state=state, code=code, error=error,
                                   error_description=error_description)
    return Response(status_code=302, content_type="application/json", body={"confirm_url": url},
                    headers={"Location": url, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})


@router.post("/v3/connections/confirm", tags=["connections"],
             summary="Complete an authorization the provider sent back (a member of the organization that started it)")
def confirm_connection(body: ConfirmIn) -> ConnectionOut:
    return service.confirm_authorization(services(), principal_of(router), body.flow)


@router.post("/webhooks/github", tags=["connections"],
             summary="GitHub webhook deliveries (no API key: verified by X-Hub-Signature-256)")
def github_webhook(connection: Annotated[str | None, Query(max_length=100)] = None) -> WebhookOut:
    event = router.current_event
    raw = (event.decoded_body or "").encode("utf-8")  # the signature is over these exact bytes
    return webhooks.handle_github(services(), connection, dict(event.headers), raw)
