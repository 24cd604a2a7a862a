"""The ingestion step functions, invoked with the events/ task inputs in workflow order."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
from botocore.stub import Stubber
from fn_support import DOC_ID, ORG_ID, T0, Deployment, context, load_event

from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.bedrock_embedder import BEDROCK_CLIENT_CONFIG, BedrockEmbedder
from memlane.domain.errors import TransientError
from memlane.domain.models import Document, DocumentStatus, Organization
from memlane.ingest.pipeline import prepare
from memlane.ports import SearchScope

CONTENT = (
    "Our cat Miso needs her thyroid pill every morning with food. The vet said to give it before "
    "breakfast and to watch for weight loss."
)
PREFIX = f"work/{ORG_ID}/{DOC_ID}/doc-{DOC_ID}-4b3a2918-0f1e-4d2c-8b3a-291807f6e5d4"


DEPLOYMENT: dict = {}


@pytest.fixture(autouse=True)
def _deployment(deployment: Deployment) -> None:
    DEPLOYMENT["current"] = deployment


def step(name: str, event: dict | None = None, **overrides) -> dict:
    event = event if event is not None else load_event(f"step_{name}.json")
    return DEPLOYMENT["current"].invoke(name, event, context(name), **overrides)


def save_queued(deployment: Deployment, content: str, title: str, **fields) -> Document:
    """A document under the id the step events name, saved and queued as POST /v3/memory leaves it."""
    svc = deployment.services()
    project = svc.metadata.list_projects(ORG_ID)[0]
    prepared = prepare(content, None, title, None)
    doc = Document(
        id=DOC_ID,
        organization_id=ORG_ID,
        project_id=project.id,
        user_id="api",
        title=prepared.title,
        content=prepared.extracted.text,
        content_type=prepared.extracted.content_type,
        content_hash=prepared.content_hash,
        created_at=T0,
        updated_at=T0,
        **fields,
    )
    svc.metadata.put_document(doc)
    return doc


@pytest.fixture
def queued_doc(deployment: Deployment, org: Organization) -> Document:
    return save_queued(deployment, CONTENT, "Miso meds", metadata={"language": "en"})


def s3_text(deployment: Deployment, key: str) -> str:
    return deployment.s3.get_object(Bucket="memlane-fn-test-content", Key=key)["Body"].read().decode()


def test_each_step_with_its_event_hands_the_next_one_what_it_reads(
    deployment: Deployment, queued_doc: Document
) -> None:
    md = deployment.services().metadata

    prepare_result = step("prepare")
    assert prepare_result["chunks_key"] == f"{PREFIX}/chunks.json" and prepare_result["count"] == 1
    # generated phrases are keyphrases ("miso", "miso meds"…), never tags: the save gave none
    assert any("miso" in phrase for phrase in prepare_result["keyphrases"]) and prepare_result["tags"] == []
    begun = md.get_document(ORG_ID, DOC_ID)
    assert begun.status == DocumentStatus.PROCESSING
    assert begun.summary is None  # a note no longer than a summary is its own summary
    (stored,) = json.loads(s3_text(deployment, prepare_result["chunks_key"]))
    assert stored["content"] == CONTENT and stored["chunk_index"] == 0 and stored["document_id"] == DOC_ID
    # chunks are cut after the summary gave the keyphrases: the chunk's filter labels carry them
    assert stored["tags"] == begun.labels and any(label.startswith("keyphrase:") for label in stored["tags"])

    embed = step("embed")
    assert embed == {"vectors_key": f"{PREFIX}/vectors.json", "count": 1, "embedder": "test/hash/256"}
    (vector,) = json.loads(s3_text(deployment, embed["vectors_key"]))
    assert vector == pytest.approx(deployment.embedder.embed_documents([f"Miso meds\n{CONTENT}"])[0])

    write = step("write")
    assert write == {"status": "ready", "chunk_count": 1}
    (record,) = md.get_chunks(ORG_ID, DOC_ID)
    assert record.tags == stored["tags"]
    scope = SearchScope(organization_id=ORG_ID, project_ids=(queued_doc.project_id,), now=T0)
    legs = deployment.search.search(scope, "thyroid pill", deployment.embedder.embed_query("thyroid pill"), 5)
    assert [c.document_id for c in legs.text] == [DOC_ID] and legs.vector[0].document_id == DOC_ID
    done = md.get_document(ORG_ID, DOC_ID)
    assert (done.status, done.chunk_count, done.status_reason) == (DocumentStatus.READY, 1, None)
    assert done.embedder == "test/hash/256"  # the embedder that wrote the vectors


def test_mark_failed_records_the_reason_without_the_stack_trace(
    deployment: Deployment, queued_doc: Document
) -> None:
    result = step("mark_failed")
    reason = "MemlaneError: Bedrock refused the embedding request (AccessDeniedException)"
    assert result == {"status": "failed", "reason": reason}
    doc = deployment.services().metadata.get_document(ORG_ID, DOC_ID)
    assert (doc.status, doc.status_reason) == (DocumentStatus.FAILED, reason)


def test_a_document_deleted_before_processing_makes_every_step_a_no_op(
    deployment: Deployment, org: Organization
) -> None:
    prepared = step("prepare")
    assert prepared == {"skip": "document not found (deleted before processing)", "count": 0, "tags": [],
                        "keyphrases": []}
    for name in ("embed", "write"):
        event = load_event(f"step_{name}.json")
        event["artifacts"]["prepare"] = prepared
        assert step(name, event)["skip"] == prepared["skip"]
    result = step("mark_failed")
    assert "status" not in result and result["reason"].startswith("MemlaneError: Bedrock refused")
    assert deployment.services().metadata.get_document(ORG_ID, DOC_ID) is None  # not re-created
    assert deployment.search.document_ids() == set()


def _bedrock_embedder(deployment: Deployment, errors: int, sleeps: list[float]) -> tuple[Stubber, dict]:
    """A Bedrock embedder on a stubbed client, and the step handlers' services using it."""
    client = new_client("bedrock-runtime", BEDROCK_CLIENT_CONFIG)
    stub = Stubber(client)
    for _ in range(errors):
        stub.add_client_error("invoke_model", "ServiceUnavailableException", "Bedrock is busy", 503)
    if errors <= 3:
        body = json.dumps({"embedding": [0.0] * 255 + [1.0], "inputTextTokenCount": 30}).encode()
        stub.add_response("invoke_model", {"body": _Streaming(body), "contentType": "application/json"})
    embedder = BedrockEmbedder(client=client, dimension=256, sleep=sleeps.append)
    return stub, {"services": dataclasses.replace(deployment.services(), embedder=embedder)}


def test_bedrock_5xx_is_retried_with_backoff_inside_the_embed_step(
    deployment: Deployment, queued_doc: Document, monkeypatch: pytest.MonkeyPatch
) -> None:
    step("prepare")
    sleeps: list[float] = []
    stub, deps = _bedrock_embedder(deployment, errors=2, sleeps=sleeps)
    with stub:
        result = step("embed", **deps)
    assert sleeps == [1.0, 2.0]  # memlane's schedule: 1 s, 2 s (then 4 s)
    assert result["count"] == 1 and result["embedder"] == "bedrock/amazon.titan-embed-text-v2:0/256"
    stub.assert_no_pending_responses()


def test_bedrock_down_raises_the_error_name_the_workflow_retries(
    deployment: Deployment, queued_doc: Document, monkeypatch: pytest.MonkeyPatch
) -> None:
    step("prepare")
    sleeps: list[float] = []
    stub, deps = _bedrock_embedder(deployment, errors=4, sleeps=sleeps)
    with stub, pytest.raises(TransientError) as raised:
        step("embed", **deps)
    assert type(raised.value).__name__ == "TransientError" and sleeps == [1.0, 2.0, 4.0]
    doc = deployment.services().metadata.get_document(ORG_ID, DOC_ID)
    assert doc.status == DocumentStatus.PROCESSING
    assert doc.status_reason.startswith("embedding failed, retrying: Bedrock embedding failed after 4")


class _Streaming(io.BytesIO):
    """The StreamingBody shape BedrockEmbedder reads."""


def test_a_retried_embed_step_embeds_only_the_batches_that_failed(
    deployment: Deployment, org: Organization, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reliability row 5 on AWS: the state machine retries Embed after a TransientError; the
    batches that succeeded were kept in S3 (work/…/embedded/) and are not embedded again."""
    from memlane.documents.progress import progress_prefix
    from memlane.documents.writer import EMBED_BATCH

    text = "\n\n".join(
        f"Section {i}. " + " ".join(f"heron{i} pond{i} reed{j}" for j in range(120)) for i in range(150)
    )
    save_queued(deployment, text, "Herons")
    chunks = step("prepare")["count"]
    assert chunks > 2 * EMBED_BATCH

    embedded: list[int] = []
    real = deployment.embedder.embed_documents

    def second_call_fails(texts):
        if len(embedded) == 1 and not getattr(second_call_fails, "failed", False):
            second_call_fails.failed = True
            raise TransientError("Bedrock returned 503")
        embedded.append(len(texts))
        return real(texts)

    monkeypatch.setattr(deployment.embedder, "embed_documents", second_call_fails)
    with pytest.raises(TransientError):
        step("embed")
    assert embedded == [EMBED_BATCH]
    assert (
        len(
            deployment.s3.list_objects_v2(
                Bucket="memlane-fn-test-content", Prefix=progress_prefix(ORG_ID, DOC_ID)
            )["Contents"]
        )
        == 1
    )
    result = step("embed")  # the state machine's Retry
    assert result["count"] == chunks
    assert sum(embedded[1:]) == chunks - EMBED_BATCH
