"""Export a project's documents (with metadata and versions) to JSON lines, and import them
into any store. Chunks and vectors are not exported: import re-chunks and re-embeds with the
target's embedder, so a file moves between stores built with different models."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from memlane.documents.writing import write_in_request
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import Document, DocumentStatus, Project
from memlane.domain.principal import Principal
from memlane.ports import Services
from memlane.services.keys import slugify

FORMAT = "memlane.export/1"


def export_project(svc: Services, who: Principal, project: Project) -> Iterator[str]:
    yield json.dumps(
        {
            "format": FORMAT,
            "project": {"name": project.name, "slug": project.slug, "description": project.description},
        }
    )
    docs = svc.metadata.list_documents(who.organization_id, project.id)
    for d in sorted(docs, key=lambda d: (d.created_at, d.id)):
        record = d.model_dump(
            mode="json",
            exclude={"organization_id", "project_id", "status", "status_reason", "chunk_count", "embedder"},
        )
        yield json.dumps({"document": record}, ensure_ascii=False)


def import_lines(
    svc: Services, who: Principal, lines: Iterable[str], project_name: str | None = None
) -> dict:
    """Idempotent: documents whose id already exists are skipped, so a re-run resumes."""
    header: dict | None = None
    project: Project | None = None
    imported = skipped = expired = 0
    now = svc.clock.now()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"line {n}", f"not JSON ({exc.msg})") from exc
        if header is None:
            if record.get("format") != FORMAT:
                raise InvalidInputError("line 1", f"not a memlane export (expected format {FORMAT})")
            header = record
            project = _target_project(
                svc, who, project_name or header["project"]["name"], header["project"].get("description")
            )
            continue
        data = record.get("document")
        assert project is not None  # set with the header, which comes first
        if not isinstance(data, dict):
            raise InvalidInputError(f"line {n}", "expected a document record")
        doc = Document.model_validate(
            {
                **data,
                "organization_id": who.organization_id,
                "project_id": project.id,
                "status": DocumentStatus.QUEUED,
            }
        )
        if doc.is_expired(now):
            expired += 1
            continue
        if svc.metadata.get_document(who.organization_id, doc.id) is not None:
            skipped += 1
            continue
        svc.metadata.put_document(doc)
        write_in_request(svc, [doc])  # one that cannot be written now is queued for the job worker
        imported += 1
    if header is None or project is None:
        raise InvalidInputError("file", "is empty")
    return {"project_id": project.id, "imported": imported, "skipped": skipped, "expired": expired}


def _target_project(svc: Services, who: Principal, name: str, description: str | None) -> Project:
    existing = svc.metadata.find_project_by_slug(who.organization_id, slugify(name))
    if existing is not None:
        return existing
    return svc.metadata.create_project(
        Project(organization_id=who.organization_id, name=name, slug=slugify(name), description=description)
    )
