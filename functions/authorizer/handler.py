"""REQUEST authorizer: the API key (`Authorization: Bearer` or `x-api-key`) → an IAM policy.

Allowed keys get one policy covering every route of the API (`…/{stage}/*/*`), so API Gateway
could cache it for any route, the caller's identity as context (organization_id, key_id, user_id,
rate_limit: read by the resolver) and `usageIdentifierKey` = the SHA-256 of the key, which is the
value of the key's API Gateway API key in the per-key usage plan. A missing, unknown or revoked key
raises "Unauthorized", which API Gateway answers with 401. The only AWS call is one DynamoDB
GetItem; nothing is cached here, so a revoked key is refused on its next request.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.data_classes.api_gateway_authorizer_event import (
    APIGatewayAuthorizerResponse,
    parse_api_gateway_arn,
)
from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import ApiGatewayAuthorizerRequest

from functions._tracing import lambda_tracer
from memlane.api.auth import authorizer_context
from memlane.domain.errors import AuthenticationError
from memlane.lazy import Lazy
from memlane.ports import MetadataStore
from memlane.services.keys import authenticate, hash_key, key_from_headers

logger = Logger()
tracer = lambda_tracer()


def _compose() -> MetadataStore:
    from memlane.adapters.aws.compose import aws_settings, build_metadata_store

    return build_metadata_store(aws_settings())


_store: Lazy[MetadataStore] = Lazy(_compose, "MetadataStore")


def _headers(request: ApiGatewayAuthorizerRequest) -> dict[str, str]:
    """Single-value headers, plus the first of any header only sent as multi-value."""
    headers = {k: v[0] for k, v in (request.multiValueHeaders or {}).items() if v}
    headers.update(request.headers or {})
    return headers


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any, store: MetadataStore | None = None) -> dict[str, Any]:
    request = parse(event=event, model=ApiGatewayAuthorizerRequest)
    headers = _headers(request)
    try:
        principal = authenticate(store or _store.get(), headers)
    except AuthenticationError as exc:
        logger.info("request refused", extra={"reason": exc.message, "path": request.path})
        raise Exception("Unauthorized") from exc  # noqa: TRY002 - the exact text API Gateway maps to 401
    arn = parse_api_gateway_arn(request.methodArn)
    response = APIGatewayAuthorizerResponse(
        principal_id=principal.key_id,
        region=arn.region,
        aws_account_id=arn.aws_account_id,
        api_id=arn.api_id,
        stage=arn.stage,
        context=authorizer_context(principal),
        usage_identifier_key=hash_key(key_from_headers(headers) or ""),
    )
    response.allow_all_routes()
    return response.asdict()
