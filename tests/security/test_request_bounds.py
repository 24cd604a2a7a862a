"""Issue 34, finding 7: every integer and date a request carries is bounded. They answered 500:
`message_index` ≥ 2^63 (SQLite's INTEGER ends there, and after 2^63 − 1 every later save to the
conversation failed), `filters.created_after` at the edges of the date range (no UTC for
9999-12-31T23:59:59-14:00), `metadata.language` as an object on code (on save and in the worker),
`GET /docset/<id>/pages?offset=<huge>`. Each is now a 400 naming the field.

The class is walked from the route table: every integer and date field of every body (at any
depth) and every integer or date query parameter in the OpenAPI document gets the values at and
past the edges, on a route that reaches its service (a real document, project, conversation and
docset), and must never answer 500. A route whose body has such a field needs a valid body in
BASE_BODIES, so a new one fails `test_every_bounded_field_has_a_base_body` until it is covered."""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from security_routes import CRAWLING, DOC, ROUTES, Route, _resolve
from test_json_bounds import assert_json_error

from memlane.adapters.local.docset_store import SqliteDocsetStore
from memlane.documents.writer import DocumentWriter, WriteRequest
from memlane.domain.docsets import Docset
from memlane.domain.fields import MAX_SAFE_INT
from memlane.domain.models import ContentType, Document, DocumentStatus
from memlane.services.keys import create_key

HUGE_INTEGERS = [2**63, 2**64, -(2**63) - 1, 10**30, MAX_SAFE_INT + 1]
EDGE_DATES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59.999999-14:00", "0001-01-01", "9999-12-31",
              "0001-01-01T00:00:00Z", "9999-12-31T23:59:59"]

# A valid body for each route with an integer or date field (ids filled in by the fixture).
BASE_BODIES: dict[tuple[str, str], dict] = {
    ("POST", "/v3/memory"): {"content": "A note about kayaks.", "conversation_id": "bounds"},
    ("POST", "/v3/memories"): {"items": [{"content": "A note about canoes.", "conversation_id": "bounds"}]},
    ("POST", "/v3/recall"): {"query": "kayak"},
    ("POST", "/v3/context"): {"query": "kayak"},
    ("POST", "/v3/conversations"): {"conversation_id": "bounds", "messages": [{"content": "hi", "role": "user"}]},
    ("PATCH", "/v3/documents/{document_id}"): {"title": "Kayaks"},
    ("POST", "/query"): {"collection": "c", "query": "kayak"},
    ("POST", "/retrieve"): {"query": "kayak"},
}


def bounded_fields(schema: dict | None, path: tuple = (), depth: int = 0) -> list[tuple[tuple, str]]:
    """(path, "integer" | "date") of every integer and date field, at any depth (0 in a path: an array)."""
    schema = _resolve(DOC, schema)
    if not schema or depth > 10:
        return []
    found: list[tuple[tuple, str]] = []
    if schema.get("type") == "integer":
        found.append((path, "integer"))
    elif schema.get("format") in ("date", "date-time"):
        found.append((path, "date"))
    for name, prop in (schema.get("properties") or {}).items():
        found += bounded_fields(prop, (*path, name), depth + 1)
    if isinstance(schema.get("items"), dict):
        found += bounded_fields(schema["items"], (*path, 0), depth + 1)
    for key in ("anyOf", "allOf", "oneOf"):
        for part in schema.get(key) or []:
            found += bounded_fields(part, path, depth + 1)
    return list(dict.fromkeys(found))


def query_fields(route: Route) -> list[tuple[str, str]]:
    op = DOC["paths"][route.path][route.method.lower()]
    return [(name, kind) for p in op.get("parameters", []) if p["in"] == "query"
            for (_, kind) in bounded_fields(p["schema"], ()) for name in [p["name"]]]


TESTED = [r for r in ROUTES if r.path not in CRAWLING]


def test_every_bounded_field_has_a_base_body():
    needing = {(r.method, r.path) for r in TESTED if bounded_fields(r.body_schema)}
    assert needing == set(BASE_BODIES), "a route with an integer or date field: add a valid body to BASE_BODIES"


def with_value(body: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(body)
    node = out
    for i, key in enumerate(path[:-1]):
        following = path[i + 1]
        if isinstance(node, list):
            node = node[key]
            continue
        node = node.setdefault(key, [{}] if following == 0 else {})
    node[path[-1]] = value  # type: ignore[index]
    return out


def values_for(kind: str) -> list:
    return HUGE_INTEGERS if kind == "integer" else EDGE_DATES


@pytest.fixture
def world(secure_server):
    """The server with something behind every id a route takes: a document, its project, a
    conversation, a docset; and a key whose rate limit lets every case through (a 429 proves nothing)."""
    roomy, _, _ = create_key(secure_server.server.stack.metadata, "acme", "roomy", 100_000)
    secure_server = replace(secure_server, key=roomy)
    with secure_server.client() as c:
        saved = c.post("/v3/memory", json={"content": "Kayak club on Thursdays.", "conversation_id": "bounds"})
        org = c.get("/v3/whoami").json()["organization_id"]
    assert saved.status_code == 201, saved.text
    doc = saved.json()
    docset = SqliteDocsetStore(secure_server.server.stack.db).create_docset(Docset(
        organization_id=org, project_id=doc["project_id"], name="Docs", base_url="https://d.example/",
        seed_url="https://d.example/docs/", seed_slug="/docs/", allowed_paths=["/docs"], max_pages=5,
        created_at=1_767_000_000_000, updated_at=1_767_000_000_000))
    ids = {"document_id": doc["id"], "project_id": doc["project_id"], "conversation_id": "bounds",
           "docset_id": docset.id}
    return secure_server, ids


def test_no_integer_or_date_in_any_body_answers_500(world):
    server, ids = world
    with server.client() as c:
        for route in TESTED:
            for path, kind in bounded_fields(route.body_schema):
                for value in values_for(kind):
                    body = with_value(BASE_BODIES[(route.method, route.path)], path, value)
                    r = c.request(route.method, route.url(**ids), json=body)
                    assert r.status_code != 429
                    where = f"{route} {'.'.join(map(str, path))}={value!r}"
                    assert r.status_code < 500, (where, r.text[:300])
                    if r.status_code == 400:
                        assert str(path[-1]) in assert_json_error(r), (where, r.text[:300])


def test_no_integer_or_date_in_any_query_answers_500(world):
    server, ids = world
    with server.client() as c:
        for route in TESTED:
            for name, kind in query_fields(route):
                for value in values_for(kind):
                    r = c.request(route.method, route.url(**ids), params={name: str(value)})
                    assert r.status_code != 429
                    assert r.status_code < 500, (str(route), name, value, r.text[:300])
                    if r.status_code == 400:
                        assert name in assert_json_error(r), (str(route), name, value, r.text[:300])


# ------------------------------------------------------------------------ the four findings, by name


def test_message_index_past_2_63_is_a_400_naming_it(secure_server):
    with secure_server.client() as c:
        for body in ({"content": "a", "conversation_id": "c", "message_index": 2**63},
                     {"conversation_id": "c", "messages": [{"content": "a", "role": "user", "message_index": 2**63}]}):
            r = c.post("/v3/memory" if "content" in body else "/v3/conversations", json=body)
            assert r.status_code == 400 and "message_index" in r.json()["error"], r.text


def test_a_conversation_at_the_last_position_refuses_the_next_implicit_one(secure_server):
    with secure_server.client() as c:
        last = c.post("/v3/memory", json={"content": "last", "conversation_id": "edge", "message_index": MAX_SAFE_INT})
        after = c.post("/v3/memory", json={"content": "after it", "conversation_id": "edge"})
        earlier = c.post("/v3/memory", json={"content": "earlier", "conversation_id": "edge", "message_index": 7})
    assert last.status_code == 201 and last.json()["message_index"] == MAX_SAFE_INT
    assert after.status_code == 400 and "message_index" in after.json()["error"]
    assert earlier.status_code == 201  # the conversation still takes messages


@pytest.mark.parametrize("value", ["9999-12-31T23:59:59.999999-14:00", "0001-01-01T00:00:00+14:00"])
@pytest.mark.parametrize("query", ["", "kayak"])
def test_created_after_at_the_edges_is_a_400_naming_it(secure_server, value, query):
    with secure_server.client() as c:
        r = c.post("/v3/recall", json={"query": query, "filters": {"created_after": value}})
    assert r.status_code == 400 and r.json()["error"].startswith("filters.created_after: must be between")


def test_a_language_object_on_code_is_a_400_naming_it(secure_server):
    with secure_server.client() as c:
        r = c.post("/v3/memory", json={"content": "def f():\n    return 1\n", "content_type": "code",
                                       "metadata": {"language": {"name": "python"}}})
    assert r.status_code == 400 and r.json()["error"].startswith("metadata.language:")


def test_the_worker_writes_code_whose_stored_language_is_not_a_name(stack, who):
    # Given a code document stored with an object as its language (an import, data from before)
    project = stack.metadata.list_projects(who.organization_id)[0]
    now = datetime.now(UTC)
    doc = Document(organization_id=who.organization_id, project_id=project.id, user_id="api", title="f.py",
                   content="def f():\n    return 1\n", content_type=ContentType.CODE,
                   metadata={"language": {"name": "python"}}, content_hash="h", created_at=now, updated_at=now)
    stack.metadata.put_document(doc)
    # When the one write path writes it (what the worker runs)
    (outcome,) = DocumentWriter(stack.services).write_many([WriteRequest(doc)])
    # Then it is written like code of no known language, not failed
    assert outcome.ok, outcome.error
    assert stack.metadata.get_document(who.organization_id, doc.id).status == DocumentStatus.READY


def test_a_huge_page_offset_is_a_400_naming_it(world):
    server, ids = world
    with server.client() as c:
        huge = c.get(f"/docset/{ids['docset_id']}/pages", params={"offset": str(2**63)})
        fine = c.get(f"/docset/{ids['docset_id']}/pages", params={"offset": str(MAX_SAFE_INT)})
    assert huge.status_code == 400 and huge.json()["error"].startswith("offset:")
    assert fine.status_code == 200 and fine.json()["pages"] == []


THOUSANDS_OF_DIGITS = "9" * 5000


def test_numbers_of_thousands_of_digits_in_any_query_or_path_answer_400(world):
    # reliability row 22: "numbers with thousands of digits, on every route"
    server, ids = world
    with server.client() as c:
        for route in TESTED:
            for name, _ in query_fields(route):
                r = c.request(route.method, route.url(**ids), params={name: THOUSANDS_OF_DIGITS})
                assert r.status_code == 400 and name in assert_json_error(r), (str(route), name, r.text[:200])
            if route.params:
                r = c.request(route.method, route.url(**{p: THOUSANDS_OF_DIGITS for p in route.params}))
                assert_json_error(r)  # 4xx JSON: never the server's 500 (a path too long for a file name)


def test_the_web_app_takes_a_path_too_long_for_a_file_name(tmp_path):
    # the local server asks the web app first: an API path of 5,000 digits was looked up as a file
    from memlane.local.webapp import WebApp

    (tmp_path / "index.html").write_text("<!doctype html><title>memlane</title>")
    app = WebApp(tmp_path)
    assert app.handle("GET", "/v3/documents/" + THOUSANDS_OF_DIGITS, {}, b"") is None
    assert app.handle("GET", "/assets/" + "a" * 300 + ".js", {}, b"") is None


def test_no_integer_a_vidurai_tool_takes_answers_500(world):
    # Vidurai's tools are one route (POST /) whose parameters its own catalogue lists
    from memlane.project_memory.capabilities import TOOLS

    server, _ = world
    integer_params = [(tool, name) for tool, spec in TOOLS.items()
                      for name, param in spec["parameters"].items() if param["type"] == "integer"]
    assert integer_params
    with server.client() as c:
        for tool, name in integer_params:
            for value in [*HUGE_INTEGERS, -(2**63), THOUSANDS_OF_DIGITS]:
                r = c.post("/", json={"tool": tool, "params": {name: value}})
                assert r.status_code in (200, 400), (tool, name, r.text[:200])
                if r.status_code == 400:
                    assert f"params.{name}" in assert_json_error(r)
