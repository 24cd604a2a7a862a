"""BedrockEmbedder with botocore's Stubber: request bodies, retries and their pauses."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError
from botocore.response import StreamingBody
from botocore.stub import Stubber

from memlane.adapters.aws.bedrock_embedder import BEDROCK_CLIENT_CONFIG, MAX_INPUT_CHARS, BedrockEmbedder
from memlane.domain.errors import MemlaneError, TransientError
from memlane.ports import Embedder

MODEL = "amazon.titan-embed-text-v2:0"


def invoke_response(vector: list[float]) -> dict[str, Any]:
    body = json.dumps({"embedding": vector, "inputTextTokenCount": 3}).encode()
    return {"body": StreamingBody(io.BytesIO(body), len(body)), "contentType": "application/json"}


def expected(text: str, dimension: int = 1024) -> dict[str, Any]:
    return {
        "modelId": MODEL,
        "body": json.dumps({"inputText": text, "dimensions": dimension, "normalize": True}),
        "contentType": "application/json",
        "accept": "application/json",
    }


def unit(dimension: int, hot: int) -> list[float]:
    return [1.0 if i == hot else 0.0 for i in range(dimension)]


@pytest.fixture
def bedrock(aws_credentials: None) -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("bedrock-runtime", config=BEDROCK_CLIENT_CONFIG)
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_identity_and_protocol() -> None:
    embedder = BedrockEmbedder(client=object())
    assert embedder.id == "bedrock/amazon.titan-embed-text-v2:0/1024"
    assert embedder.dimension == 1024
    assert isinstance(embedder, Embedder)
    assert BedrockEmbedder(client=object(), dimension=256).id == "bedrock/amazon.titan-embed-text-v2:0/256"
    with pytest.raises(ValueError):
        BedrockEmbedder(client=object(), dimension=768)


def test_throttled_twice_then_success_returns_one_vector(bedrock: tuple[Any, Stubber]) -> None:
    # Given Bedrock throttles twice, then answers
    client, stubber = bedrock
    stubber.add_client_error(
        "invoke_model", "ThrottlingException", http_status_code=429, expected_params=expected("hi")
    )
    stubber.add_client_error(
        "invoke_model", "ThrottlingException", http_status_code=429, expected_params=expected("hi")
    )
    stubber.add_response("invoke_model", invoke_response(unit(1024, 7)), expected("hi"))
    sleeps: list[float] = []
    # When a query is embedded
    vector = BedrockEmbedder(client=client, sleep=sleeps.append).embed_query("hi")
    # Then one vector comes back after pauses of 1 s and 2 s
    assert vector == unit(1024, 7)
    assert sleeps == [1.0, 2.0]


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("ServiceUnavailableException", 503),
        ("ModelTimeoutException", 408),
        ("InternalServerException", 500),
        ("SomethingNew", 502),  # any 5xx
    ],
)
def test_transient_errors_are_retried(bedrock: tuple[Any, Stubber], code: str, status: int) -> None:
    client, stubber = bedrock
    stubber.add_client_error("invoke_model", code, http_status_code=status)
    stubber.add_response("invoke_model", invoke_response(unit(256, 0)))
    sleeps: list[float] = []
    assert BedrockEmbedder(client=client, dimension=256, sleep=sleeps.append).embed_query("x") == unit(256, 0)
    assert sleeps == [1.0]


def test_failure_after_the_last_retry_is_transient_error(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    for _ in range(4):
        stubber.add_client_error("invoke_model", "ThrottlingException", http_status_code=429)
    sleeps: list[float] = []
    with pytest.raises(TransientError) as caught:
        BedrockEmbedder(client=client, sleep=sleeps.append).embed_query("hi")
    assert sleeps == [1.0, 2.0, 4.0]
    assert "4 attempts" in caught.value.message


def test_a_refused_request_is_not_retried(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    stubber.add_client_error("invoke_model", "AccessDeniedException", http_status_code=403)
    sleeps: list[float] = []
    with pytest.raises(MemlaneError) as caught:
        BedrockEmbedder(client=client, sleep=sleeps.append).embed_query("hi")
    assert not isinstance(caught.value, TransientError)
    assert sleeps == []


def test_read_timeouts_are_retried() -> None:
    class TimesOutOnce:
        calls = 0

        def invoke_model(self, **_: Any) -> dict[str, Any]:
            self.calls += 1
            if self.calls == 1:
                raise ReadTimeoutError(endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com")
            return invoke_response(unit(512, 3))

    sleeps: list[float] = []
    client = TimesOutOnce()
    assert BedrockEmbedder(client=client, dimension=512, sleep=sleeps.append).embed_query("q") == unit(512, 3)
    assert (client.calls, sleeps) == (2, [1.0])


def test_documents_are_embedded_one_call_each_in_order(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    texts = ["first", "second", "third"]
    for i, text in enumerate(texts):
        stubber.add_response("invoke_model", invoke_response(unit(1024, i)), expected(text))
    vectors = BedrockEmbedder(client=client, max_workers=1).embed_documents(texts)
    assert vectors == [unit(1024, 0), unit(1024, 1), unit(1024, 2)]


def test_documents_in_parallel_keep_their_order() -> None:
    class Echo:
        def invoke_model(self, body: str, **_: Any) -> dict[str, Any]:
            hot = int(json.loads(body)["inputText"])
            return invoke_response(unit(256, hot))

    texts = [str(i) for i in range(20)]
    vectors = BedrockEmbedder(client=Echo(), dimension=256, max_workers=4).embed_documents(texts)
    assert vectors == [unit(256, i) for i in range(20)]


def test_long_input_is_truncated_to_titan_limit(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    text = "word " * 10_000  # 50,000 characters
    stubber.add_response("invoke_model", invoke_response(unit(1024, 1)), expected(text[:MAX_INPUT_CHARS]))
    assert BedrockEmbedder(client=client).embed_query(text) == unit(1024, 1)


def test_blank_text_needs_no_call(bedrock: tuple[Any, Stubber]) -> None:
    client, _ = bedrock
    assert BedrockEmbedder(client=client, dimension=256).embed_query("   ") == [0.0] * 256


def test_wrong_dimension_from_the_model_is_an_error(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    stubber.add_response("invoke_model", invoke_response([0.5] * 10))
    with pytest.raises(MemlaneError):
        BedrockEmbedder(client=client).embed_query("x")


def test_botocore_retries_are_off_for_bedrock() -> None:
    assert BEDROCK_CLIENT_CONFIG.retries == {"mode": "standard", "total_max_attempts": 1}
