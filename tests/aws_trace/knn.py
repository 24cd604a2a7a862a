"""osmem-server has no k-NN: the `knn` bodies of an `_msearch` are answered here, exactly, over the
hits of the knn clause's own filter (the scores OpenSearch's faiss inner-product space gives); the
other bodies go to osmem-server in one `_msearch`. Used behind the recorded, checked request, so
the request the function signs is the one that was authorized."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memlane.adapters.aws.opensearch_mapping import VECTOR_FIELD, knn_score_from_cosine


def _pairs(body: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    text = body.decode() if isinstance(body, bytes) else str(body)
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return list(zip(lines[::2], lines[1::2], strict=True))


def _ndjson(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    return "".join(json.dumps(part) + "\n" for pair in pairs for part in pair)


def msearch_with_knn(perform: Callable[..., Any], method: str, url: str, body: Any,
                     **kwargs: Any) -> Any:
    pairs = _pairs(body)
    plain = [i for i, (_, query) in enumerate(pairs) if "knn" not in query.get("query", {})]
    answers: dict[int, Any] = {}
    if plain:
        sent = perform(method, url, body=_ndjson([pairs[i] for i in plain]), **kwargs)
        answers.update(zip(plain, sent["responses"], strict=True))
    index = url.strip("/").split("/")[0]
    for i, (_, query) in enumerate(pairs):
        if i not in answers:
            answers[i] = _knn(perform, index, query, kwargs)
    return {"responses": [answers[i] for i in range(len(pairs))]}


def _knn(perform: Callable[..., Any], index: str, query: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    clause = query["query"]["knn"][VECTOR_FIELD]
    fields = [*query.get("_source", []), VECTOR_FIELD]
    found = perform("POST", f"/{index}/_search", body={"size": 10_000, "_source": fields, "query": clause["filter"]},
                    params={}, headers=kwargs.get("headers"))
    scored = []
    for hit in found["hits"]["hits"]:
        stored = hit["_source"].pop(VECTOR_FIELD, None) or []
        inner = sum(a * b for a, b in zip(stored, clause["vector"], strict=False))
        scored.append({**hit, "_score": knn_score_from_cosine(inner)})
    scored.sort(key=lambda h: -h["_score"])
    return {"status": 200, "hits": {"hits": scored[: clause["k"]]}}
