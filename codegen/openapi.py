"""The API's OpenAPI document in its committed form (clients/typescript/openapi.json), built from
the route definitions alone: what both clients are generated from."""

from __future__ import annotations

import json
from typing import Any


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
