"""The ports connections talk to. Adapters: memlane.adapters.local.connection_store and
token_vault (SQLite, a key file), memlane.adapters.aws.connection_store and token_vault
(DynamoDB, KMS). Composed at the edge into ConnectionPorts, which Services carries.
StaticApps (a fixed ProviderApps) lives in memlane.connections.apps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from memlane.domain.connections import Connection, ConnectionItem, PendingAuthorization

if TYPE_CHECKING:
    import httpx


class ConnectionStore(Protocol):
    """Connections, their items and pending OAuth flows. Every read of a connection takes the
    organization id; `find_for_webhook` is the one exception, and its caller trusts nothing it
    returns until the request's signature checks out against that connection's own secret."""

    def put_connection(self, conn: Connection) -> None: ...
    def get_connection(self, org_id: str, connection_id: str) -> Connection | None: ...
    def list_connections(self, org_id: str) -> list[Connection]: ...
    def all_connections(self) -> list[Connection]: ...  # the scheduler: every organization's
    def find_for_webhook(self, connection_id: str) -> Connection | None: ...
    def delete_connection(self, org_id: str, connection_id: str) -> bool: ...
    def claim(self, org_id: str, connection_id: str, now: datetime, until: datetime) -> Connection | None:
        """Take the sync lease when no live one is held (conditional write); None when held."""
        ...
    def release(self, org_id: str, connection_id: str) -> None: ...

    def put_item(self, item: ConnectionItem) -> None: ...
    def get_item(self, connection_id: str, external_id: str) -> ConnectionItem | None: ...
    def list_items(self, connection_id: str) -> list[ConnectionItem]: ...
    def delete_item(self, connection_id: str, external_id: str) -> None: ...

    def put_pending(self, pending: PendingAuthorization) -> None: ...
    def take_pending(self, state_hash: str, now: datetime) -> PendingAuthorization | None:
        """Remove and return it (an OAuth state is good once); None if unknown or expired."""
        ...


class TokenVault(Protocol):
    """Seals secrets (OAuth tokens, webhook secrets, PKCE verifiers) bound to a context (the
    organization and connection): a sealed value moved to another connection does not open."""

    def seal(self, context: Mapping[str, str], plaintext: bytes) -> str: ...
    def open(self, context: Mapping[str, str], sealed: str) -> bytes: ...


class SyncDispatcher(Protocol):
    """Starts a sync off the request path: the local runner's thread, an SQS message on AWS."""

    def request_sync(self, org_id: str, connection_id: str) -> None: ...


@dataclass(frozen=True)
class OAuthApp:
    """An OAuth client registered with a provider (docs/connections.md). The endpoint overrides
    serve GitHub Enterprise Server and the tests' fake servers."""

    client_id: str
    client_secret: str
    authorize_url: str | None = None
    token_url: str | None = None
    api_url: str | None = None


class ProviderApps(Protocol):
    def app(self, provider: str) -> OAuthApp | None: ...




@dataclass
class ConnectionPorts:
    """What connections need besides the Services ports."""

    store: ConnectionStore
    vault: TokenVault
    apps: ProviderApps
    public_url: str  # where the OAuth callback and webhooks reach this deployment
    dispatcher: SyncDispatcher | None = None
    # The transport every provider request goes through (tests hand in one bound to loopback).
    # Where the web app is, for the OAuth confirmation page (memlane.connections.flow_binding):
    # the API's own origin locally; CloudFront's on AWS (MEMLANE_WEBAPP_URL).
    webapp_url: str | None = None
    transport: httpx.BaseTransport | None = None

    def callback_url(self) -> str:
        return self.public_url.rstrip("/") + "/oauth/callback"

    def webhook_url(self, provider: str, connection_id: str) -> str:
        return f"{self.public_url.rstrip('/')}/webhooks/{provider}?connection={connection_id}"
