"""Projects: list with document counts, create, resolve the project a request targets."""

from __future__ import annotations

from memlane.domain.errors import ConflictError, NotFoundError
from memlane.domain.models import Project
from memlane.domain.requests import ProjectIn, ProjectList, ProjectOut
from memlane.services.context import Principal, Services
from memlane.services.keys import slugify


def _out(p: Project, count: int) -> ProjectOut:
    return ProjectOut(
        id=p.id,
        name=p.name,
        slug=p.slug,
        description=p.description,
        document_count=count,
        is_default=p.is_default,
        created_at=p.created_at,
    )


def list_projects(svc: Services, who: Principal) -> ProjectList:
    counts = svc.metadata.count_documents(who.organization_id)
    return ProjectList(
        projects=[_out(p, counts.get(p.id, 0)) for p in svc.metadata.list_projects(who.organization_id)]
    )


def create_project(svc: Services, who: Principal, body: ProjectIn) -> ProjectOut:
    slug = slugify(body.name)
    if svc.metadata.find_project_by_slug(who.organization_id, slug):
        raise ConflictError(f"name: a project with slug {slug!r} already exists")
    project = svc.metadata.create_project(
        Project(organization_id=who.organization_id, name=body.name, slug=slug, description=body.description)
    )
    return _out(project, 0)


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
