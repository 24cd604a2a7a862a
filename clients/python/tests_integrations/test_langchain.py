"""memlane_client.integrations.langchain with the real langchain-core, against a local server."""

from __future__ import annotations

import asyncio
import os

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from memlane_client import AsyncMemlaneClient
from memlane_client.integrations.langchain import MemlaneChatMessageHistory, MemlaneRetriever


def test_the_retriever_recalls_with_filters_and_the_floor(memlane):
    pid = memlane.create_project("LangChain retriever")["id"]
    boat = memlane.remember("The ferry to Vashon leaves at nine from Fauntleroy.", title="Ferry", project_id=pid,
                            tags=["travel"])
    memlane.remember("The ferry schedule changes in winter; check before Vashon trips.", title="Winter",
                     project_id=pid, tags=["seasonal"])

    retriever = MemlaneRetriever(client=memlane, project_id=pid, filters={"tags": ["travel"]}, min_relevance=0)
    docs = retriever.invoke("ferry Vashon")
    assert [d.metadata["document_id"] for d in docs] == [boat["id"]]
    assert isinstance(docs[0], Document) and "leaves at nine" in docs[0].page_content
    assert docs[0].metadata["title"] == "Ferry" and 0 <= docs[0].metadata["relevance"] <= 1

    both = MemlaneRetriever(client=memlane, project_id=pid, min_relevance=0).invoke("ferry Vashon")
    assert {d.metadata["title"] for d in both} == {"Ferry", "Winter"}
    # the floor: a strict one leaves nothing rather than weak matches
    assert MemlaneRetriever(client=memlane, project_id=pid, min_relevance=1.0).invoke("unrelated gibberish") == []

    # a retriever is a Runnable: it composes in a chain
    chain = MemlaneRetriever(client=memlane, project_id=pid, min_relevance=0, limit=1) | RunnableLambda(
        lambda ds: ds[0].metadata["title"])
    assert chain.invoke("Fauntleroy nine") == "Ferry"


def test_the_retriever_runs_on_the_async_client(memlane):
    pid = memlane.create_project("LangChain async")["id"]
    memlane.remember("Quarterly taxes are due on the fifteenth.", title="Taxes", project_id=pid)

    async def run() -> list[Document]:
        async with AsyncMemlaneClient(os.environ["MEMLANE_URL"], os.environ["MEMLANE_API_KEY"]) as client:
            return await MemlaneRetriever(async_client=client, project_id=pid, min_relevance=0).ainvoke(
                "quarterly taxes due")

    assert [d.metadata["title"] for d in asyncio.run(run())] == ["Taxes"]


def test_the_chat_history_saves_turns_as_one_conversation(memlane):
    pid = memlane.create_project("LangChain chat")["id"]
    history = MemlaneChatMessageHistory(memlane, "trip-planning-1", project_id=pid)
    history.add_messages([SystemMessage("You plan trips."), HumanMessage("Which ferry should I take to Vashon?",
                                                                         name="Sam"),
                          AIMessage("The nine o'clock from Fauntleroy.")])
    history.add_user_message("And on Sundays?")

    again = MemlaneChatMessageHistory(memlane, "trip-planning-1", project_id=pid)
    assert [(m.type, m.content, m.name) for m in again.messages] == [
        ("system", "You plan trips.", None), ("human", "Which ferry should I take to Vashon?", "Sam"),
        ("ai", "The nine o'clock from Fauntleroy.", None), ("human", "And on Sundays?", None)]

    # saved through the conversation endpoint: messages of the conversation, in order, with their
    # roles, and no tag of the history's own among the user's tags
    said = memlane.conversation("trip-planning-1", project_id=pid)["messages"]
    assert [(m["message_index"], m["role"], m["speaker"], m["kind"]) for m in said] == [
        (0, "system", None, "message"), (1, "user", "Sam", "message"), (2, "assistant", None, "message"),
        (3, "user", None, "message")]
    saved = [memlane.document(d["id"]) for d in memlane.iter_project_documents(pid)]
    assert {d["conversation_id"] for d in saved} == {"trip-planning-1"}
    tags = {t for d in saved for t in d["metadata"].get("tags") or []}
    assert tags == set(), tags  # no tag of the history's own, and memlane's generated phrases are not tags
    assert any(d["metadata"].get("keyphrases") for d in saved)  # they are keyphrases
    found = memlane.recall("ferry Vashon Sundays", project_id=pid, kind="message", min_relevance=0)
    assert {r["document_id"] for r in found["results"]} <= {m["id"] for m in said} and found["results"]

    # another conversation in the same project is another history
    other = MemlaneChatMessageHistory(memlane, "trip-planning-2", project_id=pid)
    assert other.messages == []
    again.add_ai_message("Every hour on Sundays.")
    assert [m.content for m in history.messages][-1] == "Every hour on Sundays."
    # a message that is all tool calls has no text to keep; a tool's answer keeps its text
    history.add_messages([AIMessage("", tool_calls=[{"name": "timetable", "args": {}, "id": "c1"}]),
                          ToolMessage("Sunday sailings: 8:00, 9:00, 10:00.", tool_call_id="c1")])
    last = history.messages[-1]
    assert isinstance(last, ChatMessage) and last.role == "tool" and last.content.startswith("Sunday sailings")
    assert len(history.messages) == 6

    history.clear()
    assert history.messages == [] and list(memlane.iter_project_documents(pid)) == []
    # cleared, the same turn can be added again
    history.add_user_message("And on Sundays?")
    assert [m.content for m in history.messages] == ["And on Sundays?"]
