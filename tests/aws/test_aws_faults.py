"""DynamoDB faults.

Two techniques, because they test different layers:

* botocore's Stubber answers in the `before-call` event, *above* botocore's retry handler, so a
  stubbed ThrottlingException is never retried by botocore (checked below). Stubber is therefore
  used for the retries memlane does itself: UnprocessedItems / UnprocessedKeys of batch calls, and
  the translation of what is left into TransientError.
* To test botocore's standard-mode retry of throttling (the client configuration memlane sets),
  a `before-send` hook answers the first attempts with a real HTTP 400 throttling response; the
  retry handler sees it like a response from DynamoDB, and later attempts reach moto.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import boto3
import botocore.endpoint
import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import Stubber

from memlane.adapters.aws import dynamo_schema as ks
from memlane.adapters.aws._boto import DEFAULT_CLIENT_CONFIG
from memlane.adapters.aws.dynamo_table import UNPROCESSED_RETRY_DELAYS
from memlane.adapters.aws.metadata_store import (
    DynamoMetadataStore,
    model_attributes,
    serialize,
)
from memlane.domain.errors import ConflictError, TransientError
from memlane.domain.models import Document, Organization

TABLE = "memlane-test"


class _Body:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.data


def throttle_first(attempts: int, calls: list[str]) -> Callable[..., AWSResponse | None]:
    """A before-send handler that answers the first `attempts` requests with DynamoDB's
    ProvisionedThroughputExceededException (HTTP 400), then lets requests through."""

    def handler(request: Any, **_: Any) -> AWSResponse | None:
        calls.append(request.url)
        if len(calls) > attempts:
            return None
        body = json.dumps(
            {
                "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                "message": "The level of configured provisioned throughput for the table was exceeded.",
            }
        ).encode()
        return AWSResponse(request.url, 400, {"x-amzn-RequestId": "throttled"}, _Body(body))

    return handler


@pytest.fixture
def botocore_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Records botocore's backoff pauses instead of sleeping them."""
    slept: list[float] = []
    monkeypatch.setattr(botocore.endpoint, "time", SimpleNamespace(sleep=slept.append))
    return slept


def test_throttled_read_is_retried_by_botocore_and_returns_the_document(
    store: DynamoMetadataStore, make_document: Callable[..., Document], botocore_sleeps: list[float]
) -> None:
    # Given a stored document and a table that throttles the next two reads
    doc = make_document("org-a", "proj-a", id="doc-1")
    store.put_document(doc)
    calls: list[str] = []
    store.client.meta.events.register_first("before-send.dynamodb.GetItem", throttle_first(2, calls))
    # When it is read
    loaded = store.get_document("org-a", "doc-1")
    # Then botocore retried twice with backoff and the right document came back
    assert loaded == doc
    assert len(calls) == 3
    assert len(botocore_sleeps) == 2 and all(0 <= s <= 20 for s in botocore_sleeps)


def test_throttling_past_the_retry_budget_becomes_transient_error(
    store: DynamoMetadataStore, botocore_sleeps: list[float]
) -> None:
    calls: list[str] = []
    store.client.meta.events.register_first("before-send.dynamodb.GetItem", throttle_first(100, calls))
    with pytest.raises(TransientError) as caught:
        store.get_document("org-a", "doc-1")
    assert "ProvisionedThroughputExceededException" in caught.value.message
    # botocore's retries={"max_attempts": 5} means five retries after the first attempt
    assert len(calls) == 6
    assert len(botocore_sleeps) == 5


# --------------------------------------------------------------------------- Stubber


@pytest.fixture
def stubbed(aws_credentials: None) -> Iterator[tuple[DynamoMetadataStore, Stubber, list[float]]]:
    client = boto3.client("dynamodb", config=DEFAULT_CLIENT_CONFIG)
    sleeps: list[float] = []
    store = DynamoMetadataStore(TABLE, client=client, sleep=sleeps.append)
    with Stubber(client) as stubber:
        yield store, stubber, sleeps
        stubber.assert_no_pending_responses()


def test_stubbed_errors_bypass_botocore_retries(
    stubbed: tuple[DynamoMetadataStore, Stubber, list[float]],
) -> None:
    # Given Stubber's throttling error followed by a good answer
    store, stubber, _ = stubbed
    stubber.add_client_error("get_item", "ThrottlingException", http_status_code=400)
    # When the adapter reads, the first (stubbed) error reaches it: botocore did not retry it
    with pytest.raises(TransientError):
        store.get_organization("org-a")
    stubber.add_response("get_item", {})
    assert store.get_organization("org-a") is None


def test_unprocessed_batch_writes_are_resubmitted(
    stubbed: tuple[DynamoMetadataStore, Stubber, list[float]],
    make_document: Callable[..., Document],
    make_chunks: Callable[..., list[Any]],
) -> None:
    store, stubber, sleeps = stubbed
    doc = make_document("org-a", "proj-a", id="doc-1")
    chunks = make_chunks(doc, 2)
    requests = _chunk_write_requests(doc, chunks)
    stubber.add_response("query", {"Items": [], "Count": 0})
    # DynamoDB accepts part of the batch and hands back the last two requests...
    stubber.add_response(
        "batch_write_item", {"UnprocessedItems": {TABLE: requests[-2:]}}, {"RequestItems": {TABLE: requests}}
    )
    # ...which must be sent again, and only they
    stubber.add_response(
        "batch_write_item", {"UnprocessedItems": {}}, {"RequestItems": {TABLE: requests[-2:]}}
    )

    store.put_chunks("org-a", "doc-1", chunks)

    assert sleeps == [UNPROCESSED_RETRY_DELAYS[0]]


def _chunk_write_requests(doc: Document, chunks: list[Any]) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = []
    pk = ks.doc_pk(doc.organization_id, doc.id)
    for chunk in chunks:
        item = {
            ks.PK: pk,
            ks.SK: ks.chunk_sk(chunk.chunk_index),
            "entity": "chunk",
            **model_attributes(chunk),
        }
        ref = {
            ks.PK: ks.chunk_ref_pk(doc.organization_id, chunk.id),
            ks.SK: ks.SK_CHUNK_REF,
            "document_id": doc.id,
            "chunk_index": chunk.chunk_index,
        }
        requests.append({"PutRequest": {"Item": serialize(item)}})
        requests.append({"PutRequest": {"Item": serialize(ref)}})
    return requests


def test_batch_writes_left_unprocessed_become_transient_error(
    stubbed: tuple[DynamoMetadataStore, Stubber, list[float]],
    make_document: Callable[..., Document],
    make_chunks: Callable[..., list[Any]],
) -> None:
    store, stubber, sleeps = stubbed
    doc = make_document("org-a", "proj-a", id="doc-1")
    chunks = make_chunks(doc, 1)
    requests = _chunk_write_requests(doc, chunks)
    stubber.add_response("query", {"Items": [], "Count": 0})
    for _ in range(len(UNPROCESSED_RETRY_DELAYS) + 1):
        stubber.add_response("batch_write_item", {"UnprocessedItems": {TABLE: requests}})
    with pytest.raises(TransientError):
        store.put_chunks("org-a", "doc-1", chunks)
    assert sleeps == list(UNPROCESSED_RETRY_DELAYS)


def test_unprocessed_batch_get_keys_are_fetched_again(
    stubbed: tuple[DynamoMetadataStore, Stubber, list[float]], make_document: Callable[..., Document]
) -> None:
    store, stubber, sleeps = stubbed
    docs = [make_document("org-a", "proj-a", id=f"doc-{i}") for i in range(2)]
    items = [
        serialize(
            {
                ks.PK: ks.doc_pk("org-a", d.id),
                ks.SK: ks.SK_DOC,
                "content": d.content,
                **model_attributes(d, ("content",)),
            }
        )
        for d in docs
    ]
    keys = [{ks.PK: {"S": ks.doc_pk("org-a", d.id)}, ks.SK: {"S": ks.SK_DOC}} for d in docs]
    stubber.add_response(
        "batch_get_item",
        {
            "Responses": {TABLE: [items[0]]},
            "UnprocessedKeys": {TABLE: {"Keys": [keys[1]], "ConsistentRead": True}},
        },
        {"RequestItems": {TABLE: {"Keys": keys, "ConsistentRead": True}}},
    )
    stubber.add_response(
        "batch_get_item",
        {"Responses": {TABLE: [items[1]]}, "UnprocessedKeys": {}},
        {"RequestItems": {TABLE: {"Keys": [keys[1]], "ConsistentRead": True}}},
    )
    assert store.get_documents("org-a", ["doc-0", "doc-1"]) == docs
    assert sleeps == [UNPROCESSED_RETRY_DELAYS[0]]


def test_transaction_conflict_becomes_transient_error(
    stubbed: tuple[DynamoMetadataStore, Stubber, list[float]], make_document: Callable[..., Document]
) -> None:
    store, stubber, _ = stubbed
    stubber.add_response("get_item", {})
    stubber.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        http_status_code=400,
        modeled_fields={"CancellationReasons": [{"Code": "TransactionConflict"}, {"Code": "None"}]},
    )
    with pytest.raises(TransientError) as caught:
        store.put_document(make_document("org-a", "proj-a", id="doc-1"))
    assert "TransactionConflict" in caught.value.message


def test_transaction_condition_failure_becomes_conflict_error(
    stubbed: tuple[DynamoMetadataStore, Stubber, list[float]],
) -> None:
    store, stubber, _ = stubbed
    stubber.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        http_status_code=400,
        modeled_fields={"CancellationReasons": [{"Code": "None"}, {"Code": "ConditionalCheckFailed"}]},
    )
    with pytest.raises(ConflictError):
        store.create_organization(Organization(id="org-2", name="Acme", slug="acme"))
