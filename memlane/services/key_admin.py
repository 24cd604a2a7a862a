"""API key administration for a deployment (the keys admin function on AWS): create, list and
revoke memlane keys, and keep the gateway's own record of each key in step with memlane's.

On AWS the REST API's usage plan throttles per key, and API Gateway only meters keys it knows:
every memlane key is therefore also registered as an API Gateway API key (its value is the
SHA-256 that the authorizer returns as `usageIdentifierKey`). `KeyRegistry` is that second record;
a key the gateway could not register is revoked again, so no key exists that would only get 403s.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memlane.domain.errors import ConflictError, ForbiddenError, InvalidInputError, NotFoundError
from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE
from memlane.domain.models import ApiKey
from memlane.domain.principal import Principal
from memlane.ports import KeyRegistry, MetadataStore, OrganizationStore, Services
from memlane.services.keys import ensure_organization, issue_key, slugify


class KeysCommand(BaseModel):
    """The admin function's payload, e.g. {"action": "create", "org": "default"}."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["create", "list", "revoke"]
    org: str | None = None  # create: the organization (created when new); list: filter by it
    name: str = Field(default="default", min_length=1, max_length=100)
    rate_limit_per_minute: int = Field(default=DEFAULT_RATE_LIMIT_PER_MINUTE, ge=1, le=100_000)
    # An operator's key administers its organization from the web app unless told otherwise.
    can_manage_keys: bool = True
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
    can_manage_keys: bool = False

    @classmethod
    def of(cls, key: ApiKey) -> KeyOut:
        return cls(id=key.id, organization_id=key.organization_id, name=key.name, prefix=key.prefix,
                   created_at=key.created_at, revoked_at=key.revoked_at,
                   rate_limit_per_minute=key.rate_limit_per_minute, active=key.active,
                   can_manage_keys=key.can_manage_keys)


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
        org, _ = ensure_organization(store, (command.org or "default").strip() or "default")
        secret, key, gateway_id = create_registered_key(
            store, registry, org.id, command.name, now, rate_limit_per_minute=command.rate_limit_per_minute,
            can_manage_keys=command.can_manage_keys)
        return KeysResult(action="create", key=KeyOut.of(key), secret=secret, organization_id=org.id,
                          gateway_key_id=gateway_id or None,
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


def create_registered_key(store: OrganizationStore, registry: KeyRegistry, org_id: str, name: str, now: datetime,
                          *, rate_limit_per_minute: int = DEFAULT_RATE_LIMIT_PER_MINUTE,
                          can_manage_keys: bool = False) -> tuple[str, ApiKey, str]:
    """A new key of an existing organization, known to the gateway before anyone can use it:
    the secret (returned once, never stored), the key and the gateway's id for it."""
    secret, key = issue_key(store, org_id, name, rate_limit_per_minute, can_manage_keys=can_manage_keys)
    try:
        gateway_id = registry.register(key)
    except Exception:
        store.revoke_api_key(key.id, now)  # never leave a key the gateway would refuse
        raise
    return secret, key, gateway_id


# --------------------------------------------------------------------------- a key managing its organization's keys


class NoGatewayRegistry:
    """Where no gateway meters keys (the local server): nothing to register."""

    def register(self, key: ApiKey) -> str:
        return ""

    def deregister(self, key_id: str) -> None:
        return None


def _require_manager(who: Principal) -> None:
    if not who.can_manage_keys:
        raise ForbiddenError("this API key may not manage keys; sign in with a key that may "
                             "(the local first-start key, or one created with can_manage_keys)")


def list_organization_keys(svc: Services, who: Principal) -> list[KeyOut]:
    _require_manager(who)
    keys = svc.metadata.list_api_keys(who.organization_id)
    return [KeyOut.of(k) for k in sorted(keys, key=lambda k: (k.created_at, k.id), reverse=True)]


def create_organization_key(svc: Services, who: Principal, name: str, can_manage_keys: bool) -> tuple[str, KeyOut]:
    """A key of the caller's organization (never another's), with the caller's rate limit."""
    _require_manager(who)
    secret, key, _ = create_registered_key(
        svc.metadata, svc.platform.key_registry or NoGatewayRegistry(), who.organization_id, name, svc.clock.now(),
        rate_limit_per_minute=who.rate_limit_per_minute, can_manage_keys=can_manage_keys)
    return secret, KeyOut.of(key)


def revoke_organization_key(svc: Services, who: Principal, key_id: str) -> None:
    """Refused at once by the authorizer on its next request. Another organization's key is a 404;
    the key making the request cannot revoke itself (the page would lose its own access)."""
    _require_manager(who)
    mine = {k.id: k for k in svc.metadata.list_api_keys(who.organization_id)}
    key = mine.get(key_id)
    if key is None or not key.active:
        raise NotFoundError(f"key_id: no active key {key_id!r}")
    if key.id == who.key_id:
        raise ConflictError("key_id: this is the key making the request; revoke it with another key")
    svc.metadata.revoke_api_key(key.id, svc.clock.now())
    (svc.platform.key_registry or NoGatewayRegistry()).deregister(key.id)


def parse_command(payload: object) -> KeysCommand:
    if not isinstance(payload, dict):
        raise InvalidInputError("payload", 'expected an object, e.g. {"action": "create", "org": "default"}')
    return KeysCommand.model_validate(payload)
