"""Issue 34, findings 6, 9 and 11: what counts against a rate limit, and whose limit it is.

- a key minted by a key carries the minting key's limit (a key limited to 5 a minute cannot mint
  keys that make 100);
- web sign-in is refused for another origin before any bucket is touched, and counted per origin,
  so a website cannot lock the user out;
- bulk routes count by weight (items or bytes), from one table, with an allowance that keeps
  today's raged clients and connection syncs under the default limit.
"""

from __future__ import annotations

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
