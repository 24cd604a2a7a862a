"""Opening a connection's provider: its tokens (sealed in the vault, opened for a sync, stored again
the moment a refresh rotates them) and the HTTP session the provider adapter talks through."""

from __future__ import annotations

import httpx

from memlane.connections.providers import ProviderAdapter
from memlane.connections.session import ProviderSession
from memlane.domain.connections import Connection, TokenSet
from memlane.ports import ConnectionPorts, Services

HTTP_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


def vault_context(conn: Connection) -> dict[str, str]:
    return {"organization_id": conn.organization_id, "connection_id": conn.id}


def open_tokens(ports: ConnectionPorts, conn: Connection) -> TokenSet | None:
    if not conn.sealed_tokens:
        return None
    return TokenSet.model_validate_json(ports.vault.open(vault_context(conn), conn.sealed_tokens))


def sealed(ports: ConnectionPorts, conn: Connection, tokens: TokenSet) -> dict[str, object]:
    """The connection fields that store these tokens."""
    return {"sealed_tokens": ports.vault.seal(vault_context(conn), tokens.model_dump_json().encode()),
            "token_expires_at": tokens.expires_at}


def http_client(ports: ConnectionPorts) -> httpx.Client:
    return httpx.Client(transport=ports.transport, timeout=HTTP_TIMEOUT, follow_redirects=True)


def open_session(svc: Services, ports: ConnectionPorts, conn: Connection, adapter: ProviderAdapter,
                 client: httpx.Client) -> ProviderSession:
    app = ports.apps.app(conn.provider.value) if adapter.oauth is not None else None

    def keep(tokens: TokenSet) -> None:
        # A rotated refresh token is stored the moment it is issued: the old one no longer works.
        current = ports.store.get_connection(conn.organization_id, conn.id)
        if current is not None:
            ports.store.put_connection(current.model_copy(update={**sealed(ports, current, tokens),
                                                                  "updated_at": svc.clock.now()}))

    return ProviderSession(
        provider=conn.provider.value, client=client, clock=svc.clock,
        base_url=(app.api_url if app and app.api_url else adapter.api_url),
        tokens=open_tokens(ports, conn), spec=adapter.oauth, app=app, on_tokens=keep,
        headers=adapter.session_headers(), classify=adapter.classify, auth_failed=adapter.auth_failed)
