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
    floor applies to)."""
    keys = ("document_id", "title", "summary", "source_url", "content_type", "created_at", "project_id",
            "score", "relevance")
    return {k: result.get(k) for k in keys if result.get(k) is not None}
