"""Export a project's documents (with metadata and versions) to JSON lines, and import them
into any store. Chunks and vectors are not exported: import re-chunks and re-embeds with the
target's embedder, so a file moves between stores built with different models.

An export of a whole organization (`export_organization`) is one project's export after another,
each starting with its header line; import restores each into its project. Documentation sets'
projects are left out: their pages come back by indexing the site again.

Document ids on import (issue 34): a file is untrusted, and a document id is one organization's.
An id the importing organization already holds is its own document: the line is skipped (a re-run
resumes). Every other id is re-minted, as uuid5(organization, old id), and so is every link in the
file that names one (a version's `updates_memory_id` and `superseded_by`, a message's facts, a
fact's source messages and its decisions): a document moved between organizations keeps its
versions and conversations, never takes another organization's id (the stores refuse that too:
IdTakenError), and the same file imported twice lands on the same documents. Nothing about another
organization's ids is consulted, so an import cannot tell whether an id exists elsewhere. A media
document's original is not in the file: its record names the importing organization's own key."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Iterator

from memlane.documents.keys import media_key
from memlane.documents.writing import write_in_request
from memlane.domain.client_metadata import describe_metadata_problem
from memlane.domain.errors import InvalidInputError
from memlane.domain.facts import RESERVED_KEY, own_metadata
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
    """Idempotent: a document the organization already holds is skipped, so a re-run resumes; the
    others take ids of the organization's own (`ImportedIds`; `reminted` counts them). Each header
    line starts a project (an organization's export holds several); `project_name` puts every
    document into that one project instead."""
    run = _Import(svc, who, project_name)
    for n, record in _records(lines):
        if run.project is None or "format" in record:
            run.start_project(n, record)
        else:
            run.add_document(n, record)
    return run.summary()


def _records(lines: Iterable[str]) -> Iterator[tuple[int, dict]]:
    """Each non-blank line's JSON, with its line number."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"line {n}", f"not JSON ({exc.msg})") from exc


class _Import:
    """An import as it reads the lines: the project the last header started, and what each
    project's documents came to (imported, skipped, expired, reminted)."""

    def __init__(self, svc: Services, who: Principal, project_name: str | None) -> None:
        self.svc, self.who, self.project_name = svc, who, project_name
        self.project: Project | None = None
        self.per_project: dict[str, dict] = {}
        self.ids = ImportedIds(svc, who.organization_id)
        self.now = svc.clock.now()

    def start_project(self, n: int, header: dict) -> None:
        if header.get("format") != FORMAT or not isinstance(header.get("project"), dict):
            raise InvalidInputError(f"line {n}", f"not a memlane export (expected format {FORMAT})")
        self.project = project = _target_project(
            self.svc, self.who, self.project_name or header["project"]["name"], header["project"].get("description")
        )
        self.per_project.setdefault(project.id, {"project_id": project.id, "project": project.name,
                                                 "imported": 0, "skipped": 0, "expired": 0, "reminted": 0})

    def add_document(self, n: int, record: dict) -> None:
        data = record.get("document")
        assert self.project is not None  # set with the header, which comes first
        if not isinstance(data, dict):
            raise InvalidInputError(f"line {n}", "expected a document record")
        _check_metadata(n, data.get("metadata"))
        doc = self.ids.own(Document.model_validate(
            {
                **data,
                "organization_id": self.who.organization_id,
                "project_id": self.project.id,
                "status": DocumentStatus.QUEUED,
            }
        ))
        counts = self.per_project[self.project.id]
        if doc.is_expired(self.now):
            counts["expired"] += 1
            return
        if self.svc.metadata.get_document(self.who.organization_id, doc.id) is not None:
            counts["skipped"] += 1
            return
        self.svc.metadata.put_document(doc)
        write_in_request(self.svc, [doc])  # one that cannot be written now is queued for the job worker
        counts["imported"] += 1
        counts["reminted"] += doc.id != data.get("id")

    def summary(self) -> dict:
        if self.project is None:
            raise InvalidInputError("file", "is empty")
        totals = {k: sum(c[k] for c in self.per_project.values()) for k in ("imported", "skipped", "expired", "reminted")}
        if len(self.per_project) == 1:
            return {"project_id": self.project.id, **totals}
        return {**totals, "projects": list(self.per_project.values())}


_REMINTED = uuid.UUID("5d1f3c8e-2a47-4b90-8e61-696d706f7274")


def reminted_id(org_id: str, document_id: str) -> str:
    """The id a document imported into `org_id` takes (the module docstring)."""
    return str(uuid.uuid5(_REMINTED, f"{org_id}\x00{document_id}"))


class ImportedIds:
    """The ids of one import: each id in the file kept when the organization holds it, else
    re-minted; decided once per id, whether it names a document or a link to one."""

    def __init__(self, svc: Services, org_id: str) -> None:
        self.svc = svc
        self.org_id = org_id
        self._final: dict[str, str] = {}

    def of(self, document_id: str) -> str:
        final = self._final.get(document_id)
        if final is None:
            held = self.svc.metadata.get_document(self.org_id, document_id) is not None
            final = self._final[document_id] = document_id if held else reminted_id(self.org_id, document_id)
        return final

    def own(self, doc: Document) -> Document:
        """The document with its id, its links and its original's key made the organization's own."""
        doc_id = self.of(doc.id)
        media = doc.media.model_copy(update={"blob_key": media_key(self.org_id, doc_id)}) if doc.media else None
        return doc.model_copy(update={
            "id": doc_id,
            "updates_memory_id": self.of(doc.updates_memory_id) if doc.updates_memory_id else None,
            "superseded_by": self.of(doc.superseded_by) if doc.superseded_by else None,
            "metadata": self._links_in(doc),
            "media": media,
        })

    def _links_in(self, doc: Document) -> dict:
        """memlane's own part of the metadata (memlane.domain.facts) with the ids it names mapped."""
        own = own_metadata(doc)
        if not own:
            return doc.metadata
        mapped = dict(own)
        for key in ("facts", "sources"):
            if isinstance(own.get(key), list):
                mapped[key] = [self.of(i) if isinstance(i, str) else i for i in own[key]]
        if isinstance(own.get("decisions"), list):
            mapped["decisions"] = [self._decision(d) for d in own["decisions"]]
        return {**doc.metadata, RESERVED_KEY: mapped}

    def _decision(self, decision: object) -> object:
        if not isinstance(decision, dict):
            return decision
        out = dict(decision)
        if isinstance(out.get("sources"), list):
            out["sources"] = [self.of(i) if isinstance(i, str) else i for i in out["sources"]]
        if isinstance(out.get("supersedes"), str):
            out["supersedes"] = self.of(out["supersedes"])
        return out


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
