"""Request and response models of the raged API (POST /ingest, POST /query), field for field as the
seed documents them; the Python names follow memlane's convention (bodies `XxxIn`, answers
`XxxOut`, parts named for what they are: memlane.domain.requests)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memlane.collections.router import Strategy
from memlane.domain.client_metadata import MAX_METADATA_BYTES, check_client_metadata
from memlane.domain.fields import NonBlankStr, TrimmedNonBlankStr

DEFAULT_COLLECTION = "docs"
MAX_ITEMS = 1000
DEFAULT_TOP_K = 8
MAX_TOP_K = 100
MAX_ITEM_TEXT_CHARS = 500_000
FILTER_FIELDS = ("repoId", "lang", "path")


class _Schema(BaseModel):
    """Built on first use, not at import: only the routes a deployment serves pay for their
    schemas in a Lambda cold start."""

    model_config = ConfigDict(defer_build=True)


class IngestItem(_Schema):
    # raged items may carry fields memlane does not use (url, docType, …); ignore rather than reject them.
    model_config = ConfigDict(extra="ignore")

    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="The item's base id; chunks are `<id>:<chunkIndex>`. Default: source.",
    )
    text: NonBlankStr = Field(min_length=1, max_length=MAX_ITEM_TEXT_CHARS)
    source: str | None = Field(default=None, max_length=2_000)
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description=f"repoId, path and lang are filterable; the rest is kept (at most {MAX_METADATA_BYTES // 1024} KB "
                    "as JSON; `memlane` is reserved)."
    )

    @model_validator(mode="after")
    def _has_id(self) -> IngestItem:
        if not self.id and not self.source:
            raise ValueError("id: is required (or a source to derive it from)")
        for name in FILTER_FIELDS:
            value = self.metadata.get(name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"metadata.{name}: must be a string")
        check_client_metadata(self.metadata)  # as on /v3: `memlane` refused, 64 KB at most
        return self

    @property
    def base_id(self) -> str:
        return self.id or self.source or ""


class IngestIn(_Schema):
    model_config = ConfigDict(extra="ignore")

    collection: TrimmedNonBlankStr = Field(default=DEFAULT_COLLECTION, max_length=200)
    items: list[IngestItem] = Field(min_length=1, max_length=MAX_ITEMS)


class IngestOut(_Schema):
    ok: bool = True
    upserted: int = Field(description="Chunks written.")


class QueryFilter(_Schema):
    model_config = ConfigDict(extra="forbid")

    repoId: str | None = None  # noqa: N815 - the seed's field name
    lang: str | None = None
    path: str | None = Field(default=None, description="A path prefix, e.g. `src/`.")

    def is_empty(self) -> bool:
        return self.repoId is None and self.lang is None and self.path is None


class QueryIn(_Schema):
    model_config = ConfigDict(extra="ignore")

    collection: TrimmedNonBlankStr = Field(default=DEFAULT_COLLECTION, max_length=200)
    query: str | None = Field(default=None, max_length=10_000)
    topK: int = Field(default=DEFAULT_TOP_K, description=f"Clamped to 1–{MAX_TOP_K}.")  # noqa: N815
    filter: QueryFilter | None = None
    strategy: Strategy | None = Field(default=None, description="Omit to let the router choose.")

    @field_validator("topK")
    @classmethod
    def _clamp(cls, v: int) -> int:
        return max(1, min(MAX_TOP_K, v))

    @model_validator(mode="after")
    def _query_or_filter(self) -> QueryIn:
        if self.filter is not None and self.filter.is_empty():
            self.filter = None
        has_text = bool(self.query and self.query.strip())
        if not has_text:
            if self.filter is None:
                raise ValueError("query: is required (only a metadata query with a filter may omit it)")
            if self.strategy not in (None, Strategy.METADATA):
                raise ValueError(f"query: is required for the {self.strategy.value} strategy")
        return self


class QueryResult(_Schema):
    id: str = Field(description="`<baseId>:<chunkIndex>`")
    score: float
    source: str
    text: str
    payload: dict[str, Any]


class Routing(_Schema):
    strategy: Strategy
    method: str
    confidence: float
    durationMs: int  # noqa: N815
    rule: str


class QueryOut(_Schema):
    ok: bool = True
    results: list[QueryResult]
    routing: Routing
