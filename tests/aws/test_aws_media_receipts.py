"""The AWS side of media and receipts: Textract through a botocore Stubber (requests validated
against the service model, responses in the documented shape), Amazon Transcribe's documented
output JSON, and the stores a deletion receipt reads (moto): every S3 version, receipts kept
under the tenant, memories marked when their source page changed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.stub import ANY, Stubber

from memlane.adapters.aws._boto import new_client
from memlane.adapters.aws.cache import DynamoCache
from memlane.adapters.aws.textract import TextractReader
from memlane.adapters.aws.transcribe import transcript_from_output
from memlane.domain.errors import DependencyUnavailableError, InvalidInputError
from memlane.domain.models import Document, MediaInfo, Project

ORG = "11111111-1111-1111-1111-111111111111"
BUCKET = "memlane-test-content"  # tests/aws/conftest.py's bucket and table
TABLE = "memlane-test"
T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)

# DetectDocumentText's documented response: a PAGE block, LINE blocks (reading order), WORD blocks.
TEXTRACT_RESPONSE = {
    "DocumentMetadata": {"Pages": 1},
    "Blocks": [
        {"BlockType": "PAGE", "Id": "p1", "Geometry": {"BoundingBox": {"Width": 1.0, "Height": 1.0, "Left": 0.0, "Top": 0.0}}},
        {"BlockType": "LINE", "Id": "l1", "Text": "Receipt 0091", "Confidence": 99.1},
        {"BlockType": "WORD", "Id": "w1", "Text": "Receipt", "Confidence": 99.2, "TextType": "PRINTED"},
        {"BlockType": "LINE", "Id": "l2", "Text": "Espresso machine 249.00", "Confidence": 98.7},
    ],
    "DetectDocumentTextModelVersion": "1.0",
}


def textract_stubbed() -> tuple[TextractReader, Stubber]:
    client = new_client("textract")
    return TextractReader(client=client), Stubber(client)


def test_textract_reads_the_lines_of_an_image(aws_credentials) -> None:
    reader, stub = textract_stubbed()
    stub.add_response("detect_document_text", TEXTRACT_RESPONSE, {"Document": {"Bytes": ANY}})
    with stub:
        assert reader.read_text(b"\x89PNG...") == "Receipt 0091\nEspresso machine 249.00"
    stub.assert_no_pending_responses()


def test_textract_errors_are_the_client_s_or_worth_a_retry(aws_credentials) -> None:
    reader, stub = textract_stubbed()
    stub.add_client_error("detect_document_text", "UnsupportedDocumentException", http_status_code=400)
    stub.add_client_error("detect_document_text", "ProvisionedThroughputExceededException", http_status_code=400)
    with stub:
        with pytest.raises(InvalidInputError, match="content: Amazon Textract cannot read"):
            reader.read_text(b"x")
        with pytest.raises(DependencyUnavailableError):
            reader.read_text(b"x")


# Amazon Transcribe's documented output (a job's transcript JSON): transcripts, items, audio_segments.
TRANSCRIBE_OUTPUT = {
    "jobName": "memlane-doc-1", "accountId": "123456789012", "status": "COMPLETED",
    "results": {
        "language_code": "en-US",
        "transcripts": [{"transcript": "Hello team. Budget is approved."}],
        "items": [
            {"id": 0, "type": "pronunciation", "start_time": "0.04", "end_time": "0.5",
             "alternatives": [{"confidence": "0.99", "content": "Hello"}]},
            {"id": 1, "type": "pronunciation", "start_time": "0.5", "end_time": "0.9",
             "alternatives": [{"confidence": "0.98", "content": "team"}]},
            {"id": 2, "type": "punctuation", "alternatives": [{"confidence": "0.0", "content": "."}]},
            {"id": 3, "type": "pronunciation", "start_time": "1.2", "end_time": "1.6",
             "alternatives": [{"confidence": "0.99", "content": "Budget"}]},
            {"id": 4, "type": "pronunciation", "start_time": "1.6", "end_time": "1.8",
             "alternatives": [{"confidence": "0.99", "content": "is"}]},
            {"id": 5, "type": "pronunciation", "start_time": "1.8", "end_time": "2.4",
             "alternatives": [{"confidence": "0.97", "content": "approved"}]},
            {"id": 6, "type": "punctuation", "alternatives": [{"confidence": "0.0", "content": "."}]},
        ],
        "audio_segments": [
            {"id": 0, "transcript": "Hello team.", "start_time": "0.04", "end_time": "0.9", "items": [0, 1, 2]},
            {"id": 1, "transcript": "Budget is approved.", "start_time": "1.2", "end_time": "2.4", "items": [3, 4, 5, 6]},
        ],
    },
}


def test_a_transcribe_output_becomes_timed_segments() -> None:
    t = transcript_from_output(TRANSCRIBE_OUTPUT)
    assert [(s.start, s.end, s.text) for s in t.segments] == [(0.04, 0.9, "Hello team."),
                                                              (1.2, 2.4, "Budget is approved.")]
    assert t.language == "en-US" and t.duration == 2.4
    # older outputs without audio_segments: sentences rebuilt from the timed items
    items_only = {"results": {**TRANSCRIBE_OUTPUT["results"], "audio_segments": []}}
    assert [(s.start, s.end, s.text) for s in transcript_from_output(items_only).segments] == [
        (0.04, 0.9, "Hello team."), (1.2, 2.4, "Budget is approved.")]


# --------------------------------------------------------------------------- what receipts read


def test_s3_versions_counts_every_version_and_delete_marker_until_the_key_is_forgotten(s3, blob_store) -> None:
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    key = f"media/{ORG}/doc-1"
    blob_store.put(key, b"v1")
    blob_store.put(key, b"v2")
    s3.delete_object(Bucket=BUCKET, Key=key)  # a plain delete: a marker, the versions stay
    assert blob_store.versions(key) == 3
    blob_store.delete(key)  # memlane's delete removes every version
    assert blob_store.versions(key) == 0


def test_receipts_are_kept_per_tenant(store) -> None:
    store.put_receipt(ORG, "r-1", '{"verified": true}', T0)
    assert store.get_receipt(ORG, "r-1") == '{"verified": true}'
    assert store.get_receipt("22222222-2222-2222-2222-222222222222", "r-1") is None


def test_the_cache_reports_entries_naming_a_document(dynamodb) -> None:
    cache = DynamoCache(TABLE, client=dynamodb)
    cache.set("recall:1", b"[]", 300, T0, document_ids=["doc-1", "doc-2"])
    assert cache.entries_naming("doc-1") == 1
    cache.purge_document("doc-1")
    assert cache.entries_naming("doc-1") == 0


def document(project_id: str, **fields: Any) -> Document:
    return Document(organization_id=ORG, project_id=project_id, user_id="u", title="t", content="c",
                    content_hash=fields.pop("content_hash", "h"), created_at=T0, updated_at=T0, **fields)


def test_memories_of_a_changed_page_are_marked_and_media_survives_a_round_trip(store) -> None:
    notes = store.create_project(Project(organization_id=ORG, name="Notes", slug="notes"))
    docs = store.create_project(Project(organization_id=ORG, name="Docs", slug="docs-x"))
    url = "https://docs.example/a.html"
    memory = document(notes.id, source_url=url, content_hash="h1",
                      media=MediaInfo(kind="image", mime="image/png", bytes=10, blob_key="media/x/y",
                                      extracted_by="textract"))
    page = document(docs.id, source_url=url, content_hash="h2")
    other = document(notes.id, source_url="https://elsewhere.example/", content_hash="h3")
    for d in (memory, page, other):
        store.put_document(d)
    assert store.mark_source_changed(ORG, url, T0, exclude_project_id=docs.id) == 1
    marked = store.get_document(ORG, memory.id)
    assert marked.source_changed_at == T0 and marked.media.extracted_by == "textract"
    assert store.get_document(ORG, page.id).source_changed_at is None
    assert store.get_document(ORG, other.id).source_changed_at is None
