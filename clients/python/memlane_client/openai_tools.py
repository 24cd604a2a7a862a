"""memlane's MCP tools as OpenAI function-calling tools: one source for both. The schemas are the
MCP tool definitions (mcp_tools.json, generated from memlane/mcp/definitions.py by
codegen/python.py), and a call runs the same MCP tool on the server (POST /mcp), so a
model given these tools gets exactly what an MCP client gets.

    from memlane_client import MemlaneClient
    from memlane_client.openai_tools import openai_tools, run_tool_call

    tools = openai_tools(["memory", "recall"])        # for chat.completions.create(tools=...)
    # for each tool call the model makes:
    text = run_tool_call(memlane, call.function.name, call.function.arguments)
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memlane_client.client import AsyncMemlaneClient, MemlaneClient


@cache
def mcp_tools() -> tuple[dict[str, Any], ...]:
    """The MCP tool definitions this client was generated with (name, title, description,
    inputSchema, annotations), as memlane's tools/list answers them."""
    text = resources.files("memlane_client").joinpath("mcp_tools.json").read_text(encoding="utf-8")
    return tuple(json.loads(text))


def tool_names() -> list[str]:
    return [t["name"] for t in mcp_tools()]


def openai_tools(names: list[str] | None = None, *, strict: bool = False) -> list[dict[str, Any]]:
    """Chat Completions `tools` (`{"type": "function", "function": {name, description, parameters}}`),
    for the named MCP tools (all when None). `strict=False`: memlane's schemas have optional fields,
    which OpenAI's strict mode does not allow."""
    known = {t["name"]: t for t in mcp_tools()}
    unknown = [n for n in names or [] if n not in known]
    if unknown:
        raise ValueError(f"no memlane tool named {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    chosen = [known[n] for n in names] if names is not None else list(known.values())
    return [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                              "parameters": t["inputSchema"], "strict": strict}}
            for t in chosen]


def responses_tools(names: list[str] | None = None) -> list[dict[str, Any]]:
    """The same tools in the Responses API's flat shape (`{"type": "function", "name", ...}`)."""
    return [{"type": "function", **tool["function"]} for tool in openai_tools(names)]


def _arguments(arguments: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"tool arguments are not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ValueError("tool arguments must be a JSON object")
    return value


def result_text(result: dict[str, Any]) -> str:
    """A tool result's text blocks joined: what to send back as the tool message's content
    (memlane quotes stored text and says it is data, not instructions)."""
    parts = [block.get("text", "") for block in result.get("content") or [] if block.get("type") == "text"]
    text = "\n".join(parts)
    return f"Error: {text}" if result.get("isError") and not text.startswith("Error") else text


def run_tool_call(client: MemlaneClient, name: str, arguments: str | dict[str, Any]) -> str:
    """Runs the model's call of tool `name` (arguments as the model wrote them, a JSON string)
    on the server and answers the text for the `tool` message. A tool that fails answers its
    error as text (the model reads it); a bad name or non-JSON arguments raise ValueError."""
    if name not in tool_names():
        raise ValueError(f"no memlane tool named {name!r}")
    return result_text(client.mcp_call(name, _arguments(arguments)))


async def arun_tool_call(client: AsyncMemlaneClient, name: str, arguments: str | dict[str, Any]) -> str:
    if name not in tool_names():
        raise ValueError(f"no memlane tool named {name!r}")
    return result_text(await client.mcp_call(name, _arguments(arguments)))
