"""The /v3 API through a real local server on loopback (spec §5, §12.1, §13 Ingestion and Search)."""

from __future__ import annotations

import base64
import io
import time
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from memlane.recall.relevance import MINILM

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def save(client: httpx.Client, content: str, **fields) -> dict:
    r = client.post("/v3/memory", json={"content": content, **fields})
    assert r.status_code in (200, 201, 202), r.text
    return r.json()


def recall(client: httpx.Client, query: str, **fields) -> dict:
    r = client.post("/v3/recall", json={"query": query, **fields})
    assert r.status_code == 200, r.text
    return r.json()


# ----------------------------------------------------------------------------- auth and health


def test_health_and_openapi_need_no_key(server):
    anon = httpx.Client(base_url=server.url)
    h = anon.get("/health")
    assert h.status_code == 200 and h.json()["status"] == "ok"
    assert isinstance(h.json()["timestamp"], int) and h.json()["version"] == "0.1.0"
    assert h.json()["embedder"] == "local/all-MiniLM-L6-v2/384"
    spec = anon.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    for path in ("/v3/memory", "/v3/recall", "/v3/projects", "/v3/documents/{document_id}", "/v3/whoami"):
        assert path in spec["paths"], path
    assert "content" in spec["components"]["schemas"]["MemoryIn"]["properties"]


def test_requests_without_a_valid_key_are_401(server):
    anon = httpx.Client(base_url=server.url)
    r = anon.post("/v3/recall", json={"query": "x"})
    assert r.status_code == 401 and "API key" in r.json()["error"]
    bad = anon.post("/v3/recall", json={"query": "x"}, headers={"Authorization": "Bearer mlk_nope"})
    assert bad.status_code == 401 and bad.json() == {"error": "invalid or revoked API key"}


def test_x_api_key_header_is_accepted_and_whoami_names_the_org(server):
    r = httpx.get(f"{server.url}/v3/whoami", headers={"x-api-key": server.key})
    assert r.status_code == 200
    body = r.json()
    assert body["organization_name"] == "default"
    assert uuid.UUID(body["organization_id"])


def test_revoked_key_is_rejected_at_once(server):
    key = server.new_key("other")
    c = server.as_key(key)
    assert c.get("/v3/whoami").status_code == 200
    from memlane.services.keys import hash_key

    stored = server.server.stack.metadata.find_api_key_by_hash(hash_key(key))
    server.server.stack.metadata.revoke_api_key(stored.id, datetime.now(UTC))
    assert c.get("/v3/whoami").status_code == 401


# ----------------------------------------------------------------------------- ingestion (§13)


def test_save_plain_text_returns_summary_chunks_and_metadata(server):
    text = (
        "The quarterly planning meeting decided to migrate the billing service to Postgres 16. "
        "Alice owns the migration runbook. The cutover is scheduled for the first week of March. "
        "Rollback requires restoring the nightly snapshot."
    )
    r = server.client.post(
        "/v3/memory",
        json={"content": text, "title": "Billing migration", "metadata": {"tags": ["billing", "ops"]}},
    )
    assert r.status_code == 201
    body = r.json()
    assert body["title"] == "Billing migration"
    assert body["status"] == "ready"
    assert body["chunk_count"] == 1
    assert body["summary"] is None  # four sentences, no longer than a summary: the note is its own
    assert body["metadata"]["tags"] == ["billing", "ops"]
    assert body["metadata"]["keyphrases"] and "keywords" not in body["metadata"]
    assert body["metadata"]["category"]
    doc = server.client.get(f"/v3/documents/{body['id']}").json()
    assert doc["content"] == text
    assert doc["content_hash"] == __import__("hashlib").sha256(text.encode()).hexdigest()
    assert [c["chunk_index"] for c in doc["chunks"]] == [0]
    assert doc["chunks"][0]["start_offset"] == 0 and doc["chunks"][0]["end_offset"] == len(text)


def test_save_html_strips_scripts_and_navigation(server):
    html = """<html><head><title>Tide tables</title><script>var secret = 'tracking';</script></head>
    <body><nav>Home | About | Login</nav><main><h1>Tide tables</h1>
    <p>High tide in <a href="https://example.com/harbour">the harbour</a> is at 06:12.</p>
    <ul><li>Low tide 12:30</li><li>High tide 18:40</li></ul></main><footer>© 2026 Footer Corp</footer></body></html>"""
    body = save(server.client, html, content_type="html")
    doc = server.client.get(f"/v3/documents/{body['id']}").json()
    assert doc["content_type"] == "html" and doc["title"] == "Tide tables"
    assert "# Tide tables" in doc["content"]
    assert "[the harbour](https://example.com/harbour)" in doc["content"]
    assert "Low tide 12:30" in doc["content"]
    for gone in ("tracking", "Login", "Footer Corp"):
        assert gone not in doc["content"]


def test_save_pdf_extracts_text(server):
    pdf = _pdf_with_text("Invoice 4711 totals 950 euros")
    body = save(server.client, base64.b64encode(pdf).decode(), content_type="pdf", title="invoice.pdf")
    assert body["status"] == "ready" and body["chunk_count"] == 1
    doc = server.client.get(f"/v3/documents/{body['id']}").json()
    assert "Invoice 4711 totals 950 euros" in doc["content"]
    hits = recall(server.client, "invoice 4711")["results"]
    assert hits[0]["document_id"] == body["id"]


def test_save_code_keeps_it_verbatim_with_language(server):
    code = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n\n\nclass Circle:\n    def __init__(self, r):\n        self.r = r\n"
    body = save(server.client, code, content_type="code", title="circle.py")
    doc = server.client.get(f"/v3/documents/{body['id']}").json()
    assert doc["content"] == code
    assert doc["metadata"]["language"] == "python"


def test_identical_content_returns_the_existing_document(server):
    first = save(server.client, "Remember the milk and the eggs.")
    r = server.client.post("/v3/memory", json={"content": "Remember the milk and the eggs."})
    assert r.status_code == 200
    assert r.json()["id"] == first["id"] and r.json()["duplicate"] is True
    projects = server.client.get("/v3/projects").json()["projects"]
    assert sum(p["document_count"] for p in projects) == 1


def test_long_content_is_queued_then_processed(server):
    paragraphs = [
        f"Section {i}. "
        + " ".join(f"Lighthouse keeper log entry {i}.{j} notes calm seas." for j in range(30))
        for i in range(20)
    ]
    content = "\n\n".join(paragraphs)
    assert len(content) > 20_000
    r = server.client.post("/v3/memory", json={"content": content, "title": "Keeper logs"})
    assert r.status_code == 202
    doc_id = r.json()["id"]
    assert r.json()["status"] in ("queued", "processing", "ready")
    deadline = time.time() + 120
    status = None
    while time.time() < deadline:
        r = server.client.get(f"/v3/documents/{doc_id}")
        assert r.status_code == 200, r.text
        doc = r.json()
        status = doc["status"]
        if status in ("ready", "failed"):
            break
        time.sleep(1.0)  # within the key's 100 requests a minute however long a busy machine takes
    assert status == "ready", doc.get("status_reason")
    assert doc["chunk_count"] >= 10
    # chunks cover the content in order with overlap, each a slice of the content
    starts = [c["start_offset"] for c in doc["chunks"]]
    assert starts == sorted(starts) and starts[0] == 0
    for c in doc["chunks"]:
        assert content[c["start_offset"] : c["end_offset"]] == c["content"]
    for a, b in zip(doc["chunks"], doc["chunks"][1:], strict=False):
        assert b["start_offset"] < a["end_offset"], "adjacent chunks overlap"


# ----------------------------------------------------------------------------- search (§13)


def test_paraphrased_query_finds_the_document_first(server):
    target = save(
        server.client, "Our cat Miso needs her thyroid pill every morning with food.", title="Miso meds"
    )
    save(server.client, "The quarterly tax filing is due on the fifteenth of April.", title="Taxes")
    save(server.client, "Kubernetes pods restart when the liveness probe fails three times.", title="k8s")
    res = recall(server.client, "what medication does my pet take daily?")
    assert res["results"][0]["document_id"] == target["id"]
    assert res["total"] == len(res["results"]) and res["query_time_ms"] >= 0


def test_keyword_only_match_is_returned(server):
    doc = save(server.client, "Ticket ZX-4471 was escalated to the vendor.", title="ticket")
    save(server.client, "A long essay on the history of European railways and their gauges.", title="rail")
    res = recall(server.client, "ZX-4471")
    assert res["results"][0]["document_id"] == doc["id"]
    assert res["results"][0]["chunks"][0]["content"].startswith("Ticket ZX-4471")
    # the exact match of a distinctive term passes the relevance floor on its own
    assert res["results"][0]["relevance"] >= res["floor"] > 0


NOTES = [
    ("Landlord", "The lease says I must give my landlord two months' written notice before moving out."),
    ("BM25", "BM25 parameters: k1 controls term frequency saturation and b controls length normalisation."),
    ("Offsite", "Offsite plan: the team meets in Lisbon on March 3rd, hotel booked near the river."),
    ("1:1 Priya", "1:1 with Priya: she wants to move to the platform team after the Q2 release."),
    ("Bike", "The bike's rear derailleur needs a new cable; the shop on Elm Street can do it Tuesday."),
    ("Sourdough", "Sourdough starter: feed it 50 g flour and 50 g water every morning, keep it at 24 °C."),
]


def test_a_nonsense_query_gets_nothing_and_names_the_floor(server):
    for title, content in NOTES:
        save(server.client, content, title=title)
    res = recall(server.client, "zeppelin quiver barnacle nozzle")
    # Then nothing, with the floor and the stages that applied said at the top level
    assert res["results"] == [] and res["total"] == 0
    # (independent notes: no conversation, so the neighbour stage changed nothing and is not named)
    assert res["floor"] == MINILM.floor and res["stages"] == ["fusion"]
    # a request can lower the floor: then every candidate comes back, each with its relevance
    everything = recall(server.client, "zeppelin quiver barnacle nozzle", min_relevance=0)
    assert everything["floor"] == 0 and everything["results"]
    assert all(0 <= r["relevance"] < MINILM.floor for r in everything["results"])
    # a real question still finds its note, above the floor
    notice = recall(server.client, "how much notice do I need to give my landlord")
    assert notice["results"][0]["title"] == "Landlord"
    # with an answer above the floor, the first three are listed whatever their relevance (weak below it);
    # after them, only what reaches the floor
    assert all(r["relevance"] >= MINILM.floor for r in notice["results"][3:])
    assert all(r["match"] == "weak" for r in notice["results"] if r["relevance"] < MINILM.floor)
    # and a context pack is not padded with weak pieces
    r = server.client.post("/v3/context", json={"query": "zeppelin quiver barnacle nozzle"})
    assert r.status_code == 200, r.text
    assert r.json()["pieces"] == [] and r.json()["floor"] == MINILM.floor


def test_recall_and_the_context_pack_rank_a_memory_alike(server):
    ids = {title: save(server.client, content, title=title)["id"] for title, content in NOTES}
    query = "when does the team meet for the offsite and where is the hotel"
    ranked = [r["document_id"] for r in recall(server.client, query, min_relevance=0)["results"]]
    r = server.client.post("/v3/context", json={"query": query, "budget": 50_000, "min_relevance": 0})
    assert r.status_code == 200, r.text
    body = r.json()
    packed = list(dict.fromkeys(p["document_id"] for p in body["pieces"] if p["kind"] == "memory"))
    assert ranked[0] == ids["Offsite"]
    assert packed == ranked and body["stages"] == ["fusion"]


@pytest.mark.parametrize("value", [-0.1, 1.5, "high"])
def test_min_relevance_out_of_range_is_400_naming_it(server, value):
    r = server.client.post("/v3/recall", json={"query": "x", "min_relevance": value})
    assert r.status_code == 400 and "min_relevance" in r.json()["error"], r.text
    r = server.client.post("/v3/context", json={"query": "x", "min_relevance": value})
    assert r.status_code == 400 and "min_relevance" in r.json()["error"], r.text


def test_result_shape_matches_spec(server):
    doc = save(
        server.client,
        "Transformers use self-attention to weigh tokens.",
        title="Transformers",
        source_url="https://example.com/transformers",
        content_type="text",
    )
    res = recall(server.client, "self-attention in transformers")
    top = res["results"][0]
    assert set(top) >= {
        "document_id",
        "title",
        "summary",
        "score",
        "source_url",
        "content_type",
        "created_at",
        "chunks",
    }
    assert top["document_id"] == doc["id"] and top["source_url"] == "https://example.com/transformers"
    assert set(top["chunks"][0]) >= {"memory_id", "content", "chunk_index", "score"}
    assert 0 < top["score"] <= 1.1


def test_project_scoping_and_cross_project_search(server):
    a = server.client.post("/v3/projects", json={"name": "Garden"}).json()
    b = server.client.post("/v3/projects", json={"name": "Kitchen", "description": "recipes"}).json()
    assert a["slug"] == "garden" and a["document_count"] == 0
    in_a = save(server.client, "Tomato seedlings need eight hours of sun.", project_id=a["id"])
    in_b = save(server.client, "Tomato soup needs a pinch of sugar.", project_id=b["id"])
    only_a = recall(server.client, "tomato", project_id=a["id"])
    assert [r["document_id"] for r in only_a["results"]] == [in_a["id"]]
    both = recall(server.client, "tomato")
    assert {r["document_id"] for r in both["results"]} == {in_a["id"], in_b["id"]}
    several = recall(server.client, "tomato", project_ids=[a["id"], b["id"]])
    assert len(several["results"]) == 2
    counts = {p["name"]: p["document_count"] for p in server.client.get("/v3/projects").json()["projects"]}
    assert counts == {"Default": 0, "Garden": 1, "Kitchen": 1}


def test_empty_query_returns_most_recent_first(server):
    ids = [save(server.client, f"Note number {i} about something different {i * 7}.")["id"] for i in range(3)]
    res = recall(server.client, "")
    assert [r["document_id"] for r in res["results"]] == list(reversed(ids))


def test_filters_content_type_created_after_and_tags(server):
    html = save(
        server.client,
        "<html><body><main><p>Solar panels on the roof.</p></main></body></html>",
        content_type="html",
    )
    md = save(
        server.client,
        "# Solar\n\nSolar inverter maintenance notes.",
        content_type="markdown",
        metadata={"tags": ["energy"]},
    )
    only_html = recall(server.client, "solar", filters={"content_type": ["html"]})
    assert [r["document_id"] for r in only_html["results"]] == [html["id"]]
    tagged = recall(server.client, "solar", filters={"tags": ["energy"]})
    assert [r["document_id"] for r in tagged["results"]] == [md["id"]]
    future = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    assert recall(server.client, "solar", filters={"created_after": future})["results"] == []
    past = recall(server.client, "solar", filters={"created_after": "2024-01-01"})
    assert len(past["results"]) == 2


def test_delete_removes_document_chunks_and_vectors(server):
    doc = save(server.client, "The spare key is under the blue flowerpot.")
    assert recall(server.client, "spare key flowerpot")["results"][0]["document_id"] == doc["id"]
    r = server.client.delete(f"/v3/documents/{doc['id']}")
    assert r.status_code == 200 and r.json()["id"] == doc["id"] and r.json()["deleted"] is True
    receipt = r.json()["receipt"]
    assert receipt["verified"] is True and receipt["documents"] == [doc["id"]]
    assert server.client.get(f"/v3/deletions/{receipt['id']}").json() == receipt
    assert server.client.get(f"/v3/documents/{doc['id']}").status_code == 404
    assert recall(server.client, "spare key flowerpot")["results"] == []
    stack = server.server.stack
    org_id = server.client.get("/v3/whoami").json()["organization_id"]
    assert doc["id"] not in stack.index.document_ids(org_id)
    assert stack.metadata.get_chunks(org_id, doc["id"]) == []
    assert stack.metadata.get_document(org_id, doc["id"]) is None


def test_chunks_of_one_document_are_grouped_under_it(server):
    sections = [
        f"## Part {i}\n\n"
        + " ".join(f"Glacier survey {i}.{j} measured ice retreat of {j} metres." for j in range(40))
        for i in range(4)
    ]
    doc = server.client.post(
        "/v3/memory", json={"content": "\n\n".join(sections), "title": "Glacier survey"}, params={}
    ).json()
    deadline = time.time() + 120
    while server.client.get(f"/v3/documents/{doc['id']}").json().get("status") != "ready" and time.time() < deadline:
        time.sleep(1.0)
    res = recall(server.client, "glacier survey ice retreat")
    assert [r["document_id"] for r in res["results"]] == [doc["id"]]
    chunks = res["results"][0]["chunks"]
    assert len(chunks) > 1
    assert [c["chunk_index"] for c in chunks] == sorted(c["chunk_index"] for c in chunks)
    assert res["results"][0]["score"] == pytest.approx(max(c["score"] for c in chunks))


# ----------------------------------------------------------------------------- tenancy


def test_another_organizations_document_is_404_and_never_recalled(server):
    mine = save(server.client, "Falcon launch codes are kept in the red binder.")
    other = server.as_key(server.new_key("rival"))
    assert other.get(f"/v3/documents/{mine['id']}").status_code == 404
    assert other.delete(f"/v3/documents/{mine['id']}").status_code == 404
    res = other.post("/v3/recall", json={"query": "Falcon launch codes red binder", "limit": 100}).json()
    assert res["results"] == []
    assert server.client.get(f"/v3/documents/{mine['id']}").status_code == 200


# ----------------------------------------------------------------------------- validation (§12.1)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "   "}, "content"),
        ({}, "content"),
        ({"content": "x" * 500_001}, "content"),
        ({"content": "x", "content_type": "hologram"}, "content_type"),
        ({"content": "x", "forget_after": "2001-01-01T00:00:00Z"}, "forget_after"),
        ({"content": "x", "forget_after": "tomorrow"}, "forget_after"),
        ({"content": "x", "source_url": "not a url"}, "source_url"),
        ({"content": "x", "project_id": "not-a-uuid"}, "project_id"),
        ({"content": "x", "updates_memory_id": "123"}, "updates_memory_id"),
        ({"content": "x", "org_id": "someone-else"}, "org_id"),
        ({"content": "x", "status": "ready"}, "status"),
        ({"content": "x", "content_hash": "abc"}, "content_hash"),
        ({"content": 42}, "content"),
        ({"content": "x", "metadata": {"tags": "not-a-list"}}, "metadata"),
        ({"content": "x", "conversation_id": ""}, "conversation_id"),
        ({"content": "x", "conversation_id": "   "}, "conversation_id"),
        ({"content": "x", "conversation_id": "c" * 201}, "conversation_id"),
        ({"content": "x", "conversation_id": 7}, "conversation_id"),
        ({"content": "x", "conversation_id": "c", "message_index": -1}, "message_index"),
        ({"content": "x", "conversation_id": "c", "message_index": "first"}, "message_index"),
        ({"content": "x", "message_index": 3}, "message_index"),
        ({"content": "x", "tags": "not-a-list"}, "tags"),
        ({"content": "x", "tags": ["ok", 7]}, "tags"),
        ({"content": "x", "tags": ["x" * 101]}, "tags"),
    ],
)
def test_bad_memory_input_is_400_naming_the_field(server, body, field):
    r = server.client.post("/v3/memory", json=body)
    assert r.status_code == 400, r.text
    assert field in r.json()["error"]


def test_the_conversation_signal_is_stored_trimmed_and_ordered(server):
    c = server.client
    project_id = c.post("/v3/projects", json={"name": f"chat {uuid.uuid4().hex[:6]}"}).json()["id"]
    # A message with its index, and one without (after the conversation's last one)
    first = save(c, "Ann: shall we book the cabin for June?", project_id=project_id,
                 conversation_id="  trip-2027 ", message_index=4)
    assert (first["conversation_id"], first["message_index"]) == ("trip-2027", 4)
    second = save(c, "Bo: yes, the one by the lake.", project_id=project_id, conversation_id="trip-2027")
    assert (second["conversation_id"], second["message_index"]) == ("trip-2027", 5)
    # A bulk save's items share a timestamp: order comes from their message_index, else their order
    r = c.post("/v3/memories", json={"items": [
        {"content": "Ann: I will pay the deposit.", "project_id": project_id, "conversation_id": "trip-2027"},
        {"content": "Bo: I bring the canoe.", "project_id": project_id, "conversation_id": "trip-2027"},
        {"content": "Ann: we said June 3rd.", "project_id": project_id, "conversation_id": "trip-2027",
         "message_index": 2},
        {"content": "A standalone note about tax forms.", "project_id": project_id},
        {"content": "x", "project_id": project_id, "conversation_id": ""},
    ]})
    assert r.status_code == 207 or r.status_code == 200, r.text
    results = r.json()["results"]
    assert [x["status_code"] for x in results][:4] in ([201] * 4, [202] * 4)
    assert results[4]["status_code"] == 400 and "conversation_id" in results[4]["error"]
    indexes = [c.get(f"/v3/documents/{x['id']}").json().get("message_index") for x in results[:4]]
    assert indexes == [6, 7, 2, None]
    # and the memory reads back with its conversation
    doc = c.get(f"/v3/documents/{first['id']}").json()
    assert (doc["conversation_id"], doc["message_index"]) == ("trip-2027", 4)


def test_top_level_tags_merge_with_metadata_tags_and_filter_recall(server):
    doc = save(server.client, "Geothermal heat pump quote from the installer.", tags=["home", " energy ", "home"],
               metadata={"tags": ["energy", "quotes"]})
    assert doc["metadata"]["tags"] == ["energy", "quotes", "home"]
    save(server.client, "Geothermal field trip photos, Iceland.")
    tagged = recall(server.client, "geothermal", filters={"tags": ["home"]})
    assert [r["document_id"] for r in tagged["results"]] == [doc["id"]]


def test_bulk_items_take_top_level_tags_and_name_a_bad_one(server):
    r = server.client.post("/v3/memories", json={"items": [
        {"content": "Tidal turbine maintenance schedule for the harbour.", "tags": ["harbour-ops"]},
        {"content": "Tidal pool ecology notes.", "tags": 5},
    ]})
    assert r.status_code in (200, 207), r.text
    first, second = r.json()["results"]
    assert first["status_code"] in (201, 202) and second["status_code"] == 400
    assert "tags" in second["error"]
    tagged = recall(server.client, "tidal", filters={"tags": ["harbour-ops"]})
    assert [x["document_id"] for x in tagged["results"]] == [first["id"]]


def test_malformed_json_is_400(server):
    r = server.client.post("/v3/memory", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "malformed JSON" in r.json()["error"]


def test_unknown_project_is_404(server):
    missing = str(uuid.uuid4())
    r = server.client.post("/v3/memory", json={"content": "x", "project_id": missing})
    assert r.status_code == 404 and missing in r.json()["error"]
    r = server.client.post("/v3/recall", json={"query": "x", "project_id": missing})
    assert r.status_code == 404


def test_bad_document_id_is_400_and_unknown_is_404(server):
    assert server.client.get("/v3/documents/not-a-uuid").status_code == 400
    assert server.client.get(f"/v3/documents/{uuid.uuid4()}").status_code == 404


def test_recall_limit_is_clamped_and_bad_types_are_400(server):
    save(server.client, "One small memory.")
    assert server.client.post("/v3/recall", json={"query": "memory", "limit": 1_000_000}).status_code == 200
    r = server.client.post("/v3/recall", json={"query": "memory", "limit": "many"})
    assert r.status_code == 400 and "limit" in r.json()["error"]
    r = server.client.post("/v3/recall", json={"query": "x", "filters": {"tags": ["t"] * 100_000}})
    assert r.status_code == 400 and "tags" in r.json()["error"]


def test_body_over_10_mb_is_413(server):
    r = server.client.post(
        "/v3/memory", content=b"x" * (10 * 1024 * 1024 + 10), headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 413 and "body" in r.json()["error"]


def test_unknown_route_is_404_json(server):
    r = server.client.get("/v3/nothing-here")
    assert r.status_code == 404 and "error" in r.json()


def test_duplicate_project_name_is_409(server):
    assert server.client.post("/v3/projects", json={"name": "Notes"}).status_code == 201
    r = server.client.post("/v3/projects", json={"name": "notes"})
    assert r.status_code == 409 and "name" in r.json()["error"]


def _pdf_with_text(text: str) -> bytes:
    """A one-page PDF with `text` in Helvetica, written by hand (valid xref offsets)."""
    stream = f"BT /F1 18 Tf 50 700 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(f"{i} 0 obj\n".encode() + obj + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for off in offsets:
        out.write(f"{off:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


# ----------------------------------------------------------------------------- reliability row 1


def test_idempotency_key_replays_the_first_response_and_rejects_another_body(server):
    body = {"content": "Idempotent note: the fire drill is on Tuesday.", "title": "Drill"}
    headers = {"Idempotency-Key": "save-123"}
    first = server.client.post("/v3/memory", json=body, headers=headers)
    again = server.client.post("/v3/memory", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    other = server.client.post("/v3/memory", json={**body, "content": "A different note."}, headers=headers)
    assert other.status_code == 409 and "Idempotency-Key" in other.json()["error"]
    docs = server.client.post("/v3/recall", json={"query": "", "limit": 100}).json()["results"]
    assert [d["document_id"] for d in docs] == [first.json()["id"]]
    # keys are per organization: another tenant's identical key is its own request
    rival = server.as_key(server.new_key("idem-rival"))
    theirs = rival.post("/v3/memory", json=body, headers=headers)
    assert theirs.status_code == 201 and theirs.json()["id"] != first.json()["id"]


def test_related_memories_have_their_own_floor(server):
    ids = {title: save(server.client, content, title=title)["id"] for title, content in NOTES}
    tenancy = save(server.client, "Tenancy: moving out needs written notice to the landlord two months ahead; "
                                  "the deposit comes back after the inspection.", title="Moving out")["id"]
    r = server.client.get(f"/v3/documents/{ids['Landlord']}/related")
    assert r.status_code == 200, r.text
    body = r.json()
    # a whole document as the query has its own floor; the unrelated notes stay below it
    assert body["floor"] == 0.5
    related = [d["document_id"] for d in body["related"]]
    assert related[:1] == [tenancy]
    assert ids["Sourdough"] not in related and ids["Bike"] not in related
    assert all(0.5 <= d["relevance"] <= 1 for d in body["related"])
    # each marked by the same strong threshold as recall
    assert all(d["match"] == ("strong" if d["relevance"] >= MINILM.strong else "weak") for d in body["related"])
