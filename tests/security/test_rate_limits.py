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
