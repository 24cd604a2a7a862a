"""Keys admin function (invoked by an operator, never through the API):

    aws lambda invoke --function-name <KeysFunctionName> \
        --cli-binary-format raw-in-base64-out --payload '{"action":"create","org":"default"}' out.json

create → the secret, shown once, and the key registered with API Gateway's usage plan;
list (optionally {"org": …}) → the keys without secrets; revoke {"key_id": …} → refused at once.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from functions._handler import lambda_handler, logger
from memlane.domain.errors import MemlaneError
from memlane.lazy import Lazy
from memlane.ports import Clock, KeyRegistry, MetadataStore, SystemClock
from memlane.services.key_admin import administer_keys, parse_command


def _compose_store() -> MetadataStore:
    from memlane.aws.compose import aws_settings, build_metadata_store

    return build_metadata_store(aws_settings())


def _compose_registry() -> KeyRegistry:
    from memlane.aws.compose import build_key_registry

    return build_key_registry()


_store: Lazy[MetadataStore] = Lazy(_compose_store, "MetadataStore")
_registry: Lazy[KeyRegistry] = Lazy(_compose_registry, "KeyRegistry")


@lambda_handler()
def handler(event: dict[str, Any], context: Any, store: MetadataStore | None = None,
            registry: KeyRegistry | None = None, clock: Clock | None = None) -> dict[str, Any]:
    try:
        command = parse_command(event)
    except ValidationError as exc:
        return {"error": "; ".join(f"{'.'.join(map(str, e['loc'])) or 'payload'}: {e['msg']}"
                                   for e in exc.errors())}
    except MemlaneError as exc:
        return {"error": exc.message}
    try:
        result = administer_keys(store or _store.get(), registry or _registry.get(), command,
                                 (clock or SystemClock()).now())
    except MemlaneError as exc:
        return {"error": exc.message}
    logger.info("keys admin", extra={"action": command.action, "key_id": result.key and result.key.id})
    return result.model_dump(mode="json", exclude_none=True)
