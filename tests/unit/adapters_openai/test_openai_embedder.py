from __future__ import annotations

import httpx
import openai
import pytest

from memlane.adapters.openai.embedder import OpenAIEmbedder
from memlane.domain.errors import DependencyUnavailableError, MemlaneError, TransientError
from memlane.ports import Embedder


def make_embedder(fake, sleeps: list[float], dimension: int = 4) -> OpenAIEmbedder:
    return OpenAIEmbedder(client=fake.client(), dimension=dimension, sleep=sleeps.append)


def test_identity_and_port():
    embedder = OpenAIEmbedder()
    assert embedder.id == "openai/text-embedding-3-small/1536"
    assert embedder.dimension == 1536
    assert isinstance(embedder, Embedder)


def test_documents_are_sent_in_batches_of_100_and_returned_in_order(fake_openai):
    fake_openai.default = fake_openai.embeddings
    sleeps: list[float] = []
    texts = [f"text {i}" + "x" * i for i in range(250)]
    vectors = make_embedder(fake_openai, sleeps).embed_documents(texts)
    assert [path for path, _ in fake_openai.requests] == ["/v1/embeddings"] * 3
    assert [len(body["input"]) for _, body in fake_openai.requests] == [100, 100, 50]
    assert [text for _, body in fake_openai.requests for text in body["input"]] == texts
    assert {body["model"] for _, body in fake_openai.requests} == {"text-embedding-3-small"}
    assert {body["dimensions"] for _, body in fake_openai.requests} == {4}
    # Vector i encodes (len(input), index within its batch): order survived the reversed response.
    assert [vector[0] for vector in vectors] == [float(len(text)) for text in texts]
    assert vectors[100][1] == 0.0 and vectors[249][1] == 49.0
    assert sleeps == []


def test_empty_strings_are_sent_as_a_space(fake_openai):
    fake_openai.default = fake_openai.embeddings
    vectors = make_embedder(fake_openai, []).embed_documents(["", "a", ""])
    assert fake_openai.requests[0][1]["input"] == [" ", "a", " "]
    assert len(vectors) == 3


def test_no_texts_no_request(fake_openai):
    assert make_embedder(fake_openai, []).embed_documents([]) == []
    assert fake_openai.requests == []


def test_query_embedding(fake_openai):
    fake_openai.default = fake_openai.embeddings
    assert make_embedder(fake_openai, []).embed_query("hello") == [5.0, 0.0, 0.0, 0.0]
    assert fake_openai.requests[0][1]["input"] == ["hello"]


@pytest.mark.parametrize(
    "failure",
    [(500, "boom"), (429, "slow down"), (503, "overloaded"), httpx.ConnectError("refused"),
     httpx.ReadTimeout("slow")],
)  # fmt: skip
def test_transient_failures_are_retried_with_backoff(fake_openai, failure):
    step = fake_openai.error(*failure) if isinstance(failure, tuple) else failure
    fake_openai.script = [step, step, fake_openai.embeddings]
    sleeps: list[float] = []
    vectors = make_embedder(fake_openai, sleeps).embed_documents(["abc"])
    assert vectors == [[3.0, 0.0, 0.0, 0.0]]
    assert len(fake_openai.requests) == 3
    assert sleeps == [1.0, 2.0]


def test_persistent_transient_failure_becomes_dependency_unavailable(fake_openai):
    fake_openai.default = lambda body: fake_openai.error(500, "still broken")
    sleeps: list[float] = []
    with pytest.raises(DependencyUnavailableError) as info:
        make_embedder(fake_openai, sleeps).embed_documents(["abc"])
    assert isinstance(info.value, TransientError)
    assert len(fake_openai.requests) == 4
    assert sleeps == [1.0, 2.0, 4.0]
    assert info.value.message == "OpenAI embeddings unavailable after 4 attempts: HTTP 500: still broken"
    assert isinstance(info.value.__cause__, openai.InternalServerError)


@pytest.mark.parametrize(
    ("status", "message"), [(400, "input too long"), (401, "bad key"), (404, "no model")]
)
def test_non_transient_errors_fail_at_once_with_a_readable_message(fake_openai, status, message):
    fake_openai.script = [fake_openai.error(status, message)]
    sleeps: list[float] = []
    with pytest.raises(MemlaneError) as info:
        make_embedder(fake_openai, sleeps).embed_documents(["abc"])
    assert not isinstance(info.value, TransientError)
    assert info.value.message == f"OpenAI embeddings request failed: HTTP {status}: {message}"
    assert len(fake_openai.requests) == 1
    assert sleeps == []


def test_a_wrong_number_of_vectors_is_an_error(fake_openai):
    fake_openai.script = [lambda body: fake_openai.embeddings({**body, "input": body["input"][:1]})]
    with pytest.raises(MemlaneError, match="1 embeddings for 2 inputs"):
        make_embedder(fake_openai, []).embed_documents(["a", "b"])


def test_an_empty_response_is_an_error_not_a_crash(fake_openai):
    usage = {"prompt_tokens": 0, "total_tokens": 0}
    fake_openai.script = [
        httpx.Response(200, json={"object": "list", "data": [], "model": "m", "usage": usage})
    ]
    with pytest.raises(MemlaneError, match="response unusable"):
        make_embedder(fake_openai, []).embed_documents(["a"])


def test_a_wrong_dimension_is_an_error(fake_openai):
    fake_openai.default = lambda body: fake_openai.embeddings(body, dimension=3)
    with pytest.raises(MemlaneError, match="3-dimension vector, expected 4"):
        make_embedder(fake_openai, []).embed_documents(["a"])


def test_the_default_client_needs_an_api_key(monkeypatch):
    # the key comes from the host's settings (Settings.openai_api_key), not from the environment here
    monkeypatch.setenv("OPENAI_API_KEY", "sk-in-the-environment")
    with pytest.raises(MemlaneError, match="OPENAI_API_KEY"):
        OpenAIEmbedder().embed_query("x")


def test_the_default_client_is_built_lazily_without_sdk_retries():
    client = OpenAIEmbedder(api_key="sk-test")._client_or_default()
    assert client.max_retries == 0
    assert client.api_key == "sk-test"


def test_batch_size_is_bounded_by_the_api_limit():
    with pytest.raises(ValueError):
        OpenAIEmbedder(batch_size=101)
