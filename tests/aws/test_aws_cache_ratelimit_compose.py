"""The DynamoDB recall cache and rate limiter, and the AWS composition, under moto."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.stub import Stubber

from memlane.adapters.aws import compose
from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.cache import DynamoCache
from memlane.adapters.aws.ratelimit import DynamoRateLimiter
from memlane.domain.errors import TransientError

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def cache(dynamodb: Any) -> DynamoCache:
    return DynamoCache("memlane-test", client=dynamodb)


# --------------------------------------------------------------------------- cache


def test_cache_entries_round_trip_and_expire(cache: DynamoCache) -> None:
    cache.set("recall:abc", b'[{"document_id":"d1"}]', 300, T0, document_ids=["d1", "d2"])
    assert cache.get("recall:abc", T0 + timedelta(seconds=299)) == b'[{"document_id":"d1"}]'
    # DynamoDB's TTL deletes lazily: the adapter checks the expiry itself
    assert cache.get("recall:abc", T0 + timedelta(seconds=300)) is None
    assert cache.get("recall:other", T0) is None


def test_purge_document_drops_every_entry_naming_it_and_only_those(cache: DynamoCache, dynamodb: Any) -> None:
    cache.set("k1", b"1", 300, T0, document_ids=["d1", "d2"])
    cache.set("k2", b"2", 300, T0, document_ids=["d2"])
    cache.set("k3", b"3", 300, T0, document_ids=["d3"])
    assert cache.purge_document("d2") == 2
    assert [cache.get(k, T0) for k in ("k1", "k2", "k3")] == [None, None, b"3"]
    # the pointers of the purged entries are gone too; d1's pointer to k1 expires with its TTL
    assert dynamodb.query(TableName="memlane-test", KeyConditionExpression="pk = :pk",
                          ExpressionAttributeValues={":pk": {"S": "DOCCACHE#d2"}})["Count"] == 0
    assert cache.purge_document("d2") == 0


def test_many_documents_in_one_entry_are_written_in_batches(cache: DynamoCache) -> None:
    docs = [f"doc-{i}" for i in range(60)]  # more than one BatchWriteItem (25)
    cache.set("big", b"x", 300, T0, document_ids=docs)
    assert cache.purge_document("doc-59") == 1 and cache.get("big", T0) is None


def test_generations_start_at_zero_and_bump_atomically(cache: DynamoCache) -> None:
    assert cache.generations(["org:p1", "org:p2"]) == {"org:p1": 0, "org:p2": 0}
    assert [cache.bump_generation("org:p1") for _ in range(3)] == [1, 2, 3]
    assert cache.generations(["org:p1", "org:p2", "org:p1"]) == {"org:p1": 3, "org:p2": 0}
    many = [f"org:p{i}" for i in range(150)]  # more than one BatchGetItem (100)
    assert sum(cache.generations(many).values()) == 3


def test_a_throttled_cache_read_becomes_transient_error(dynamodb: Any) -> None:
    client = new_client("dynamodb")
    stub = Stubber(client)
    stub.add_client_error("get_item", "ProvisionedThroughputExceededException", "slow down", 400)
    with stub, pytest.raises(TransientError, match="ProvisionedThroughputExceededException"):
        DynamoCache("memlane-test", client=client).get("k", T0)


# --------------------------------------------------------------------------- rate limiter


def test_rate_limit_counts_per_key_per_minute(dynamodb: Any) -> None:
    limiter = DynamoRateLimiter("memlane-test", client=dynamodb)
    now = T0 + timedelta(seconds=15)  # 45 s left in the minute
    decisions = [limiter.hit("key-a", 3, now) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert decisions[-1].reset_s == 45 and decisions[-1].retry_after_s == 45
    assert limiter.hit("key-b", 3, now).remaining == 2  # another key has its own window
    assert limiter.hit("key-a", 3, now + timedelta(seconds=45)).remaining == 2  # the next minute
    key = {"pk": {"S": f"RATE#key-a#{int(T0.timestamp())}"}, "sk": {"S": "RATE"}}
    item = dynamodb.get_item(TableName="memlane-test", Key=key)["Item"]
    assert item["count"]["N"] == "4" and int(item["expires_at"]["N"]) == int(T0.timestamp()) + 120


def test_rate_limiter_lets_requests_through_when_dynamodb_is_throttling(dynamodb: Any) -> None:
    client = new_client("dynamodb")
    stub = Stubber(client)
    stub.add_client_error("update_item", "ThrottlingException", "Rate exceeded", 400)
    with stub:
        decision = DynamoRateLimiter("memlane-test", client=client).hit("key-a", 100, T0)
    assert decision.allowed and decision.remaining == 100


# --------------------------------------------------------------------------- composition


@pytest.fixture
def stack_env(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"MEMLANE_TABLE": "memlane-test", "MEMLANE_BUCKET": "memlane-test-content",
                        "MEMLANE_INGEST_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/q",
                        "MEMLANE_SEARCH_ENDPOINT": "https://search-memlane.us-east-1.es.amazonaws.com",
                        "MEMLANE_SEARCH_KIND": "managed", "AWS_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MEMLANE_INLINE_MAX_CHARS", raising=False)
    compose.reset_aws_services()
    yield
    compose.reset_aws_services()


def test_composition_writes_small_saves_inline_and_builds_nothing_it_does_not_use(
        stack_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLANE_EMBEDDER", "bedrock")
    svc = compose.build_aws_services()
    assert svc is compose.build_aws_services()  # once per cold start
    assert svc.settings.inline_max_chars == 20_000  # as locally: a small save is written in the request
    assert type(svc.metadata).__name__ == "DynamoMetadataStore" and svc.metadata.table_name == "memlane-test"
    assert type(svc.queue).__name__ == "SqsIngestQueue"
    assert type(svc.cache).__name__ == "DynamoCache"
    assert type(svc.rate_limiter).__name__ == "DynamoRateLimiter"
    assert svc.embedder.id == "bedrock/amazon.titan-embed-text-v2:0/1024"
    assert "not built yet" in repr(svc.index)  # OpenSearch is signed and connected on first use only
    index = svc.index.get()
    assert type(index).__name__ == "OpenSearchIndex" and index.alias == "memlane-chunks"
    assert index.dimension == 1024 and index.serverless is False
    assert svc.idempotency.layer().table_name == "memlane-test" and svc.idempotency.layer().static_pk_value == "IDEMP#save"


def test_the_inline_limit_can_be_configured(stack_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLANE_INLINE_MAX_CHARS", "5000")
    assert compose.build_aws_services().settings.inline_max_chars == 5000


def test_openai_key_comes_from_secrets_manager_on_first_use(stack_env: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the operator's secret (docs/deploy.md) and a stack configured for OpenAI
    new_client("secretsmanager").create_secret(Name="memlane/openai-api-key", SecretString="sk-test-123\n")
    monkeypatch.setenv("MEMLANE_EMBEDDER", "openai")
    monkeypatch.setenv("MEMLANE_OPENAI_SECRET_NAME", "memlane/openai-api-key")
    svc = compose.build_aws_services()
    # Then composing reads nothing: the embedder's id needs no key
    assert svc.embedder.id == "openai/text-embedding-3-small/1536"
    client = svc.embedder.get()._client
    assert isinstance(client, compose.OpenAIClientFromSecret) and client._client is None
    # and the first use reads the secret (by name) and builds the client with it
    assert client.api_key == "sk-test-123"
    assert type(svc.summarizer.get()).__name__ == "OpenAISummarizer"


def test_a_function_outside_the_stack_says_what_is_missing(aws: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMLANE_TABLE", raising=False)
    compose.reset_aws_services()
    with pytest.raises(Exception, match="MEMLANE_TABLE is not set"):
        compose.build_aws_services()


def test_an_s3vectors_stack_composes_s3_vectors_with_a_client_that_knows_full_text_search(
        stack_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the environment the stack gives functions with searchBackend=s3vectors
    monkeypatch.setenv("MEMLANE_SEARCH_KIND", "s3vectors")
    monkeypatch.delenv("MEMLANE_SEARCH_ENDPOINT")
    monkeypatch.setenv("MEMLANE_VECTOR_BUCKET", "memlane-test-vectors")
    monkeypatch.setenv("MEMLANE_EMBEDDER", "bedrock")
    svc = compose.build_aws_services()
    # Then the index is S3 Vectors, built on first use, for the bucket and the embedder
    assert "not built yet" in repr(svc.index)
    index = svc.index.get()
    assert type(index).__name__ == "S3VectorsIndex" and index.bucket == "memlane-test-vectors"
    assert (index.dimension, index.embedder_id) == (1024, "bedrock/amazon.titan-embed-text-v2:0/1024")
    assert index.context_boost == svc.settings.context.text_weight
    # and its client knows full-text search (the layer ships the botocore the tests run)
    model = index.client.meta.service_model.operation_model("QueryVectors").input_shape.members
    assert {"queryTexts", "returnScores"} <= set(model)


def test_an_s3vectors_stack_without_its_bucket_says_so(stack_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLANE_SEARCH_KIND", "s3vectors")
    with pytest.raises(Exception, match="MEMLANE_VECTOR_BUCKET is not set on this function"):
        compose.build_aws_services().index.get()
