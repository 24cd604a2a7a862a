"""Export a project's documents (with metadata and versions) to JSON lines, and import them
into any store. Chunks and vectors are not exported: import re-chunks and re-embeds with the
target's embedder, so a file moves between stores built with different models.

An export of a whole organization (`export_organization`) is one project's export after another,
each starting with its header line; import restores each into its project. Documentation sets'
projects are left out: their pages come back by indexing the site again."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from memlane.documents.writing import write_in_request
from memlane.domain.client_metadata import describe_metadata_problem
from memlane.domain.errors import InvalidInputError
from memlane.domain.models import Document, DocumentStatus, Project
from memlane.domain.principal import Principal
from memlane.ports import Services
from memlane.services.keys import slugify

FORMAT = "memlane.export/1"
# A documentation set's project (memlane.docsets.service names it so).
_DOCSET_PROJECT_SLUG = re.compile(r"^docs-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def exported_projects(svc: Services, who: Principal) -> list[Project]:
    """Every project of the organization that an export of it holds (not documentation sets')."""
    projects = [p for p in svc.metadata.list_projects(who.organization_id)
                if not _DOCSET_PROJECT_SLUG.match(p.slug or "")]
    return sorted(projects, key=lambda p: (p.created_at, p.id))


def export_organization(svc: Services, who: Principal) -> Iterator[tuple[Project, str]]:
    """Each project's export in turn, as (project, line)."""
    for project in exported_projects(svc, who):
        for line in export_project(svc, who, project):
            yield project, line


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
    """Idempotent: documents whose id already exists are skipped, so a re-run resumes. Each header
    line starts a project (an organization's export holds several); `project_name` puts every
    document into that one project instead."""
    header: dict | None = None
    project: Project | None = None
    per_project: dict[str, dict] = {}
    now = svc.clock.now()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"line {n}", f"not JSON ({exc.msg})") from exc
        if header is None or "format" in record:
            if record.get("format") != FORMAT or not isinstance(record.get("project"), dict):
                raise InvalidInputError(f"line {n}", f"not a memlane export (expected format {FORMAT})")
            header = record
            project = _target_project(
                svc, who, project_name or header["project"]["name"], header["project"].get("description")
            )
            per_project.setdefault(project.id, {"project_id": project.id, "project": project.name,
                                                "imported": 0, "skipped": 0, "expired": 0})
            continue
        data = record.get("document")
        assert project is not None  # set with the header, which comes first
        if not isinstance(data, dict):
            raise InvalidInputError(f"line {n}", "expected a document record")
        _check_metadata(n, data.get("metadata"))
        doc = Document.model_validate(
            {
                **data,
                "organization_id": who.organization_id,
                "project_id": project.id,
                "status": DocumentStatus.QUEUED,
            }
        )
        counts = per_project[project.id]
        if doc.is_expired(now):
            counts["expired"] += 1
            continue
        if svc.metadata.get_document(who.organization_id, doc.id) is not None:
            counts["skipped"] += 1
            continue
        svc.metadata.put_document(doc)
        write_in_request(svc, [doc])  # one that cannot be written now is queued for the job worker
        counts["imported"] += 1
    if header is None or project is None:
        raise InvalidInputError("file", "is empty")
    totals = {k: sum(c[k] for c in per_project.values()) for k in ("imported", "skipped", "expired")}
    if len(per_project) == 1:
        return {"project_id": project.id, **totals}
    return {**totals, "projects": list(per_project.values())}


def _check_metadata(line: int, metadata: object) -> None:
    """The metadata rule of every write route (64 KB); `memlane` is kept: an export writes it for
    messages and facts."""
    if isinstance(metadata, dict):
        problem = describe_metadata_problem("document.metadata", metadata, reserved_allowed=True)
        if problem is not None:
            raise InvalidInputError(f"line {line}", f"{problem[0]}: {problem[1]}")


def _target_project(svc: Services, who: Principal, name: str, description: str | None) -> Project:
    existing = svc.metadata.find_project_by_slug(who.organization_id, slugify(name))
    if existing is not None:
        return existing
    return svc.metadata.create_project(
        Project(organization_id=who.organization_id, name=name, slug=slugify(name), description=description)
    )
