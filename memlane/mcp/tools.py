"""What each MCP tool does, written once against the `Backend` (HTTP API or data directory).

Arguments are validated here with pydantic (the low-level MCP server does not check them against
the schemas), and every failure becomes a `ToolError` whose message the assistant can act on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memlane.domain.quoting import for_assistant, for_assistant_data, json_data
from memlane.mcp import formatting as fmt
from memlane.mcp.backend import ApiError, Backend

MAX_LIMIT = 100


class ToolError(Exception):
    """Reported to the assistant as an MCP tool error (`isError: true`) with this message."""


@dataclass
class ToolOutput:
    text: str
    structured: dict[str, Any] | None = None


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemoryArgs(_Args):
    content: str = Field(min_length=1)
    title: str | None = None
    project: str | None = None
    tags: list[str] | None = None
    conversation_id: str | None = None  # checked by POST /v3/memory (its 400 names the field)
    message_index: int | None = None


class RecallArgs(_Args):
    query: str
    project: str | None = None
    limit: float = 5  # the spec's schema says "number"

    @field_validator("limit")
    @classmethod
    def _whole(cls, v: float) -> float:
        if v != int(v) or v < 1:
            raise ValueError("must be a whole number of at least 1")
        return min(v, MAX_LIMIT)


class ProjectArg(_Args):
    project: str | None = None


class NoArgs(_Args):
    pass


class IndexDocsArgs(_Args):
    baseUrl: str  # noqa: N815 - Mem-Oracle's field names
    seedSlug: str  # noqa: N815
    name: str | None = None
    allowedPaths: list[str] | None = None  # noqa: N815
    waitForSeed: bool | None = None  # noqa: N815


class SearchDocsArgs(_Args):
    query: str = Field(min_length=1)
    topK: int | None = None  # noqa: N815
    docsetIds: list[str] | None = None  # noqa: N815
    maxChunksPerPage: int | None = None  # noqa: N815
    maxTotalChars: int | None = None  # noqa: N815


class DocsStatusArgs(_Args):
    docsetId: str | None = None  # noqa: N815


class ContextArgs(_Args):
    project: str | None = None
    query: str | None = None
    max_results: int | None = None


class ContextPackArgs(_Args):
    query: str = Field(min_length=1)
    budget: int | None = None
    budget_unit: str | None = None
    projects: list[str] | None = None
    docsets: list[str] | None = None
    profile: bool | None = None
    profile_subject: str | None = None


class ConversationArgs(_Args):
    conversation_id: str  # checked by POST /v3/conversations (its 400 names the field), as are the messages
    messages: list[dict[str, Any]]
    project: str | None = None
    subject: str | None = None


class ProfileArgs(_Args):
    project: str | None = None
    subject: str | None = Field(default=None, min_length=1, max_length=200)


class SearchMemoriesArgs(_Args):
    project: str | None = None
    query: str | None = None
    min_salience: str | None = None
    limit: int | None = None


def describe_argument_errors(exc: ValidationError) -> str:
    """`query: is required; limit: must be a whole number of at least 1` (argument names kept,
    unlike the HTTP describer, which drops location words such as `query`)."""
    messages = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        kind = err.get("type", "")
        msg = str(err.get("msg", "is invalid"))
        if kind == "missing":
            msg = "is required"
        elif kind == "extra_forbidden":
            msg = "is not an argument of this tool"
        elif kind == "value_error" and (err.get("ctx") or {}).get("error") is not None:
            msg = str(err["ctx"]["error"])  # the validator's own words, without pydantic's "Value error, "
        messages.append(f"{name}: {msg}")
    return "; ".join(dict.fromkeys(messages))


def _drop_none(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class MemlaneTools:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._handlers: dict[str, tuple[type[_Args], Callable[[Any], ToolOutput]]] = {
            "memory": (MemoryArgs, self.memory),
            "recall": (RecallArgs, self.recall),
            "listProjects": (NoArgs, self.list_projects),
            "memory-graph": (ProjectArg, self.memory_graph),
            "whoAmI": (NoArgs, self.who_am_i),
            "index_docs": (IndexDocsArgs, self.index_docs),
            "search_docs": (SearchDocsArgs, self.search_docs),
            "docs_status": (DocsStatusArgs, self.docs_status),
            "get_project_context": (ContextArgs, self.project_context),
            "search_memories": (SearchMemoriesArgs, self.search_memories),
            "save_conversation": (ConversationArgs, self.save_conversation),
            "context_pack": (ContextPackArgs, self.context_pack),
            "profile": (ProfileArgs, self.profile),
        }

    def names(self) -> frozenset[str]:
        return frozenset(self._handlers)

    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolOutput:
        model, handler = self._handlers[name]
        try:
            args = model.model_validate(arguments or {})
        except ValidationError as exc:
            raise ToolError(for_assistant(f"{name}: invalid arguments: {describe_argument_errors(exc)}")) from exc
        try:
            out = handler(args)
        except ApiError as exc:
            raise ToolError(for_assistant(f"{name}: {exc.message}")) from exc
        # Whatever a tool shows, text or structured, reaches the assistant without the characters
        # that act rather than read (memlane.domain.quoting.for_assistant).
        return ToolOutput(for_assistant(out.text), for_assistant_data(out.structured))

    # ----------------------------------------------------------------------------------- projects

    def _projects(self) -> list[dict[str, Any]]:
        return self.backend.request("GET", "/v3/projects")["projects"]

    def _project_id(self, name: str | None, create: bool = False) -> str | None:
        """Projects are named in tools; the API takes ids. Matches id, name (any case) or slug."""
        if name is None or not name.strip():
            return None
        wanted = name.strip()
        shown = for_assistant(wanted).lower()
        for p in self._projects():
            # a name as stored, or as an answer showed it (without the characters for_assistant removes)
            if wanted in (p["id"], p["slug"]) or p["name"].lower() in (wanted.lower(), shown) \
                    or for_assistant(p["name"]).lower() == shown:
                return p["id"]
        if not create:
            raise ToolError(f"no project named {fmt.q(wanted)}; listProjects shows the available ones")
        try:
            return self.backend.request("POST", "/v3/projects", {"name": wanted})["id"]
        except ApiError as exc:
            if exc.status != 409:
                raise
            return self._project_id(wanted)  # created meanwhile by someone else

    # ----------------------------------------------------------------------------------- spec §6

    def memory(self, args: MemoryArgs) -> ToolOutput:
        body: dict[str, Any] = {"content": args.content}
        if args.title:
            body["title"] = args.title
        if args.tags:
            body["metadata"] = {"tags": args.tags}
        if args.conversation_id is not None:
            body["conversation_id"] = args.conversation_id
        if args.message_index is not None:
            body["message_index"] = args.message_index
        project_id = self._project_id(args.project, create=True)
        if project_id:
            body["project_id"] = project_id
        out = self.backend.request("POST", "/v3/memory", body)
        if out.get("duplicate"):
            note = "already saved; nothing new stored"
        elif out.get("status") == "ready":
            note = "searchable now"
        else:
            note = "queued; searchable once processed"
        chunks = out.get("chunk_count", 0)
        text = f"Saved: {fmt.q(out.get('title'))} ({chunks} chunks; {note}; id {out.get('id')})"
        return ToolOutput(text, out)

    def recall(self, args: RecallArgs) -> ToolOutput:
        body: dict[str, Any] = {"query": args.query, "limit": int(args.limit)}
        project_id = self._project_id(args.project)
        if project_id:
            body["project_id"] = project_id
        out = self.backend.request("POST", "/v3/recall", body)
        names = {p["id"]: p["name"] for p in self._projects()} if out.get("results") else {}
        return ToolOutput(fmt.recall_text(args.query, out, names), out)

    def list_projects(self, args: NoArgs) -> ToolOutput:
        out = self.backend.request("GET", "/v3/projects")
        lines = [f"{len(out['projects'])} projects:"]
        for p in out["projects"]:
            default = ", default" if p.get("is_default") else ""
            lines.append(f"- {fmt.q(p['name'])} (id {p['id']}; {p['document_count']} documents{default})")
        return ToolOutput("\n".join(lines), out)

    def memory_graph(self, args: ProjectArg) -> ToolOutput:
        graph = self.backend.memory_graph(self._project_id(args.project))
        memories = sum(1 for n in graph["nodes"] if n.get("kind") == "memory")
        summary = (f"Memory graph: {len(graph['nodes']) - memories} topics and entities, {memories} memories, "
                   f"{len(graph['edges'])} connections. Labels are stored data.\n")
        return ToolOutput(summary + json_data(graph, indent=1), graph)

    def who_am_i(self, args: NoArgs) -> ToolOutput:
        out = self.backend.request("GET", "/v3/whoami")
        text = (f"Organization {fmt.q(out.get('organization_name'))} (id {out.get('organization_id')}); "
                f"user {out.get('user_id')}; key {out.get('key_id')}; via the {self.backend.description}.")
        return ToolOutput(text, out)

    # ----------------------------------------------------------------------------------- documentation

    def index_docs(self, args: IndexDocsArgs) -> ToolOutput:
        out = self.backend.request("POST", "/index", _drop_none(args.model_dump()))
        text = (f"Docset {out.get('docsetId')}: {out.get('status')}"
                + ("; seed page indexed" if out.get("seedIndexed") else "")
                + ". docs_status shows progress.")
        return ToolOutput(text, out)

    def search_docs(self, args: SearchDocsArgs) -> ToolOutput:
        body = {**_drop_none(args.model_dump()), "formatSnippets": True}
        out = self.backend.request("POST", "/retrieve", body)
        return ToolOutput(fmt.docs_text(args.query, out), out)

    def docs_status(self, args: DocsStatusArgs) -> ToolOutput:
        out = self.backend.request("GET", "/status", query=_drop_none(args.model_dump()) or None)
        docsets = out.get("docsets") or []
        lines = [f"{len(docsets)} documentation sets:"] if docsets else ["No documentation sets are indexed."]
        for d in docsets:
            s = d.get("indexStatus") or {}
            lines.append(f"- {fmt.q(d.get('name'))} ({fmt.one_line(d.get('baseUrl'))}; id {d.get('id')}): "
                         f"{d.get('status')}, {s.get('indexedPages', 0)}/{s.get('totalPages', 0)} pages, "
                         f"{s.get('totalChunks', 0)} chunks, {s.get('errorPages', 0)} errors")
        return ToolOutput("\n".join(lines), out)

    # ----------------------------------------------------------------------------------- project memory

    def _vidurai(self, tool: str, params: dict[str, Any]) -> Any:
        return self.backend.request("POST", "/", {"tool": tool, "params": params})["result"]

    def project_context(self, args: ContextArgs) -> ToolOutput:
        markdown = self._vidurai("get_project_context", _drop_none(args.model_dump()))
        return ToolOutput(fmt.context_text(markdown), {"result": markdown})

    def search_memories(self, args: SearchMemoriesArgs) -> ToolOutput:
        memories = self._vidurai("search_memories", _drop_none(args.model_dump()))
        return ToolOutput(fmt.memories_text(args.project, memories), {"result": memories})

    # ----------------------------------------------------------------------------------- conversations

    def save_conversation(self, args: ConversationArgs) -> ToolOutput:
        body = _drop_none({"conversation_id": args.conversation_id, "messages": args.messages,
                           "subject": args.subject, "project_id": self._project_id(args.project, create=True)})
        out = self.backend.request("POST", "/v3/conversations", body)
        extraction = out["extraction"]
        facts = (f"facts are being drawn (extraction {extraction.get('id')})" if extraction["status"] == "queued"
                 else f"no facts drawn: {extraction.get('reason') or extraction['status']}")
        text = (f"Conversation {fmt.q(out['conversation_id'])}: {out['saved']} new messages saved, "
                f"{out['duplicates']} already saved (nothing stored for them); {facts}.")
        return ToolOutput(text, out)

    # ----------------------------------------------------------------------------------- context pack

    def profile(self, args: ProfileArgs) -> ToolOutput:
        query = _drop_none({"project_id": self._project_id(args.project), "subject": args.subject})
        out = self.backend.request("GET", "/v3/profile", query=query or None)
        return ToolOutput(out["text"], out)  # every stored line quoted (memlane.services.profile)

    def context_pack(self, args: ContextPackArgs) -> ToolOutput:
        body = _drop_none(args.model_dump(exclude={"projects"}))
        if args.projects is not None:
            body["projects"] = [self._project_id(name) for name in args.projects]
        out = self.backend.request("POST", "/v3/context", body)
        if not out.get("pieces"):
            return ToolOutput(f"No memories or documentation found for {fmt.q(args.query)}.", out)
        return ToolOutput(out["text"], out)
