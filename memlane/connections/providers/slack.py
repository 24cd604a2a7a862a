"""Slack (https://docs.slack.dev/reference/methods/stars.list): the user's saved items, messages and
files, read with a user token (`stars:read`).

Slack has no changes feed for saved items, and a user keeps few of them, so every sync lists them
all (`stars.list`, cursor-paginated): new and edited messages are written, items no longer saved
are deleted. Slack answers errors with HTTP 200 and `{"ok": false, "error": …}`; `token_expired`
and `invalid_auth` are treated as a refused token (refresh, once, when token rotation is on),
`ratelimited` as a 429. Note: Slack no longer adds items saved with its newer "Later" view to
stars.list, and offers no API for them yet.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, ClassVar

import httpx

from memlane.connections.errors import ProviderItemError, ProviderRateLimited
from memlane.connections.oauth import OAuthSpec, retry_after_seconds
from memlane.connections.providers.base import Batch, ProviderDefaults
from memlane.connections.session import ProviderSession
from memlane.domain.connections import Connection, Item, ItemRef, Provider, TokenSet
from memlane.domain.models import ContentType

PAGE_SIZE = 100
AUTH_ERRORS = {"token_expired", "invalid_auth", "token_revoked", "not_authed", "account_inactive"}


def _parse_token(data: dict[str, Any]) -> dict[str, Any]:
    """oauth.v2.access answers with the user's token nested under `authed_user` (a user token is
    what stars.list needs); a refresh answers at the top level."""
    if not data.get("ok", True):
        return {"error": data.get("error", "unknown_error")}
    user = data.get("authed_user") or {}
    fields = {**data, **user} if user.get("access_token") else dict(data)
    fields.pop("authed_user", None)
    team = data.get("team") or {}
    if isinstance(team, dict) and team.get("name"):
        fields["team_name"] = team["name"]
    fields.pop("team", None)
    fields.pop("enterprise", None)
    if isinstance(user, dict) and user.get("id"):
        fields["user_id"] = user["id"]
    return fields


def item_id(item: dict[str, Any]) -> str | None:
    kind = item.get("type")
    if kind == "message":
        return f"message:{item.get('channel')}:{(item.get('message') or {}).get('ts')}"
    if kind == "file":
        return f"file:{(item.get('file') or {}).get('id')}"
    return None


class SlackProvider(ProviderDefaults):
    name: ClassVar[Provider] = Provider.SLACK
    api_url: ClassVar[str] = "https://slack.com/api"
    relists_everything: ClassVar[bool] = True
    oauth: ClassVar[OAuthSpec | None] = OAuthSpec(
        authorize_url="https://slack.com/oauth/v2/authorize",
        token_url="https://slack.com/api/oauth.v2.access",
        scopes=("stars:read",),
        scope_param="user_scope",
        scope_separator=",",
        pkce=False,
        client_auth="body",
        parse=_parse_token,
    )

    def label(self, options: dict[str, Any], account: str | None) -> str:
        return f"Slack: {account}" if account else "Slack"

    def _error(self, response: httpx.Response) -> str | None:
        if response.status_code != 200 or "json" not in response.headers.get("content-type", ""):
            return None
        try:
            data = response.json()
        except ValueError:
            return None
        return data.get("error") if isinstance(data, dict) and data.get("ok") is False else None

    def classify(self, response: httpx.Response, now: datetime) -> Exception | None:
        error = self._error(response)
        if error == "ratelimited":
            return ProviderRateLimited("slack: ratelimited", retry_after_seconds(response, now, default=60.0))
        if error and error not in AUTH_ERRORS:
            return ProviderItemError(f"slack: {error}")
        return None

    def auth_failed(self, response: httpx.Response) -> bool:
        return response.status_code == 401 or self._error(response) in AUTH_ERRORS

    def identify(self, session: ProviderSession, tokens: TokenSet) -> str | None:
        team, user = tokens.extra.get("team_name"), tokens.extra.get("user_id")
        return f"{user} in {team}" if team and user else (team or user)

    def scan(self, session: ProviderSession, conn: Connection) -> Iterator[Batch]:
        refs: list[ItemRef] = []
        params: dict[str, Any] = {"limit": PAGE_SIZE}
        while True:
            page = session.get_json("/stars.list", params=params)
            for item in page.get("items") or []:
                ext_id = item_id(item)
                if ext_id is None:
                    continue
                message = item.get("message") or {}
                edited = (message.get("edited") or {}).get("ts")
                version = edited or message.get("ts") or (item.get("file") or {}).get("updated") or ""
                refs.append(ItemRef(external_id=ext_id, version=str(version), hint={"item": item}))
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break
            params = {"limit": PAGE_SIZE, "cursor": cursor}
        yield Batch(upserts=refs, reconcile=("", {r.external_id for r in refs}))

    def fetch(self, session: ProviderSession, conn: Connection, ref: ItemRef) -> Item | None:
        item = ref.hint.get("item")
        if item is None:
            return None  # no longer listed: no longer saved
        channel = item.get("channel") or ""
        if item.get("type") == "message":
            m = item.get("message") or {}
            text = (m.get("text") or "").strip()
            if not text:
                return None
            when = datetime.fromtimestamp(float(m.get("ts") or 0), UTC).isoformat()
            author = m.get("user") or m.get("username") or "unknown"
            return Item(external_id=ref.external_id, version=ref.version,
                        title=f"Saved Slack message from {author} in {channel}"[:500],
                        content=f"{text}\n\n— <@{author}> in <#{channel}>, {when}\n", content_type=ContentType.TEXT,
                        source_url=m.get("permalink"),
                        metadata={"channel": channel, "ts": m.get("ts"), "author": author},
                        tags=["slack", "saved-message"])
        f = item.get("file") or {}
        body = (f.get("plain_text") or f.get("preview") or "").strip()
        title = f.get("title") or f.get("name") or "Saved Slack file"
        return Item(external_id=ref.external_id, version=ref.version, title=title[:500],
                    content=f"# {title}\n\n{body}\n" if body else f"# {title}\n", content_type=ContentType.MARKDOWN,
                    source_url=f.get("permalink"), metadata={"file_id": f.get("id"), "filetype": f.get("filetype")},
                    tags=["slack", "saved-file"])
