"""memlane inside agent frameworks. Each module imports its framework, which is an extra of this
package (`pip install "memlane-client[langchain]"`, `[llamaindex]`), never a requirement:

- memlane_client.integrations.langchain: MemlaneRetriever, MemlaneChatMessageHistory (langchain-core)
- memlane_client.integrations.llamaindex: MemlaneRetriever (llama-index-core)
"""

from __future__ import annotations

from typing import Any


def document_text(result: dict[str, Any]) -> str:
    """A recall result's text: its matched chunks in order, one paragraph each."""
    chunks = sorted(result.get("chunks") or [], key=lambda c: c.get("chunk_index", 0))
    return "\n\n".join(c.get("content", "") for c in chunks).strip()


def document_metadata(result: dict[str, Any]) -> dict[str, Any]:
    """What a framework document carries besides its text: ids, title, source, and both scores
    (`score`, the spec's fused score that orders results; `relevance`, in [0, 1], the one the
    floor applies to) and `match` ("strong", or "weak" when asked for weak matches)."""
    keys = ("document_id", "title", "summary", "source_url", "content_type", "created_at", "project_id",
            "score", "relevance", "match")
    return {k: result.get(k) for k in keys if result.get(k) is not None}


def recall_options(min_relevance: float | None, include_weak: bool) -> dict[str, Any]:
    """What a retriever adds to its recall body: strong matches only (`strict`) unless it includes weak
    ones; `min_relevance`, when set, is the caller's own floor and replaces both."""
    if min_relevance is not None:
        return {"min_relevance": min_relevance}
    return {} if include_weak else {"strict": True}


def kept(results: list[dict[str, Any]], include_weak: bool) -> list[dict[str, Any]]:
    """The results a retriever hands on: weak matches only when it includes them."""
    return results if include_weak else [r for r in results if r.get("match") != "weak"]
