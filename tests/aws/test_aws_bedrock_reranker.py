"""BedrockReranker with botocore's Stubber: the Rerank request, the mapping of its results back to
the texts sent, and errors (throttling skips recall's stage, never a 500); the composition turning
the stage on from the environment."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from memlane.adapters.aws import compose
from memlane.adapters.aws.bedrock_reranker import AMAZON_RERANK_V1, COHERE_RERANK_V35, BedrockReranker
from memlane.domain.errors import ConfigurationError, MemlaneError, TransientError
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.ports import Rerank, Reranker
from memlane.recall.service import recall
from memlane.services.memory import save_memory

REGION = "us-east-1"
AMAZON_ARN = f"arn:aws:bedrock:{REGION}::foundation-model/amazon.rerank-v1:0"


@pytest.fixture
def rerank_client(aws_credentials: None) -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("bedrock-agent-runtime", region_name=REGION)
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def expected_request(query: str, texts: list[str], arn: str = AMAZON_ARN) -> dict[str, Any]:
    return {
        "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
        "sources": [
            {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}}}
            for t in texts
        ],
        "rerankingConfiguration": {
            "type": "BEDROCK_RERANKING_MODEL",
            "bedrockRerankingConfiguration": {"numberOfResults": len(texts), "modelConfiguration": {"modelArn": arn}},
        },
    }


def test_identity_protocol_and_models() -> None:
    reranker = BedrockReranker(AMAZON_RERANK_V1, REGION, client=object())
    assert isinstance(reranker, Reranker)
    assert reranker.id == "bedrock/amazon.rerank-v1:0"
    assert BedrockReranker(COHERE_RERANK_V35, REGION, client=object()).id == "bedrock/cohere.rerank-v3-5:0"
    with pytest.raises(ValueError, match="choose one of"):
        BedrockReranker("amazon.titan-embed-text-v2:0", REGION, client=object())


def test_the_request_names_the_model_arn_and_every_text_and_scores_map_back_by_index(
    rerank_client: tuple[Any, Stubber],
) -> None:
    client, stubber = rerank_client
    texts = ["two months notice for the landlord", "lemon cake", "office lease notice"]
    # Bedrock answers best first; `index` is the position in the sources sent
    stubber.add_response(
        "rerank",
        {"results": [{"index": 2, "relevanceScore": 0.91}, {"index": 0, "relevanceScore": 0.42},
                     {"index": 1, "relevanceScore": 0.003}]},
        expected_request("notice period", texts),
    )
    scores = BedrockReranker(AMAZON_RERANK_V1, REGION, client=client).score("notice period", texts)
    assert scores == pytest.approx([0.42, 0.003, 0.91])


def test_cohere_and_the_region_of_the_client_when_none_is_configured(rerank_client: tuple[Any, Stubber]) -> None:
    client, stubber = rerank_client
    arn = f"arn:aws:bedrock:{REGION}::foundation-model/cohere.rerank-v3-5:0"
    stubber.add_response("rerank", {"results": [{"index": 0, "relevanceScore": 0.5}]},
                         expected_request("q", ["t"], arn))
    assert BedrockReranker(COHERE_RERANK_V35, "", client=client).score("q", ["t"]) == [0.5]


def test_a_result_missing_for_a_text_is_an_error_not_a_zero(rerank_client: tuple[Any, Stubber]) -> None:
    client, stubber = rerank_client
    stubber.add_response("rerank", {"results": [{"index": 0, "relevanceScore": 0.5}]},
                         expected_request("q", ["a", "b"]))
    with pytest.raises(MemlaneError, match="no score for 1 of 2"):
        BedrockReranker(AMAZON_RERANK_V1, REGION, client=client).score("q", ["a", "b"])


@pytest.mark.parametrize("code, status, error", [("ThrottlingException", 429, TransientError),
                                                 ("InternalServerException", 500, TransientError),
                                                 ("AccessDeniedException", 403, MemlaneError)])
def test_errors_become_memlane_errors_with_the_code(rerank_client: tuple[Any, Stubber], code: str, status: int,
                                                   error: type[Exception]) -> None:
    client, stubber = rerank_client
    stubber.add_client_error("rerank", service_error_code=code, http_status_code=status)
    with pytest.raises(error, match=code) as caught:
        BedrockReranker(AMAZON_RERANK_V1, REGION, client=client).score("q", ["a"])
    if error is MemlaneError:
        assert not isinstance(caught.value, TransientError)


def test_nothing_to_rerank_makes_no_call(rerank_client: tuple[Any, Stubber]) -> None:
    client, _ = rerank_client
    assert BedrockReranker(AMAZON_RERANK_V1, REGION, client=client).score("q", []) == []


# --------------------------------------------------------------------------- recall with Bedrock


@pytest.fixture
def saved(stack, who):
    for text in ("the landlord needs two months notice", "notice periods for the office lease"):
        save_memory(stack.services, who, MemoryIn(content=text), inline=True)
    return stack


def test_recall_reranks_through_bedrock(saved, who, rerank_client: tuple[Any, Stubber]) -> None:
    client, stubber = rerank_client
    plain = recall(saved.services, who, RecallIn(query="notice"))
    sent = [d.chunks[0].content for d in plain.results]
    stubber.add_response("rerank", {"results": [{"index": 1, "relevanceScore": 0.9}, {"index": 0, "relevanceScore": 0.1}]},
                         expected_request("notice", sent))
    svc = dataclasses.replace(saved.services, rerank=Rerank(BedrockReranker(AMAZON_RERANK_V1, REGION, client=client)))
    out = recall(svc, who, RecallIn(query="notice"))
    assert [d.chunks[0].content for d in out.results] == list(reversed(sent))
    assert out.rerank == {"model": "bedrock/amazon.rerank-v1:0", "status": "applied", "reranked": 2}


def test_a_throttled_rerank_answers_200_with_the_fused_ranking_and_says_so(
    saved, who, rerank_client: tuple[Any, Stubber]
) -> None:
    # POST /v3/recall through memlane's resolver, as API Gateway calls it on AWS
    from memlane.api.app import MemlaneApi
    from memlane.api.auth import authorizer_context
    from memlane.api.inprocess import call

    client, stubber = rerank_client
    stubber.add_client_error("rerank", service_error_code="ThrottlingException", http_status_code=400)
    svc = dataclasses.replace(saved.services, rerank=Rerank(BedrockReranker(AMAZON_RERANK_V1, REGION, client=client)))
    plain = recall(saved.services, who, RecallIn(query="notice"))
    status, body = call(MemlaneApi(svc).handle, authorizer_context(who), "POST", "/v3/recall", {"query": "notice"})
    assert status == 200
    assert [d["document_id"] for d in body["results"]] == [d.document_id for d in plain.results]
    assert body["rerank"]["status"] == "skipped" and "ThrottlingException" in body["rerank"]["reason"]


# --------------------------------------------------------------------------- composition


@pytest.fixture
def stack_env(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, value in {"MEMLANE_TABLE": "memlane-test", "MEMLANE_BUCKET": "memlane-test-content",
                        "MEMLANE_INGEST_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/q",
                        "AWS_REGION": REGION}.items():
        monkeypatch.setenv(name, value)
    for name in ("MEMLANE_RERANK_MODEL_ID", "MEMLANE_RERANK_TOP_N", "MEMLANE_RERANK_WEIGHT"):
        monkeypatch.delenv(name, raising=False)
    compose.reset_aws_services()
    yield
    compose.reset_aws_services()


def test_the_stage_is_off_unless_the_stack_names_a_model(stack_env: None) -> None:
    assert compose.build_aws_services().rerank is None


def test_the_stack_turns_the_stage_on_without_building_a_client(stack_env: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLANE_RERANK_MODEL_ID", COHERE_RERANK_V35)
    monkeypatch.setenv("MEMLANE_RERANK_TOP_N", "50")
    option = compose.build_aws_services().rerank
    assert option is not None and (option.top_n, option.weight) == (50, 0.7)
    assert option.reranker.id == "bedrock/cohere.rerank-v3-5:0"
    assert "not built yet" in repr(option.reranker.client)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name, value, says", [
    ("MEMLANE_RERANK_MODEL_ID", "amazon.titan", "MEMLANE_RERANK_MODEL_ID='amazon.titan': rerank model 'amazon.titan': "
                                                "choose one of"),
    ("MEMLANE_RERANK_TOP_N", "500", "MEMLANE_RERANK_TOP_N='500': expected a whole number of candidates, at least 1, "
                                    "at most 100"),
    ("MEMLANE_RERANK_WEIGHT", "lots", "MEMLANE_RERANK_WEIGHT='lots': expected a number, more than 0, at most 1")])
def test_bad_rerank_settings_name_the_setting(stack_env: None, monkeypatch: pytest.MonkeyPatch,
                                              name: str, value: str, says: str) -> None:
    monkeypatch.setenv("MEMLANE_RERANK_MODEL_ID", AMAZON_RERANK_V1)
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError) as exc:
        compose.build_aws_services()
    assert exc.value.variable == name and exc.value.message.startswith(says)
