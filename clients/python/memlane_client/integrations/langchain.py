"""memlane in LangChain (`pip install "memlane-client[langchain]"`, langchain-core).

- `MemlaneRetriever`: a retriever over POST /v3/recall, with its project scope, filters
  (content_type, created_after, tags) and relevance: strong matches only by default
  (`include_weak=True` adds the weak ones, each document's metadata saying `match`), or the caller's
  own floor (`min_relevance`; 0: every candidate).
- `MemlaneChatMessageHistory`: a chat history kept as a memlane conversation (POST
  /v3/conversations, read back with GET /v3/conversations/{id}), so recall sees the turns as each
  other's context and, with an LLM on the server, facts are drawn from them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from memlane_client.client import AsyncMemlaneClient, MemlaneClient
from memlane_client.errors import NotFound
from memlane_client.integrations import document_metadata, document_text, kept, recall_options


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
    include_weak: bool = False

    def _body(self) -> dict[str, Any]:
        return {"limit": self.limit, "project_id": self.project_id, "project_ids": self.project_ids,
                "filters": self.filters, **recall_options(self.min_relevance, self.include_weak)}

    def _documents(self, answer: Any) -> list[Document]:
        return [Document(page_content=document_text(r), metadata=document_metadata(r), id=r["document_id"])
                for r in kept(answer["results"], self.include_weak or self.min_relevance is not None)]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if self.client is None:
            raise ValueError("MemlaneRetriever needs `client` (a MemlaneClient) to be called synchronously")
        return self._documents(self.client.recall(query, **self._body()))

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        return self._documents(await self.async_client.recall(query, **self._body()))


MAX_MESSAGES = 100  # the most POST /v3/conversations takes in one request
# LangChain's message types and the conversation endpoint's roles
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}


class MemlaneChatMessageHistory(BaseChatMessageHistory):
    """The messages of conversation `conversation_id`, kept in memlane through its conversation
    endpoint: `add_messages` saves them with POST /v3/conversations (in order, each with its place,
    its role and, for a named message, its speaker), so memlane indexes each turn with its
    neighbours and, when the server has an LLM, draws facts from them (`extract`, `subject`).
    `messages` reads the conversation back in order (GET /v3/conversations/{id}); `clear()` deletes
    its messages (each with its deletion receipt; the facts drawn only from them go with them).

    What a conversation keeps is who said what: a message's type (human, ai, system, tool), its
    text and its `name`. Tool calls, tool_call_ids and additional kwargs are not kept; a tool
    message reads back as a ChatMessage of role "tool", and a message with no text is not saved.
    A message is kept at its place even when its text was said before ("Thanks!" twice is two
    messages); only the same message sent again at the same place is answered as a duplicate."""

    def __init__(self, client: MemlaneClient, conversation_id: str, *, project_id: str | None = None,
                 extract: bool | None = None, subject: str | None = None) -> None:
        if not conversation_id.strip():
            raise ValueError("conversation_id must not be empty")
        self.client = client
        self.conversation_id = conversation_id.strip()
        self.project_id = project_id
        self.extract = extract
        self.subject = subject
        self._next_index: int | None = None

    def _saved(self) -> list[dict[str, Any]]:
        """The conversation's messages in order (none when memlane holds none of it)."""
        try:
            return [dict(m) for m in self.client.iter_conversation(self.conversation_id, project_id=self.project_id)]
        except NotFound:
            return []

    @staticmethod
    def _message(saved: dict[str, Any]) -> BaseMessage:
        role, speaker, text = saved.get("role"), saved.get("speaker"), saved.get("content") or ""
        if role == "user":
            return HumanMessage(text, name=speaker)
        if role == "assistant":
            return AIMessage(text, name=speaker)
        if role == "system":
            return SystemMessage(text, name=speaker)
        return ChatMessage(content=text, role=role or speaker or "user", name=speaker if role else None)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override, unused-ignore]  # needed against the real LangChain (.venv-integrations), not the stubs-free main run
        saved = self._saved()
        self._next_index = (saved[-1].get("message_index") or 0) + 1 if saved else 0
        return [self._message(m) for m in saved]

    @staticmethod
    def _body(message: BaseMessage, index: int) -> dict[str, Any] | None:
        text = message.text if isinstance(message.text, str) else str(message.content)
        if not text.strip():
            return None
        role = ROLES.get(message.type)
        if isinstance(message, ChatMessage):
            role = message.role if message.role in ("user", "assistant", "system", "tool") else None
            speaker = message.name or (None if role else message.role)
        else:
            speaker = message.name
        return {"content": text, "message_index": index,
                **({"role": role} if role else {}), **({"speaker": speaker[:200]} if speaker else {})}

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        if self._next_index is None:
            _ = self.messages  # where the conversation stands
        index = self._next_index or 0
        bodies = []
        for message in messages:
            body = self._body(message, index)
            if body is not None:
                bodies.append(body)
                index += 1
        for start in range(0, len(bodies), MAX_MESSAGES):
            # the client sends one Idempotency-Key with every attempt of this save: a retry after a
            # lost answer or a 5xx saves the turns and queues their extraction once. (Not a key
            # derived from the turns: after clear(), the same turns may be added again.)
            self.client.save_conversation(self.conversation_id, bodies[start:start + MAX_MESSAGES],
                                          project_id=self.project_id, subject=self.subject, extract=self.extract)
        self._next_index = index

    def clear(self) -> None:
        for message in self._saved():
            self.client.delete_document(message["id"])
        self._next_index = 0
