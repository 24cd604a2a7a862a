"""memlane in LlamaIndex (`pip install "memlane-client[llamaindex]"`, llama-index-core):
`MemlaneRetriever`, a retriever over POST /v3/recall (project scope, filters, relevance: strong
matches only unless `include_weak=True`, or the caller's own `min_relevance`) for query engines and agents. Each node's score is memlane's `relevance` (in [0, 1]; the fused
`score` that orders the results is in the node's metadata)."""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from memlane_client.client import AsyncMemlaneClient, MemlaneClient
from memlane_client.integrations import document_metadata, document_text, kept, recall_options


class MemlaneRetriever(BaseRetriever):
    def __init__(self, client: MemlaneClient | None = None, *, async_client: AsyncMemlaneClient | None = None,
                 project_id: str | None = None, project_ids: list[str] | None = None, limit: int = 10,
                 filters: dict[str, Any] | None = None, min_relevance: float | None = None,
                 include_weak: bool = False, **kwargs: Any) -> None:
        if client is None and async_client is None:
            raise ValueError("MemlaneRetriever needs a MemlaneClient or an AsyncMemlaneClient")
        self.client = client
        self.async_client = async_client
        self.include_weak = include_weak or min_relevance is not None
        self.recall_options: dict[str, Any] = {"limit": limit, "project_id": project_id,
                                               "project_ids": project_ids, "filters": filters,
                                               **recall_options(min_relevance, include_weak)}
        super().__init__(**kwargs)

    def _nodes(self, answer: Any) -> list[NodeWithScore]:
        nodes = []
        for r in kept(answer["results"], self.include_weak):
            node = TextNode(id_=r["document_id"], text=document_text(r), metadata=document_metadata(r))
            nodes.append(NodeWithScore(node=node, score=r.get("relevance") if r.get("relevance") is not None
                                       else r.get("score")))
        return nodes

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.client is None:
            raise ValueError("MemlaneRetriever was given only an AsyncMemlaneClient: use aretrieve()")
        return self._nodes(self.client.recall(query_bundle.query_str, **self.recall_options))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.async_client is None:
            return self._retrieve(query_bundle)
        return self._nodes(await self.async_client.recall(query_bundle.query_str, **self.recall_options))
