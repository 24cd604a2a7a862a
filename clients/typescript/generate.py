"""Regenerates memlane's TypeScript API types (`make types`).

1. Writes the OpenAPI document the resolver serves at /openapi.json (the same document as
   `memlane openapi`) to clients/typescript/openapi.json, in a stable key order.
2. Runs openapi-typescript (pinned in package.json; `npm ci` in this folder first) on it to write
   clients/typescript/src/schema.d.ts.

tests/unit/test_typescript_types.py fails when either file is out of date.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OPENAPI_JSON = HERE / "openapi.json"
SCHEMA_TS = HERE / "src" / "schema.d.ts"
GENERATOR = HERE / "node_modules" / ".bin" / "openapi-typescript"
REGENERATE = "make types"


def openapi_document() -> dict[str, Any]:
    """The API's OpenAPI document, built from the route definitions alone (no services)."""
    from memlane.api.app import MemlaneApi

    return MemlaneApi(lambda: None).openapi()  # type: ignore[arg-type, return-value]


def _stable(value: Any, *, declared_order: bool = False) -> Any:
    """Keys sorted, so moving a route or a model between modules does not reorder the file; a
    model's `properties` keep the order the model declares its fields in."""
    if isinstance(value, dict):
        items = value.items() if declared_order else sorted(value.items())
        return {key: _stable(item, declared_order=key == "properties" and not declared_order)
                for key, item in items}
    if isinstance(value, list):
        return [_stable(item) for item in value]
    return value


def openapi_text(document: dict[str, Any] | None = None) -> str:
    """The committed form of the document: stable key order, two-space indent, trailing newline."""
    document = openapi_document() if document is None else document
    return json.dumps(_stable(document), indent=2, ensure_ascii=False) + "\n"


def generate_schema(openapi_json: Path, out: Path) -> None:
    """openapi-typescript, with fields that have a default left optional: the document describes
    what the server accepts, and a client may leave those fields out of a request. Response types
    get every field back in src/index.ts (the server always sends them all)."""
    if not GENERATOR.exists():
        raise SystemExit(f"{GENERATOR} is missing: run `npm ci` in {HERE}")
    subprocess.run([str(GENERATOR), str(openapi_json), "--output", str(out), "--default-non-nullable", "false"],
                   check=True, cwd=HERE, stdout=subprocess.DEVNULL)


def main() -> int:
    OPENAPI_JSON.write_text(openapi_text(), encoding="utf-8")
    generate_schema(OPENAPI_JSON, SCHEMA_TS)
    print(f"wrote {OPENAPI_JSON.relative_to(HERE.parent.parent)} and {SCHEMA_TS.relative_to(HERE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
