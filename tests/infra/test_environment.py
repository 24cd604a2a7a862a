"""Every setting a function reads is set (reliability.md #32): the variables memlane's code reads
while each function runs its paths (the permission trace's run, tests/infra/trace_scenarios.py,
records every `os.environ` lookup with the file that made it) and when its handler module is first
imported, against the function's environment in the synthesized template plus what the Lambda
runtime sets. A variable read and not set must have a default that is right on AWS: listed below,
with why. The list comes from the code, not from a hand-kept inventory, so it follows a change of
the settings readers; if a reader stops looking variables up by name (a copy of the whole
environment, a settings model that reads it in one sweep), the tripwire test says so.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest
from aws_trace.environ import Read, import_time_reads
from aws_trace.world import HARNESS_VARIABLES, World, short_name

from infra import constants as c
from memlane import observability
from memlane.adapters.aws import dynamo_schema as schema

pytestmark = pytest.mark.infra


@dataclass(frozen=True)
class Default:
    """Why a variable's default is right where it is not set. `required_on` (a regex of function
    names): where it must be set all the same; `with_feature`: where it must be set once any function
    of the stack has it (the feature is on: the rerank stage, OAuth, fact extraction)."""

    reason: str
    required_on: str = ""
    with_feature: str = ""


def _reason(reason: str, *names: str, **where: str) -> dict[str, Default]:
    return dict.fromkeys(names, Default(reason, **where))


API = "ApiApiFunction"


# Variables read and not set, whose default is right on AWS.
FEATURE_OFF = ("a feature this function does not have: unset is off (a function that needs a value it lacks "
               "fails at once, AwsSettings.require, and the trace runs every function's paths)")
DEFAULTS_RIGHT_ON_AWS: dict[str, Default] = {
    **_reason("memlane's recall, fusion, context and write defaults, the same on every host (memlane.config)",
              "MEMLANE_WEIGHT_VECTOR", "MEMLANE_WEIGHT_TEXT", "MEMLANE_WEIGHT_RECENCY",
              "MEMLANE_RECALL_NEIGHBOUR_WEIGHT", "MEMLANE_FUSION_TEXT_REFERENCE", "MEMLANE_FUSION_TEXT_COVERAGE",
              "MEMLANE_CONTEXT_TEXT_WEIGHT", "MEMLANE_CONTEXT_SIDES", "MEMLANE_CONTEXT_VECTOR",
              "MEMLANE_CONTEXT_VECTOR_SIDES", "MEMLANE_FUSION_CODE_TEXT_EVIDENCE", "MEMLANE_FUSION_COMPLETE_LEGS",
              "MEMLANE_INDEX_IDENTIFIER_WORDS", "MEMLANE_EMBEDDER_WINDOW"),
    **_reason("the documentation sets' crawl and ranking defaults, the same on every host (memlane.config.docsets)",
              "MEMLANE_CRAWL_CONCURRENCY", "MEMLANE_CRAWL_MAX_PAGES", "MEMLANE_CRAWL_WORKERS",
              "MEMLANE_DOCSET_CHUNK_OVERLAP", "MEMLANE_DOCSET_CHUNK_TOKENS", "MEMLANE_DOCSET_REFRESH_HOURS",
              "MEMLANE_DOCSET_SUPPORT_CHUNKS", "MEMLANE_DOCSET_WEIGHT_RECENCY", "MEMLANE_DOCSET_WEIGHT_SUPPORT",
              "MEMLANE_DOCSET_WEIGHT_TEXT", "MEMLANE_DOCSET_WEIGHT_VECTOR"),
    **_reason("per-organization budgets whose defaults are the documented ones (docs/deploy.md): media read per "
              "day, LLM tokens per month, characters an MCP answer may carry",
              "MEMLANE_MEDIA_OCR_SECONDS_PER_DAY", "MEMLANE_MEDIA_TEXTRACT_PAGES_PER_DAY",
              "MEMLANE_MEDIA_TRANSCRIBE_MINUTES_PER_DAY", "MEMLANE_MEDIA_TRANSCRIBE_SECONDS_PER_DAY",
              "MEMLANE_LLM_TOKENS_PER_MONTH", "MEMLANE_MCP_MAX_OUTPUT_CHARS"),
    **_reason("20,000 characters are written in the request well inside API Gateway's 29 s; larger saves go "
              "through the queue and the workflow (docs/deploy.md)", "MEMLANE_INLINE_MAX_CHARS"),
    **_reason("no cross-origin browser callers by default: the web app calls the API on its own origin "
              "(CloudFront serves both)", "MEMLANE_ALLOWED_ORIGINS"),
    **_reason("the embedded default's settings, read by the settings reader every host shares; the AWS "
              "composition never uses them (its data is in DynamoDB and S3, its LLM is Bedrock's "
              "MEMLANE_LLM_MODEL_ID, an OpenAI key is read from Secrets Manager by name)",
              "MEMLANE_DATA_DIR", "MEMLANE_LLM", "MEMLANE_LLM_BASE_URL", "MEMLANE_LLM_MODEL", "MEMLANE_LLM_API_KEY",
              "OPENAI_API_KEY"),
    **_reason(FEATURE_OFF, schema.ENV_STATE_MACHINE_ARN, required_on="IngestionIngestConsumerFunction"),
    **_reason(FEATURE_OFF, c.ENV_USAGE_PLAN_ID, required_on="ApiKeysFunction"),
    **_reason(FEATURE_OFF, c.ENV_USAGE_PLAN_NAME, required_on=API),
    **_reason(FEATURE_OFF, schema.ENV_SYNC_QUEUE_URL, schema.ENV_CONNECTIONS_KEY, "MEMLANE_CONNECTIONS_SECRET",
              required_on=f"({API}|ConnectionsConnectionSyncFunction|ConnectionsConnectionScheduleFunction)"),
    **_reason(FEATURE_OFF, schema.ENV_EXTRACTION_QUEUE_URL, schema.ENV_LLM_MODEL_ID,
              with_feature=f"({API}|ExtractionExtractionConsumerFunction)"),
    **_reason(FEATURE_OFF, c.ENV_RERANK_MODEL_ID, c.ENV_RERANK_TOP_N, with_feature=API),
    # the OAuth part is read whole (memlane.config.oauth): without an issuer the others are unused
    **_reason(FEATURE_OFF, "MEMLANE_OAUTH_ISSUER", "MEMLANE_OAUTH_CLIENT_IDS", "MEMLANE_OAUTH_DOMAIN",
              "MEMLANE_OAUTH_RATE_LIMIT_PER_MINUTE", with_feature=f"({API}|ApiAuthorizerFunction)"),
    **_reason(FEATURE_OFF, schema.ENV_OPENAI_SECRET_NAME),
    **_reason("the search index is the other backend: OpenSearch's endpoint where it is S3 Vectors, the vector "
              "bucket where it is OpenSearch (every function is told one of them; AwsSettings.require fails a "
              "function that needs the other)", schema.ENV_SEARCH_ENDPOINT, schema.ENV_VECTOR_BUCKET),
    **_reason("every memlane count is published (observability=full); observability=lean sets `alarmed` on "
              "every function", observability.ENV_METRICS),
    **_reason("the public base URL: where /mcp tokens are bound and connection providers send users back; only "
              "the API and its authorizer answer there", "MEMLANE_PUBLIC_URL",
              required_on=f"({API}|ApiAuthorizerFunction)"),
    **_reason("the rerank stage's weight in the fused score, the same default on every host", "MEMLANE_RERANK_WEIGHT"),
    **_reason("the web app's URL, where the API's OAuth callback sends the browser to confirm a connection; read "
              "wherever connection ports are composed, used by the API alone", "MEMLANE_WEBAPP_URL",
              required_on=API),
}


def _functions_reading(world: World, probe: dict[str, list[Read]]) -> dict[str, list[Read]]:
    """Every read memlane's code made, per function: while it ran, and when its handler was imported."""
    reads: dict[str, list[Read]] = defaultdict(list)
    for invocation in world.invocations:
        reads[invocation.function] += [r for r in invocation.reads if r.by_memlane]
    at_import = [r for module_reads in probe.values() for r in module_reads if r.by_memlane]
    for function in world.template.memlane_functions():
        reads[function] += at_import
    return reads


@pytest.fixture(scope="module", params=["dev", "prod", "s3vectors"])
def reads(request: Any, trace_variant: Any) -> tuple[World, dict[str, list[Read]]]:
    world, _ = trace_variant(request.param)
    handlers = sorted({str(r["Properties"]["Handler"]).rsplit(".", 1)[0]
                       for r in world.template.memlane_functions().values()})
    (api,) = [f for f, r in world.template.memlane_functions().items()
              if r["Properties"]["Handler"] == c.API_FUNCTION.handler]
    probe = import_time_reads(handlers, world.lambda_environment(api))
    return world, _functions_reading(world, probe)


def test_every_function_ran_in_the_trace(reads: tuple[World, dict[str, list[Read]]]) -> None:
    world, _ = reads
    ran = {i.function for i in world.invocations}
    assert ran == set(world.template.memlane_functions())


def test_the_settings_readers_are_seen(reads: tuple[World, dict[str, list[Read]]]) -> None:
    # A tripwire: every function composes its AWS settings; if the reads of MEMLANE_TABLE are not seen, the
    # readers no longer look variables up by name, and this test would pass blind: record them another way
    # (tests/aws_trace/environ.py) before trusting it again.
    world, found = reads
    for function, resource in world.template.memlane_functions().items():
        if resource["Properties"]["Handler"] == c.VECTOR_BUCKET_FUNCTION.handler:
            continue  # the vector bucket's custom resource composes no services: its event says everything
        assert schema.ENV_TABLE in {r.name for r in found[function]}, short_name(function)


def _default_holds(name: str, function: str, stack_sets: set[str]) -> bool:
    default = DEFAULTS_RIGHT_ON_AWS.get(name)
    if default is None:
        return False
    if default.required_on and re.fullmatch(default.required_on, short_name(function)):
        return False
    return not (default.with_feature and name in stack_sets and re.fullmatch(default.with_feature, short_name(function)))


def test_every_variable_a_function_reads_is_set_or_has_a_default_right_on_aws(
        reads: tuple[World, dict[str, list[Read]]]) -> None:
    world, found = reads
    stack_sets = {name for f in world.template.memlane_functions() for name in world.resolve.environment(f)}
    missing: dict[str, set[str]] = defaultdict(set)
    for function, function_reads in found.items():
        environment = set(world.lambda_environment(function)) - set(HARNESS_VARIABLES)
        for read in function_reads:
            if read.name not in environment and not _default_holds(read.name, function, stack_sets):
                missing[read.name].add(f"{short_name(function)} ({read.file.split('/')[-1]}:{read.line})")
    assert not missing, "read but not set, and no reason given why the default is right on AWS:\n" + "\n".join(
        f"{name}: {', '.join(sorted(where))}" for name, where in sorted(missing.items()))


def test_every_default_listed_is_still_read_unset(trace_variant: Any) -> None:
    # An entry no function reads unset any more (now set by the stack, or no longer read) is removed.
    unset_reads: set[str] = set()
    for variant in ("dev", "prod", "s3vectors"):
        world, _ = trace_variant(variant)
        for invocation in world.invocations:
            environment = world.lambda_environment(invocation.function)
            unset_reads |= {r.name for r in invocation.reads if r.by_memlane and r.name not in environment}
    assert sorted(set(DEFAULTS_RIGHT_ON_AWS) - unset_reads) == []
