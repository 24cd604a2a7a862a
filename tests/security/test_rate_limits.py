"""Issue 34, findings 6, 9 and 11: what counts against a rate limit, and whose limit it is.

- a key minted by a key carries the minting key's limit (a key limited to 5 a minute cannot mint
  keys that make 100);
- web sign-in is refused for another origin before any bucket is touched, and counted per origin,
  so a website cannot lock the user out;
- bulk routes count by weight (items or bytes), from one table, with an allowance that keeps
  today's raged clients and connection syncs under the default limit.
"""

from __future__ import annotations

import json

from memlane.api.weights import request_weight
from memlane.services.keys import create_key


def _limited_key(server, limit: int, *, can_manage_keys: bool = False) -> str:
    secret, _, _ = create_key(server.server.stack.metadata, "acme", "limited", limit,
                              can_manage_keys=can_manage_keys)
    return secret


def test_a_minted_key_carries_the_callers_rate_limit(secure_server):
    # Given a key limited to 5 requests a minute that may manage keys
    caller = _limited_key(secure_server, 5, can_manage_keys=True)
    with secure_server.client(caller) as c:
        # When it mints a key
        r = c.post("/v3/keys", json={"name": "minted"})
        assert r.status_code == 201, r.text
        minted = r.json()
    # Then the new key has the caller's limit, not the default of 100
    assert minted["key"]["rate_limit_per_minute"] == 5
    # and the limit holds: the sixth request of the minute is refused
    with secure_server.client(minted["secret"]) as m:
        statuses = [m.get("/v3/whoami").status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]


def test_a_limited_key_cannot_mint_keys_faster_than_its_limit(secure_server):
    caller = _limited_key(secure_server, 5, can_manage_keys=True)
    with secure_server.client(caller) as c:
        statuses = [c.post("/v3/keys", json={"name": f"k{i}"}).status_code for i in range(8)]
    assert statuses == [201] * 5 + [429] * 3


def test_another_website_cannot_lock_the_user_out_of_sign_in(secure_server):
    from memlane.local.webapp import SIGN_IN_ATTEMPTS_PER_MINUTE

    host = secure_server.url.removeprefix("http://")
    code = secure_server.server.webapp.sign_in.issue(secure_server.key)
    with secure_server.client("") as anon:
        # Given a website on another origin posting sign-in attempts, many more than the limit
        hostile = [anon.post("/webapp/sign-in", json={"code": f"guess-{i}"},
                             headers={"Origin": "https://evil.example"}).status_code
                   for i in range(3 * SIGN_IN_ATTEMPTS_PER_MINUTE)]
        # and a DNS-rebound page that passes the check under its own host name, spending its own bucket
        rebound = [anon.post("/webapp/sign-in", json={"code": f"guess-{i}"},
                             headers={"Origin": "http://evil.example:7432", "Host": "evil.example:7432"}).status_code
                   for i in range(SIGN_IN_ATTEMPTS_PER_MINUTE + 2)]
        # When the user's own app signs in
        mine = anon.post("/webapp/sign-in", json={"code": code}, headers={"Origin": f"http://{host}"})
    # Then every cross-origin attempt was refused without being counted, and the user is signed in
    assert set(hostile) == {403}
    assert rebound[-1] == 429
    assert mine.status_code == 200 and mine.json() == {"key": secure_server.key}


# ------------------------------------------------------------------------ bulk routes by weight


def _remaining(response) -> int:
    return int(response.headers["RateLimit-Remaining"])


def raged_batch(start: int, files: int = 100, size: int = 3000) -> dict:
    """A raged client indexing a repository: a batch of files of a few KB."""
    body = "def handler(event):\n    return {'ok': True}\n" * (size // 44)
    return {"collection": "repo", "items": [{"id": f"src/f{start + i}.py", "text": f"# file {start + i}\n{body}",
                                             "metadata": {"repoId": "acme/app", "path": f"src/f{start + i}.py",
                                                          "lang": "py"}} for i in range(files)]}


def test_ingest_counts_its_items_and_bytes(secure_server):
    with secure_server.client() as c:
        tiny = c.post("/ingest", json={"collection": "t", "items": [{"id": str(i), "text": f"item {i}"}
                                                                    for i in range(1000)]})
    # 1,000 items weigh 40 (one per 25): 60 of the default 100 are left, not 99
    assert tiny.status_code == 200 and _remaining(tiny) == 60


def test_a_bulk_body_never_weighs_more_than_the_keys_limit(secure_server):
    small = _limited_key(secure_server, 30)
    with secure_server.client(small) as c:
        first = c.post("/ingest", json={"collection": "t", "items": [{"id": str(i), "text": f"item {i}"}
                                                                     for i in range(1000)]})
        second = c.get("/v3/whoami")
    assert first.status_code == 200 and _remaining(first) == 0
    assert second.status_code == 429


def test_conversations_count_their_messages_and_bytes(secure_server):
    messages = [{"content": f"Message {i}: " + "the ferry timetable changes in spring. " * 250, "role": "user"}
                for i in range(30)]  # 30 messages, ~300 KB
    with secure_server.client() as c:
        r = c.post("/v3/conversations", json={"conversation_id": "long", "messages": messages, "extract": False})
    size = len(r.request.content)
    assert r.status_code == 201, r.text[:300]
    # weight: the larger of 30 messages / 25 (2) and its bytes / 100 KB (3 for ~300 KB)
    assert 250 * 1024 < size < 300 * 1024
    assert 100 - _remaining(r) == 3


def test_a_raged_client_indexing_a_repository_stays_under_the_default_limit(secure_server):
    # 2,000 files of 3 KB a minute, in batches of 100, weigh 80 of the default 100
    weights = [request_weight({"httpMethod": "POST", "path": "/ingest", "body": json.dumps(raged_batch(n))}, 100)
               for n in range(0, 2000, 100)]
    assert sum(weights) <= 100 and set(weights) == {4}
    # and a real server agrees, for the first batches
    with secure_server.client() as c:
        answers = [c.post("/ingest", json=raged_batch(n)) for n in range(0, 300, 100)]
    assert [a.status_code for a in answers] == [200] * 3
    assert _remaining(answers[-1]) == 100 - 3 * 4


def test_single_requests_and_a_connection_sync_request_count_once(secure_server):
    with secure_server.client() as c:
        saved = c.post("/v3/memory", json={"content": "the kayak club " * 5000})  # ~75 KB, one memory
        sync = c.post("/v3/connections/7f1f8f5e-0000-4000-8000-000000000001/sync")
    assert _remaining(saved) == 99 and _remaining(sync) == 98  # the sync itself runs inside the server
