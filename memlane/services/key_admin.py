"""API key administration for a deployment (the keys admin function on AWS): create, list and
revoke memlane keys, and keep the gateway's own record of each key in step with memlane's.

On AWS the REST API's usage plan throttles per key, and API Gateway only meters keys it knows:
every memlane key is therefore also registered as an API Gateway API key (its value is the
SHA-256 that the authorizer returns as `usageIdentifierKey`). `KeyRegistry` is that second record;
a key the gateway could not register is revoked again, so no key exists that would only get 403s.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memlane.domain.errors import InvalidInputError, NotFoundError
from memlane.domain.models import ApiKey
from memlane.ports import MetadataStore
from memlane.services.keys import create_key, slugify


class KeyRegistry(Protocol):
    def register(self, key: ApiKey) -> str:
        """Makes the key known to the gateway; returns the gateway's id for it."""
        ...

    def deregister(self, key_id: str) -> None: ...


class KeysCommand(BaseModel):
    """The admin function's payload, e.g. {"action": "create", "org": "default"}."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["create", "list", "revoke"]
    org: str | None = None  # create: the organization (created when new); list: filter by it
    name: str = Field(default="default", min_length=1, max_length=100)
    rate_limit_per_minute: int = Field(default=100, ge=1, le=100_000)
    key_id: str | None = None  # revoke

    @model_validator(mode="after")
    def _needs(self) -> KeysCommand:
        if self.action == "revoke" and not self.key_id:
            raise ValueError("key_id: required to revoke a key")
        return self


class KeyOut(BaseModel):
    id: str
    organization_id: str
    name: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None = None
    rate_limit_per_minute: int
    active: bool

    @classmethod
    def of(cls, key: ApiKey) -> KeyOut:
        return cls(id=key.id, organization_id=key.organization_id, name=key.name, prefix=key.prefix,
                   created_at=key.created_at, revoked_at=key.revoked_at,
                   rate_limit_per_minute=key.rate_limit_per_minute, active=key.active)


class KeysResult(BaseModel):
    action: str
    message: str
    key: KeyOut | None = None
    secret: str | None = None  # only in the answer to "create": the one time the key exists in clear
    organization_id: str | None = None
    gateway_key_id: str | None = None
    keys: list[KeyOut] | None = None


def administer_keys(store: MetadataStore, registry: KeyRegistry, command: KeysCommand,
                    now: datetime) -> KeysResult:
    if command.action == "create":
        secret, key, org = create_key(store, command.org or "default", command.name,
                                      command.rate_limit_per_minute)
        try:
            gateway_id = registry.register(key)
        except Exception:
            store.revoke_api_key(key.id, now)  # never leave a key the gateway would refuse
            raise
        return KeysResult(action="create", key=KeyOut.of(key), secret=secret, organization_id=org.id,
                          gateway_key_id=gateway_id,
                          message=f"created key {key.prefix}… for organization {org.name}: store the "
                                  "secret now, it is shown only once")
    if command.action == "list":
        org_id = None
        if command.org:
            found = store.find_organization_by_slug(slugify(command.org))
            if found is None:
                raise NotFoundError(f"org: organization {command.org!r} not found")
            org_id = found.id
        keys = [KeyOut.of(k) for k in store.list_api_keys(org_id)]
        return KeysResult(action="list", keys=keys, organization_id=org_id, message=f"{len(keys)} keys")
    key_id = command.key_id or ""
    if not store.revoke_api_key(key_id, now):
        raise NotFoundError(f"key_id: no key {key_id!r}")
    registry.deregister(key_id)
    return KeysResult(action="revoke", message=f"revoked {key_id}")


def parse_command(payload: object) -> KeysCommand:
    if not isinstance(payload, dict):
        raise InvalidInputError("payload", 'expected an object, e.g. {"action": "create", "org": "default"}')
    return KeysCommand.model_validate(payload)
