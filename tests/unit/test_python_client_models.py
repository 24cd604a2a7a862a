"""The Python client's models and MCP tool schemas (clients/python) are generated from the API:
when /openapi.json or an MCP tool definition changes without `make types`, this fails, naming it."""

from __future__ import annotations

import difflib
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import memlane_client
from memlane_client import models
from memlane_client.openai_tools import mcp_tools, openai_tools

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memlane_python_generate", ROOT / "clients" / "python" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _generator()


def _stale(name: str, committed: str, fresh: str) -> str:
    diff = "".join(list(difflib.unified_diff(committed.splitlines(keepends=True), fresh.splitlines(keepends=True),
                                             f"{name} (committed)", f"{name} (from the API)", n=1))[:40])
    return (f"{name} is out of date: the API changed and the Python client was not regenerated. "
            f"Run `{generate.REGENERATE}` and commit the result.\n{diff}")


def test_the_models_are_generated_from_the_apis_openapi_document():
    fresh = generate.models_text(generate.openapi_text())
    committed = generate.MODELS_PY.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/python/memlane_client/models.py", committed, fresh)


def test_the_client_states_the_api_version_and_document_it_was_generated_from():
    import hashlib

    document = (ROOT / "clients" / "typescript" / "openapi.json").read_text(encoding="utf-8")
    assert json.loads(document)["info"]["version"] == memlane_client.API_VERSION
    assert hashlib.sha256(document.encode()).hexdigest() == models.OPENAPI_SHA256


def test_request_fields_with_defaults_are_optional_and_answers_complete():
    assert models.MemoryIn.__required_keys__ == frozenset({"content"})
    assert "conversation_id" in models.MemoryIn.__optional_keys__
    # an answer is serialized whole: every field is there
    assert models.RecallOut.__optional_keys__ == frozenset()
    assert {"floor", "stages", "results"} <= models.RecallOut.__required_keys__


def test_the_openai_tool_schemas_are_the_mcp_tool_definitions():
    fresh = generate.mcp_tools_text()
    committed = generate.MCP_TOOLS_JSON.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/python/memlane_client/mcp_tools.json", committed, fresh)
    from memlane.mcp.definitions import ALL_TOOLS

    by_name = {t["function"]["name"]: t["function"] for t in openai_tools()}
    assert list(by_name) == [t["name"] for t in ALL_TOOLS]
    for tool in ALL_TOOLS:
        assert by_name[tool["name"]]["parameters"] == tool["inputSchema"]
        assert by_name[tool["name"]]["description"] == tool["description"]
    assert {t["name"] for t in mcp_tools()} == {t["name"] for t in ALL_TOOLS}
