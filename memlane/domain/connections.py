"""Connections (spec §11): an organization's link to an outside service whose content is synced
into one of its projects, and the records the sync keeps.

Models do no I/O. Tokens never appear in a model in the clear: `sealed_tokens` is what the
TokenVault made of them (memlane.ports.connections), bound to the organization and connection.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memlane.domain.models import ContentType, new_id, utcnow


class Provider(StrEnum):
    GITHUB = "github"
    NOTION = "notion"
    GOOGLE_DRIVE = "google_drive"
    SLACK = "slack"
    X = "x"
    GIT = "git"  # a local clone (`memlane connect git PATH`): no OAuth, no network


class ConnectionStatus(StrEnum):
    AUTHORIZING = "authorizing"  # waiting for the provider's OAuth callback
    ACTIVE = "active"
    PAUSED = "paused"
    ERROR = "error"  # needs the user: the authorization was revoked or the source is gone
    DELETING = "deleting"  # removing what it brought in; the record goes last


class _Entity(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SyncResult(_Entity):
    """What one sync did (spec §11.3 SyncResult)."""

    added: int = 0
    updated: int = 0
    deleted: int = 0
    errors: list[str] = Field(default_factory=list)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    complete: bool = True  # False: stopped early (rate limit, outage, time budget); resumes from the cursor


class Connection(_Entity):
    id: str = Field(default_factory=new_id)
    organization_id: str
    provider: Provider
    project_id: str
    name: str  # a label for listings: "GitHub: octo/app", "Notion: Acme workspace"
    status: ConnectionStatus = ConnectionStatus.AUTHORIZING
    status_reason: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)  # provider settings, validated by the provider
    account: str | None = None  # who authorized it at the provider (login, workspace, email)
    sealed_tokens: str | None = None
    token_expires_at: datetime | None = None  # in the clear so a refresh can be planned without opening
    sealed_webhook_secret: str | None = None
    cursor: dict[str, Any] = Field(default_factory=dict)
    # Items whose last attempt failed, by external id → attempts: retried by the next syncs.
    pending_items: dict[str, int] = Field(default_factory=dict)
    last_synced_at: datetime | None = None
    last_result: SyncResult | None = None
    next_sync_at: datetime | None = None  # a backoff (429, 5xx) holds syncs until then
    consecutive_failures: int = 0
    sync_requested: bool = False  # "sync now", a webhook that could not run, an unfinished sync
    remove_documents: bool = False  # with DELETING: also remove what it brought in
    lease_until: datetime | None = None  # a sync is running until then (or died and it expires)
    created_by: str = "api"  # the key that created it
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class ConnectionItem(_Entity):
    """What the sync knows of one item at the provider: the memlane documents it became (every
    version, oldest first), the provider's version marker and the hash of the last text written."""

    connection_id: str
    organization_id: str
    external_id: str
    document_ids: list[str] = Field(default_factory=list)
    version: str | None = None
    content_hash: str = ""
    updated_at: datetime = Field(default_factory=utcnow)

    @property
    def latest_document_id(self) -> str | None:
        return self.document_ids[-1] if self.document_ids else None


class PendingAuthorization(_Entity):
    """An OAuth flow between its authorization URL and its callback. Found by the SHA-256 of the
    `state` the provider sends back; used once; expires."""

    state_hash: str
    organization_id: str
    connection_id: str
    provider: Provider
    redirect_uri: str
    sealed_verifier: str | None = None  # the PKCE code_verifier, sealed
    expires_at: datetime


def hash_state(state: str) -> str:
    return hashlib.sha256(state.encode("utf-8")).hexdigest()


class TokenSet(_Entity):
    """OAuth2 tokens as the provider issued them (sealed before they are stored)."""

    access_token: str
    refresh_token: str | None = None
    expires_at: datetime | None = None
    token_type: str = "bearer"
    scope: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)  # provider specifics (Slack's user id, X's user id)


# --------------------------------------------------------------------------- what providers hand in


class ItemRef(_Entity):
    """An item as a listing names it: enough to tell whether it changed (its version marker)."""

    external_id: str
    version: str | None = None
    hint: dict[str, Any] = Field(default_factory=dict)  # what fetching it needs (a blob sha, a page object)


class Item(_Entity):
    """An item's content, ready to become a document."""

    external_id: str
    version: str | None = None
    title: str
    content: str | bytes
    content_type: ContentType
    source_url: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    summarize: bool = True  # code files keep no summary from here (cheap, and they are chunked by function)
