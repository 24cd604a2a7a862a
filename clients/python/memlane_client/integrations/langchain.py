"""memlane in LangChain (`pip install "memlane-client[langchain]"`, langchain-core).

- `MemlaneRetriever`: a retriever over POST /v3/recall, with its project scope, filters
  (content_type, created_after, tags) and relevance floor (`min_relevance`; None: the server's
  calibrated floor, 0: every candidate).
- `MemlaneChatMessageHistory`: a chat history that saves each turn as a memory of one
  conversation (`conversation_id`, `message_index`), so recall sees the turns as each other's
  context, and reads the conversation back in order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from memlane_client.client import AsyncMemlaneClient, MemlaneClient
from memlane_client.integrations import document_metadata, document_text


class MemlaneRetriever(BaseRetriever):
    """Documents recalled by memlane for a query, best first: `page_content` the matched chunks,
    `metadata` the ids, title, source, `score` and `relevance`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: MemlaneClient | None = None
    async_client: AsyncMemlaneClient | None = None
    project_id: str | None = None
    project_ids: list[str] | None = None
    limit: int = 10
    filters: dict[str, Any] | None = None
    min_relevance: float | None = None

    def _body(self) -> dict[str, Any]:
        return {"limit": self.limit, "project_id": self.project_id, "project_ids": self.project_ids,
                "filters": self.filters, "min_relevance": self.min_relevance}

    @staticmethod
    def _documents(answer: Any) -> list[Document]:
        return [Document(page_content=document_text(r), metadata=document_metadata(r), id=r["document_id"])
                for r in answer["results"]]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if self.client is None:
            raise ValueError("MemlaneRetriever needs `client` (a MemlaneClient) to be called synchronously")
        return self._documents(self.client.recall(query, **self._body()))

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        return self._documents(await self.async_client.recall(query, **self._body()))


CONVERSATION_TAG = "conversation:"
MAX_MESSAGES = 100  # one recall page: the most a history reads back


class MemlaneChatMessageHistory(BaseChatMessageHistory):
    """The messages of conversation `conversation_id`, kept in memlane: each added message is a
    memory (its text the content, its role and LangChain form in `metadata`, the tag
    `conversation:<id>` to find it by) with the conversation's id and its place, so memlane indexes it with its neighbours and recall lifts
    them together. `messages` reads the conversation back in order (the latest 100).
    `clear()` deletes the conversation's memories (each with its deletion receipt)."""

    def __init__(self, client: MemlaneClient, conversation_id: str, *, project_id: str | None = None) -> None:
        if not conversation_id.strip():
            raise ValueError("conversation_id must not be empty")
        self.client = client
        self.conversation_id = conversation_id.strip()
        self.project_id = project_id
        self._next_index: int | None = None

    @property
    def tag(self) -> str:
        return f"{CONVERSATION_TAG}{self.conversation_id}"[:100]

    def _saved(self) -> list[dict[str, Any]]:
        """The conversation's documents, oldest first (memlane lists the newest by an empty query)."""
        answer = self.client.recall("", limit=MAX_MESSAGES, project_id=self.project_id,
                                    filters={"tags": [self.tag]})
        documents: list[dict[str, Any]] = [dict(self.client.document(r["document_id"])) for r in answer["results"]]
        mine = [d for d in documents if d.get("conversation_id") == self.conversation_id]
        return sorted(mine, key=lambda d: (d.get("message_index") or 0, d.get("created_at") or ""))

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        saved = self._saved()
        self._next_index = (saved[-1].get("message_index") or 0) + 1 if saved else 0
        return messages_from_dict([d["metadata"]["langchain_message"] for d in saved
                                   if isinstance(d.get("metadata", {}).get("langchain_message"), dict)])

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        if self._next_index is None:
            _ = self.messages  # where the conversation stands
        for message in messages:
            text = message.text if isinstance(message.text, str) else str(message.content)
            index = self._next_index or 0
            self.client.remember(
                text or "(empty message)", title=f"{message.type} message {index}", project_id=self.project_id,
                tags=[self.tag], conversation_id=self.conversation_id, message_index=index,
                content_type="text",
                metadata={"tags": [self.tag], "role": message.type, "langchain_message": message_to_dict(message)},
                # the same turn of the same conversation, saved again (a retried run), is stored once
                idempotency_key=f"{hashlib.sha256(self.conversation_id.encode()).hexdigest()[:32]}:{index}:"
                                f"{hashlib.sha256(text.encode()).hexdigest()[:32]}",
            )
            self._next_index = index + 1

    def clear(self) -> None:
        for document in self._saved():
            self.client.delete_document(document["id"])
        self._next_index = 0
