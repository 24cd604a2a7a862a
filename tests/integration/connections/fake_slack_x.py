"""Slack's and X's APIs on loopback.

Slack (https://docs.slack.dev/reference/methods/stars.list, /oauth.v2.access): saved items with
cursor pagination (`response_metadata.next_cursor`), errors as HTTP 200 `{"ok": false, "error"}`
(`token_expired` for a stale token), `oauth.v2.access` answering with the user token under
`authed_user` and refreshing with token rotation, 429 with Retry-After.

X (https://docs.x.com/x-api/posts/bookmarks): `GET /2/users/me`, `GET /2/users/{id}/bookmarks`
(`pagination_token` → `meta.next_token`, `includes.users` and `includes.tweets`), 429 with
`x-rate-limit-reset`, OAuth 2.0 with PKCE for a confidential client (HTTP Basic), two-hour tokens.
"""

from __future__ import annotations

from typing import Any

from fake_provider import FakeProvider, Reply, Request, json_reply


class FakeSlack(FakeProvider):
    token_ttl_s = 12 * 3600  # Slack's rotating tokens last 12 hours
    client_auth = "body"
    page_size_cap = 2

    def __init__(self) -> None:
        self.saved: list[dict[str, Any]] = []
        super().__init__()

    def reset_data(self) -> None:
        self.saved.clear()
        self.reset()

    def save_message(self, channel: str, ts: str, user: str, text: str) -> dict[str, Any]:
        item = {"type": "message", "channel": channel, "date_create": 1700000000,
                "message": {"type": "message", "ts": ts, "user": user, "text": text,
                            "permalink": f"https://acme.slack.com/archives/{channel}/p{ts.replace('.', '')}"}}
        self.saved.append(item)
        return item

    def save_file(self, file_id: str, title: str, preview: str) -> None:
        self.saved.append({"type": "file", "date_create": 1700000001,
                           "file": {"id": file_id, "title": title, "name": f"{title}.txt", "preview": preview,
                                    "filetype": "text", "updated": 1700000001,
                                    "permalink": f"https://acme.slack.com/files/{file_id}"}})

    def setup_routes(self) -> None:
        self.route("GET", r"/stars\.list", self.stars_list)

    def unauthorized(self, request: Request) -> Reply:
        return json_reply({"ok": False, "error": "token_expired"})  # Slack: HTTP 200, ok false

    def token_answer(self, pair: dict[str, Any], first: bool) -> dict[str, Any]:
        if first:
            return {"ok": True, "app_id": "A1", "team": {"id": "T1", "name": "Acme"},
                    "authed_user": {"id": "U42", "scope": "stars:read", "token_type": "user", **pair}}
        return {"ok": True, "token_type": "user", **pair}

    def token_error(self, error: str, status: int = 400) -> Reply:
        return json_reply({"ok": False, "error": error})

    def stars_list(self, request: Request) -> Reply:
        start = int(request.arg("cursor") or 0)
        size = min(int(request.arg("limit", "100")), self.page_size_cap)
        chunk = self.saved[start : start + size]
        more = start + size < len(self.saved)
        return json_reply({"ok": True, "items": chunk,
                           "response_metadata": {"next_cursor": str(start + size) if more else ""}})


class FakeX(FakeProvider):
    token_ttl_s = 2 * 3600
    client_auth = "basic"
    page_size_cap = 2

    def __init__(self) -> None:
        self.bookmarks: list[dict[str, Any]] = []
        self.users = {"1": {"id": "1", "username": "ana", "name": "Ana"},
                      "2": {"id": "2", "username": "grace", "name": "Grace Hopper"},
                      "3": {"id": "3", "username": "linus", "name": "Linus"}}
        self.tweets: dict[str, dict[str, Any]] = {}
        super().__init__()

    def reset_data(self) -> None:
        self.bookmarks.clear()
        self.tweets.clear()
        self.reset()

    def post(self, tweet_id: str, author: str, text: str, replying_to: str | None = None) -> dict[str, Any]:
        tweet = {"id": tweet_id, "text": text, "author_id": author, "created_at": "2025-02-01T10:00:00.000Z",
                 "conversation_id": replying_to or tweet_id, "edit_history_tweet_ids": [tweet_id]}
        if replying_to:
            tweet["referenced_tweets"] = [{"type": "replied_to", "id": replying_to}]
        self.tweets[tweet_id] = tweet
        return tweet

    def setup_routes(self) -> None:
        self.route("GET", r"/2/users/me", lambda r: json_reply({"data": self.users["1"]}))
        self.route("GET", r"/2/users/(?P<id>\d+)/bookmarks", self.list_bookmarks)

    def list_bookmarks(self, request: Request) -> Reply:
        if request.match["id"] != "1":
            return json_reply({"title": "Forbidden"}, 403)
        start = int(request.arg("pagination_token") or 0)
        size = min(int(request.arg("max_results", "100")), self.page_size_cap)
        chunk = self.bookmarks[start : start + size]
        referenced = [self.tweets[r["id"]] for t in chunk for r in t.get("referenced_tweets", []) if r["id"] in self.tweets]
        authors = {t["author_id"] for t in chunk + referenced}
        meta: dict[str, Any] = {"result_count": len(chunk)}
        if start + size < len(self.bookmarks):
            meta["next_token"] = str(start + size)
        return json_reply({"data": chunk, "includes": {"users": [self.users[a] for a in sorted(authors)],
                                                       "tweets": referenced}, "meta": meta})
