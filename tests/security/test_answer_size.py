"""Issue 34, finding 4: an answer that echoes stored metadata stays within its documented cap.
One raged item of ~180 KB of text whose metadata is as large as a memory may hold (64 KB), then
/query at topK 100: every chunk used to carry all of it (a 96 MB answer with 1 MB of metadata);
now the answer is under 5 MB, every chunk is still there, and the chunks past the budget say their
metadata was omitted. Vidurai's search_memories, the other route that lists metadata, likewise.
The server's memory for such a request is measured by `python -m bench.answer_size` (BENCHMARKS.md)."""

from __future__ import annotations

from memlane.domain.answer_budget import MAX_ANSWER_BYTES, FittedAnswer, fit_answer, json_bytes
from memlane.domain.client_metadata import MAX_METADATA_BYTES, metadata_bytes
from memlane.services.keys import create_key

FIVE_MB = 5 * 1024 * 1024


def largest_metadata(**fields) -> dict:
    base = {**fields, "blob": ""}
    return {**base, "blob": "m" * (MAX_METADATA_BYTES - metadata_bytes(base))}


def item_text(chars: int) -> str:
    line = "The retry loop backs off exponentially before the job lands in the dead-letter queue.\n"
    return (line * (chars // len(line) + 1))[:chars]


def test_query_at_top_k_100_is_under_5_mb_with_every_chunk(secure_server):
    meta = largest_metadata(repoId="acme/app", path="src/retry.py", lang="py")
    with secure_server.client() as c:
        r = c.post("/ingest", json={"collection": "big", "items": [{"id": "retry", "text": item_text(180_000),
                                                                      "metadata": meta}]})
        assert r.status_code == 200, r.text[:300]
        chunks = r.json()["upserted"]
        answer = c.post("/query", json={"collection": "big", "query": "retry loop dead-letter queue", "topK": 100})
    assert answer.status_code == 200
    assert len(answer.content) < FIVE_MB
    results = answer.json()["results"]
    assert chunks >= 100 and len(results) == 100  # every chunk found, none left out
    with_meta = [r for r in results if r["payload"].get("blob") == meta["blob"]]
    omitted = [r for r in results if r["payload"].get("metadataOmitted")]
    assert with_meta and omitted and len(with_meta) + len(omitted) == 100
    # the best-ranked results keep their metadata; the others keep raged's documented payload
    assert results.index(omitted[0]) == len(with_meta)
    for r in omitted:
        p = r["payload"]
        assert (p["repoId"], p["path"], p["lang"], p["baseId"]) == ("acme/app", "src/retry.py", "py", "retry")
        assert p["text"] == r["text"] and isinstance(p["chunkIndex"], int)


def test_vidurai_search_memories_is_under_5_mb(secure_server):
    items = [{"content": f"Deploy note {i}: the staging cluster rotates its keys on Fridays.",
              "metadata": largest_metadata(salience="HIGH", n=i)} for i in range(100)]
    # a bulk save of 100 counts 100 against the limit: a key with room for the search after it
    roomy, _, _ = create_key(secure_server.server.stack.metadata, "acme", "roomy", 1000)
    with secure_server.client(roomy) as c:
        saved = c.post("/v3/memories", json={"items": items})
        assert saved.json()["saved"] == 100, saved.text[:300]
        answer = c.post("/", json={"tool": "search_memories", "params": {"project": ".", "limit": 100,
                                                                         "min_salience": "LOW"}})
    assert answer.status_code == 200, answer.text[:300]
    assert len(answer.content) < FIVE_MB
    memories = answer.json()["result"]
    assert len(memories) == 100
    omitted = [m for m in memories if m["metadata"].get("metadata_omitted")]
    assert 0 < len(omitted) < 100
    assert all(m["metadata"]["document_id"] and m["metadata"]["title"] for m in memories)


def _lean(r: dict) -> dict:
    return {"id": r["id"], "omitted": True}


def test_an_ordinary_answer_is_untouched():
    results = [{"id": i, "meta": "x" * 100} for i in range(100)]
    assert fit_answer(results, _lean, json_bytes) == FittedAnswer(results)


def test_results_are_left_out_only_when_their_own_fields_pass_the_budget():
    results = [{"id": "x" * 1000, "meta": "m" * 1000} for _ in range(10)]
    fitted = fit_answer(results, _lean, json_bytes, budget=5 * json_bytes(_lean(results[0])) + 10)
    assert fitted.left_out == 5 and len(fitted.results) == 5 and fitted.metadata_omitted == 5
    assert sum(json_bytes(r) for r in fitted.results) <= MAX_ANSWER_BYTES
