"""X (https://docs.x.com/x-api/posts/bookmarks): the user's bookmarked posts, with the posts they
reply to or quote (the thread's context), through OAuth 2.0 with PKCE (`tweet.read users.read
bookmark.read offline.access`; access tokens last two hours and are refreshed).

X keeps no changes feed for bookmarks and returns at most the 800 most recent, so every sync lists
them (`GET /2/users/{id}/bookmarks`, `pagination_token`): new bookmarks are written, removed ones
deleted. X signals its rate limit with 429 and `x-rate-limit-reset` (epoch seconds).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from memlane.connections.oauth import OAuthSpec
from memlane.connections.providers.base import Batch, ProviderDefaults
from memlane.connections.session import ProviderSession
from memlane.domain.connections import Connection, Item, ItemRef, Provider, TokenSet
from memlane.domain.models import ContentType

PAGE_SIZE = 100
TWEET_FIELDS = "created_at,author_id,conversation_id,referenced_tweets,note_tweet,entities"
EXPANSIONS = "author_id,referenced_tweets.id,referenced_tweets.id.author_id"


class XProvider(ProviderDefaults):
    name: ClassVar[Provider] = Provider.X
    api_url: ClassVar[str] = "https://api.x.com"
    relists_everything: ClassVar[bool] = True
    oauth: ClassVar[OAuthSpec | None] = OAuthSpec(
        authorize_url="https://x.com/i/oauth2/authorize",
        token_url="https://api.x.com/2/oauth2/token",
        scopes=("tweet.read", "users.read", "bookmark.read", "offline.access"),
        client_auth="basic",  # a confidential client
    )

    def label(self, options: dict[str, Any], account: str | None) -> str:
        return f"X: @{account}" if account else "X bookmarks"

    def identify(self, session: ProviderSession, tokens: TokenSet) -> str | None:
        me = session.get_json("/2/users/me").get("data") or {}
        return me.get("username")

    def scan(self, session: ProviderSession, conn: Connection) -> Iterator[Batch]:
        user_id = conn.cursor.get("user_id")
        if not user_id:
            user_id = (session.get_json("/2/users/me").get("data") or {})["id"]
        refs: list[ItemRef] = []
        params: dict[str, Any] = {"max_results": PAGE_SIZE, "tweet.fields": TWEET_FIELDS, "expansions": EXPANSIONS,
                                  "user.fields": "username,name"}
        while True:
            page = session.get_json(f"/2/users/{user_id}/bookmarks", params=params)
            includes = page.get("includes") or {}
            users = {u["id"]: u for u in includes.get("users") or []}
            tweets = {t["id"]: t for t in includes.get("tweets") or []}
            for tweet in page.get("data") or []:
                refs.append(ItemRef(external_id=f"tweet:{tweet['id']}", version=tweet.get("edit_history_tweet_ids",
                                                                                            [tweet["id"]])[-1],
                                    hint={"tweet": tweet, "users": _subset(users, tweet, tweets),
                                          "referenced": [tweets[r["id"]] for r in tweet.get("referenced_tweets") or []
                                                         if r.get("id") in tweets]}))
            token = (page.get("meta") or {}).get("next_token")
            if not token:
                break
            params = {**params, "pagination_token": token}
        yield Batch(upserts=refs, reconcile=("tweet:", {r.external_id for r in refs}), cursor={"user_id": user_id})

    def fetch(self, session: ProviderSession, conn: Connection, ref: ItemRef) -> Item | None:
        tweet = ref.hint.get("tweet")
        if tweet is None:
            return None  # no longer listed: no longer bookmarked
        users = ref.hint.get("users") or {}
        author = users.get(tweet.get("author_id"), {})
        handle = author.get("username") or tweet.get("author_id") or "unknown"
        text = ((tweet.get("note_tweet") or {}).get("text") or tweet.get("text") or "").strip()
        lines = [text, "", f"— @{handle}" + (f" ({author['name']})" if author.get("name") else "")
                 + (f", {tweet['created_at']}" if tweet.get("created_at") else "")]
        for ref_tweet in ref.hint.get("referenced") or []:
            ref_author = users.get(ref_tweet.get("author_id"), {}).get("username") or ref_tweet.get("author_id")
            body = ((ref_tweet.get("note_tweet") or {}).get("text") or ref_tweet.get("text") or "").strip()
            lines += ["", f"In reply to or quoting @{ref_author}:", *(f"> {line}" for line in body.splitlines())]
        return Item(
            external_id=ref.external_id, version=ref.version,
            title=f"@{handle}: {text[:80]}"[:500], content="\n".join(lines).strip() + "\n",
            content_type=ContentType.TWEET, source_url=f"https://x.com/{handle}/status/{tweet['id']}",
            metadata={"tweet_id": tweet["id"], "author": handle, "conversation_id": tweet.get("conversation_id"),
                      "created_at": tweet.get("created_at")},
            tags=["x", "bookmark"])


def _subset(users: dict[str, Any], tweet: dict[str, Any], tweets: dict[str, Any]) -> dict[str, Any]:
    wanted = {tweet.get("author_id")} | {tweets[r["id"]].get("author_id") for r in tweet.get("referenced_tweets") or []
                                         if r.get("id") in tweets}
    return {k: v for k, v in users.items() if k in wanted}
