"""Isolation, generated from the route table: every route that takes an id in its path, called
with another organization's key and the owner's id (every method: read, change, delete), answers
404 and leaves the owner's data as it was. A route added with a new kind of id fails here until
the suite knows how to make one."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import pytest
from security_routes import ID_ROUTES

from memlane.conversations.schemas import ExtractionOut
from memlane.conversations.service import store_record
from memlane.domain.connections import Connection, ConnectionStatus, Provider
from memlane.domain.docsets import Docset
from memlane.services.keys import create_key


def body_for(route):
    """A valid body for the route's schema, so the answer is about ownership, not about the body."""
    props = (route.body_schema or {}).get("properties") or {}
    return {name: "taken over" for name in ("title", "name") if name in props} if route.body_schema else None


@pytest.fixture
def owned(secure_server):
    """One of everything, owned by the server's first organization."""
    srv = secure_server.server
    svc = srv.stack.services
    with secure_server.client() as a:
        who = a.get("/v3/whoami").json()
        org_id = who["organization_id"]
        project = a.post("/v3/projects", json={"name": "Private plans"}).json()
        doc = a.post("/v3/memory", json={"content": "The vault code is 4711.", "project_id": project["id"]}).json()
        gone = a.post("/v3/memory", json={"content": "A memory to delete for its receipt."}).json()
        receipt = a.delete(f"/v3/documents/{gone['id']}").json()["receipt"]
        key = a.post("/v3/keys", json={"name": "second"}).json()
        chat = a.post("/v3/conversations", json={"conversation_id": "private chat", "messages": [
            {"role": "user", "content": "The vault code is 4711, I said in our chat."}]})
        assert chat.status_code == 201, chat.text
    now_ms = int(time.time() * 1000)
    docset = Docset(organization_id=org_id, project_id=project["id"], name="Private docs",
                    base_url="https://docs.example/", seed_url="https://docs.example/", seed_slug="",
                    created_at=now_ms, updated_at=now_ms)
    srv.docsets.store.create_docset(docset)
    conn = Connection(organization_id=org_id, provider=Provider.GITHUB, project_id=project["id"],
                      name="GitHub: acme/private", status=ConnectionStatus.ACTIVE)
    svc.connections.store.put_connection(conn)
    # an extraction's record (the server has no LLM, so one is stored as its job would store it)
    extraction = ExtractionOut(id=str(uuid.uuid4()), conversation_id="private chat", project_id=project["id"],
                               status="done", messages=[doc["id"]], created_at=datetime.now(UTC))
    store_record(svc, org_id, extraction)
    return {"document_id": doc["id"], "project_id": project["id"], "receipt_id": receipt["id"],
            "key_id": key.get("id") or key["key"]["id"], "docset_id": docset.id, "connection_id": conn.id,
            "extraction_id": extraction.id, "conversation_id": "private chat"}


def test_every_id_bearing_route_refuses_another_organization(secure_server, owned):
    assert ID_ROUTES, "the route table lists no id-bearing route"
    unknown = {p for r in ID_ROUTES for p in r.params} - owned.keys()
    assert not unknown, f"new kinds of id in the route table: make one in `owned` ({unknown})"
    intruder, _, _ = create_key(secure_server.server.stack.metadata, "intruder org")
    with secure_server.client(intruder) as b:
        for route in ID_ROUTES:
            r = b.request(route.method, route.url(**owned), json=body_for(route))
            assert r.status_code in (403, 404), (str(route), r.status_code, r.text[:200])
            assert "4711" not in r.text and "Private" not in r.text, str(route)
    # and the owner still has everything, unchanged
    with secure_server.client() as a:
        assert a.get(f"/v3/documents/{owned['document_id']}").json()["content"] == "The vault code is 4711."
        assert a.get(f"/v3/projects/{owned['project_id']}").json()["name"] == "Private plans"
        assert a.get(f"/v3/deletions/{owned['receipt_id']}").status_code == 200
        assert a.get(f"/v3/extractions/{owned['extraction_id']}").json()["conversation_id"] == "private chat"
        said = a.get("/v3/conversations/private%20chat").json()["messages"]
        assert [m["content"] for m in said] == ["The vault code is 4711, I said in our chat."]
        assert a.get(f"/docset/{owned['docset_id']}").status_code == 200
        assert a.get(f"/v3/connections/{owned['connection_id']}").json()["status"] == "active"
        assert any(k["id"] == owned["key_id"] and k.get("active", True) for k in a.get("/v3/keys").json()["keys"])
