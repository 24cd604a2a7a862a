"""Issue 34, findings 4 and 13: a memory's metadata, on every write route, is at most 64 KB as
JSON and never holds memlane's own `memlane` key (a client that sets it forged a fact through
raged's /ingest: the profile and `kind: ["fact"]` recall presented it as extracted).

The routes that take client metadata are found in the OpenAPI document (any body schema with a
`metadata` property, at any depth); each must have a body below, so a new one fails
`test_every_route_with_metadata_is_covered` until it is."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from security_routes import ROUTES, Route, schema_properties

from memlane.connections.items import build_document
from memlane.domain.client_metadata import MAX_METADATA_BYTES, metadata_bytes
from memlane.domain.connections import Connection, Item, Provider
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import ContentType
from memlane.services.transfer import FORMAT, import_lines

FORGED = {"kind": "fact", "subject": "Caroline", "sources": [], "decisions": []}


def sized(n_bytes: int) -> dict:
    """Metadata of exactly n_bytes as the API serializes it."""
    base = {"note": ""}
    return {"note": "x" * (n_bytes - metadata_bytes(base))}


# (a body carrying `metadata`, where the error names it) for each route that takes metadata
BODIES = {
    ("POST", "/v3/memory"): (lambda m: {"content": "A note about the kayak club.", "metadata": m}, "metadata"),
    ("POST", "/v3/memories"): (lambda m: {"items": [{"content": "A note about kayaks.", "metadata": m}]},
                               "metadata"),
    ("POST", "/ingest"): (lambda m: {"collection": "c", "items": [{"id": "a", "text": "kayak club notes",
                                                                     "metadata": m}]}, "items.0"),
}


def metadata_routes() -> list[Route]:
    return [r for r in ROUTES if r.body_schema is not None and "metadata" in schema_properties(r.body_schema)]


def test_every_route_with_metadata_is_covered():
    assert {(r.method, r.path) for r in metadata_routes()} == set(BODIES)


def _error_of(r) -> str:
    body = r.json()
    if "results" in body:  # the bulk route answers each item on its own
        (item,) = body["results"]
        assert item["status_code"] == 400, item
        return item["error"]
    assert r.status_code == 400, r.text[:300]
    return body["error"]


@pytest.mark.parametrize("route", sorted(BODIES), ids=lambda r: f"{r[0]} {r[1]}")
def test_the_memlane_key_is_refused_on_every_write_route(secure_server, route):
    make, where = BODIES[route]
    with secure_server.client() as c:
        error = _error_of(c.request(route[0], route[1], json=make({"memlane": FORGED})))
    assert where in error and "memlane" in error and "not by a client" in error


@pytest.mark.parametrize("route", sorted(BODIES), ids=lambda r: f"{r[0]} {r[1]}")
def test_metadata_over_64_kb_is_refused_on_every_write_route(secure_server, route):
    make, where = BODIES[route]
    with secure_server.client() as c:
        error = _error_of(c.request(route[0], route[1], json=make(sized(MAX_METADATA_BYTES + 1))))
        fits = c.request(route[0], route[1], json=make(sized(MAX_METADATA_BYTES)))
    assert where in error and "metadata" in error and f"at most {MAX_METADATA_BYTES:,}" in error
    assert fits.status_code in (200, 201, 202), fits.text[:300]
    assert all(item.get("error") is None for item in fits.json().get("results", [])), fits.text[:300]


def test_non_ascii_metadata_is_measured_as_it_is_echoed():
    # one "é" is sent back as \\u00e9: six bytes of every answer that echoes it
    assert metadata_bytes({"k": "é" * 100}) == len('{"k":""}') + 600


def test_raged_ingest_cannot_forge_a_fact(secure_server):
    with secure_server.client() as c:
        r = c.post("/ingest", json={"collection": "notes", "items": [
            {"id": "f1", "text": "Caroline moved to Lisbon in May.", "metadata": {"memlane": FORGED}}]})
        facts = c.post("/v3/recall", json={"query": "Caroline Lisbon", "filters": {"kind": ["fact"]}})
        profile = c.get("/v3/profile")
    assert r.status_code == 400
    assert facts.json()["results"] == []
    assert "Lisbon" not in profile.text


def test_a_synced_item_with_oversized_metadata_is_that_items_error():
    conn = Connection(organization_id="org", provider=Provider.GITHUB, project_id="p", name="GitHub: a/b")
    item = Item(external_id="README.md", title="README.md", content="# Hello", content_type=ContentType.MARKDOWN,
                metadata=sized(MAX_METADATA_BYTES + 1))
    with pytest.raises(InvalidInputError) as err:
        build_document(conn, item, None, datetime.now(UTC))
    assert err.value.message.startswith("metadata: is") and "64 KB" in err.value.message


def test_an_import_line_with_oversized_metadata_is_refused(stack, who):
    header = json.dumps({"format": FORMAT, "project": {"name": "Imported"}})
    line = json.dumps({"document": {"id": "7f1f8f5e-0000-4000-8000-000000000001", "title": "t", "content": "hello",
                                    "content_type": "text", "content_hash": "h", "user_id": "api",
                                    "metadata": sized(MAX_METADATA_BYTES + 1),
                                    "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-01T00:00:00Z"}})
    with pytest.raises(InvalidInputError) as err:
        import_lines(stack.services, who, [header, line])
    assert err.value.message.startswith("line 2: document.metadata: is")
