"""Vidurai's tools on memlane: project context, memory search, recent activity, the active project.

A Vidurai project path is a memlane project whose name is that path. With no project (or `.`) the
tools use the active project (see `active_project`); until a project of that name exists, the
organization's default project stands in for it, so memories saved without a project still show.
Every result is computed from the same stores and the same hybrid recall as `/v3`.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memlane import __version__
from memlane.domain.answer_budget import fit_answer, json_bytes
from memlane.domain.errors import InvalidInputError, NotFoundError, describe_validation_errors
from memlane.domain.models import Document, Project
from memlane.domain.principal import Principal
from memlane.domain.quoting import escape_line_breaks, for_assistant_data, has_line_break
from memlane.domain.requests import RecallIn
from memlane.domain.salience import Salience, parse_salience, salience_of
from memlane.ports import RecallFilters, Services
from memlane.project_memory.capabilities import TOOLS
from memlane.recall.service import recall
from memlane.services.projects import default_project, find_project_by_name

MAX_PATH_CHARS = 1000
MAX_RESULTS = 100
MAX_HOURS = 24 * 365
SCAN_DOCUMENTS = 1000  # newest memories a salience scan (critical, min_salience without a query) reads
MEMORY_CHARS = 2000  # content returned per memory
LINE_CHARS = 200  # one memory as a line of the context markdown
RECENT_HOURS = 24


class ToolRequestError(InvalidInputError):
    """A malformed tool call (400 with the seed's message): bad JSON, no tool, an unknown tool."""

    def __init__(self, message: str) -> None:
        super().__init__("", message)


class _Params(BaseModel):
    model_config = ConfigDict(extra="ignore")  # Vidurai ignores parameters it does not know


class ContextParams(_Params):
    project: str | None = None
    query: str | None = Field(default=None, max_length=10_000)
    max_results: int = Field(default=20, ge=1)

    @field_validator("max_results")
    @classmethod
    def _clamp(cls, v: int) -> int:
        return min(v, MAX_RESULTS)


class SearchParams(_Params):
    project: str | None = None
    query: str | None = Field(default=None, max_length=10_000)
    min_salience: str = "MEDIUM"
    limit: int = Field(default=20, ge=1)

    @field_validator("limit")
    @classmethod
    def _clamp(cls, v: int) -> int:
        return min(v, MAX_RESULTS)


class SetActiveParams(_Params):
    path: str = Field(min_length=1, max_length=MAX_PATH_CHARS)


class ActivityParams(_Params):
    project: str | None = None
    hours: int = Field(default=RECENT_HOURS, ge=1)

    @field_validator("hours")
    @classmethod
    def _clamp(cls, v: int) -> int:
        return min(v, MAX_HOURS)


# ------------------------------------------------------------------------------------ projects


def active_project_key(org_id: str) -> str:
    """Where an organization's active project is kept (the blob store: SQLite here, S3 on AWS).
    Per organization: one organization's editor must never steer, or see, another's context."""
    return f"vidurai/{org_id}/active-project"


def active_project(svc: Services, who: Principal, cwd: str | None = None) -> tuple[str, str]:
    """(path, source): the path the organization's editor plugin set with `set_active_project`
    ("vscode"), else the server's working directory ("default")."""
    try:
        written = (svc.blobs.get(active_project_key(who.organization_id)) or b"").decode("utf-8").strip()
    except UnicodeDecodeError:
        written = ""
    if written:
        return written, "vscode"
    return cwd or os.getcwd(), "default"


def set_active_project(svc: Services, who: Principal, params: SetActiveParams) -> tuple[str, str]:
    path = params.path.strip()
    if not path or has_line_break(path):
        raise InvalidInputError("params.path", "must be a project path on one line")
    svc.blobs.put(active_project_key(who.organization_id), path.encode("utf-8"))
    return path, "vscode"


def normalize_path(path: str) -> str:
    path = path.strip()
    stripped = path.rstrip("/\\")
    return stripped or path


@dataclass(frozen=True)
class ProjectRef:
    path: str  # what the client calls the project
    project: Project | None  # None: nothing has been stored under that path


def resolve_project(svc: Services, who: Principal, project: str | None) -> ProjectRef:
    if project is None or project.strip() in ("", "."):
        path, _ = active_project(svc, who)
        try:
            return ProjectRef(path, find_project_by_name(svc, who, normalize_path(path)))
        except NotFoundError:
            return ProjectRef(path, default_project(svc, who))
    path = normalize_path(project)
    try:
        return ProjectRef(path, find_project_by_name(svc, who, path))
    except NotFoundError:
        return ProjectRef(path, None)


# ------------------------------------------------------------------------------------ shapes


def memory_number(document_id: str) -> int:
    """Vidurai memory ids are integers: a stable one from the document id, below 2^52 so that
    JavaScript clients read it exactly. The document id itself is in `metadata.document_id`."""
    return int(uuid.UUID(document_id).hex[:13], 16)


def timestamp(dt: datetime) -> str:
    """Vidurai's `2025-11-17T09:45:23`: seconds, no offset (memlane's are UTC)."""
    return dt.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds")


def kosha(salience: Salience) -> str:
    """Vidurai's memory layers: wisdom (kept for good), working memory, and the sensory layer."""
    if salience is Salience.CRITICAL:
        return "Vijnanamaya"
    if salience in (Salience.HIGH, Salience.MEDIUM):
        return "Manomaya"
    return "Annamaya"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def one_line(text: str, limit: int = LINE_CHARS) -> str:
    """A memory as one markdown line: whitespace collapsed, so stored text can never start a new
    heading or section of the context it is pasted into."""
    return _clip(re.sub(r"\s+", " ", text).strip(), limit)


def memory_record(doc: Document, project_name: str) -> dict[str, Any]:
    salience = salience_of(doc.metadata)
    metadata = {k: v for k, v in doc.metadata.items() if k != "salience"}
    metadata.update({"document_id": doc.id, "title": doc.title})
    return {"id": memory_number(doc.id), "timestamp": timestamp(doc.created_at),
            "content": _clip(doc.content, MEMORY_CHARS), "salience": salience.value,
            "kosha": kosha(salience), "project_path": project_name, "metadata": metadata}


# ------------------------------------------------------------------------------------ reads


def _recent(svc: Services, who: Principal, project: Project, limit: int,
            since: datetime | None = None) -> list[Document]:
    return svc.metadata.recent_documents(who.organization_id, [project.id],
                                         RecallFilters(created_after=since), svc.clock.now(), limit)


def _related(svc: Services, who: Principal, project: Project, query: str, limit: int) -> list[Document]:
    """Hybrid recall (the one fusion function) within the project, best first."""
    out = recall(svc, who, RecallIn(query=query, project_id=project.id, limit=min(limit, MAX_RESULTS)))
    ids = [r.document_id for r in out.results]
    by_id = {d.id: d for d in svc.metadata.get_documents(who.organization_id, ids)}
    return [by_id[r.document_id] for r in out.results if r.document_id in by_id]


def search_memories(svc: Services, who: Principal, params: SearchParams) -> list[dict[str, Any]]:
    minimum = parse_salience(params.min_salience, "params.min_salience")
    ref = resolve_project(svc, who, params.project)
    if ref.project is None:
        return []
    if params.query and params.query.strip():
        docs = _related(svc, who, ref.project, params.query, MAX_RESULTS)
    else:
        docs = _recent(svc, who, ref.project, SCAN_DOCUMENTS)
    kept = [d for d in docs if salience_of(d.metadata).rank >= minimum.rank][: params.limit]
    records = [memory_record(d, ref.project.name) for d in kept]
    return fit_answer(records, _without_metadata, json_bytes).results  # memlane.domain.answer_budget


def _without_metadata(record: dict[str, Any]) -> dict[str, Any]:
    own = {k: record["metadata"].get(k) for k in ("document_id", "title")}
    return {**record, "metadata": {**own, "metadata_omitted": True}}


def recent_activity(svc: Services, who: Principal, params: ActivityParams) -> list[dict[str, Any]]:
    ref = resolve_project(svc, who, params.project)
    if ref.project is None:
        return []
    since = svc.clock.now() - timedelta(hours=params.hours)
    return [{"timestamp": timestamp(d.created_at), "content": _clip(d.content, MEMORY_CHARS),
             "salience": salience_of(d.metadata).value}
            for d in _recent(svc, who, ref.project, MAX_RESULTS, since)]


def project_context(svc: Services, who: Principal, params: ContextParams) -> str:
    """The seed's markdown: recent developments (24 h), critical information, related memories for
    the query, a footer. `max_results` bounds the memories listed in all sections together, filled
    in order of usefulness: related to the query first, then critical, then recent."""
    ref = resolve_project(svc, who, params.project)
    budget = params.max_results
    query = (params.query or "").strip()
    related: list[Document] = []
    critical: list[Document] = []
    recent: list[Document] = []
    if ref.project is not None:
        if query:
            related = _related(svc, who, ref.project, query, budget)
        budget -= len(related)
        if budget > 0:
            critical = [d for d in _recent(svc, who, ref.project, SCAN_DOCUMENTS)
                        if salience_of(d.metadata) is Salience.CRITICAL][:budget]
            budget -= len(critical)
        if budget > 0:
            since = svc.clock.now() - timedelta(hours=RECENT_HOURS)
            recent = _recent(svc, who, ref.project, budget, since)

    lines = [f"# Project Context: {escape_line_breaks(ref.path)}", "", f"## Recent Developments (Last {RECENT_HOURS} hours)"]
    lines += [f"- {one_line(d.content)}" for d in recent] or [f"_Nothing in the last {RECENT_HOURS} hours._"]
    lines += ["", "## Critical Information"]
    lines += [f"- {one_line(d.content)}" for d in critical] or ["_No critical memories._"]
    if query:
        lines += ["", f"## Related Memories for: \"{one_line(query, LINE_CHARS)}\""]
        lines += [f"{i}. [{d.created_at.astimezone(UTC):%Y-%m-%d}] {one_line(d.content)}"
                  for i, d in enumerate(related, 1)] or ["_No related memories._"]
    lines += ["", "---", f"Generated by memlane v{__version__}"]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ dispatch


def _parse(model: type[_Params], params: Any) -> Any:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidInputError("params", "must be an object")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise InvalidInputError("", describe_validation_errors(
            [{**e, "loc": ("params", *e.get("loc", ()))} for e in exc.errors()])) from exc


def call_tool(svc: Services, who: Principal, request: Any) -> dict[str, Any]:
    """`POST /` with `{"tool": ..., "params": {...}}` → the response body. Raises
    ToolRequestError (400) for a malformed call, InvalidInputError (400) for bad params."""
    if not isinstance(request, dict):
        raise ToolRequestError("Invalid request format")
    tool = request.get("tool")
    if tool is None or tool == "":
        raise ToolRequestError("Missing 'tool' in request")
    if not isinstance(tool, str) or tool not in TOOLS:
        raise ToolRequestError(f"Unknown tool: {tool}")
    params = request.get("params")
    handlers: dict[str, Callable[[], dict[str, Any]]] = {
        "get_project_context": lambda: {"result": project_context(svc, who, _parse(ContextParams, params))},
        "search_memories": lambda: {"result": search_memories(svc, who, _parse(SearchParams, params))},
        "get_recent_activity": lambda: {"result": recent_activity(svc, who, _parse(ActivityParams, params))},
        "get_active_project": lambda: dict(zip(("result", "source"), active_project(svc, who), strict=True)),
        "set_active_project": lambda: dict(zip(("result", "source"),
                                               set_active_project(svc, who, _parse(SetActiveParams, params)),
                                               strict=True)),
    }
    # Vidurai's clients are assistants' tools: stored text reaches them as text only
    return for_assistant_data(handlers[tool]())
