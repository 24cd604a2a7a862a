"""The route table the security suite walks, read from the OpenAPI document the resolver generates
(so a route added tomorrow is covered tomorrow), plus the few routes served outside the resolver."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlane.api.app import MemlaneApi

# Served by the local gateway before the resolver (memlane.local.webapp) or by their own parse.
OUTSIDE_RESOLVER = [("POST", "/webapp/sign-in")]
BODY_METHODS = {"POST", "PUT", "PATCH"}
# Routes that start a crawl: a generated URL must never be fetched from a test.
CRAWLING = {"/index", "/refresh", "/refresh-all"}


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    params: tuple[str, ...]
    body_schema: dict | None
    public: bool

    def url(self, **ids: str) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: ids.get(m.group(1), "doc_0000000000000000"), self.path)

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


def _resolve(doc: dict, schema: dict | None) -> dict | None:
    seen = 0
    while schema and "$ref" in schema and seen < 10:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = doc["components"]["schemas"][name]
        seen += 1
    return schema


DOC = MemlaneApi(lambda: None).openapi()  # type: ignore[arg-type, return-value]


def openapi_routes() -> list[Route]:
    from memlane.api.app import PUBLIC_ROUTES

    doc = DOC
    routes = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            body = (op.get("requestBody") or {}).get("content", {}).get("application/json", {}).get("schema")
            routes.append(Route(method.upper(), path,
                                tuple(p["name"] for p in op.get("parameters", []) if p["in"] == "path"),
                                _resolve(doc, body), (method.upper(), path) in PUBLIC_ROUTES))
    return routes


ROUTES = openapi_routes()
BODY_ROUTES = [r for r in ROUTES if r.method in BODY_METHODS]
ID_ROUTES = [r for r in ROUTES if r.params]


def string_fields(route: Route) -> list[str]:
    schema = route.body_schema or {}
    return [name for name, prop in (schema.get("properties") or {}).items()
            if prop.get("type") == "string" or any(a.get("type") == "string" for a in prop.get("anyOf", []))]


def all_fields(route: Route) -> list[str]:
    return list(((route.body_schema or {}).get("properties") or {}).keys())


def schema_properties(schema: dict | None, depth: int = 0) -> set[str]:
    """Every property name in `schema`, at any depth: through $refs, arrays, anyOf/allOf."""
    schema = _resolve(DOC, schema)
    if not schema or depth > 12:
        return set()
    names: set[str] = set()
    for name, prop in (schema.get("properties") or {}).items():
        names.add(name)
        names |= schema_properties(prop, depth + 1)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            names |= schema_properties(schema[key], depth + 1)
    for key in ("anyOf", "allOf", "oneOf"):
        for part in schema.get(key) or []:
            names |= schema_properties(part, depth + 1)
    return names
