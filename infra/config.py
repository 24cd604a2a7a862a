"""Deployment settings, read once from CDK context (cdk.json, then `-c key=value`) and validated.

Every construct receives a `DeploymentConfig`; none reads context itself. Values given with `-c`
arrive as strings, so numbers and booleans are parsed here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from infra import constants as c

AUTO = "auto"  # llm_model: the default model as the deploying Region offers it (resolve_llm_model)

# The defaults, also written verbatim into cdk.json's "context" (a test keeps the two equal).
DEFAULT_CONTEXT: dict[str, Any] = {
    "stage": "dev",
    "search_backend": "managed",
    "search_instance_type": "t3.small.search",
    "search_instance_count": 1,
    "search_volume_size_gb": 10,
    "search_engine_version": "OpenSearch_2.19",
    "search_standby_replicas": "auto",
    "embedding_provider": "bedrock",
    "bedrock_model_id": c.BEDROCK_EMBEDDING_MODEL_ID,
    "openai_secret_name": c.DEFAULT_OPENAI_SECRET_NAME,
    "lambda_architecture": "arm64",
    "log_level": c.LOG_LEVEL,
    "log_retention_days": c.LOG_RETENTION_DAYS,
    "retain_data": "auto",
    "api_rate_limit_per_minute": c.DEFAULT_RATE_LIMIT_PER_MINUTE,
    "api_burst_limit": c.DEFAULT_BURST_LIMIT,
    "api_daily_quota": 0,
    "api_key_required": True,
    "api_gateway_account_role": True,
    "alarm_email": "",
    "xray_sdk_on_request_path": False,
    # OAuth 2.1 for /mcp (claude.ai connectors and other hosted MCP clients): a Cognito user pool as
    # the authorization server. Off by default: API keys work everywhere without it.
    "oauth": False,
    "oauth_callback_urls": ",".join(c.DEFAULT_OAUTH_CALLBACK_URLS),
    "oauth_domain_prefix": "",
    "connections_secret_name": c.DEFAULT_CONNECTIONS_SECRET_NAME,
    # The URL clients use when it is not the API's execute-api URL (a custom domain): OAuth tokens
    # are bound to <public_url>/mcp, and connection providers send users back and deliver webhooks there.
    "public_url": "",
    # Recall's optional rerank stage through Amazon Bedrock's Rerank API: "" (off), amazon.rerank-v1:0
    # or cohere.rerank-v3-5:0; the API function alone is granted that one model.
    "rerank_model": "",
    "rerank_top_n": c.DEFAULT_RERANK_TOP_N,
    # The Bedrock model that draws facts from conversations (POST /v3/conversations): a model id usable
    # with the Converse API (an inference profile id included), "" (off: conversations are saved, no
    # fact is extracted, answers say so), or "auto": Amazon Nova Micro as the deploying Region offers it
    # (on demand, or through its geography's cross-Region inference profile; off where neither, with
    # the reason printed at synth).
    "llm_model": AUTO,
    # The Region the stack is deployed to, when synth should not take the CDK CLI's (CDK_DEFAULT_REGION,
    # else AWS_REGION or AWS_DEFAULT_REGION): it decides what `llm_model: auto` means.
    "region": "",
    # "full": an alarm on every function and queue, a dashboard, every memlane metric; "lean": the
    # alarms that say data is not being written or served, no dashboard, only the metric an alarm reads
    # (docs/deploy.md, "Cost": the saving line by line).
    "observability": "full",
}
# `-c searchBackend=…` is read as `search_backend` (docs/deploy.md names it so; the rest of the context
# is snake_case). cdk.json always holds search_backend's default, so the alias, when given, wins.
CONTEXT_ALIASES = {"searchBackend": "search_backend"}

SEARCH_BACKENDS = ("managed", "serverless", "s3vectors")
OBSERVABILITY = ("full", "lean")
REGION_PATTERN = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d+$")
# Where the Region comes from when the context does not name it, in order (the CDK CLI sets the first).
REGION_VARIABLES = ("CDK_DEFAULT_REGION", "AWS_REGION", "AWS_DEFAULT_REGION")
LLM_MODEL_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.\-]*(:[0-9a-z.\-]+)*$")
EMBEDDING_PROVIDERS = ("bedrock", "openai")
STANDBY_REPLICAS = ("auto", "ENABLED", "DISABLED")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# Stage names end up in resource names with tight limits (OpenSearch domain ≤ 28 characters,
# OpenSearch Serverless collection and policy names ≤ 32).
DOMAIN_PREFIX_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
RESERVED_IN_DOMAIN = re.compile(r"aws|amazon|cognito")
STAGE_PATTERN = re.compile(r"^[a-z][a-z0-9-]{0,11}$")
# CloudWatch Logs accepts only these retention periods.
LOG_RETENTION_CHOICES = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)


class ConfigError(ValueError):
    """A context value that cannot be deployed; the message names the key and the choices."""


@dataclass(frozen=True)
class DeploymentConfig:
    stage: str
    search_backend: str
    search_instance_type: str
    search_instance_count: int
    search_volume_size_gb: int
    search_engine_version: str
    search_standby_replicas: str  # resolved: ENABLED | DISABLED
    embedding_provider: str
    bedrock_model_id: str
    openai_secret_name: str
    lambda_architecture: str
    log_level: str
    log_retention_days: int
    retain_data: bool
    api_rate_limit_per_minute: int
    api_burst_limit: int
    api_daily_quota: int
    api_key_required: bool
    api_gateway_account_role: bool
    alarm_email: str
    xray_sdk_on_request_path: bool
    connections_secret_name: str  # the OAuth clients of the connection providers (docs/deploy.md)
    layer_asset: str | None
    oauth: bool = False
    oauth_callback_urls: tuple[str, ...] = c.DEFAULT_OAUTH_CALLBACK_URLS
    oauth_domain_prefix: str = ""
    rerank_model: str = ""  # "" = no rerank stage
    rerank_top_n: int = c.DEFAULT_RERANK_TOP_N
    llm_model: str = c.DEFAULT_LLM_MODEL  # "" = no fact extraction
    # The deploying Region when known at synth ("" otherwise), and what `llm_model: auto` chose and why
    # (printed at synth); llm_model_for_region: the choice holds only in that Region (a deploy rule checks).
    region: str = ""
    llm_model_note: str = ""
    llm_model_for_region: bool = False
    public_url: str = ""  # a custom domain for /mcp tokens, OAuth callbacks and webhooks; "" = the API's own URL
    observability: str = "full"  # "full" | "lean"

    @property
    def stack_name(self) -> str:
        return f"{c.SERVICE_NAME}-{self.stage}"

    @property
    def resource_prefix(self) -> str:
        return f"{c.SERVICE_NAME}-{self.stage}"

    @property
    def api_rate_limit_per_second(self) -> float:
        return round(self.api_rate_limit_per_minute / 60, 2)

    @classmethod
    def from_context(cls, get: Callable[[str], Any], environ: Mapping[str, str] | None = None) -> DeploymentConfig:
        """`get` is `node.try_get_context`; missing keys fall back to DEFAULT_CONTEXT. `environ` (the
        process environment by default) gives the deploying Region when the context does not."""

        def value(key: str) -> Any:
            found = _aliased(get, key)
            return DEFAULT_CONTEXT.get(key) if found is None else found

        stage = str(value("stage"))
        if not STAGE_PATTERN.match(stage):
            raise ConfigError(
                f"stage={stage!r}: use 1-12 lowercase letters, digits or '-', starting with a letter"
            )
        standby = _choice("search_standby_replicas", value("search_standby_replicas"), STANDBY_REPLICAS)
        retain = value("retain_data")
        instance_count = _positive_int("search_instance_count", value("search_instance_count"))
        if instance_count > 1 and instance_count % 2 and instance_count % 3:
            raise ConfigError(
                f"search_instance_count={instance_count}: with more than one node, use a multiple of 2 or 3 "
                "so the nodes spread evenly over 2 or 3 Availability Zones"
            )
        retention = _positive_int("log_retention_days", value("log_retention_days"))
        if retention not in LOG_RETENTION_CHOICES:
            raise ConfigError(
                f"log_retention_days={retention}: CloudWatch Logs accepts {LOG_RETENTION_CHOICES}"
            )
        layer_asset = get(c.CONTEXT_LAYER_ASSET)
        region = _region(value("region"), os.environ if environ is None else environ)
        llm_model, llm_note = resolve_llm_model(value("llm_model"), region)
        return cls(
            stage=stage,
            search_backend=_choice("search_backend", value("search_backend"), SEARCH_BACKENDS),
            search_instance_type=_non_empty("search_instance_type", value("search_instance_type")),
            search_instance_count=instance_count,
            search_volume_size_gb=_positive_int(
                "search_volume_size_gb", value("search_volume_size_gb"), minimum=10
            ),
            search_engine_version=_non_empty("search_engine_version", value("search_engine_version")),
            search_standby_replicas=(
                ("DISABLED" if stage == "dev" else "ENABLED") if standby == "auto" else standby
            ),
            embedding_provider=_choice(
                "embedding_provider", value("embedding_provider"), EMBEDDING_PROVIDERS
            ),
            bedrock_model_id=_non_empty("bedrock_model_id", value("bedrock_model_id")),
            openai_secret_name=_non_empty("openai_secret_name", value("openai_secret_name")),
            lambda_architecture=_choice("lambda_architecture", value("lambda_architecture"), c.ARCHITECTURES),
            log_level=_choice("log_level", str(value("log_level")).upper(), LOG_LEVELS),
            log_retention_days=retention,
            retain_data=(stage != "dev")
            if str(retain).lower() == "auto"
            else _as_bool("retain_data", retain),
            api_rate_limit_per_minute=_positive_int(
                "api_rate_limit_per_minute", value("api_rate_limit_per_minute")
            ),
            api_burst_limit=_positive_int("api_burst_limit", value("api_burst_limit")),
            api_daily_quota=_positive_int("api_daily_quota", value("api_daily_quota"), minimum=0),
            api_key_required=_as_bool("api_key_required", value("api_key_required")),
            api_gateway_account_role=_as_bool("api_gateway_account_role", value("api_gateway_account_role")),
            alarm_email=str(value("alarm_email") or ""),
            xray_sdk_on_request_path=_as_bool("xray_sdk_on_request_path", value("xray_sdk_on_request_path")),
            connections_secret_name=_non_empty("connections_secret_name", value("connections_secret_name")),
            layer_asset=str(layer_asset) if layer_asset else None,
            oauth=_as_bool("oauth", value("oauth")),
            oauth_callback_urls=_callback_urls(value("oauth_callback_urls")),
            oauth_domain_prefix=_domain_prefix(value("oauth_domain_prefix")),
            public_url=_public_url(value("public_url")),
            rerank_model=_rerank_model(value("rerank_model")),
            rerank_top_n=_rerank_top_n(value("rerank_top_n")),
            llm_model=llm_model,
            region=region,
            llm_model_note=llm_note,
            llm_model_for_region=str(value("llm_model")).strip() == AUTO and bool(llm_model),
            observability=_choice("observability", value("observability"), OBSERVABILITY),
        )

    @classmethod
    def from_mapping(cls, context: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> DeploymentConfig:
        return cls.from_context(context.get, {} if environ is None else environ)


def _aliased(get: Callable[[str], Any], key: str) -> Any:
    """The context value of `key`, or of its camelCase alias (CONTEXT_ALIASES) when that is given: an
    alias given with `-c` wins over the snake_case default in cdk.json."""
    alias = next((a for a, k in CONTEXT_ALIASES.items() if k == key), None)
    given = get(alias) if alias else None
    return get(key) if given is None else given


def _rerank_model(raw: Any) -> str:
    text = str(raw or "").strip()
    if text and text not in c.RERANK_MODELS:
        raise ConfigError(f"rerank_model={text!r}: choose one of {', '.join(c.RERANK_MODELS)}, or leave it empty (off)")
    return text


def _region(raw: Any, environ: Mapping[str, str]) -> str:
    text = str(raw or "").strip() or next((environ[v].strip() for v in REGION_VARIABLES if environ.get(v)), "")
    if text and not REGION_PATTERN.match(text):
        raise ConfigError(f"region={text!r}: an AWS Region code such as us-east-1")
    return text


def resolve_llm_model(raw: Any, region: str) -> tuple[str, str]:
    """The LLM model id to deploy and, for `auto`, why. Amazon Nova Micro is invocable on demand in
    us-east-1 only; elsewhere through its geography's cross-Region inference profile (`us.`, `eu.`,
    `apac.`), from the Regions that profile serves; anywhere else there is no default: extraction is
    off and the reason says what to choose."""
    text = str(raw if raw is not None else "").strip()
    if text != AUTO:
        return _llm_model(text), ""
    model = c.DEFAULT_LLM_MODEL
    if not region:
        return "", (f"llm_model=auto: the Region to deploy to is not known at synth (no -c region=, "
                    f"{', '.join(REGION_VARIABLES)}), so fact extraction is off; name the Region or a model")
    if region in c.LLM_ON_DEMAND_REGIONS:
        return model, f"llm_model=auto: {model} on demand in {region}"
    for geography, regions in c.INFERENCE_PROFILE_DESTINATIONS.items():
        if region in regions:
            profile = f"{geography}.{model}"
            return profile, f"llm_model=auto: {model} through the {geography} inference profile {profile} in {region}"
    return "", (f"llm_model=auto: {model} is not offered in {region} (on demand or through an inference "
                f"profile), so fact extraction is off; choose a model offered there with -c llm_model=<id>")


def _llm_model(raw: Any) -> str:
    text = str(raw if raw is not None else "").strip()
    if text and not LLM_MODEL_PATTERN.match(text):
        raise ConfigError(f"llm_model={text!r}: a Bedrock model id (amazon.nova-micro-v1:0), or empty (off)")
    return text


def _rerank_top_n(raw: Any) -> int:
    number = _positive_int("rerank_top_n", raw)
    if number > 100:
        raise ConfigError(f"rerank_top_n={number}: at most 100 (Bedrock bills every 100 documents as another query)")
    return number


def _choice(key: str, raw: Any, choices: tuple[str, ...]) -> str:
    text = str(raw)
    if text not in choices:
        raise ConfigError(f"{key}={text!r}: choose one of {', '.join(choices)}")
    return text


def _non_empty(key: str, raw: Any) -> str:
    text = str(raw).strip()
    if not text:
        raise ConfigError(f"{key}: must not be empty")
    return text


def _positive_int(key: str, raw: Any, *, minimum: int = 1) -> int:
    try:
        number = int(str(raw))
    except ValueError as exc:
        raise ConfigError(f"{key}={raw!r}: expected a whole number") from exc
    if number < minimum:
        raise ConfigError(f"{key}={number}: must be at least {minimum}")
    return number


def _as_bool(key: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ConfigError(f"{key}={raw!r}: expected true or false")


def _callback_urls(raw: Any) -> tuple[str, ...]:
    """A comma-separated string (as `-c` passes it) or a list (cdk.json). Cognito accepts https
    callbacks, and http only for localhost (RFC 8252 native apps such as Claude Code)."""
    items = raw if isinstance(raw, list | tuple) else str(raw).split(",")
    urls = tuple(u.strip() for u in items if str(u).strip())
    if not urls:
        raise ConfigError("oauth_callback_urls: name at least one redirect URI")
    for url in urls:
        if not (url.startswith("https://") or re.match(r"^http://localhost(:\d+)?/", url)):
            raise ConfigError(f"oauth_callback_urls: {url!r} must be https:// (or http://localhost:<port>/...)")
    return urls


def _domain_prefix(raw: Any) -> str:
    text = str(raw or "").strip()
    if text and (not DOMAIN_PREFIX_PATTERN.match(text) or RESERVED_IN_DOMAIN.search(text)):
        raise ConfigError(
            f"oauth_domain_prefix={text!r}: use lowercase letters, digits and '-' (at most 63, not starting or "
            "ending with '-'), without 'aws', 'amazon' or 'cognito'"
        )
    return text


def _public_url(raw: Any) -> str:
    text = str(raw or "").strip().rstrip("/")
    if text and not re.match(r"^https://[^/\s]+(/[^\s]*)?$", text):
        raise ConfigError(f"public_url={text!r}: expected https://host[/base-path]")
    return text
