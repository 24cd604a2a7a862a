"""What the connection routes call: start an OAuth connection, complete it at the callback, list,
pause, resume, sync now, delete; and `memlane connect git`.

Tenant scope comes from the Principal (the API key) in every call but two, which the provider's
user agent or servers make without a key: the OAuth callback is bound to the organization and key
that started the flow by the sealed `state` it carries (used once, expiring) and completes only
when a member of that organization confirms it (memlane.connections.flow_binding), and a webhook
is bound by the connection's own secret.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

from memlane.connections import flow_binding, oauth
from memlane.connections.errors import OAuthError
from memlane.connections.provider_access import http_client, open_session, sealed, vault_context
from memlane.connections.providers import adapter_for
from memlane.connections.schemas import (
    ConnectionDeletedOut,
    ConnectionIn,
    ConnectionListOut,
    ConnectionOut,
    ConnectionStartOut,
    SyncRequestedOut,
    WebhookInfo,
)
from memlane.connections.sync import LEASE, purge_connection
from memlane.domain.connections import (
    Connection,
    ConnectionStatus,
    PendingAuthorization,
    Provider,
    hash_state,
)
from memlane.domain.errors import (
    ConflictError,
    DependencyUnavailableError,
    ForbiddenError,
    InvalidInputError,
    MemlaneError,
    NotFoundError,
)
from memlane.domain.principal import Principal
from memlane.ports import ConnectionPorts, Services
from memlane.services.projects import resolve_project

log = logging.getLogger(__name__)

AUTHORIZATION_TTL = timedelta(minutes=10)
DELETE_BUDGET_S = 15.0  # in the request; what is left is finished by the sync runner (202)
GITHUB_WEBHOOK_EVENTS = ["push", "issues", "issue_comment", "pull_request", "pull_request_review_comment"]


def ports_of(svc: Services) -> ConnectionPorts:
    if svc.connections is None:
        raise DependencyUnavailableError("connections are not configured in this deployment")
    return svc.connections


def connection_out(conn: Connection) -> ConnectionOut:
    return ConnectionOut(
        id=conn.id, provider=conn.provider, project_id=conn.project_id, name=conn.name, status=conn.status,
        status_reason=conn.status_reason, account=conn.account, options=conn.options,
        last_synced_at=conn.last_synced_at, last_result=conn.last_result, next_sync_at=conn.next_sync_at,
        sync_requested=conn.sync_requested, pending_items=len(conn.pending_items), created_at=conn.created_at,
        updated_at=conn.updated_at)


def _get(svc: Services, who: Principal, connection_id: str) -> Connection:
    conn = ports_of(svc).store.get_connection(who.organization_id, connection_id)
    if conn is None:
        raise NotFoundError(f"connection {connection_id} not found")
    return conn


def _dispatch(ports: ConnectionPorts, conn: Connection) -> None:
    if ports.dispatcher is not None:
        ports.dispatcher.request_sync(conn.organization_id, conn.id)


# --------------------------------------------------------------------------- the OAuth flow


def start_connection(svc: Services, who: Principal, body: ConnectionIn) -> ConnectionStartOut:
    ports = ports_of(svc)
    adapter = adapter_for(body.provider)
    options = adapter.validate_options(dict(body.options))
    spec = adapter.oauth
    app = ports.apps.app(body.provider.value)
    if spec is None or app is None:
        raise InvalidInputError("provider", f"{body.provider.value} is not set up on this server: its OAuth client id "
                                            "and secret are missing (docs/connections.md: where they go)")
    project = resolve_project(svc, who, body.project_id)
    now = svc.clock.now()
    conn = Connection(organization_id=who.organization_id, provider=body.provider, project_id=project.id,
                      name=body.name or adapter.label(options, None), options=options, created_by=who.key_id,
                      created_at=now, updated_at=now)
    webhook: WebhookInfo | None = None
    if body.provider == Provider.GITHUB:
        secret = secrets.token_urlsafe(32)
        conn = conn.model_copy(update={"sealed_webhook_secret": ports.vault.seal(vault_context(conn), secret.encode())})
        webhook = WebhookInfo(url=ports.webhook_url("github", conn.id), secret=secret, events=GITHUB_WEBHOOK_EVENTS)
    # The state is sealed: it names the organization and the key that started the flow.
    state = flow_binding.sign_state(ports.vault, flow_binding.FlowClaims(
        organization_id=who.organization_id, key_id=who.key_id, connection_id=conn.id,
        expires_at=now + AUTHORIZATION_TTL))
    verifier, challenge = oauth.pkce_pair() if spec.pkce else (None, None)
    redirect_uri = ports.callback_url()
    pending = PendingAuthorization(
        state_hash=hash_state(state), organization_id=who.organization_id, connection_id=conn.id,
        provider=body.provider, redirect_uri=redirect_uri, expires_at=now + AUTHORIZATION_TTL,
        sealed_verifier=ports.vault.seal(vault_context(conn), verifier.encode()) if verifier else None)
    ports.store.put_connection(conn)
    ports.store.put_pending(pending)
    return ConnectionStartOut(connection=connection_out(conn), expires_at=pending.expires_at, webhook=webhook,
                              authorization_url=oauth.authorization_url(spec, app, redirect_uri, state, challenge))


def receive_callback(svc: Services, *, state: str | None, code: str | None, error: str | None = None,
                     error_description: str | None = None) -> str:
    """The provider sent the user back (no API key). The sealed `state` names the flow, its
    organization and the key that started it (memlane.connections.flow_binding); it is good once
    and for AUTHORIZATION_TTL. Nothing is linked yet: the code is kept sealed for a member of that
    organization to confirm, and the answer is where they do it (the web app's page)."""
    ports = ports_of(svc)
    now = svc.clock.now()
    if not state:
        raise InvalidInputError("state", "is required")
    claims = flow_binding.open_state(ports.vault, state, now)
    pending = ports.store.take_pending(hash_state(state), now)
    if pending is None or (pending.organization_id, pending.connection_id) != (claims.organization_id,
                                                                               claims.connection_id):
        raise InvalidInputError("state", "is unknown, used or expired: start the connection again")
    conn = ports.store.get_connection(pending.organization_id, pending.connection_id)
    if conn is None:
        raise NotFoundError("state: the connection it was for has been deleted")
    if error:
        reason = f"the provider did not authorize: {error}" + (f" ({error_description})" if error_description else "")
        ports.store.put_connection(conn.model_copy(update={"status": ConnectionStatus.ERROR, "status_reason": reason,
                                                           "updated_at": now}))
        raise InvalidInputError("error", reason)
    if not code:
        raise InvalidInputError("code", "is required")
    verifier = ports.vault.open(vault_context(conn), pending.sealed_verifier).decode() if pending.sealed_verifier else None
    token = flow_binding.new_confirmation()
    ports.store.put_pending(PendingAuthorization(
        state_hash=hash_state(token), organization_id=pending.organization_id, connection_id=pending.connection_id,
        provider=pending.provider, redirect_uri=pending.redirect_uri, expires_at=now + flow_binding.CONFIRM_TTL,
        sealed_verifier=flow_binding.seal_code(ports.vault, code, verifier, claims.key_id)))
    return flow_binding.confirm_url(ports.webapp_url or ports.public_url, token)


def confirm_authorization(svc: Services, who: Principal, flow: str) -> ConnectionOut:
    """A signed-in member of the flow's organization confirms it: the code is exchanged and the
    connection becomes active. The token is used once, whoever presents it: a member of another
    organization cancels the flow (a victim lured into consenting to someone else's flow)."""
    ports = ports_of(svc)
    now = svc.clock.now()
    pending = ports.store.take_pending(hash_state(flow), now) if flow else None
    if pending is None or not pending.sealed_verifier:
        raise InvalidInputError("flow", "is unknown, used or expired: start the connection again")
    if pending.organization_id != who.organization_id:
        log.warning("connection %s: authorization confirmed from another organization; cancelled",
                    pending.connection_id)
        raise ForbiddenError("flow: this authorization was started by another organization; it has been cancelled")
    code, verifier, key_id = flow_binding.open_code(ports.vault, pending.sealed_verifier)
    started_by = next((k for k in svc.metadata.list_api_keys(who.organization_id) if k.id == key_id), None)
    if key_id != who.key_id and (started_by is None or not started_by.active):
        raise ForbiddenError("flow: the key that started this authorization is revoked; start the connection again")
    conn = ports.store.get_connection(pending.organization_id, pending.connection_id)
    if conn is None:
        raise NotFoundError("flow: the connection it was for has been deleted")
    return _exchange(svc, ports, conn, code, pending.redirect_uri, verifier, now)


def complete_authorization(svc: Services, who: Principal, *, state: str | None, code: str | None,
                           error: str | None = None, error_description: str | None = None) -> ConnectionOut:
    """The callback and the confirmation in one step, for a caller that is the member (tests, tools)."""
    url = receive_callback(svc, state=state, code=code, error=error, error_description=error_description)
    return confirm_authorization(svc, who, parse_qs(urlsplit(url).query)["flow"][0])


def _exchange(svc: Services, ports: ConnectionPorts, conn: Connection, code: str, redirect_uri: str,
              verifier: str | None, now: datetime) -> ConnectionOut:
    adapter = adapter_for(conn.provider)
    app = ports.apps.app(conn.provider.value)
    if adapter.oauth is None or app is None:
        raise InvalidInputError("state", f"{conn.provider.value} is no longer set up on this server")
    with http_client(ports) as client:
        try:
            tokens = oauth.exchange_code(client, adapter.oauth, app, code, redirect_uri, verifier, now)
        except OAuthError as exc:
            raise InvalidInputError("code", exc.message) from exc
        conn = conn.model_copy(update=sealed(ports, conn, tokens))
        session = open_session(svc, ports, conn, adapter, client)
        try:
            account = adapter.identify(session, tokens)
        except (MemlaneError, ValueError, KeyError) as exc:
            log.info("connection %s: could not tell who authorized it (%s)", conn.id, exc)
            account = None
        tokens = session.tokens or tokens
    current = ports.store.get_connection(conn.organization_id, conn.id) or conn
    conn = current.model_copy(update={
        **sealed(ports, current, tokens), "status": ConnectionStatus.ACTIVE, "status_reason": None,
        "account": account, "sync_requested": True, "updated_at": svc.clock.now(),
        "name": current.name if current.name != adapter.label(current.options, None)
        else adapter.label(current.options, account)})
    ports.store.put_connection(conn)
    _dispatch(ports, conn)
    return connection_out(conn)


# --------------------------------------------------------------------------- the other routes


def list_connections(svc: Services, who: Principal) -> ConnectionListOut:
    conns = ports_of(svc).store.list_connections(who.organization_id)
    return ConnectionListOut(connections=[connection_out(c) for c in conns])


def get_connection(svc: Services, who: Principal, connection_id: str) -> ConnectionOut:
    return connection_out(_get(svc, who, connection_id))


def _set_status(svc: Services, who: Principal, connection_id: str, status: ConnectionStatus,
                allowed: tuple[ConnectionStatus, ...], **extra: Any) -> Connection:
    ports = ports_of(svc)
    conn = _get(svc, who, connection_id)
    if conn.status == status:
        return conn
    if conn.status not in allowed:
        raise ConflictError(f"status: the connection is {conn.status.value}")
    conn = conn.model_copy(update={"status": status, "status_reason": None, "updated_at": svc.clock.now(), **extra})
    ports.store.put_connection(conn)
    return conn


def pause_connection(svc: Services, who: Principal, connection_id: str) -> ConnectionOut:
    return connection_out(_set_status(svc, who, connection_id, ConnectionStatus.PAUSED,
                                      (ConnectionStatus.ACTIVE, ConnectionStatus.ERROR)))


def resume_connection(svc: Services, who: Principal, connection_id: str) -> ConnectionOut:
    conn = _set_status(svc, who, connection_id, ConnectionStatus.ACTIVE,
                       (ConnectionStatus.PAUSED, ConnectionStatus.ERROR), sync_requested=True, next_sync_at=None,
                       consecutive_failures=0)
    _dispatch(ports_of(svc), conn)
    return connection_out(conn)


def request_sync(svc: Services, who: Principal, connection_id: str) -> SyncRequestedOut:
    ports = ports_of(svc)
    conn = _get(svc, who, connection_id)
    if conn.status != ConnectionStatus.ACTIVE:
        raise ConflictError(f"status: the connection is {conn.status.value}; only an active connection syncs")
    conn = conn.model_copy(update={"sync_requested": True, "updated_at": svc.clock.now()})
    ports.store.put_connection(conn)
    _dispatch(ports, conn)
    return SyncRequestedOut(id=conn.id, sync_requested=True, next_sync_at=conn.next_sync_at)


def delete_connection(svc: Services, who: Principal, connection_id: str,
                      remove_documents: bool = False) -> tuple[ConnectionDeletedOut, bool]:
    """Returns the answer and whether it is finished (200) or goes on in the background (202)."""
    ports = ports_of(svc)
    conn = _get(svc, who, connection_id)
    now = svc.clock.now()
    conn = conn.model_copy(update={"status": ConnectionStatus.DELETING, "updated_at": now,
                                   "remove_documents": conn.remove_documents or remove_documents})
    ports.store.put_connection(conn)
    claimed = ports.store.claim(conn.organization_id, conn.id, now, now + LEASE)
    if claimed is None:  # a sync is running; the runner deletes it after
        _dispatch(ports, conn)
        return ConnectionDeletedOut(id=conn.id, deleted=False, documents_removed=0), False
    outcome = purge_connection(svc, claimed, budget_s=DELETE_BUDGET_S)
    if not outcome.finished:
        _dispatch(ports, conn)
    return ConnectionDeletedOut(id=conn.id, deleted=outcome.finished, documents_removed=outcome.documents_removed,
                                receipts=[r.id for r in outcome.receipts],
                                verified=all(r.verified for r in outcome.receipts)), outcome.finished


# --------------------------------------------------------------------------- local git clones


def connect_git(svc: Services, who: Principal, path: str, *, project_id: str | None = None,
                repo_id: str | None = None, branch: str | None = None) -> Connection:
    """`memlane connect git PATH`: a connection to a clone on this machine (no OAuth), active at
    once. Connecting the same clone (same repo id, same project) again returns the existing one."""
    ports = ports_of(svc)
    adapter = adapter_for(Provider.GIT)
    options = adapter.validate_options({"path": path, "repo_id": repo_id, "branch": branch})
    project = resolve_project(svc, who, project_id)
    for existing in ports.store.list_connections(who.organization_id):
        if existing.provider == Provider.GIT and existing.options.get("path") == options["path"] \
                and existing.options.get("repo_id") == options["repo_id"] and existing.project_id == project.id \
                and existing.status != ConnectionStatus.DELETING:
            return existing
    now = svc.clock.now()
    conn = Connection(organization_id=who.organization_id, provider=Provider.GIT, project_id=project.id,
                      name=adapter.label(options, None), options=options, status=ConnectionStatus.ACTIVE,
                      created_by=who.key_id, created_at=now, updated_at=now, sync_requested=True)
    ports.store.put_connection(conn)
    return conn

