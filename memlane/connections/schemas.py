"""Request and response bodies of the connection routes (memlane.api.routes.connections). The
OpenAPI document is generated from them; unknown fields are refused with a 400 naming them.
Bodies are `XxxIn`, answers `XxxOut` (the convention: memlane.domain.requests)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memlane.domain.connections import ConnectionStatus, Provider, SyncResult
from memlane.domain.requests import UUIDStr

MAX_OPTIONS_BYTES = 20_000


class ConnectionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Provider = Field(description="github, notion, google_drive, slack or x")
    project_id: UUIDStr | None = Field(default=None, description="Where its memories go; the default project when omitted.")
    name: str | None = Field(default=None, min_length=1, max_length=200, description="A label for listings.")
    options: dict[str, Any] = Field(
        default_factory=dict,
        description='Provider settings. github: {"repositories": ["owner/name"], "branch", "files", "issues", '
                    '"pull_requests", "include", "exclude", "max_files"}; google_drive: {"folder_id"}; others: none.')

    @field_validator("provider")
    @classmethod
    def _remote(cls, v: Provider) -> Provider:
        if v == Provider.GIT:
            raise ValueError("git connections read a clone on this machine: run `memlane connect git PATH` there")
        return v

    @field_validator("options")
    @classmethod
    def _small(cls, v: dict[str, Any]) -> dict[str, Any]:
        import json

        if len(json.dumps(v, default=str)) > MAX_OPTIONS_BYTES:
            raise ValueError(f"must be under {MAX_OPTIONS_BYTES} bytes as JSON")
        return v


class ConnectionOut(BaseModel):
    id: str
    provider: Provider
    project_id: str
    name: str
    status: ConnectionStatus
    status_reason: str | None = None
    account: str | None = None
    options: dict[str, Any]
    last_synced_at: datetime | None = None
    last_result: SyncResult | None = None
    next_sync_at: datetime | None = None
    sync_requested: bool = False
    pending_items: int = 0
    created_at: datetime
    updated_at: datetime


class WebhookInfo(BaseModel):
    url: str
    secret: str = Field(description="Shown once: set it as the webhook's secret at the provider.")
    content_type: str = "application/json"
    events: list[str]


class ConnectionStartOut(BaseModel):
    connection: ConnectionOut
    authorization_url: str = Field(description="Open it in a browser; the provider sends the user back to "
                                               "/oauth/callback, which hands over to the web app's "
                                               "/connections/confirm page, where a signed-in member of "
                                               "this organization completes the connection.")
    expires_at: datetime
    webhook: WebhookInfo | None = None


class ConfirmIn(BaseModel):
    """The one-time token the callback put in the confirmation page's address."""

    model_config = ConfigDict(extra="forbid")
    flow: str = Field(min_length=1, max_length=200)


class ConnectionListOut(BaseModel):
    connections: list[ConnectionOut]


class SyncRequestedOut(BaseModel):
    id: str
    sync_requested: bool
    next_sync_at: datetime | None = Field(default=None, description="Set when a provider's rate limit holds syncs until then.")


class ConnectionDeletedOut(BaseModel):
    id: str
    deleted: bool = Field(description="False while what it brought in is still being removed (202).")
    documents_removed: int
    receipts: list[str] = Field(default_factory=list, description=(
        "Deletion receipts of what this request removed, one per item (GET /v3/deletions/{id})."))
    verified: bool = Field(default=True, description="Every store was read back after the delete and holds nothing of "
                                             "the removed documents (false names a failed receipt).")


class WebhookOut(BaseModel):
    ok: bool
    event: str
    applied: SyncResult | None = None
    note: str | None = None
