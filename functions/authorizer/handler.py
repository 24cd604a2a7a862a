"""REQUEST authorizer: the caller's credential → an IAM policy.

Two credentials are accepted in `Authorization: Bearer …`:

- a memlane API key (also as `x-api-key`). Allowed keys get one policy covering every route of
  the API (`…/{stage}/*/*`), so API Gateway could cache it for any route, and
  `usageIdentifierKey` = the SHA-256 of the key, which is the value of the key's API Gateway API
  key in the per-key usage plan. The only AWS call is one DynamoDB GetItem; nothing is cached
  here, so a revoked key is refused on its next request.
- with OAuth enabled (the stack's Cognito user pool, MEMLANE_OAUTH_ISSUER), an access token for
  the MCP endpoint (memlane.services.oauth says what is checked). Its policy allows `/mcp` only:
  the token's audience is that endpoint. The pool's signing keys are fetched once per container.

Either way the caller's identity goes into the context (organization_id, key_id, user_id,
rate_limit, via: read by the resolver). A missing, unknown, revoked, expired or foreign credential
raises "Unauthorized", which API Gateway answers with 401 and a `WWW-Authenticate` header naming
the protected resource metadata (the UNAUTHORIZED gateway response).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.data_classes.api_gateway_authorizer_event import (
    APIGatewayAuthorizerResponse,
    parse_api_gateway_arn,
)
from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import ApiGatewayAuthorizerRequest

from functions._handler import lambda_handler, logger
from memlane.api.auth import MCP_PATH, VIA_KEY, VIA_OAUTH, authorizer_context
from memlane.config.oauth import OAuthVariables
from memlane.domain.errors import AuthenticationError
from memlane.domain.principal import Principal
from memlane.lazy import Lazy
from memlane.ports import OrganizationStore
from memlane.services.keys import authenticate, hash_key, key_from_headers
from memlane.services.oauth import TokenValidator, authenticate_token, looks_like_jwt


def _compose() -> OrganizationStore:
    from memlane.adapters.aws.compose import aws_settings, build_organization_store

    return build_organization_store(aws_settings())


_store: Lazy[OrganizationStore] = Lazy(_compose, "OrganizationStore")


def _compose_validator() -> TokenValidator | None:
    settings = OAuthVariables.from_env().settings()  # once per cold start
    return TokenValidator(settings) if settings is not None else None


# None without OAuth: every credential is then an API key.
_validator: Lazy[TokenValidator | None] = Lazy(_compose_validator, "TokenValidator")


def _authenticate(store: OrganizationStore, validator: TokenValidator | None, headers: dict[str, str],
                  path: str) -> tuple[Principal, str]:
    secret = key_from_headers(headers)
    if secret is not None and validator is not None and looks_like_jwt(secret):
        if path != MCP_PATH:
            raise AuthenticationError(f"an OAuth access token is only accepted at {MCP_PATH}")
        return authenticate_token(store, validator, secret), VIA_OAUTH
    return authenticate(store, headers), VIA_KEY


def _headers(request: ApiGatewayAuthorizerRequest) -> dict[str, str]:
    """Single-value headers, plus the first of any header only sent as multi-value."""
    headers = {k: v[0] for k, v in (request.multiValueHeaders or {}).items() if v}
    headers.update(request.headers or {})
    return headers


@lambda_handler(correlation_id_path=correlation_paths.API_GATEWAY_REST)
def handler(event: dict[str, Any], context: Any, store: OrganizationStore | None = None,
            validator: TokenValidator | None = None) -> dict[str, Any]:
    request = parse(event=event, model=ApiGatewayAuthorizerRequest)
    headers = _headers(request)
    try:
        principal, via = _authenticate(store or _store.get(), validator or _validator.get(), headers,
                                       request.path)
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
        context=authorizer_context(principal, via),
        # OAuth callers have no API Gateway API key: /mcp does not require one, and the resolver's
        # rate limiter meters them per user instead.
        usage_identifier_key=hash_key(key_from_headers(headers) or "") if via == VIA_KEY else None,
    )
    if via == VIA_OAUTH:
        response.allow_route("*", MCP_PATH)
    else:
        response.allow_all_routes()
    return response.asdict()
