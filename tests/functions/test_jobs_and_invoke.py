"""The scheduled forget job (rows 16, 17) and `memlane invoke`."""

from __future__ import annotations

import json
from datetime import timedelta

from fn_support import EVENTS, ORG_ID, T0, Deployment, context, load_event

from functions.invoke import handler_module
from memlane.cli import main as cli_main
from memlane.documents.writer import DocumentWriter
from memlane.domain.models import Document, DocumentStatus, Organization
from memlane.domain.requests import RecallIn
from memlane.ports import SearchScope
from memlane.recall.service import cache_key


def _ready(deployment: Deployment, title: str, forget_in: timedelta | None) -> Document:
    svc = deployment.services()
    project = svc.metadata.list_projects(ORG_ID)[0]
    doc = Document(organization_id=ORG_ID, project_id=project.id, user_id="api", title=title,
                   content=f"{title}: a note that mentions the garden hose.", content_hash=f"hash-{title}",
                   forget_after=T0 + forget_in if forget_in else None, created_at=T0, updated_at=T0)
    svc.metadata.put_document(doc)
    svc.blobs.put(f"raw/{ORG_ID}/{doc.id}", b"raw bytes")
    return DocumentWriter(svc).write(doc)


def test_forget_job_removes_expired_documents_everywhere_and_is_idempotent(deployment: Deployment,
                                                                           org: Organization) -> None:
    # Given two notes due to be forgotten within the hour and one that stays
    gone = [_ready(deployment, "Parking spot", timedelta(minutes=10)),
            _ready(deployment, "Gate code", timedelta(minutes=50))]
    kept = _ready(deployment, "Allergies", None)
    svc = deployment.services()
    # and a cached recall that lists them
    body = RecallIn(query="garden hose")
    scope = SearchScope(organization_id=ORG_ID, project_ids=(kept.project_id,), now=T0)
    key = cache_key(svc, scope, body)
    svc.cache.set(key, b"[]", 300, T0, document_ids=[d.id for d in (*gone, kept)])
    # When the hourly schedule fires an hour later
    deployment.clock.advance(hours=1)
    report = deployment.invoke("forget_job", load_event("forget_job_schedule.json"), context("forget"))
    # Then both are gone from metadata, content, the search index and the cache
    assert report["job"] == "forget" and report["forgotten"] == 2
    assert report["by_organization"] == {ORG_ID: 2}
    for doc in gone:
        assert svc.metadata.get_document(ORG_ID, doc.id) is None
        assert svc.metadata.get_chunks(ORG_ID, doc.id) == []
        assert svc.blobs.get(f"raw/{ORG_ID}/{doc.id}") is None
    assert deployment.search.document_ids(ORG_ID) == {kept.id}
    assert svc.cache.get(key, deployment.clock.now() - timedelta(minutes=59)) is None
    assert {r["document_id"] for r in svc.metadata.list_forgotten(ORG_ID)} == {d.id for d in gone}
    assert svc.metadata.get_document(ORG_ID, kept.id).status == DocumentStatus.READY
    # and a schedule firing twice finds nothing more (row 17)
    again = deployment.invoke("forget_job", load_event("forget_job_schedule.json"), context("forget"))
    assert again["forgotten"] == 0 and again["by_organization"] == {}


def test_memlane_invoke_runs_a_handler_with_an_event_file(deployment: Deployment, org: Organization,
                                                          capsys) -> None:
    assert cli_main(["invoke", "api", str(EVENTS / "api_health.json")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["statusCode"] == 200 and json.loads(result["body"])["status"] == "ok"
    assert cli_main(["invoke", "forget_job", str(EVENTS / "forget_job_schedule.json")]) == 0
    # stdout is the result alone; the handler's metric lines went to stderr
    printed = capsys.readouterr()
    assert json.loads(printed.out)["forgotten"] == 0
    assert "CloudWatchMetrics" not in printed.out


def test_invoke_names_map_to_the_handlers_infra_deploys() -> None:
    from infra import constants as c

    for spec in c.ALL_FUNCTIONS:
        module = spec.handler.rsplit(".", 1)[0]
        short = module.removeprefix("functions.").removesuffix(".handler").removeprefix("steps.")
        assert handler_module(short) == module, spec.handler
