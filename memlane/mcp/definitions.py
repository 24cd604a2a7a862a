"""The tools every memlane MCP server lists (stdio and Streamable HTTP alike). The five of spec §6
keep its names, descriptions and input schemas exactly; the others describe the Mem-Oracle and
Vidurai operations they call. Each tool also carries a title and behaviour annotations (MCP
2025-11-25 `ToolAnnotations`), written next to the tool so they cannot drift from what it does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types as types

from memlane.project_memory.capabilities import SALIENCE_ENUM

SPEC_TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory",
        "description": ("Save content to long-term memory for later recall. Use this when the user asks you "
                        "to remember something, save a piece of information, or store content for later."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "The content to save to memory"},
                "title": {"type": "string", "description": "A short descriptive title for this memory"},
                "project": {"type": "string",
                            "description": "Project/space name to save to (uses default if not specified)"},
                "tags": {"type": "array", "items": {"type": "string"},
                         "description": "Tags to categorize this memory"},
                "conversation_id": {
                    "type": "string", "minLength": 1, "maxLength": 200,
                    "description": ("Set when this is a message of a conversation: the same id on every "
                                    "message of it. Only messages of one conversation are recalled as "
                                    "each other's context; leave it out for a standalone note or fact."),
                },
                "message_index": {
                    "type": "integer", "minimum": 0,
                    "description": ("The message's position in its conversation (0 first); default: after "
                                    "its last saved message."),
                },
            },
            "required": ["content"],
        },
    },
    {
        "name": "recall",
        "description": ("Search through saved memories to find relevant information. Use this when the user "
                        "asks about something they previously saved, or when you need context from past "
                        "interactions."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Natural language search query"},
                "project": {"type": "string",
                            "description": "Project/space to search in (searches all if not specified)"},
                "limit": {"type": "number", "description": "Maximum number of results (default: 5)"},
            },
            "required": ["query"],
        },
    },
    {
        "name": "listProjects",
        "description": "List all available memory projects/spaces",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "memory-graph",
        "description": "Get a knowledge graph view of stored memories showing connections between topics",
        "inputSchema": {"type": "object", "properties": {"project": {"type": "string"}}},
    },
    {
        "name": "whoAmI",
        "description": "Get information about the current authenticated user",
        "inputSchema": {"type": "object", "properties": {}},
    },
]

DOCS_TOOLS: list[dict[str, Any]] = [
    {
        "name": "index_docs",
        "description": "Crawl and index a documentation website so it can be searched with search_docs. "
                       "Indexing continues in the background; check progress with docs_status.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "baseUrl": {"type": "string", "description": "Base URL of the documentation site"},
                "seedSlug": {"type": "string", "description": "Starting path to begin crawling"},
                "name": {"type": "string", "description": "Custom name for the docset"},
                "allowedPaths": {"type": "array", "items": {"type": "string"},
                                 "description": "Allowed path prefixes to crawl"},
                "waitForSeed": {"type": "boolean",
                                "description": "Wait for the seed page to be indexed before returning"},
            },
            "required": ["baseUrl", "seedSlug"],
        },
    },
    {
        "name": "search_docs",
        "description": "Search indexed documentation for relevant snippets, with per-page diversity and a "
                       "character budget.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search query"},
                "topK": {"type": "number", "description": "Number of results (default 5, clamped 1-100)"},
                "docsetIds": {"type": "array", "items": {"type": "string"},
                              "description": "Only these docsets (default: all)"},
                "maxChunksPerPage": {"type": "number", "description": "Max chunks from one page (default 3)"},
                "maxTotalChars": {"type": "number", "description": "Total character budget (default 32000)"},
            },
            "required": ["query"],
        },
    },
    {
        "name": "docs_status",
        "description": "Show the indexed documentation sets and their indexing progress.",
        "inputSchema": {
            "type": "object",
            "properties": {"docsetId": {"type": "string", "description": "Only this docset"}},
        },
    },
]

PROJECT_MEMORY_TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_project_context",
        "description": ("Get AI-ready formatted context for a project (recent developments, critical "
                        "information, memories related to an optional query)."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "project": {"type": "string", "description": "Project path (default: the active project)"},
                "query": {"type": "string", "description": "Optional search query to focus context"},
                "max_results": {"type": "integer", "description": "Maximum memories to include (default 20)"},
            },
        },
    },
    {
        "name": "search_memories",
        "description": "Search a project's memories, keeping those at or above a salience level.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "project": {"type": "string", "description": "Project path (default: the active project)"},
                "query": {"type": "string", "description": "Search query (omit for the most recent)"},
                "min_salience": {"type": "string", "enum": SALIENCE_ENUM,
                                 "description": "Minimum salience level (default MEDIUM)"},
                "limit": {"type": "integer", "description": "Maximum results (default 20)"},
            },
        },
    },
]

CONVERSATION_TOOLS: list[dict[str, Any]] = [
    {
        "name": "save_conversation",
        "description": ("Save a conversation's messages to long-term memory, in the order they were said; facts are "
                        "drawn from them when an LLM is configured. Send the whole conversation each time if that is "
                        "easier: messages already saved are recognised and stored once."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "conversation_id": {"type": "string", "minLength": 1, "maxLength": 200,
                                    "description": "The same id on every save of this conversation"},
                "messages": {
                    "type": "array", "minItems": 1, "maxItems": 100,
                    "description": "The messages in the order they were said (at most 100 a call)",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "What was said"},
                            "role": {"type": "string", "enum": ["user", "assistant", "system", "tool"],
                                     "description": "Who said it, as chat APIs say it (give role, speaker or both)"},
                            "speaker": {"type": "string", "description": "The speaker's name"},
                            "time": {"type": "string", "description": "When it was said (ISO 8601)"},
                            "message_index": {"type": "integer", "minimum": 0,
                                              "description": "Its position in the conversation (0 first); on "
                                                             "every message or on none"},
                        },
                        "required": ["content"],
                    },
                },
                "project": {"type": "string",
                            "description": "Project/space name to save to (uses default if not specified)"},
                "subject": {"type": "string", "description": "The person the facts are about (default: whoever "
                                                             "each fact names)"},
            },
            "required": ["conversation_id", "messages"],
        },
    },
]

CONTEXT_TOOLS: list[dict[str, Any]] = [
    {
        "name": "context_pack",
        "description": ("Get memories and documentation relevant to a query in one block, deduplicated, ranked, "
                        "packed to a size budget, with a source for every piece. Use it to gather context "
                        "before answering a question or starting a task."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the context is for"},
                "budget": {"type": "integer", "description": "Size of the pack (default 8000)"},
                "budget_unit": {"type": "string", "enum": ["chars", "tokens"],
                                "description": "Unit of the budget (default chars)"},
                "projects": {"type": "array", "items": {"type": "string"},
                             "description": "Memory projects by name or id (default: all); [] for none"},
                "docsets": {"type": "array", "items": {"type": "string"},
                            "description": "Docset ids (default: all); [] for none"},
                "profile": {"type": "boolean", "description": "Put the profile (known facts, recent context) first"},
                "profile_subject": {"type": "string", "description": "With profile: the person it is about"},
            },
            "required": ["query"],
        },
    },
    {
        "name": "profile",
        "description": ("Read what memlane knows about the user (or another person): stable facts drawn from "
                        "past conversations and recent context. Read it first when a conversation starts."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "project": {"type": "string", "description": "Project name or id (default: the default project)"},
                "subject": {"type": "string", "description": "The person the profile is about (default: everyone)"},
            },
        },
    },
]

ALL_TOOLS = [*SPEC_TOOLS, *DOCS_TOOLS, *PROJECT_MEMORY_TOOLS, *CONVERSATION_TOOLS, *CONTEXT_TOOLS]
TOOL_NAMES = frozenset(t["name"] for t in ALL_TOOLS)


@dataclass(frozen=True)
class Behaviour:
    """What a tool does to the world, as MCP clients read it (they may ask before a non-read-only
    call, and warn before a destructive one). `destructive` and `idempotent` only mean something
    when the tool writes."""

    title: str
    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False  # reaches outside memlane's own store (the web)


BEHAVIOUR: dict[str, Behaviour] = {
    # Saves are additive: a save never replaces or removes anything, and the same content saved
    # again is reported as a duplicate with nothing new stored, so repeating a call changes nothing.
    # A project named in `project` is created on first use, also once.
    "memory": Behaviour("Save to memory", read_only=False),
    "recall": Behaviour("Recall memories", read_only=True),
    "listProjects": Behaviour("List memory projects", read_only=True),
    "memory-graph": Behaviour("Memory topic graph", read_only=True),
    "whoAmI": Behaviour("Who am I", read_only=True),
    # Creates the docset (or returns the existing one for the same site) and crawls public web
    # pages: additive, the same call twice gives the same docset, and it reaches the open web.
    "index_docs": Behaviour("Index a documentation site", read_only=False, open_world=True),
    # Searches what was crawled earlier; it fetches nothing.
    "search_docs": Behaviour("Search indexed documentation", read_only=True),
    "docs_status": Behaviour("Documentation indexing status", read_only=True),
    "get_project_context": Behaviour("Project context", read_only=True),
    "search_memories": Behaviour("Search project memories", read_only=True),
    # Additive like `memory`: the same conversation sent again stores nothing new.
    "save_conversation": Behaviour("Save a conversation", read_only=False),
    # Reads memories and crawled documentation; it never fetches a page.
    "context_pack": Behaviour("Pack context for a query", read_only=True),
    "profile": Behaviour("Read the profile", read_only=True),
}


def tool_annotations(name: str) -> types.ToolAnnotations:
    b = BEHAVIOUR[name]
    return types.ToolAnnotations(title=b.title, read_only_hint=b.read_only, destructive_hint=b.destructive,
                                 idempotent_hint=b.idempotent, open_world_hint=b.open_world)


def tool_list() -> list[types.Tool]:
    return [types.Tool(name=t["name"], title=BEHAVIOUR[t["name"]].title, description=t["description"],
                       input_schema=t["inputSchema"], annotations=tool_annotations(t["name"]))
            for t in ALL_TOOLS]
