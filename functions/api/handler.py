"""API Lambda: API Gateway REST proxy event → memlane's one resolver.

Services are composed once per cold start, lazily (memlane.lazy), so importing this module stays
cheap and moto can be started before any client exists; a test hands in its own MemlaneApi.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths

from functions._handler import lambda_handler
from memlane.api.app import MemlaneApi
from memlane.lazy import Lazy


def _compose() -> MemlaneApi:
    from memlane.aws.compose import build_aws_services, lazy_docset_context

    return MemlaneApi(build_aws_services, docsets=lazy_docset_context())


_api: Lazy[MemlaneApi] = Lazy(_compose, "MemlaneApi")


@lambda_handler(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: Any, api: MemlaneApi | None = None) -> dict[str, Any]:
    return (api or _api.get()).handle(event, context)
