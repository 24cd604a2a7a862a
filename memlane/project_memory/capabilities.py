"""The Vidurai tool catalogue, as `GET /capabilities` serves it (verbatim from the seed)."""

from __future__ import annotations

from typing import Any

SALIENCE_ENUM = ["CRITICAL", "HIGH", "MEDIUM", "LOW", "NOISE"]

TOOLS: dict[str, dict[str, Any]] = {
    "get_project_context": {
        "description": "Get AI-ready formatted context for a project and optional query",
        "parameters": {
            "project": {"type": "string", "description": "Project path (default: current directory)",
                        "required": False},
            "query": {"type": "string", "description": "Optional search query to focus context",
                      "required": False},
            "max_results": {"type": "integer", "description": "Maximum memories to include", "default": 20,
                            "required": False},
        },
    },
    "search_memories": {
        "description": "Search project memories with optional filters",
        "parameters": {
            "project": {"type": "string", "description": "Project path", "required": False},
            "query": {"type": "string", "description": "Search query", "required": False},
            "min_salience": {"type": "string", "description": "Minimum salience level", "enum": SALIENCE_ENUM,
                             "default": "MEDIUM", "required": False},
            "limit": {"type": "integer", "description": "Maximum results", "default": 20, "required": False},
        },
    },
    "get_recent_activity": {
        "description": "Get recent development activity for a project",
        "parameters": {
            "project": {"type": "string", "description": "Project path", "required": False},
            "hours": {"type": "integer", "description": "Look back this many hours", "default": 24,
                      "required": False},
        },
    },
    "get_active_project": {
        "description": "Get the current active project from VS Code",
        "parameters": {},
    },
    # memlane's own: the seed's editor plugin wrote a file every organization read; here the
    # plugin sets its organization's active project with its key.
    "set_active_project": {
        "description": "Set this organization's active project (what the editor has open)",
        "parameters": {
            "path": {"type": "string", "description": "Project path", "required": True},
        },
    },
}


def capabilities() -> dict[str, Any]:
    return {"capabilities": {"tools": TOOLS}}
