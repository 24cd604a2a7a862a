"""Projects: list with document counts, create, rename, delete, page through their documents,
resolve the project a request targets; the organization's figures for the dashboard."""

from __future__ import annotations

from datetime import timedelta

from memlane.documents.receipts import delete_with_receipt
from memlane.domain.errors import ConflictError, NotFoundError
from memlane.domain.models import Document, Project
from memlane.domain.principal import Principal
from memlane.domain.requests import (
    DeletionReceipt,
    DocumentListItem,
    DocumentListOut,
    ProjectIn,
    ProjectListOut,
    ProjectOut,
    ProjectPatchIn,
    StatsOut,
)
from memlane.ports import DocsetStore, Services
from memlane.services.keys import slugify


def _out(p: Project, count: int, memories: int) -> ProjectOut:
    return ProjectOut(
        id=p.id,
        name=p.name,
        slug=p.slug,
        description=p.description,
        document_count=count,
        memory_count=memories,
        is_default=p.is_default,
        created_at=p.created_at,
    )


def list_projects(svc: Services, who: Principal) -> ProjectListOut:
    counts = svc.metadata.count_documents(who.organization_id)
    memories = svc.metadata.count_documents(who.organization_id, current_only=True)
    return ProjectListOut(projects=[_out(p, counts.get(p.id, 0), memories.get(p.id, 0))
                                 for p in svc.metadata.list_projects(who.organization_id)])


def create_project(svc: Services, who: Principal, body: ProjectIn) -> ProjectOut:
    slug = slugify(body.name)
    if svc.metadata.find_project_by_slug(who.organization_id, slug):
        raise ConflictError(f"name: a project with slug {slug!r} already exists")
    project = svc.metadata.create_project(
        Project(organization_id=who.organization_id, name=body.name, slug=slug, description=body.description)
    )
    return _out(project, 0, 0)


def _memories(svc: Services, who: Principal, project_id: str) -> int:
    return svc.metadata.count_documents(who.organization_id, current_only=True).get(project_id, 0)


def default_project(svc: Services, who: Principal) -> Project:
    projects = svc.metadata.list_projects(who.organization_id)
    for p in projects:
        if p.is_default:
            return p
    # An organization always has one; recreate it if it was somehow lost rather than fail the save.
    return svc.metadata.create_project(
        Project(organization_id=who.organization_id, name="Default", slug="default", is_default=True)
    )


def resolve_project(
    svc: Services, who: Principal, project_id: str | None, field: str = "project_id"
) -> Project:
    if project_id is None:
        return default_project(svc, who)
    project = svc.metadata.get_project(who.organization_id, project_id)
    if project is None:
        raise NotFoundError(f"{field}: project {project_id} not found")
    return project


def find_project_by_name(svc: Services, who: Principal, name: str, create: bool = False) -> Project:
    """For the MCP tools and CLI, which name projects instead of passing ids."""
    for p in svc.metadata.list_projects(who.organization_id):
        if p.name.lower() == name.lower() or p.slug == slugify(name) or p.id == name:
            return p
    if create:
        try:
            return create_project_model(svc, who, name)
        except ConflictError:
            pass
    raise NotFoundError(f"project: no project named {name!r}")


def create_project_model(svc: Services, who: Principal, name: str) -> Project:
    return svc.metadata.create_project(
        Project(organization_id=who.organization_id, name=name, slug=slugify(name))
    )


# --------------------------------------------------------------------------- the web app's project pages


def get_project(svc: Services, who: Principal, project_id: str) -> ProjectOut:
    project = resolve_project(svc, who, project_id, field="project_id")
    return _out(project, svc.metadata.count_documents(who.organization_id).get(project.id, 0),
                _memories(svc, who, project.id))


def update_project(svc: Services, who: Principal, project_id: str, body: ProjectPatchIn) -> ProjectOut:
    """Rename (the slug follows the name) and describe a project."""
    project = resolve_project(svc, who, project_id, field="project_id")
    changes: dict[str, object] = {"updated_at": svc.clock.now()}
    if body.name is not None and body.name != project.name:
        slug = slugify(body.name)
        other = svc.metadata.find_project_by_slug(who.organization_id, slug)
        if other is not None and other.id != project.id:
            raise ConflictError(f"name: a project with slug {slug!r} already exists")
        changes.update(name=body.name, slug=slug)
    if "description" in body.model_fields_set:
        changes["description"] = body.description or None
    updated = project.model_copy(update=changes)
    try:
        svc.metadata.update_project(updated)
    except ConflictError as exc:  # a concurrent rename took the slug first
        raise ConflictError(f"name: a project with slug {updated.slug!r} already exists") from exc
    return _out(updated, svc.metadata.count_documents(who.organization_id).get(project.id, 0),
                _memories(svc, who, project.id))


def delete_project(svc: Services, who: Principal, project_id: str,
                   docset_store: DocsetStore | None = None) -> DeletionReceipt:
    """Every document of the project (each through the one removal path: metadata, content, both
    index legs, cache), then the project. Documents go first, so an interrupted delete leaves a
    smaller project that a retry finishes, never documents without a project. Returns the deletion
    receipt (its documents: those removed)."""
    project = resolve_project(svc, who, project_id, field="project_id")
    if project.is_default:
        raise ConflictError("project_id: the default project cannot be deleted (saves without a project go there)")
    if docset_store is not None:
        hosted = [d.name for d in docset_store.list_docsets(who.organization_id) if d.project_id == project.id]
        if hosted:
            raise ConflictError("project_id: the project holds documentation set(s) "
                                f"{', '.join(repr(n) for n in hosted)}; delete them first (Settings → "
                                "Documentation sets, or DELETE /docset/{id})")
    docs = svc.metadata.list_documents(who.organization_id, project.id)
    # recorded (GET /v3/deletions/{id}): every store read back after the documents went
    receipt = delete_with_receipt(svc, who.organization_id, docs, "project", subject=project.id)
    svc.metadata.delete_project(who.organization_id, project.id)
    return receipt


def list_project_documents(svc: Services, who: Principal, project_id: str, *, limit: int, cursor: str | None,
                           include_versions: bool) -> DocumentListOut:
    project = resolve_project(svc, who, project_id, field="project_id")
    page = svc.metadata.page_documents(who.organization_id, project.id, svc.clock.now(), limit=limit,
                                       cursor=cursor, include_superseded=include_versions)
    return DocumentListOut(documents=[list_item(d) for d in page.documents], next_cursor=page.next_cursor)


def list_item(doc: Document) -> DocumentListItem:
    return DocumentListItem(
        id=doc.id, project_id=doc.project_id, title=doc.title, summary=doc.summary,
        content_type=doc.content_type, source_url=doc.source_url, tags=doc.tags, status=doc.status,
        created_at=doc.created_at, updated_at=doc.updated_at, forget_after=doc.forget_after,
        updates_memory_id=doc.updates_memory_id, superseded_by=doc.superseded_by,
    )


def organization_stats(svc: Services, who: Principal, docsets: DocsetStore | None = None) -> StatsOut:
    """The dashboard's figures: what the organization holds and how much was added this week.
    The pages of its documentation sets (`docsets`, None where none are composed) live in projects
    of their own: they are counted apart, not as memories."""
    now = svc.clock.now()
    docs_projects = {d.project_id for d in docsets.list_docsets(who.organization_id)} if docsets else set()
    stats = svc.metadata.document_stats(who.organization_id, now - timedelta(days=7), apart=docs_projects)
    projects = svc.metadata.list_projects(who.organization_id)
    return StatsOut(total_memories=stats.total, memories_this_week=stats.created_since,
                    documentation_pages=stats.apart_total, storage_bytes=stats.content_bytes,
                    project_count=sum(p.id not in docs_projects for p in projects))
