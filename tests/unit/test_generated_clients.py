"""Both clients' generated halves (clients/typescript, clients/python) come from the API: its OpenAPI
document and its MCP tool definitions (codegen/). When a route, a model or a tool changes, the
committed files must be regenerated (`make types`) in the same commit; each test names the file
that is out of date."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import memlane_client
import pytest
from memlane_client import models
from memlane_client.openai_tools import mcp_tools, openai_tools

from codegen import python, typescript
from codegen.openapi import openapi_text

ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "make types"


def _stale(name: str, committed: str, fresh: str) -> str:
    diff = "".join(list(difflib.unified_diff(committed.splitlines(keepends=True), fresh.splitlines(keepends=True),
                                             f"{name} (committed)", f"{name} (from the API)", n=1))[:40])
    return (f"{name} is out of date: the API changed and the clients were not regenerated. "
            f"Run `{REGENERATE}` and commit the result.\n{diff}")


def test_the_committed_openapi_document_is_the_apis() -> None:
    fresh = openapi_text()
    committed = typescript.OPENAPI_JSON.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/typescript/openapi.json", committed, fresh)


def test_the_typescript_client_states_the_api_version_it_was_generated_from() -> None:
    committed_document = typescript.OPENAPI_JSON.read_text(encoding="utf-8")
    fresh = typescript.version_text(committed_document)
    committed = typescript.VERSION_TS.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/typescript/src/version.ts", committed, fresh)
    assert f'API_VERSION = "{json.loads(committed_document)["info"]["version"]}"' in committed


def test_the_committed_mcp_tools_are_the_servers() -> None:
    fresh = typescript.mcp_tools_text()
    committed = typescript.MCP_TOOLS_TS.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/typescript/src/mcp-tools.ts", committed, fresh)
    assert '"name": "profile"' in committed


def test_the_document_is_stable_and_ends_with_a_newline() -> None:
    text = openapi_text()
    assert text.endswith("}\n") and openapi_text() == text
    document = json.loads(text)
    assert list(document["paths"]) == sorted(document["paths"])
    # a model's fields keep their declared order (the generated types read like the models)
    assert list(document["components"]["schemas"]["WhoAmIOut"]["properties"])[0] == "user_id"


def test_the_committed_types_are_generated_from_the_committed_document(tmp_path) -> None:
    if not typescript.GENERATOR.exists():
        pytest.skip("clients/typescript/node_modules is not installed (make installs it: npm ci there)")
    out = tmp_path / "schema.d.ts"
    typescript.generate_schema(typescript.OPENAPI_JSON, out)
    fresh = out.read_text(encoding="utf-8")
    committed = typescript.SCHEMA_TS.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/typescript/src/schema.d.ts", committed, fresh)


def test_the_types_the_apps_use_come_from_the_generated_package() -> None:
    index = (typescript.HERE / "src" / "types.ts").read_text(encoding="utf-8")
    schemas = set(json.loads(typescript.OPENAPI_JSON.read_text(encoding="utf-8"))["components"]["schemas"])
    named = set(re.findall(r"Schemas\['(\w+)'\]", index))
    assert named and named <= schemas, f"src/types.ts names schemas the API lacks: {sorted(named - schemas)}"
    for app_api in (ROOT / "web" / "src" / "api.ts", ROOT / "extension" / "lib" / "api.ts"):
        source = app_api.read_text(encoding="utf-8")
        assert "clients/typescript/src" in source and "interface WhoAmI" not in source, app_api
        # their calls go through the one client (@memlane/client), not a fetch of their own
        assert "new MemlaneClient(" in source and "fetch(" not in source.replace("fetch: ", ""), app_api


def test_the_models_are_generated_from_the_apis_openapi_document():
    fresh = python.models_text(openapi_text())
    committed = python.MODELS_PY.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/python/memlane_client/models.py", committed, fresh)


def test_the_python_client_states_the_api_version_and_document_it_was_generated_from():
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
    fresh = python.mcp_tools_text()
    committed = python.MCP_TOOLS_JSON.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/python/memlane_client/mcp_tools.json", committed, fresh)
    from memlane.mcp.definitions import ALL_TOOLS

    by_name = {t["function"]["name"]: t["function"] for t in openai_tools()}
    assert list(by_name) == [t["name"] for t in ALL_TOOLS]
    for tool in ALL_TOOLS:
        assert by_name[tool["name"]]["parameters"] == tool["inputSchema"]
        assert by_name[tool["name"]]["description"] == tool["description"]
    assert {t["name"] for t in mcp_tools()} == {t["name"] for t in ALL_TOOLS}
