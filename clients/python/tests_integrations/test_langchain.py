"""memlane_client.integrations.langchain with the real langchain-core, against a local server."""

from __future__ import annotations

import asyncio
import os

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage
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
    history.add_messages([HumanMessage("Which ferry should I take to Vashon?"),
                          AIMessage("The nine o'clock from Fauntleroy.")])
    history.add_user_message("And on Sundays?")

    again = MemlaneChatMessageHistory(memlane, "trip-planning-1", project_id=pid)
    assert [(m.type, m.content) for m in again.messages] == [
        ("human", "Which ferry should I take to Vashon?"), ("ai", "The nine o'clock from Fauntleroy."),
        ("human", "And on Sundays?")]

    saved = [memlane.document(d["id"]) for d in memlane.iter_project_documents(pid)]
    assert sorted((d["conversation_id"], d["message_index"]) for d in saved) == [
        ("trip-planning-1", 0), ("trip-planning-1", 1), ("trip-planning-1", 2)]
    assert {d["metadata"]["role"] for d in saved} == {"human", "ai"}

    # another conversation in the same project is another history
    other = MemlaneChatMessageHistory(memlane, "trip-planning-2", project_id=pid)
    assert other.messages == []
    again.add_ai_message("Every hour on Sundays.")
    assert [m.content for m in history.messages][-1] == "Every hour on Sundays."

    history.clear()
    assert history.messages == [] and list(memlane.iter_project_documents(pid)) == []
