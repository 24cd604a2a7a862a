"""API: REST API (API Gateway v1) → the API Lambda, behind a Lambda REQUEST authorizer.

Authorization. memlane keys arrive in either `Authorization: Bearer <key>` or `x-api-key: <key>`.
A REQUEST authorizer's identity sources are all mandatory at the gateway: when any listed header is
missing, API Gateway answers 401 without calling the authorizer, and with caching enabled at least
one identity source is required. No identity-source list can therefore admit *either* header while
caching. So the authorizer has no identity sources and caching is off (TTL 0): it runs on every
request and reads whichever header is present. A revoked key is rejected on the next request
(memlane's requirement is within 60 s). The authorizer function may keep a short in-memory cache of
lookups; that is its own, bounded, choice.

Rate limits. The API key source is AUTHORIZER: the authorizer returns `usageIdentifierKey` (the
SHA-256 of the memlane key, which it computes anyway), and the admin keys function registers that
value as an API Gateway API key in the usage plan when it creates a memlane key. Methods require an
API key (context `api_key_required`, default true), so API Gateway meters and throttles every
memlane key separately (100 requests/minute ≈ 1.67 requests/second with a burst, optional daily
quota) before the API Lambda runs, and answers 429 with Retry-After.

Routes. `ANY /` and `ANY /{proxy+}` go to the API Lambda (one resolver serves every seed's paths).
`GET /health`, `GET /openapi.json` and `GET /healthz` answer without a key, as the seeds document,
and so do CORS preflights (`OPTIONS`): browsers never send credentials on a preflight, and the
resolver answers them from memlane's origin allow-list. So do the OAuth discovery documents for
`/mcp` (`/.well-known/...`), which MCP clients read before they have a credential.

MCP and OAuth. `/mcp` (MCP over Streamable HTTP) is a route of the same resolver. A refused request
gets 401 with `WWW-Authenticate: Bearer resource_metadata="<URL>/.well-known/oauth-protected-resource"`
(the UNAUTHORIZED gateway response), on every route. With context `oauth=true` the stack adds a
Cognito user pool (infra/constructs/oauth.py) and `/mcp` also accepts its access tokens: `/mcp`
then has a method of its own that needs no API Gateway API key (OAuth users have none; the API
function's per-caller rate limiter, DynamoDB-backed, meters them and keys alike there).
"""

from __future__ import annotations

import json

from aws_cdk import Aws, CfnResource, Duration, Fn, RemovalPolicy, Size, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig
from infra.constructs.embeddings import ModelAccess
from infra.constructs.functions import FunctionFactory, function_role, log_removal_policy, retention_days
from infra.constructs.grants import grant_send
from infra.constructs.ingestion import grant_textract
from infra.constructs.oauth import OAuth
from infra.constructs.search import Search
from infra.constructs.storage import Storage
from infra.nag import acknowledge, wildcard_resource_finding
from memlane.adapters.aws import dynamo_schema as schema
from memlane.adapters.aws.api_keys import API_KEY_STAGE_TAG
from memlane.api.auth import PROTECTED_RESOURCE_PATH
from memlane.domain.oauth import ENV_PUBLIC_URL

ACCESS_LOG_FORMAT = {
    "requestId": "$context.requestId",
    "extendedRequestId": "$context.extendedRequestId",
    "requestTime": "$context.requestTime",
    "ip": "$context.identity.sourceIp",
    "userAgent": "$context.identity.userAgent",
    "httpMethod": "$context.httpMethod",
    "resourcePath": "$context.resourcePath",
    "path": "$context.path",
    "status": "$context.status",
    "protocol": "$context.protocol",
    "responseLength": "$context.responseLength",
    "responseLatency": "$context.responseLatency",
    "integrationLatency": "$context.integrationLatency",
    "integrationError": "$context.integrationErrorMessage",
    "organizationId": "$context.authorizer.organization_id",
    "keyId": "$context.authorizer.key_id",
    "authorizerError": "$context.authorizer.error",
    "authorizerLatency": "$context.authorizer.latency",
    "errorMessage": "$context.error.message",
    "xrayTraceId": "$context.xrayTraceId",
}

# Gateway-generated errors in memlane's shape: {"error": "..."}.
_ERROR_TEMPLATE = '{"error": $context.error.messageString}'
GATEWAY_RESPONSES: tuple[tuple[str, apigw.ResponseType, str | None, dict[str, str]], ...] = (
    ("Unauthorized", apigw.ResponseType.UNAUTHORIZED, "401", {}),
    ("AccessDenied", apigw.ResponseType.ACCESS_DENIED, "403", {}),
    ("InvalidApiKey", apigw.ResponseType.INVALID_API_KEY, "403", {}),
    # A path with no route: 404 like any unknown resource, not API Gateway's 403.
    ("MissingRoute", apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, "404", {}),
    ("Throttled", apigw.ResponseType.THROTTLED, "429", {"Retry-After": "'1'"}),
    ("QuotaExceeded", apigw.ResponseType.QUOTA_EXCEEDED, "429", {"Retry-After": "'3600'"}),
    ("Default4xx", apigw.ResponseType.DEFAULT_4_XX, None, {}),
    ("Default5xx", apigw.ResponseType.DEFAULT_5_XX, None, {}),
)

PUBLIC_ROUTE_REASON = (
    "Documented as unauthenticated by the seeds memlane serves verbatim (health checks and the OpenAPI "
    "document) or by OAuth (RFC 9728/8414 discovery documents, read before a client has a credential); "
    "the API Lambda returns no tenant data on these paths; "
    "or called by a connection provider without a memlane key: the OAuth callback is bound to "
    "its organization by a single-use, expiring state, a GitHub webhook by its HMAC signature."
)
PREFLIGHT_REASON = (
    "CORS preflight: browsers never send credentials on OPTIONS, so an authorizer would break every "
    "browser client; the API Lambda answers preflights from memlane's origin allow-list only."
)
NO_COGNITO_REASON = (
    "memlane authenticates its own API keys (hashed, per organization) and, with OAuth on, Cognito access "
    "tokens in one Lambda REQUEST authorizer: a Cognito authorizer cannot accept memlane keys, and tokens "
    "must also be bound to /mcp (audience) and mapped to an organization."
)
REQUEST_VALIDATION_REASON = (
    "Requests are validated by the pydantic models of memlane's resolver (shared with the local server, "
    "errors name the field); API Gateway models would duplicate them for a proxy integration."
)
NO_WAF_REASON = (
    "No WAF by default (from ~$5/month + $0.60 per million requests): every method except health/spec "
    "requires a memlane key and per-key throttling applies; associate a web ACL for public exposure."
)
ACCOUNT_ROLE_REASON = (
    "API Gateway's account-level CloudWatch role uses the AWS-maintained "
    "AmazonAPIGatewayPushToCloudWatchLogs policy, the documented way to enable API access logging."
)
API_KEY_ADMIN_REASON = (
    "The keys function (and the API function, for /v3/keys) deletes the API Gateway API key of a revoked "
    "memlane key and tags each key it creates; API key ids are generated by API Gateway at creation time, so "
    "the resources are /apikeys/* and /tags/*, and a condition on the stage tag memlane sets on every key it "
    "creates limits them to this stack's keys."
)


class Api(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        factory: FunctionFactory,
        storage: Storage,
        search: Search,
        models: ModelAccess,
        ingest_queue: sqs.IQueue,
        page_queue: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self.api_function = factory.create(self, c.API_FUNCTION)
        # GSI3: a conversation's messages (contextual indexing at save, the neighbour stage at recall)
        storage.grant_table_read_write(self.api_function, indexes=(schema.GSI1, schema.GSI3))
        storage.grant_content_read(self.api_function)
        storage.grant_content_write(self.api_function)
        storage.grant_content_delete(self.api_function)
        grant_textract(self.api_function)  # images of a few pages are read in the save request
        # Recall reads; delete removes a document from the index at once (write includes read).
        search.grant_write(function_role(self.api_function))
        # Saves up to the inline limit are written in the request: embedded, summarized, indexed.
        models.grant_embed(self.api_function)
        models.grant_summarize(self.api_function)
        models.grant_rerank(self.api_function)  # recall's optional rerank stage (off unless configured)
        grant_send(ingest_queue, self.api_function)
        grant_send(page_queue, self.api_function)

        self.authorizer_function = factory.create(self, c.AUTHORIZER_FUNCTION)
        storage.grant_table_get_item(self.authorizer_function)

        self.rest_api = self._rest_api(config)
        # Built from the API's id, not rest_api.url: that names the stage, which depends on every
        # method, and so on the functions whose environment this URL goes into.
        self.public_url = config.public_url or Fn.join("", [
            "https://", self.rest_api.rest_api_id, ".execute-api.", Aws.REGION, ".", Aws.URL_SUFFIX, "/",
            config.stage])
        self.oauth: OAuth | None = None
        if config.oauth:
            self.oauth = OAuth(self, "OAuth", config=config, resource_url=Fn.join("", [self.public_url, "/mcp"]))
        for function in (self.api_function, self.authorizer_function):
            function.add_environment(ENV_PUBLIC_URL, self.public_url)
            for name, value in (self.oauth.environment if self.oauth else {}).items():
                function.add_environment(name, value)
        self.usage_plan = self._usage_plan(config)
        self._routes(config)
        challenge = Fn.join("", ["'Bearer resource_metadata=\"", self.public_url, PROTECTED_RESOURCE_PATH, "\"'"])
        for name, response_type, status, headers in GATEWAY_RESPONSES:
            if response_type.response_type == apigw.ResponseType.UNAUTHORIZED.response_type:
                headers = {**headers, "WWW-Authenticate": challenge}
            self.rest_api.add_gateway_response(
                name,
                type=response_type,
                status_code=status,
                response_headers={"Content-Type": "'application/json'", **headers},
                templates={"application/json": _ERROR_TEMPLATE},
            )

        self.keys_function = factory.create(
            self, c.KEYS_FUNCTION, environment={c.ENV_USAGE_PLAN_ID: self.usage_plan.usage_plan_id}
        )
        storage.grant_table_read_write(self.keys_function, indexes=(schema.GSI1,))
        storage.grant_table_scan(self.keys_function)
        self._grant_api_key_admin(self.keys_function, config.stage)
        # The web app's settings page creates and revokes keys (POST/DELETE /v3/keys, for keys that
        # may manage keys): the API function registers them in the usage plan as the keys function
        # does. The plan is deployed after the API's methods, which point at this function, so the
        # function cannot reference it: it gets the plan's name and finds its id when it first
        # creates a key, and its grants are a policy of their own that the function does not wait for.
        self.api_function.add_environment(c.ENV_USAGE_PLAN_NAME, self.usage_plan_name)
        key_admin = iam.Policy(self, "ApiKeyAdmin",
                               statements=self._api_key_admin_statements(config.stage, lookup=True))
        key_admin.attach_to_role(function_role(self.api_function))
        self._acknowledge_api_key_wildcards(key_admin)

        acknowledge(self.rest_api, "AwsSolutions-COG4", NO_COGNITO_REASON)
        acknowledge(self.rest_api, "AwsSolutions-APIG2", REQUEST_VALIDATION_REASON)
        acknowledge(self.rest_api, "AwsSolutions-APIG3", NO_WAF_REASON)
        if config.api_gateway_account_role:
            acknowledge(
                self.rest_api,
                "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                "AmazonAPIGatewayPushToCloudWatchLogs]",
                ACCOUNT_ROLE_REASON,
            )

    def _rest_api(self, config: DeploymentConfig) -> apigw.RestApi:
        access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=retention_days(config.log_retention_days),
            removal_policy=log_removal_policy(config),
        )
        return apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=f"{config.resource_prefix}-api",
            description="memlane: /v3 and the seed APIs (Mem-Oracle, raged, Vidurai) behind one resolver",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            api_key_source_type=apigw.ApiKeySourceType.AUTHORIZER,
            binary_media_types=list(c.BINARY_MEDIA_TYPES),
            min_compression_size=Size.bytes(c.MIN_COMPRESSION_BYTES),
            # Access logs need the account-level CloudWatch role; an account that already has one can
            # keep it with -c api_gateway_account_role=false.
            cloud_watch_role=config.api_gateway_account_role,
            # Account-wide setting: keep it if this stack is destroyed, other APIs may rely on it.
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN if config.api_gateway_account_role else None,
            deploy_options=apigw.StageOptions(
                stage_name=config.stage,
                tracing_enabled=True,
                metrics_enabled=True,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                # Never log bodies: they are people's memories.
                data_trace_enabled=False,
                throttling_rate_limit=c.STAGE_THROTTLE_RATE_LIMIT,
                throttling_burst_limit=c.STAGE_THROTTLE_BURST_LIMIT,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FORMAT)),
            ),
        )

    def _usage_plan(self, config: DeploymentConfig) -> apigw.UsagePlan:
        self.usage_plan_name = f"{config.resource_prefix}-per-key"
        plan = self.rest_api.add_usage_plan(
            "PerKeyUsagePlan",
            name=self.usage_plan_name,
            description=(
                f"Per memlane key: {config.api_rate_limit_per_minute} requests/minute "
                f"(rate {config.api_rate_limit_per_second}/s, burst {config.api_burst_limit})"
            ),
            throttle=apigw.ThrottleSettings(
                rate_limit=config.api_rate_limit_per_second, burst_limit=config.api_burst_limit
            ),
            quota=(
                apigw.QuotaSettings(limit=config.api_daily_quota, period=apigw.Period.DAY)
                if config.api_daily_quota
                else None
            ),
        )
        plan.add_api_stage(stage=self.rest_api.deployment_stage)
        return plan

    def _routes(self, config: DeploymentConfig) -> None:
        integration = apigw.LambdaIntegration(self.api_function, proxy=True, allow_test_invoke=False)
        authorizer = apigw.RequestAuthorizer(
            self,
            "KeyAuthorizer",
            handler=self.authorizer_function,
            authorizer_name=f"{config.resource_prefix}-keys",
            identity_sources=[],
            results_cache_ttl=Duration.seconds(0),
        )
        # CDK renders an empty identity-source list as ""; leave the property out instead.
        cfn_authorizer = authorizer.node.default_child
        if not isinstance(cfn_authorizer, CfnResource):
            raise TypeError(f"the authorizer's default child is {cfn_authorizer!r}, not a CfnResource")
        cfn_authorizer.add_property_deletion_override("IdentitySource")
        root = self.rest_api.root
        proxy = root.add_resource("{proxy+}")
        for resource in (root, proxy):
            resource.add_method(
                "ANY",
                integration,
                authorizer=authorizer,
                authorization_type=apigw.AuthorizationType.CUSTOM,
                api_key_required=config.api_key_required,
            )
            preflight = resource.add_method("OPTIONS", integration)
            acknowledge(preflight, "AwsSolutions-APIG4", PREFLIGHT_REASON)
        if config.oauth:
            mcp = root.add_resource(c.MCP_RESOURCE)
            mcp.add_method("ANY", integration, authorizer=authorizer,
                           authorization_type=apigw.AuthorizationType.CUSTOM, api_key_required=False)
            preflight = mcp.add_method("OPTIONS", integration)
            acknowledge(preflight, "AwsSolutions-APIG4", PREFLIGHT_REASON)
        for http_method, path in c.PUBLIC_ROUTES:
            public = root.resource_for_path(path).add_method(http_method, integration)
            acknowledge(public, "AwsSolutions-APIG4", PUBLIC_ROUTE_REASON)

    def _api_key_arns(self) -> tuple[str, str, str, str, str]:
        region = Aws.REGION
        partition = Aws.PARTITION
        api_keys = f"arn:{partition}:apigateway:{region}::/apikeys"
        plans = f"arn:{partition}:apigateway:{region}::/usageplans"
        plan_keys = f"{plans}/{self.usage_plan.usage_plan_id}/keys"
        tags = f"arn:{partition}:apigateway:{region}::/tags/*"
        return api_keys, f"{api_keys}/*", plan_keys, plans, tags

    def _api_key_admin_statements(self, stage: str, *, lookup: bool = False) -> list[iam.PolicyStatement]:
        """Create API Gateway API keys tagged as this stage's (a key created with its tags is also
        authorized as a tagging PUT), delete only keys carrying that tag, attach them to the
        per-key usage plan (and, with `lookup`, list the usage plans to find this one's id by name).
        The tag is what memlane.adapters.aws.api_keys sets on every key it creates: another
        stack's keys, or any other key of the account, cannot be deleted."""
        api_keys, api_key, plan_keys, plans, tags = self._api_key_arns()
        request_tag = {"StringEquals": {f"aws:RequestTag/{API_KEY_STAGE_TAG}": stage},
                       "ForAllValues:StringEquals": {"aws:TagKeys": [API_KEY_STAGE_TAG]}}
        statements = [
            iam.PolicyStatement(actions=["apigateway:POST"], resources=[api_keys], conditions=request_tag),
            iam.PolicyStatement(actions=["apigateway:PUT"], resources=[tags], conditions=request_tag),
            iam.PolicyStatement(actions=["apigateway:POST"], resources=[plan_keys]),
            iam.PolicyStatement(actions=["apigateway:DELETE"], resources=[api_key],
                                conditions={"StringEquals": {f"aws:ResourceTag/{API_KEY_STAGE_TAG}": stage}}),
        ]
        if lookup:
            statements.append(iam.PolicyStatement(actions=["apigateway:GET"], resources=[plans]))
        return statements

    def _grant_api_key_admin(self, function: lambda_.Function, stage: str) -> None:
        for statement in self._api_key_admin_statements(stage):
            function.add_to_role_policy(statement)
        self._acknowledge_api_key_wildcards(function_role(function))

    def _acknowledge_api_key_wildcards(self, target: Construct | iam.IGrantable) -> None:
        stack = Stack.of(self)
        _, api_key, _, _, tags = self._api_key_arns()
        acknowledge(target, wildcard_resource_finding(stack, api_key), API_KEY_ADMIN_REASON)
        acknowledge(target, wildcard_resource_finding(stack, tags), API_KEY_ADMIN_REASON)

    @property
    def url(self) -> str:
        return self.rest_api.url
