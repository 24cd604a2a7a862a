"""The conversation stages on AWS: one conversation (a dozen turns with conversation_id, unrelated
notes saved between them) goes through the AWS composition (moto DynamoDB and S3, osmem-server
for OpenSearch) and through the local one. osmem-server has no k-NN, so both sides search with the
text leg only; contextual indexing (the `context` field) and the neighbour stage run on both.

What must agree: each turn's neighbours (the port), the stages each query reports, and the order
of the top results where a turn is found by its own words or through its neighbours. Where two
turns tie closely on keywords the two BM25 engines may order them differently (OpenSearch's
analyzer and field sum against memlane.adapters.local.bm25: e.g. "what hobby did Melanie take up
in 2022" puts the answer first on OpenSearch and the question first locally, both in the top 2):
that is the text leg's engine, not the stages, and those queries are not compared here."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fakes import FixedClock, HashEmbedder
from moto import mock_aws
from opensearchpy import OpenSearch

from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.dynamo_schema import table_definition
from memlane.adapters.aws.opensearch_index import OpenSearchIndex
from memlane.aws import compose
from memlane.config import Settings
from memlane.domain.models import Organization, Project
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import build_local
from memlane.ports import LegResults, SearchScope, Services
from memlane.recall.service import recall
from memlane.services.memory import save_memory

pytestmark = pytest.mark.integration

ORG, PROJECT = "org-chat", "11111111-2222-4333-8444-555555555555"
REGION, TABLE, BUCKET = "us-east-1", "memlane-conversation", "memlane-conversation-content"
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

# (speaker's turn, saved as a message of the conversation?) in save order
TURNS = [
    ("Caroline: I went to an LGBTQ support group yesterday and it was so powerful.", True),
    ("Melanie: That sounds amazing! What happened there?", True),
    ("Note: the quarterly tax forms are due at the end of the month.", False),
    ("Caroline: People shared their transgender stories; I felt accepted.", True),
    ("Melanie: I'm so happy for you. I painted a sunrise over the lake last week.", True),
    ("Caroline: Painting sounds relaxing. Is it a new hobby?", True),
    ("Note: BM25 parameters k1 and b tune term saturation and length normalisation.", False),
    ("Melanie: Yes! I took it up in 2022 after a pottery class with my kids.", True),
    ("Caroline: Your kids must love it. I'm thinking about adoption agencies.", True),
    ("Melanie: That's wonderful. Which one are you looking at?", True),
    ("Caroline: One that supports LGBTQ folks, their inclusivity drew me in.", True),
    ("Melanie: They sound great. Good luck with the application!", True),
    ("Caroline: Thanks! I'll tell you how it goes at the next meetup.", True),
    ("Melanie: Please do. I'm off to the camping trip this weekend.", True),
]
# Found by a turn's own words; the second result is a turn found only through its neighbours
# (its context field and the neighbour stage): "What happened there?", "Thanks! I'll tell you…".
QUERIES = ["support group", "camping trip weekend", "tax forms"]


class TextLegOnly:
    """The index as the test sees it on both hosts: the text leg alone (osmem-server has no k-NN)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def search(self, scope: SearchScope, query_text: str, query_vector: Any, k: int, *, complete: bool = True) -> LegResults:
        return self._inner.search(scope, query_text, None, k, complete=complete)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
def aws_services(osmem: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
        "MEMLANE_TABLE": TABLE, "MEMLANE_BUCKET": BUCKET, "MEMLANE_EMBEDDER": "bedrock",
        "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_SERVICE_NAME": "memlane",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "MEMLANE_INLINE_MAX_CHARS", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws(), osmem.clone() as clone:
        new_client("dynamodb").create_table(**table_definition(TABLE))
        new_client("s3").create_bucket(Bucket=BUCKET)
        queue_url = new_client("sqs").create_queue(QueueName="memlane-ingest")["QueueUrl"]
        monkeypatch.setenv("MEMLANE_INGEST_QUEUE_URL", queue_url)
        embedder = HashEmbedder()
        settings = Settings()
        index = OpenSearchIndex(OpenSearch(hosts=[clone.url], timeout=10), "memlane-chunks", embedder.dimension,
                                embedder_id=embedder.id, context_boost=settings.context.text_weight)
        index.ensure_index()
        yield compose.compose_aws(compose.AwsSettings.from_env(), settings, embedder=embedder,
                                  index=TextLegOnly(index), clock=FixedClock(T0))  # type: ignore[arg-type]


@pytest.fixture
def local_services(tmp_path: Path) -> Iterator[Services]:
    stack = build_local(Settings(data_dir=tmp_path / "data"), embedder=HashEmbedder(), summarizer=LocalSummarizer())
    try:
        yield replace(stack.services, index=TextLegOnly(stack.index), clock=FixedClock(T0))  # type: ignore[arg-type]
    finally:
        stack.close()


def converse(svc: Services) -> tuple[Principal, dict[str, str]]:
    """The turns saved one by one, 20 seconds apart; returns the caller and document id → turn."""
    svc.metadata.create_organization(Organization(id=ORG, name="chat", slug="chat", created_at=T0, updated_at=T0))
    svc.metadata.create_project(Project(id=PROJECT, organization_id=ORG, name="Chat", slug="chat",
                                        created_at=T0, updated_at=T0))
    who = Principal(organization_id=ORG, key_id="k")
    names: dict[str, str] = {}
    for text, in_conversation in TURNS:
        svc.clock.advance(seconds=20)  # type: ignore[attr-defined]
        out = save_memory(svc, who, MemoryIn(content=text, title="chat", project_id=PROJECT,
                                             conversation_id="caroline-melanie" if in_conversation else None))
        assert out.status == "ready"
        names[out.id] = text
    return who, names


def ranking(svc: Services, who: Principal, names: dict[str, str], query: str) -> tuple[list[str], list[str]]:
    out = recall(svc, who, RecallIn(query=query, project_id=PROJECT, limit=5))
    return [names[d.document_id] for d in out.results], out.stages


def test_one_conversation_ranks_alike_on_aws_and_locally(aws_services: Services, local_services: Services) -> None:
    aws_who, aws_names = converse(aws_services)
    local_who, local_names = converse(local_services)
    # Each turn has the same neighbours on both hosts (DynamoDB GSI3 and SQLite); a note has none
    for svc, names in ((aws_services, aws_names), (local_services, local_names)):
        around = svc.metadata.conversation_around(ORG, list(names), 1, svc.clock.now())
        shown = {names[d]: ([names[b] for b in before], [names[a] for a in after]) for d, (before, after) in around.items()}
        turns = [t for t, in_conversation in TURNS if in_conversation]
        assert shown == {
            t: (turns[i - 1:i], turns[i + 1:i + 2]) for i, t in enumerate(turns)
        }
    # The stages ran on AWS: a turn that never says what it answers is found through its neighbours
    support, stages = ranking(aws_services, aws_who, aws_names, "support group")
    assert support[:2] == [TURNS[0][0], TURNS[1][0]] and stages == ["fusion", "neighbours"]
    # and the same queries rank the same turns in the same order, with the same stages, on both hosts
    for query in QUERIES:
        on_aws, aws_stages = ranking(aws_services, aws_who, aws_names, query)
        here, local_stages = ranking(local_services, local_who, local_names, query)
        assert on_aws[:2] == here[:2], query
        assert aws_stages == local_stages, query
    # and a standalone note saved in the middle of the conversation gains nothing from it
    tax, tax_stages = ranking(aws_services, aws_who, aws_names, "tax forms")
    assert tax == [TURNS[2][0]] and tax_stages == ["fusion"]
