"""Finding 2 and its class: a JSON body beyond memlane's bounds (nested 1,000 deep, a 5,000-digit
integer, 1e999, NaN, a lone surrogate) answers 400 naming the bound on every route that takes a
body, the ones outside the resolver included; wrong types and unicode edge cases never answer 500;
and no answer is ever uvicorn's plain-text error."""

from __future__ import annotations

import pytest
from security_routes import BODY_ROUTES, CRAWLING, OUTSIDE_RESOLVER, all_fields, string_fields

from memlane.domain.errors import InvalidInputError
from memlane.domain.json_input import JsonBoundsError, parse_json

DEEP = ("[" * 1000 + "]" * 1000).encode()
DEEP_OBJECT = ('{"a":' * 1000 + "1" + "}" * 1000).encode()
HUGE_INT = b'{"query": "x", "content": "x", "limit": 1' + b"0" * 5000 + b"}"
BOUND_BREAKERS = {
    "deep-array": (DEEP, "nested deeper"),
    "deep-object": (DEEP_OBJECT, "nested deeper"),
    "huge-int": (HUGE_INT, "digits"),
    "huge-float": (b'{"query": "x", "limit": 1e999}', "out of range"),
    "nan": (b'{"query": "x", "limit": NaN}', "NaN"),
    "surrogate": (b'{"query": "\\ud800", "content": "\\udfff"}', "surrogate"),
}
SENDS = [(r.method, r.url()) for r in BODY_ROUTES] + OUTSIDE_RESOLVER + [("POST", "/"), ("POST", "/mcp")]


def assert_json_error(response, status: int | None = None):
    assert response.status_code < 500, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json"), response.text[:200]
    if status is not None:
        assert response.status_code == status, response.text[:300]
    body = response.json()
    error = body.get("error")
    if isinstance(error, dict):  # JSON-RPC (MCP)
        error = error.get("message")
    assert isinstance(error, str) and error, body
    return error


@pytest.mark.parametrize("name", BOUND_BREAKERS)
def test_the_one_parse_refuses_what_is_beyond_its_bounds(name):
    raw, words = BOUND_BREAKERS[name]
    with pytest.raises(JsonBoundsError) as err:
        parse_json(raw)
    assert words in err.value.message and err.value.message.startswith("body:")


def test_plain_syntax_errors_are_not_bounds_errors():
    with pytest.raises(InvalidInputError) as err:
        parse_json(b"{")
    assert not isinstance(err.value, JsonBoundsError)
    assert parse_json(b'{"a": [1, 2.5, "\\u2028", {"b": null}]}') == {"a": [1, 2.5, "\u2028", {"b": None}]}


@pytest.mark.parametrize("name", BOUND_BREAKERS)
def test_every_route_with_a_body_answers_400_naming_the_bound(secure_server, name):
    raw, words = BOUND_BREAKERS[name]
    with secure_server.client(**{"Content-Type": "application/json"}) as c:
        for method, url in SENDS:
            r = c.request(method, url, content=raw)
            error = assert_json_error(r)
            if url != "/mcp":  # MCP answers with its own JSON-RPC parse error, also a 400
                assert r.status_code == 400 and words in error, (method, url, r.status_code, error)


def test_unsigned_webhook_with_a_deep_body_is_refused_not_crashed(secure_server):
    with secure_server.client("", **{"Content-Type": "application/json"}) as c:
        assert_json_error(c.post("/webhooks/github?connection=con_x", content=DEEP))


WRONG_TYPES = [[], "text", 12, None, True, {"limit": "ten"}, {"limit": -1}, {"limit": 10 ** 30}]


def test_wrong_types_in_every_field_never_answer_500(secure_server):
    with secure_server.client() as c:
        for route in BODY_ROUTES:
            if route.path in CRAWLING:
                continue
            url = route.url()
            for body in WRONG_TYPES:
                assert_json_error(c.request(route.method, url, json=body))
            for field in all_fields(route):
                for value in ([1], {"x": 1}, 3.5, "", None, 10 ** 20):
                    r = c.request(route.method, url, json={field: value})
                    assert r.status_code < 500, (str(route), field, value, r.text[:200])


UNICODE_EDGES = ["\u2028ls", "\u2029ps", "nul\u0000byte", "\u202eevil", "e\u0301", "😀" * 50, "\ufeffbom",
                 "\x85nel", "\x1cfs", "\uffff", " ", "ß" * 3000]


def test_unicode_edge_cases_in_every_string_field_never_answer_500(secure_server):
    with secure_server.client() as c:
        for route in BODY_ROUTES:
            if route.path in CRAWLING:
                continue
            for field in string_fields(route):
                for value in UNICODE_EDGES:
                    r = c.request(route.method, route.url(), json={field: value})
                    assert r.status_code < 500, (str(route), field, repr(value), r.text[:200])
