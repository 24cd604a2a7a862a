"""Issue 6 point 8: an export from a local data directory restores into the AWS stores (moto for
DynamoDB/S3, the local index standing in for OpenSearch), versions and all."""

from __future__ import annotations

import json
from datetime import timedelta

from fakes import HashEmbedder

from memlane.cli import main
from memlane.config import Settings
from memlane.domain.principal import Principal
from memlane.domain.requests import MemoryIn, RecallIn
from memlane.ingest.summarize import LocalSummarizer
from memlane.local.compose import build_local
from memlane.recall.service import recall
from memlane.services.keys import ensure_organization
from memlane.services.memory import save_memory
from memlane.services.transfer import export_project, import_lines, reminted_id


def test_local_export_imports_into_aws_with_versions(deployment, tmp_path, capsys):
    local = build_local(Settings(data_dir=tmp_path / "local"), embedder=HashEmbedder(), summarizer=LocalSummarizer())
    org, _ = ensure_organization(local.metadata, "default")
    who = Principal(organization_id=org.id, key_id="k")
    url = "https://wiki.example/runbook"
    v1 = save_memory(local.services, who, MemoryIn(content="Runbook v1: restart the web tier.", source_url=url,
                                                   metadata={"tags": ["ops"]}), inline=True)
    v2 = save_memory(local.services, who, MemoryIn(content="Runbook v2: drain, then restart the web tier.",
                                                   source_url=url,
                                                   forget_after=local.services.clock.now() + timedelta(days=9)),
                     inline=True)
    local.close()
    out = tmp_path / "default.jsonl"
    assert main(["--data-dir", str(tmp_path / "local"), "export", "--project", "Default", "-o", str(out)]) == 0

    # What `memlane import --aws --org default` does, on the composed AWS adapters
    svc = deployment.services()
    aws_org, _ = ensure_organization(svc.metadata, "default")
    them = Principal(organization_id=aws_org.id, key_id="cli", user_id="cli")
    result = import_lines(svc, them, out.read_text().splitlines())
    assert result["imported"] == 2 and result["skipped"] == 0
    # another organization: each document takes an id of its own, its version links follow (issue 34)
    id1, id2 = reminted_id(aws_org.id, v1.id), reminted_id(aws_org.id, v2.id)
    a1 = svc.metadata.get_document(aws_org.id, id1)
    a2 = svc.metadata.get_document(aws_org.id, id2)
    assert a1.superseded_by == id2 and a2.updates_memory_id == id1
    assert a2.forget_after is not None and a1.metadata["tags"] == ["ops"]
    assert a2.status.value == "ready" and a2.chunk_count == 1
    found = recall(svc, them, RecallIn(query="drain restart web tier"))
    assert [r.document_id for r in found.results] == [id2]
    # and back out of AWS: the same two documents, in order
    project = svc.metadata.find_project_by_slug(aws_org.id, "default")
    back = [json.loads(line) for line in list(export_project(svc, them, project))[1:]]
    assert [d["document"]["id"] for d in back] == [id1, id2]
    # and the same file imported again changes nothing
    assert import_lines(svc, them, out.read_text().splitlines())["skipped"] == 2
