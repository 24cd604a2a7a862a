"""memlane_client.integrations.llamaindex with the real llama-index-core, against a local server."""

from __future__ import annotations

import asyncio
import os

from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import get_response_synthesizer
from llama_index.core.schema import NodeWithScore
from memlane_client import AsyncMemlaneClient
from memlane_client.integrations.llamaindex import MemlaneRetriever


def test_the_retriever_recalls_with_filters_and_the_floor(memlane):
    pid = memlane.create_project("LlamaIndex retriever")["id"]
    pill = memlane.remember("Miso takes her thyroid pill every morning with food.", title="Miso meds",
                            project_id=pid, tags=["pets"])
    memlane.remember("Thyroid check for Miso at the vet in March.", title="Vet", project_id=pid, tags=["calendar"])

    nodes = MemlaneRetriever(memlane, project_id=pid, filters={"tags": ["pets"]}, min_relevance=0).retrieve(
        "Miso thyroid pill")
    assert [n.node.node_id for n in nodes] == [pill["id"]]
    assert isinstance(nodes[0], NodeWithScore) and "every morning" in nodes[0].node.get_content()
    assert nodes[0].node.metadata["title"] == "Miso meds"
    assert nodes[0].score == nodes[0].node.metadata["relevance"] and 0 <= nodes[0].score <= 1

    assert MemlaneRetriever(memlane, project_id=pid, min_relevance=1.0).retrieve("unrelated gibberish") == []

    # in a query engine (a mock LLM: nothing leaves the machine): the answer's sources are memlane's
    engine = RetrieverQueryEngine(
        retriever=MemlaneRetriever(memlane, project_id=pid, min_relevance=0),
        response_synthesizer=get_response_synthesizer(response_mode="compact", llm=MockLLM(max_tokens=8)))
    response = engine.query("Miso thyroid")
    assert {n.node.metadata["title"] for n in response.source_nodes} == {"Miso meds", "Vet"}


def test_the_retriever_runs_on_the_async_client(memlane):
    pid = memlane.create_project("LlamaIndex async")["id"]
    memlane.remember("The boiler was serviced in October.", title="Boiler", project_id=pid)

    async def run() -> list[NodeWithScore]:
        async with AsyncMemlaneClient(os.environ["MEMLANE_URL"], os.environ["MEMLANE_API_KEY"]) as client:
            return await MemlaneRetriever(async_client=client, project_id=pid, min_relevance=0).aretrieve(
                "boiler serviced")

    assert [n.node.metadata["title"] for n in asyncio.run(run())] == ["Boiler"]
