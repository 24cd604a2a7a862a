"""The Vidurai HTTP API (seed vidurai-mcp-api.md): GET /capabilities and POST / with
`{"tool": ..., "params": {...}}`.

The body is parsed here rather than by the resolver's validation so that malformed calls get the
seed's own messages ("Invalid request format", "Missing 'tool' in request", "Unknown tool: x").
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import Router

from memlane.api.auth import principal_of
from memlane.domain.errors import InvalidInputError
from memlane.domain.json_input import parse_json
from memlane.ports import Services
from memlane.project_memory.capabilities import capabilities as tool_capabilities
from memlane.project_memory.service import ToolRequestError, call_tool

router = Router()


def services() -> Services:
    return router.context["services"]


@router.get("/capabilities", tags=["vidurai"], summary="The Vidurai tools and their parameters")
def capabilities() -> dict[str, Any]:
    return tool_capabilities()


@router.post("/", tags=["vidurai"], summary="Run a Vidurai tool: {tool, params} → {result} or {error}")
def run_tool() -> Response[dict[str, Any]]:
    who = principal_of(router)
    raw = router.current_event.decoded_body or ""
    try:
        request = parse_json(raw)
    except InvalidInputError as exc:
        raise ToolRequestError("Invalid request format") from exc
    result = call_tool(services(), who, request)
    return Response(status_code=200, content_type="application/json", body=result)
