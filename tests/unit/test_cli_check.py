"""`memlane check` against a scripted API (the parts the local server cannot show yet): the
conversation signal sent when the server's MemoryIn has it, the floor judged when the answer names
one, the rerank stage reported, and FAIL lines with what was seen."""

from __future__ import annotations

import itertools
from typing import Any

from memlane.cli.check import CONVERSATION_QUERY, PARAPHRASE_QUERY, check


class ScriptedApi:
    """What memlane check calls of MemlaneClient, answered from memory. `order(query, saved)` gives
    the recalled ids; `answer_extra` is merged into every recall answer."""

    base_url = "https://api.example.test/v3"

    def __init__(self, fields: set[str], answer_extra: dict[str, Any] | None = None, floor_results: int = 0,
                 conversation_rank: int = 1, search: str | None = "s3vectors", keyword_found: bool = True) -> None:
        self.fields = frozenset(fields)
        self.search = search
        self.keyword_found = keyword_found
        self.extra = answer_extra or {}
        self.floor_results = floor_results
        self.conversation_rank = conversation_rank
        self.saved: dict[str, dict[str, Any]] = {}
        self.ids = (f"doc-{i}" for i in itertools.count())
        self.deleted_project: str | None = None

    def whoami(self) -> dict[str, Any]:
        return {"organization_id": "org-1"}

    def request(self, method: str, path: str) -> dict[str, Any]:
        assert (method, path) == ("GET", "/health")
        return {"status": "ok", **({"search": self.search} if self.search else {})}

    def schema_fields(self, schema: str) -> frozenset[str]:
        return self.fields if schema == "MemoryIn" else frozenset()

    def create_project(self, name: str, **fields: Any) -> dict[str, Any]:
        return {"id": "project-1", "name": name}

    def remember(self, content: str, **fields: Any) -> dict[str, Any]:
        doc_id = next(self.ids)
        self.saved[doc_id] = {"content": content, **fields}
        return {"id": doc_id}

    def document(self, document_id: str) -> dict[str, Any]:
        return {"id": document_id, "status": "ready"}

    def _id_of(self, role: str) -> str:
        return next(i for i, d in self.saved.items() if d["title"] == f"memlane check: {role}")

    def recall(self, query: str, **fields: Any) -> dict[str, Any]:
        if query == PARAPHRASE_QUERY:
            first = [self._id_of("paraphrase")]
        elif query == CONVERSATION_QUERY:
            others = [i for i in self.saved if i != self._id_of("answer")]
            first = others[: self.conversation_rank - 1] + [self._id_of("answer")]
        elif query.startswith("zq"):
            first = [self._id_of("keyword")] if self.keyword_found else [self._id_of("distractor-1")]
        else:  # the nonsense query
            first = list(self.saved)[: self.floor_results]
        results = [{"document_id": i, "title": self.saved[i]["title"], "score": 0.5} for i in first]
        return {"results": results, "total": len(results), "query_time_ms": 3.0, **self.extra}

    def delete_document(self, document_id: str) -> dict[str, Any]:
        return {"id": document_id, "deleted": True, "receipt": {"id": "receipt-1"}}

    def deletion(self, receipt_id: str) -> dict[str, Any]:
        return {"id": receipt_id, "verified": True, "documents": [self._id_of("distractor-2")],
                "checks": [{"store": "metadata", "clean": True}, {"store": "vector index", "clean": True}]}

    def delete_project(self, project_id: str) -> dict[str, Any]:
        self.deleted_project = project_id
        return {"id": project_id, "deleted": True, "documents_deleted": len(self.saved) - 1,
                "receipt": {"verified": True}}


def lines_of(api: ScriptedApi) -> tuple[dict[str, str], list[str], bool]:
    lines: list[str] = []
    run = check(api, 5.0, lines.append)  # type: ignore[arg-type]
    return {line.split()[1]: line.split()[0] for line in lines}, lines, run.failed


def test_a_server_with_the_conversation_signal_floor_and_rerank_passes_every_check() -> None:
    api = ScriptedApi({"content", "conversation_id", "sequence"},
                      {"floor": 0.3, "stages": ["neighbours"],
                       "rerank": {"model": "bedrock/cohere.rerank-v3-5:0", "status": "applied", "reranked": 6}})
    status, lines, failed = lines_of(api)
    assert not failed and set(status.values()) == {"PASS"}, lines
    # the conversation was saved with its id and an explicit order, and only the conversation
    turns = [d for d in api.saved.values() if "conversation_id" in d]
    assert [d["sequence"] for d in turns] == [0, 1] and len({d["conversation_id"] for d in turns}) == 1
    assert "stages: ['neighbours']" in next(line for line in lines if " conversation " in line)
    assert "floor 0.3" in next(line for line in lines if " floor " in line)
    assert "cohere.rerank-v3-5:0 reranked 6" in next(line for line in lines if " rerank " in line)
    assert api.deleted_project == "project-1"


def test_a_floor_that_lets_nonsense_through_and_a_lost_answer_fail_with_what_was_seen() -> None:
    api = ScriptedApi({"content", "conversation_id"}, {"floor": 0.2}, floor_results=2, conversation_rank=4)
    status, lines, failed = lines_of(api)
    assert failed and status["floor"] == "FAIL" and status["conversation"] == "FAIL"
    assert "a nonsense query returned 2" in next(line for line in lines if " floor " in line)
    assert "came back at rank 4" in next(line for line in lines if " conversation " in line)
    assert status["cleanup"] == "PASS"  # cleaned up all the same


def test_a_refused_rerank_is_a_configuration_fault_and_a_throttled_one_is_skipped() -> None:
    refused = {"model": "bedrock/amazon.rerank-v1:0", "status": "skipped",
               "reason": "Bedrock Rerank (amazon.rerank-v1:0) refused the request: AccessDeniedException"}
    status, lines, _ = lines_of(ScriptedApi({"content"}, {"rerank": refused}))
    assert status["rerank"] == "FAIL" and "AccessDeniedException" in next(x for x in lines if " rerank " in x)
    throttled = {**refused, "reason": "Bedrock Rerank (amazon.rerank-v1:0) unavailable: ThrottlingException"}
    status, _, failed = lines_of(ScriptedApi({"content"}, {"rerank": throttled}))
    assert status["rerank"] == "SKIP" and not failed


def test_the_search_backend_is_named_with_what_each_check_ran_there_and_a_failure_says_where_to_look() -> None:
    status, lines, _ = lines_of(ScriptedApi({"content"}))
    search = next(line for line in lines if " search " in line)
    assert status["search"] == "PASS" and "Amazon S3 Vectors, an index per organization" in search
    assert "`keyword` QueryVectors with queryTexts" in search and "GetVectors" in search
    # a keyword miss on S3 Vectors points at the index's mode and text keys
    status, lines, failed = lines_of(ScriptedApi({"content"}, keyword_found=False))
    keyword = next(line for line in lines if " keyword " in line)
    assert failed and status["keyword"] == "FAIL" and "ENHANCED with the text keys" in keyword
    # OpenSearch is named as such; a server that does not say is a skip with the reason
    status, lines, _ = lines_of(ScriptedApi({"content"}, search="opensearch"))
    assert "OpenSearch (managed domain), one index for every organization" in next(x for x in lines if " search " in x)
    status, lines, failed = lines_of(ScriptedApi({"content"}, search=None))
    assert status["search"] == "SKIP" and not failed
    assert "does not name its search index" in next(x for x in lines if " search " in x)
