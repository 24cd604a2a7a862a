"""Webhooks: a provider tells memlane what changed, and memlane applies it in the same request (the
periodic sync stays the safety net for anything a delivery missed).

GitHub (https://docs.github.com/webhooks): every delivery carries `X-Hub-Signature-256:
sha256=<HMAC-SHA256 of the raw body, keyed with the webhook's secret>`. The secret is the
connection's own (shown once when it was created), so the signature proves both who sent the
delivery and which connection it is for; nothing in the body is trusted before it checks out, and
an unknown connection gets the same 401 as a wrong signature.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memlane.connections import replay
from memlane.connections.provider_access import vault_context
from memlane.connections.providers import repository
from memlane.connections.providers.github import issue_id
from memlane.connections.schemas import WebhookOut
from memlane.connections.service import ports_of
from memlane.connections.sync import apply_changes
from memlane.domain.connections import Connection, ConnectionStatus, ItemRef, Provider
from memlane.domain.errors import AuthenticationError, InvalidInputError, NotFoundError
from memlane.domain.json_input import JsonBoundsError, parse_json
from memlane.ports import ConnectionPorts, Services

SIGNATURE_HEADER = "x-hub-signature-256"
EVENT_HEADER = "x-github-event"
DELIVERY_HEADER = "x-github-delivery"
PUSH_COMMITS_IN_PAYLOAD = 20  # GitHub lists at most this many commits in a push payload
_REFUSED = "X-Hub-Signature-256: missing, or not signed with this connection's webhook secret"


def github_signature(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_github_signature(secret: bytes, body: bytes, header: str | None) -> bool:
    return header is not None and hmac.compare_digest(github_signature(secret, body), header.strip())


@dataclass
class Changes:
    upserts: list[ItemRef] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    incomplete: bool = False  # the payload did not list everything: ask for a sync too


def _header(headers: Mapping[str, str], name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name), None)


ISSUE_EVENTS = ("issues", "issue_comment", "pull_request", "pull_request_review_comment")


def github_changes(conn: Connection, event: str, payload: dict[str, Any]) -> Changes | None:
    """What a delivery changes in this connection; None when it is not about anything it syncs."""
    repo = (payload.get("repository") or {}).get("full_name")
    if not isinstance(repo, str) or repo not in conn.options.get("repositories", []):
        return None
    if event == "push":
        return _push_changes(conn, repo, payload)
    if event in ISSUE_EVENTS:
        return _issue_changes(conn, repo, event, payload)
    return None


def _push_changes(conn: Connection, repo: str, payload: dict[str, Any]) -> Changes | None:
    """The files a push to the synced branch leaves, or removes; None for another branch, a
    deleted branch, or a connection that syncs no files."""
    if not conn.options.get("files", True) or payload.get("deleted"):
        return None
    branch = conn.options.get("branch") or (payload.get("repository") or {}).get("default_branch")
    if payload.get("ref") != f"refs/heads/{branch}":
        return None
    commits = payload.get("commits") or []
    changes = Changes(incomplete=len(commits) >= PUSH_COMMITS_IN_PAYLOAD)
    after = payload.get("after")
    for path, exists in _paths_after(commits).items():
        ext_id = repository.file_id(repo, path)
        if exists and repository.wanted(path, None, conn.options):
            changes.upserts.append(ItemRef(external_id=ext_id, hint={"commit": after}))
        else:
            changes.deletes.append(ext_id)
    return changes


def _paths_after(commits: list[dict[str, Any]]) -> dict[str, bool]:
    """Each path the commits touch → whether it exists after them, in commit order."""
    final: dict[str, bool] = {}
    for commit in commits:
        for path in [*(commit.get("added") or []), *(commit.get("modified") or [])]:
            final[path] = True
        for path in commit.get("removed") or []:
            final[path] = False
    return final


def _issue_changes(conn: Connection, repo: str, event: str, payload: dict[str, Any]) -> Changes | None:
    """The issue or pull request an event is about, written again or (deleted, transferred) removed."""
    thing = payload.get("issue") or payload.get("pull_request") or {}
    number = thing.get("number")
    if not isinstance(number, int):
        return None
    pull = "pull_request" in thing or event.startswith("pull_request")
    if not conn.options.get("pull_requests" if pull else "issues", True):
        return None
    ext_id = issue_id(repo, number)
    if event == "issues" and payload.get("action") in ("deleted", "transferred"):
        return Changes(deletes=[ext_id])
    return Changes(upserts=[ItemRef(external_id=ext_id, hint={"repo": repo, "number": number, "pull": pull})])


def handle_github(svc: Services, connection_id: str | None, headers: Mapping[str, str], body: bytes) -> WebhookOut:
    ports = ports_of(svc)
    conn = _signed_for(ports, connection_id, headers, body)
    event = _header(headers, EVENT_HEADER) or ""
    payload = _json_object(body)
    if event == "ping":
        return WebhookOut(ok=True, event=event, note="pong")
    if conn.status == ConnectionStatus.DELETING:
        raise NotFoundError(f"connection {conn.id} not found")
    if conn.status != ConnectionStatus.ACTIVE:
        return WebhookOut(ok=True, event=event, note=f"connection is {conn.status.value}; nothing applied")
    changes = github_changes(conn, event, payload)
    if changes is None:
        return WebhookOut(ok=True, event=event, note="not about anything this connection syncs")
    return _apply_delivery(svc, ports, conn, event, changes, _header(headers, DELIVERY_HEADER), body)


def _signed_for(ports: ConnectionPorts, connection_id: str | None, headers: Mapping[str, str],
                body: bytes) -> Connection:
    """The GitHub connection whose webhook secret signed this body; anything else is the same 401."""
    conn = ports.store.find_for_webhook(connection_id) if connection_id else None
    if conn is None or conn.provider != Provider.GITHUB or not conn.sealed_webhook_secret:
        raise AuthenticationError(_REFUSED)
    secret = ports.vault.open(vault_context(conn), conn.sealed_webhook_secret)
    if not verify_github_signature(secret, body, _header(headers, SIGNATURE_HEADER)):
        raise AuthenticationError(_REFUSED)
    return conn


def _json_object(body: bytes) -> dict[str, Any]:
    try:
        payload = parse_json(body)
    except JsonBoundsError:
        raise
    except InvalidInputError as exc:
        raise InvalidInputError("body", "is not JSON (set the webhook's content type to application/json)") from exc
    if not isinstance(payload, dict):
        raise InvalidInputError("body", "must be a JSON object")
    return payload


def _apply_delivery(svc: Services, ports: ConnectionPorts, conn: Connection, event: str, changes: Changes,
                    delivery: str | None, body: bytes) -> WebhookOut:
    """The changes applied once per delivery (a redelivery changes nothing); a push that listed
    only part of its commits asks for a sync too."""
    if replay.already_applied(svc, conn.id, delivery, body):
        return WebhookOut(ok=True, event=event, note="this delivery was already applied; nothing changed")
    applied = apply_changes(svc, conn, changes.upserts, changes.deletes)
    if applied is None:
        return WebhookOut(ok=True, event=event, note="a sync is running; it was asked to run again")
    replay.record_applied(svc, conn.id, delivery, body)  # only now: a failed delivery may come again
    if changes.incomplete:
        current = ports.store.get_connection(conn.organization_id, conn.id)
        if current is not None:
            ports.store.put_connection(current.model_copy(update={"sync_requested": True}))
        if ports.dispatcher is not None:
            ports.dispatcher.request_sync(conn.organization_id, conn.id)
    return WebhookOut(ok=True, event=event, applied=applied)
