"""The permission trace (reliability.md #32): every function and the ingestion workflow run under
moto on their real code paths (tests/infra/trace_scenarios.py), every AWS call and OpenSearch
request is recorded and checked against the IAM policies of the caller's role in the synthesized
template (and the OpenSearch domain's access policy). A call the template does not grant fails;
a grant no traced call uses fails unless JUSTIFIED below says why it is kept.

It runs on the default stack, on the production-like variant (OAuth for /mcp, the rerank stage,
an LLM reached through a cross-Region inference profile, two search nodes, x86_64) and on the S3
Vectors stack with lean observability (searchBackend=s3vectors: tests/aws_trace/vectors.py)."""

from __future__ import annotations

from typing import Any

import pytest
from aws_trace import checker
from aws_trace.checker import Justified
from aws_trace.world import World
from trace_scenarios import OCR_LINES, Outcomes, principals

pytestmark = pytest.mark.infra

ANY = ".*"
TABLE = r"arn:aws:dynamodb:[^:]+:\d+:table/[^/]+(/index/gsi\d)?"
BUCKET = r"arn:aws:s3:::[^/]+(/\*)?"
SEARCH = r"arn:aws:es:[^:]+:\d+:domain/.+"
CONSUMERS = r"(IngestionIngestConsumer|ExtractionExtractionConsumer|CrawlPageWorker|ConnectionsConnectionSync)Function.*"
JOBS = r"(SchedulesForget|SchedulesRefresh|ConnectionsConnectionSchedule)Function.*"
# The functions that run memlane's write path or its removal path (memlane.documents.writer and
# lifecycle) through the metadata store: which of its table actions a run needs depends on the
# documents (a rewrite deletes old chunk rows in batches, a changed hash deletes the old dedupe
# item, a removal deletes everything), not on the function.
WRITERS = (r"(ApiApi|IngestionExtract|IngestionPrepare|IngestionWrite|IngestionTranscribed|SchedulesForget|"
           r"CrawlPageWorker|ConnectionsConnectionSync|ExtractionExtractionConsumer)Function.*")
# Grants no traced call uses, each with why it stays. A grant missing here that nothing uses fails
# the test (remove it, or say why); an entry nothing needs any more fails it too.
JUSTIFIED = (
    # --- what runs beside memlane's code with the function's role
    Justified(ANY, "logs:(CreateLogStream|PutLogEvents)", ANY, "the Lambda runtime writes the function's logs"),
    Justified(ANY, "xray:(PutTraceSegments|PutTelemetryRecords)", r"\*", "active tracing (Lambda, Step Functions)"),
    Justified("StateMachine", "xray:(GetSamplingRules|GetSamplingTargets)", r"\*", "Step Functions' active tracing"),
    Justified("StateMachine", "logs:(CreateLogDelivery|DeleteLogDelivery|DescribeLogGroups|DescribeResourcePolicies|"
              "GetLogDelivery|ListLogDeliveries|PutResourcePolicy|UpdateLogDelivery)", r"\*",
              "Step Functions delivers the execution log to its log group with these (CDK's LogOptions grant)"),
    Justified(CONSUMERS, "sqs:(ChangeMessageVisibility|GetQueueUrl)", ANY,
              "the SQS event source's execution-role grant: a failed batch item is made visible again"),
    Justified(JOBS, "sqs:(SendMessage|GetQueueAttributes|GetQueueUrl)", ANY,
              "Lambda delivers a failed asynchronous invocation to the job's on-failure destination (CDK's grant)"),
    # --- S3: paths the trace's documents do not take
    Justified(ANY, "s3:ListBucket", BUCKET,
              "S3 answers a missing key with 404 only to a role that may list the bucket (else 403, and "
              "S3BlobStore.get would fail instead of answering None); the trace's reads here found their keys"),
    Justified(WRITERS, "s3:(ListBucketVersions|DeleteObjectVersion)", BUCKET,
              "removing a document, or rewriting one whose content shrank under 100 KB, deletes every version "
              "of its S3 keys (S3BlobStore.delete); the documents this function handled here had none"),
    Justified(WRITERS, "s3:(GetObject|PutObject)", BUCKET,
              "a document over 100 KB keeps its content in S3: read when it is loaded, written when it changes "
              "(memlane.adapters.aws.metadata.documents); the documents this function handled here were smaller"),
    Justified("IngestionMarkFailedFunction.*", "s3:GetObject", BUCKET,
              "loading a failed document over 100 KB reads its content from S3; the trace's failure is a small one"),
    # --- the metadata table: the store's read and write sets
    Justified(WRITERS, "dynamodb:(GetItem|BatchGetItem|Query|PutItem|UpdateItem|DeleteItem|BatchWriteItem)", TABLE,
              "the metadata store's read/write set on the write and removal paths; which actions a run uses "
              "depends on the documents (rewrites, dedupe items, chunk rows)"),
    Justified("ApiKeysFunction.*", "dynamodb:(BatchGetItem|BatchWriteItem|DeleteItem)", TABLE,
              "the metadata store's read/write set the key service uses (a key's organization, its records)"),
    Justified(JOBS, "dynamodb:(GetItem|BatchGetItem|Query|PutItem|UpdateItem|DeleteItem|BatchWriteItem)", TABLE,
              "the docset and connection stores' read set (and, for the refresh, write set) on their GSI1 listings"),
    Justified("IngestionEmbedFunction.*", "dynamodb:(GetItem|Query|UpdateItem)", TABLE,
              "a message's neighbours (GSI3) for its context, and a retry noted on the document's status"),
    # --- connections
    Justified("ConnectionsConnectionSyncFunction.*", "kms:Encrypt", ANY,
              "a provider token refreshed during a sync is sealed again (memlane.adapters.aws.token_vault)"),
)


# OpenSearch stacks (managed): the first write of a deployment creates the index.
OPENSEARCH_JUSTIFIED = (
    Justified(WRITERS, "es:ESHttpHead", SEARCH,
              "the first write into a new deployment finds no index and creates it (HEAD the index and the "
              "alias, then PUT): in the trace the API's first save did", policy="role"),
    Justified(WRITERS, "es:ESHttpHead", SEARCH, "as above, in the domain's access policy", policy="opensearch"),
)
VECTOR_INDEXES = r"arn:aws:s3vectors:[^:]+:\d+:bucket/[^/]+/index/\*"
VECTOR_BUCKET = r"arn:aws:s3vectors:[^:]+:\d+:bucket/[^/]+"
# S3 Vectors stacks (searchBackend=s3vectors): the search users' set of actions on their organization's index.
S3VECTORS_JUSTIFIED = (
    Justified(WRITERS, "s3vectors:(CreateIndex|QueryVectors|GetVectors|PutVectors|DeleteVectors)", VECTOR_INDEXES,
              "the search index's read/write set (infra/constructs/vector_search.py): the first write of an "
              "organization creates its index, a rewrite or removal reads its vectors back by key and deletes "
              "them, recall queries; which a run uses depends on the documents, not on the function"),
    Justified(WRITERS, "s3vectors:UpdateIndexMode", VECTOR_INDEXES,
              "an index found in CLASSIC mode (a vector bucket from before ENHANCED was the default) is switched "
              "by the next write; the trace's bucket is ENHANCED"),
    Justified(WRITERS, "s3vectors:ListIndexes", VECTOR_BUCKET,
              "a document is deleted from every index of its organization (one per embedder), found with "
              "ListIndexes; the documents this function handled here were not removed or rewritten"),
    Justified(WRITERS, "kms:(Decrypt|GenerateDataKey)", ANY,
              "S3 Vectors uses the bucket's KMS key on the caller's behalf (kms:ViaService s3vectors); no "
              "function calls KMS for it, so no traced call names the key"),
)


def justified(world: World) -> tuple[Justified, ...]:
    """The allow-list of this stack: what every stack keeps, and its search backend's own."""
    opensearch = bool(world.template.of_type("AWS::OpenSearchService::Domain"))
    vectors = bool(world.template.of_type("AWS::S3Vectors::VectorBucket"))
    return JUSTIFIED + (OPENSEARCH_JUSTIFIED if opensearch else ()) + (S3VECTORS_JUSTIFIED if vectors else ())


@pytest.fixture(scope="module", params=["dev", "prod", "s3vectors"])
def traced(request: Any, trace_variant: Any) -> tuple[World, Outcomes]:
    return trace_variant(request.param)


def test_every_call_a_function_makes_is_granted(traced: tuple[World, Outcomes]) -> None:
    world, _ = traced
    refused = checker.denied(world.trace)
    assert refused == [], "\n".join(d.describe() for d in refused)


def test_every_grant_is_used_by_a_traced_call_or_justified(traced: tuple[World, Outcomes]) -> None:
    world, _ = traced
    found = checker.unused(world.trace, principals(world))
    missing = checker.unjustified(found, justified(world))
    assert missing == [], "grants nothing uses (remove them, or justify them in JUSTIFIED):\n" + "\n".join(
        u.describe() for u in missing)


def test_every_justification_still_covers_a_grant(traced: tuple[World, Outcomes]) -> None:
    world, _ = traced
    found = checker.unused(world.trace, principals(world))
    assert checker.stale(found, justified(world)) == []


@pytest.mark.parametrize("name", ["large", "scan", "recording", "standup-1-v2"])
def test_each_queued_document_goes_through_the_workflow_to_ready(traced: tuple[World, Outcomes], name: str) -> None:
    _, outcomes = traced
    run = outcomes.runs[name]
    assert run.status == "SUCCEEDED", (run.error, run.cause)
    assert outcomes.statuses[name] == ("ready", None)


def test_a_document_the_workflow_cannot_read_is_marked_failed_with_the_reason(traced: tuple[World, Outcomes]) -> None:
    _, outcomes = traced
    assert outcomes.runs["broken-scan"].status == "FAILED"
    status, reason = outcomes.statuses["broken-scan"]
    assert status == "failed" and "missing from the content store" in str(reason)


def test_the_scan_s_text_is_what_textract_read_in_the_workflow(traced: tuple[World, Outcomes]) -> None:
    _, outcomes = traced
    assert outcomes.scan_text and all(line in outcomes.scan_text for line in OCR_LINES)


def test_a_forgotten_message_leaves_its_neighbour_s_index_entry(traced: tuple[World, Outcomes]) -> None:
    _, outcomes = traced
    assert "bees on my roof" in outcomes.neighbour_context_before
    assert "bees on my roof" not in outcomes.neighbour_context_after


def test_a_message_replaced_through_the_workflow_leaves_its_neighbour_s_entry(traced: tuple[World, Outcomes]) -> None:
    # The Write step indexes the message before it again (it embeds it: its grant), without the old words
    _, outcomes = traced
    assert "Release notes are in the wiki" in outcomes.replaced_neighbour_before
    assert "Release notes are in the wiki" not in outcomes.replaced_neighbour_after


def test_the_provider_sends_the_browser_to_the_web_app_to_confirm(traced: tuple[World, Outcomes]) -> None:
    world, outcomes = traced
    (distribution,) = world.template.of_type("AWS::CloudFront::Distribution")
    web_app = f"https://{world.physical[distribution]['DomainName']}/connections/confirm?flow="
    assert outcomes.callback_location.startswith(web_app)


def test_facts_are_drawn_from_a_conversation_through_bedrock(traced: tuple[World, Outcomes]) -> None:
    _, outcomes = traced
    assert outcomes.facts == 1
