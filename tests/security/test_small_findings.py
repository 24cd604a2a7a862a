"""Finding 8: a rate limit on POST /webapp/sign-in; `X-Content-Type-Options: nosniff` on every API
answer (the resolver's, the gateway's own errors, the sign-in route's); a loud warning at start
with --no-auth."""

from __future__ import annotations

from conftest_helpers import free_port
from fakes import HashEmbedder

from memlane.api.app import MemlaneApi
from memlane.config import Settings
from memlane.local.server import LocalServer
from memlane.local.webapp import SIGN_IN_ATTEMPTS_PER_MINUTE


def test_sign_in_attempts_are_rate_limited(secure_server):
    with secure_server.client("") as anon:
        statuses = [anon.post("/webapp/sign-in", json={"code": f"wrong-{i}"}).status_code
                    for i in range(SIGN_IN_ATTEMPTS_PER_MINUTE + 5)]
    assert statuses[:SIGN_IN_ATTEMPTS_PER_MINUTE] == [401] * SIGN_IN_ATTEMPTS_PER_MINUTE
    assert set(statuses[SIGN_IN_ATTEMPTS_PER_MINUTE:]) == {429}


def test_every_api_answer_says_nosniff(secure_server):
    with secure_server.client() as c, secure_server.client("") as anon, secure_server.client("mlk_wrong") as wrong:
        answers = [c.get("/v3/whoami"), c.post("/v3/recall", json={"query": "x"}), c.get("/nope"),
                   anon.get("/v3/whoami"), wrong.get("/v3/stats"), anon.get("/health"),
                   anon.post("/webapp/sign-in", json={}),
                   c.post("/v3/memory", content=b"[" * 1000, headers={"Content-Type": "application/json"})]
    for r in answers:
        assert r.headers.get("x-content-type-options") == "nosniff", (r.request.url, r.status_code)


def test_the_resolver_itself_says_nosniff_on_lambda_too(stack):
    api = MemlaneApi(stack.services)
    out = api.handle({"httpMethod": "GET", "path": "/health", "headers": {}, "requestContext": {}, "body": None,
                      "resource": "/{proxy+}", "pathParameters": {"proxy": "health"}})
    assert out["headers"]["X-Content-Type-Options"] == "nosniff"


def test_no_auth_prints_a_loud_warning(tmp_path, capsys):
    srv = LocalServer(Settings(data_dir=tmp_path / "d"), port=free_port(), embedder=HashEmbedder(), no_auth=True)
    try:
        srv.prepare()
    finally:
        srv.shutdown()
    err = capsys.readouterr().err
    assert "WARNING: --no-auth" in err and "every memory" in err
