"""The web app's and the extension's API types (clients/typescript) are generated from the API's
OpenAPI document: when a route or a model changes, the committed document and types must be
regenerated (`make types`) in the same commit."""

from __future__ import annotations

import difflib
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memlane_typescript_generate", CLIENT / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _generator()


def _stale(name: str, committed: str, fresh: str) -> str:
    diff = "".join(list(difflib.unified_diff(committed.splitlines(keepends=True), fresh.splitlines(keepends=True),
                                             f"{name} (committed)", f"{name} (from the API)", n=1))[:40])
    return (f"{name} is out of date: the API changed and the TypeScript types were not regenerated. "
            f"Run `{generate.REGENERATE}` and commit the result.\n{diff}")


def test_the_committed_openapi_document_is_the_apis() -> None:
    fresh = generate.openapi_text()
    committed = generate.OPENAPI_JSON.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/typescript/openapi.json", committed, fresh)


def test_the_client_states_the_api_version_it_was_generated_from() -> None:
    committed_document = generate.OPENAPI_JSON.read_text(encoding="utf-8")
    fresh = generate.version_text(committed_document)
    committed = generate.VERSION_TS.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/typescript/src/version.ts", committed, fresh)
    assert f'API_VERSION = "{json.loads(committed_document)["info"]["version"]}"' in committed


def test_the_committed_mcp_tools_are_the_servers() -> None:
    fresh = generate.mcp_tools_text()
    committed = generate.MCP_TOOLS_TS.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/typescript/src/mcp-tools.ts", committed, fresh)
    assert '"name": "profile"' in committed


def test_the_document_is_stable_and_ends_with_a_newline() -> None:
    text = generate.openapi_text()
    assert text.endswith("}\n") and generate.openapi_text() == text
    document = json.loads(text)
    assert list(document["paths"]) == sorted(document["paths"])
    # a model's fields keep their declared order (the generated types read like the models)
    assert list(document["components"]["schemas"]["WhoAmIOut"]["properties"])[0] == "user_id"


def test_the_committed_types_are_generated_from_the_committed_document(tmp_path) -> None:
    if not generate.GENERATOR.exists():
        pytest.skip("clients/typescript/node_modules is not installed (make installs it: npm ci there)")
    out = tmp_path / "schema.d.ts"
    generate.generate_schema(generate.OPENAPI_JSON, out)
    fresh = out.read_text(encoding="utf-8")
    committed = generate.SCHEMA_TS.read_text(encoding="utf-8")
    assert committed == fresh, _stale("clients/typescript/src/schema.d.ts", committed, fresh)


def test_the_types_the_apps_use_come_from_the_generated_package() -> None:
    index = (CLIENT / "src" / "types.ts").read_text(encoding="utf-8")
    schemas = set(json.loads(generate.OPENAPI_JSON.read_text(encoding="utf-8"))["components"]["schemas"])
    named = set(re.findall(r"Schemas\['(\w+)'\]", index))
    assert named and named <= schemas, f"src/types.ts names schemas the API lacks: {sorted(named - schemas)}"
    for app_api in (ROOT / "web" / "src" / "api.ts", ROOT / "extension" / "lib" / "api.ts"):
        source = app_api.read_text(encoding="utf-8")
        assert "clients/typescript/src" in source and "interface WhoAmI" not in source, app_api
        # their calls go through the one client (@memlane/client), not a fetch of their own
        assert "new MemlaneClient(" in source and "fetch(" not in source.replace("fetch: ", ""), app_api
