"""The extraction queue's consumer on AWS (moto: DynamoDB, S3, SQS), its LLM the fake
OpenAI-compatible server on loopback: a conversation saved through the API function's service
queues one SQS message; the consumer draws and stores the facts on DynamoDB; an LLM that is down
reports the message as a batch item failure (SQS delivers it again) and the record says so."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from fake_chat_server import FakeChatServer
from fn_support import ORG_ID, Deployment, context, load_event

from memlane.adapters.aws.job_queue import SqsIngestQueue
from memlane.adapters.openai.llm import OpenAICompatibleLLM
from memlane.conversations.schemas import ConversationIn
from memlane.conversations.service import get_extraction, save_conversation
from memlane.domain.facts import is_fact, sources_of
from memlane.domain.models import Organization
from memlane.domain.principal import Principal
from memlane.ports import LanguageModel

WHO = Principal(organization_id=ORG_ID, key_id="key-1")


def brain(task: str, data: dict[str, Any]) -> dict[str, Any]:
    if task == "extract_facts":
        return {"facts": [{"text": "Maya keeps bees on her roof", "subject": "Maya", "sources": [1]}]}
    return {"outcome": "new", "reason": "nothing known"}


@pytest.fixture
def server():
    with FakeChatServer(brain) as s:
        yield s


def _with_llm(deployment: Deployment, server: FakeChatServer) -> tuple[Any, str]:
    url = deployment.sqs.create_queue(QueueName="memlane-dev-ExtractionQueue")["QueueUrl"]
    llm = OpenAICompatibleLLM(base_url=server.base_url, model="fake-1", retry_delays=(0.0,), sleep=lambda s: None)
    svc = dataclasses.replace(deployment.services(), llm=LanguageModel(llm, queue=SqsIngestQueue(url, clock=deployment.clock)))
    return svc, url


def _event(deployment: Deployment, url: str, receive_count: int = 1) -> dict[str, Any]:
    (message,) = deployment.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    event = load_event("extract_consumer_batch.json")
    event["Records"][0].update(messageId=message["MessageId"], body=message["Body"])
    event["Records"][0]["attributes"]["ApproximateReceiveCount"] = str(receive_count)
    return event


def test_the_consumer_stores_the_facts_of_a_queued_conversation(deployment: Deployment, org: Organization,
                                                                server: FakeChatServer) -> None:
    svc, url = _with_llm(deployment, server)
    out = save_conversation(svc, WHO, ConversationIn.model_validate({
        "conversation_id": "c1", "messages": [{"speaker": "Maya", "content": "I keep bees on my roof."}]}))
    assert out.extraction.status == "queued"
    result = deployment.invoke("extract_consumer", _event(deployment, url), context("extract"), services=svc)
    assert result == {"batchItemFailures": []}
    record = get_extraction(svc, WHO, out.extraction.id or "")
    assert record.status == "done" and [f.outcome for f in record.facts] == ["new"]
    fact = svc.metadata.get_document(ORG_ID, record.facts[0].fact_id or "")
    assert fact is not None and is_fact(fact) and sources_of(fact) == [out.messages[0].id]
    # nothing similar was known, so the fact is new without asking the LLM to compare
    assert fact.metadata["memlane"]["decisions"][0]["reason"] == "no similar fact of this subject was known"
    assert server.tasks() == ["extract_facts"]


def test_an_llm_that_is_down_is_a_batch_item_failure_retried_by_sqs(deployment: Deployment, org: Organization,
                                                                    server: FakeChatServer) -> None:
    svc, url = _with_llm(deployment, server)
    out = save_conversation(svc, WHO, ConversationIn.model_validate({
        "conversation_id": "c1", "messages": [{"speaker": "Maya", "content": "I keep bees on my roof."}]}))
    server.down = True
    event = _event(deployment, url)
    result = deployment.invoke("extract_consumer", event, context("extract"), services=svc)
    assert result == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    record = get_extraction(svc, WHO, out.extraction.id or "")
    assert record.status == "queued" and "retried by the queue" in (record.error or "")
    # the last delivery before the DLQ gives up, and says so
    result = deployment.invoke("extract_consumer", {**event, "Records": [{**event["Records"][0], "attributes": {
        **event["Records"][0]["attributes"], "ApproximateReceiveCount": "5"}}]}, context("extract"), services=svc)
    assert result["batchItemFailures"]
    assert get_extraction(svc, WHO, out.extraction.id or "").status == "failed"
