"""API keys: created for an organization, stored as SHA-256 hashes, shown once."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping

from memlane.domain.errors import AuthenticationError, InvalidInputError, NotFoundError
from memlane.domain.limits import DEFAULT_RATE_LIMIT_PER_MINUTE
from memlane.domain.models import ApiKey, Organization, Project
from memlane.domain.principal import Principal
from memlane.ports import MetadataStore, OrganizationStore

KEY_PREFIX = "mlk_"


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "project"


def ensure_organization(store: MetadataStore, name: str) -> tuple[Organization, bool]:
    """Find the organization named `name` (by slug), or create it with its default project."""
    slug = slugify(name)
    existing = store.find_organization_by_slug(slug)
    if existing:
        return existing, False
    org = store.create_organization(Organization(name=name, slug=slug))
    store.create_project(Project(organization_id=org.id, name="Default", slug="default", is_default=True))
    return org, True


def create_key(
    store: MetadataStore,
    org_name: str = "default",
    key_name: str = "default",
    rate_limit_per_minute: int = DEFAULT_RATE_LIMIT_PER_MINUTE,
    *,
    can_manage_keys: bool = False,
) -> tuple[str, ApiKey, Organization]:
    """Returns the secret (the only time it exists in clear), the stored key and its organization."""
    if not org_name.strip():
        raise InvalidInputError("org", "must not be empty")
    org, _ = ensure_organization(store, org_name.strip())
    secret, key = issue_key(store, org.id, key_name, rate_limit_per_minute, can_manage_keys=can_manage_keys)
    return secret, key, org


def issue_key(
    store: OrganizationStore, org_id: str, key_name: str, rate_limit_per_minute: int = DEFAULT_RATE_LIMIT_PER_MINUTE, *,
    can_manage_keys: bool = False,
) -> tuple[str, ApiKey]:
    """A new key for an existing organization: the secret and the stored key."""
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(
        organization_id=org_id,
        name=key_name,
        key_hash=hash_key(secret),
        prefix=secret[:12],
        rate_limit_per_minute=rate_limit_per_minute,
        can_manage_keys=can_manage_keys,
    )
    store.put_api_key(key)
    return secret, key


def key_from_headers(headers: Mapping[str, str]) -> str | None:
    """`Authorization: Bearer <key>` or `x-api-key: <key>` (header names are case-insensitive)."""
    lowered = {k.lower(): v for k, v in headers.items() if v is not None}
    auth = lowered.get("authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        return auth[7:].strip()
    api_key = lowered.get("x-api-key", "").strip()
    return api_key or None


def authenticate(store: OrganizationStore, headers: Mapping[str, str]) -> Principal:
    """The authorizer logic, shared by the Lambda authorizer and the local server."""
    secret = key_from_headers(headers)
    if secret is None:
        raise AuthenticationError("missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`")
    key = store.find_api_key_by_hash(hash_key(secret))
    if key is None or not key.active:
        raise AuthenticationError("invalid or revoked API key")
    return Principal(
        organization_id=key.organization_id, key_id=key.id, rate_limit_per_minute=key.rate_limit_per_minute,
        can_manage_keys=key.can_manage_keys,
    )


def revoke_key(store: OrganizationStore, key_id_or_prefix: str, now) -> None:
    if not store.revoke_api_key(key_id_or_prefix, now):
        raise NotFoundError(f"no active key {key_id_or_prefix!r}")
