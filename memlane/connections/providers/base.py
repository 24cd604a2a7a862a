"""What every provider adapter offers the sync (memlane.connections.sync).

A provider lists what changed since its cursor, in batches: items to (re)write as ItemRefs with a
version marker, items gone, and optionally a full listing of one kind of item (`reconcile`) from
which the sync learns what was deleted. After a batch is applied the sync stores its `cursor`, so
a rate limit or an outage in the middle costs at most one batch, never the cursor.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Protocol

from memlane.connections.oauth import OAuthSpec
from memlane.connections.session import ProviderSession
from memlane.domain.connections import Connection, Item, ItemRef, Provider, TokenSet


@dataclass
class Batch:
    upserts: list[ItemRef] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    cursor: dict[str, Any] | None = None  # stored once this batch is applied
    # (prefix, ids present at the provider): known items with that prefix and not present are gone.
    reconcile: tuple[str, set[str]] | None = None
    errors: list[str] = field(default_factory=list)  # what could not be listed (one repository, …)


class ProviderAdapter(Protocol):
    name: ClassVar[Provider]
    oauth: ClassVar[OAuthSpec | None]
    api_url: ClassVar[str]
    # True when every scan lists every item again (Slack, X): a failed item needs no retry list.
    relists_everything: ClassVar[bool]

    def validate_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The options, normalised; raises InvalidInputError naming `options.<field>`."""
        ...

    def label(self, options: dict[str, Any], account: str | None) -> str: ...

    def session_headers(self) -> dict[str, str]: ...

    def classify(self, response: Any, now: datetime) -> Exception | None: ...

    def auth_failed(self, response: Any) -> bool: ...

    def identify(self, session: ProviderSession, tokens: TokenSet) -> str | None:
        """Who authorized the connection (a login, a workspace, an email), for the listing."""
        ...

    def scan(self, session: ProviderSession, conn: Connection) -> Iterator[Batch]: ...

    def fetch(self, session: ProviderSession, conn: Connection, ref: ItemRef) -> Item | None:
        """The item's content; None when it no longer exists at the provider."""
        ...


class ProviderDefaults:
    """What most providers answer alike: no options, no extra headers, 401 for a refused token,
    no provider-specific status. Adapters override what differs."""

    def validate_options(self, options: dict[str, Any]) -> dict[str, Any]:
        if options:
            from memlane.domain.errors import InvalidInputError

            name = getattr(self, "name", "this provider")
            raise InvalidInputError(f"options.{sorted(options)[0]}", f"{name} connections take no options")
        return {}

    def session_headers(self) -> dict[str, str]:
        return {}

    def classify(self, response: Any, now: datetime) -> Exception | None:
        return None

    def auth_failed(self, response: Any) -> bool:
        return bool(getattr(response, "status_code", None) == 401)

    def identify(self, session: ProviderSession, tokens: TokenSet) -> str | None:
        return None
