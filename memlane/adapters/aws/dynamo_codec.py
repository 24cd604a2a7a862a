"""The item codec of memlane's DynamoDB table, shared by the adapters that live in it (metadata,
docsets): items are built and read with the low-level client's attribute values, so no float ever
meets DynamoDB's Decimal. Datetimes are fixed-width ISO-8601 UTC strings, a model's dict fields
(`metadata`) and nested records (`media`) are JSON strings, `None` fields are left out of the item.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from enum import Enum
from typing import Any, TypeVar

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from pydantic import BaseModel

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()
M = TypeVar("M", bound=BaseModel)


def to_iso(value: datetime) -> str:
    """Fixed-width ISO-8601 UTC (microseconds always present), so string order is time order."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return to_iso(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
    if isinstance(value, BaseModel):  # a nested record (Document.media): one JSON string attribute
        return value.model_dump_json()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return Decimal(repr(value))
    return value


def model_attributes(model: BaseModel, exclude: Iterable[str] = ()) -> dict[str, Any]:
    skip = set(exclude)
    return {
        name: _plain(getattr(model, name))
        for name in type(model).model_fields
        if name not in skip and getattr(model, name) is not None
    }


def serialize(attributes: dict[str, Any]) -> dict[str, Any]:
    return {name: _serializer.serialize(value) for name, value in attributes.items()}


def _unwrap(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    if isinstance(value, set):
        return [_unwrap(v) for v in sorted(value)]
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


def deserialize(item: dict[str, Any]) -> dict[str, Any]:
    return {name: _unwrap(_deserializer.deserialize(value)) for name, value in item.items()}


def model_from_item(cls: type[M], item: dict[str, Any]) -> M:
    data = deserialize(item)
    fields = {k: v for k, v in data.items() if k in cls.model_fields}
    for name in ("metadata", "media"):
        if isinstance(fields.get(name), str):
            fields[name] = json.loads(fields[name])
    return cls.model_validate(fields)


def conditional_put(table_name: str, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": table_name,
            "Item": serialize(item),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }
