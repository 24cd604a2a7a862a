"""Lambda functions: the handlers memlane provides, one runtime, one code asset, one layer, and
least-privilege roles."""

from __future__ import annotations

import json

import pytest
from infra_helpers import as_list, function_by_handler, function_role, memlane_functions, role_policies

from infra import constants as c
from memlane.adapters.aws import dynamo_schema as schema

pytestmark = pytest.mark.infra

EXPECTED_HANDLERS = {
    "functions.api.handler.handler",
    "functions.authorizer.handler.handler",
    "functions.ingest_consumer.handler.handler",
    "functions.steps.extract.handler",
    "functions.steps.transcribed.handler",
    "functions.steps.prepare.handler",
    "functions.steps.embed.handler",
    "functions.steps.write.handler",
    "functions.steps.mark_failed.handler",
    "functions.forget_job.handler.handler",
    "functions.refresh_job.handler.handler",
    "functions.page_worker.handler.handler",
    "functions.admin_keys.handler.handler",
    "functions.connection_schedule.handler.handler",
    "functions.connection_sync.handler.handler",
    "functions.extract_consumer.handler.handler",
}


def test_one_function_per_entry_point(dev):
    handlers = [f["Properties"]["Handler"] for f in memlane_functions(dev).values()]
    assert sorted(handlers) == sorted(EXPECTED_HANDLERS)


def test_functions_share_runtime_architecture_tracing_and_powertools_settings(dev, prod):
    for synth, arch in ((dev, "arm64"), (prod, "x86_64")):
        # memlane's dependency layer (CDK's BucketDeployment brings its own AWS CLI layer)
        (layer_id,) = [k for k, v in synth.of_type("AWS::Lambda::LayerVersion").items()
                       if "CompatibleArchitectures" in v["Properties"]]
        layer = synth.props(layer_id)
        assert layer["CompatibleArchitectures"] == [arch]
        assert layer["CompatibleRuntimes"] == ["python3.12"]
        for function in memlane_functions(synth).values():
            props = function["Properties"]
            assert props["Runtime"] == "python3.12"
            assert props["Architectures"] == [arch]
            assert props["TracingConfig"] == {"Mode": "Active"}
            assert props["Layers"] == [{"Ref": layer_id}]
            env = props["Environment"]["Variables"]
            assert env["POWERTOOLS_SERVICE_NAME"] == "memlane"
            assert env["LOG_LEVEL"] == "INFO"
            assert env[c.ENV_STAGE] == synth.stack.config.stage
            assert env[schema.ENV_TABLE] == {"Ref": next(iter(synth.of_type("AWS::DynamoDB::Table")))}
            assert schema.ENV_BUCKET in env
            assert schema.ENV_INGEST_QUEUE_URL in env
            assert schema.ENV_PAGE_QUEUE_URL in env


def test_the_xray_sdk_stays_off_the_request_path_unless_asked_for(dev, prod):
    """functions/_tracing.py reads the setting: the API and the authorizer skip Powertools' Tracer
    (~250 ms of cold start) by default; prod's context turns it on everywhere."""
    request_path = {"functions.api.handler.handler", "functions.authorizer.handler.handler"}
    for synth, on_request_path in ((dev, "false"), (prod, "true")):
        for function in memlane_functions(synth).values():
            props = function["Properties"]
            expected = on_request_path if props["Handler"] in request_path else "true"
            assert props["Environment"]["Variables"][c.ENV_XRAY_SDK] == expected, props["Handler"]


def test_every_function_logs_to_its_own_log_group_with_a_retention(every_variant):
    groups = set()
    for function in memlane_functions(every_variant).values():
        group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert every_variant.props(group)["RetentionInDays"] == 30
        groups.add(group)
    # and the vector bucket's custom resource where S3 Vectors is the search index
    assert len(groups) == len(c.ALL_FUNCTIONS) + (every_variant.name == "s3vectors")


def test_timeouts_and_memory_follow_the_specs(dev):
    for spec in c.ALL_FUNCTIONS:
        _, function = function_by_handler(dev, spec.handler)
        assert function["Properties"]["Timeout"] == spec.timeout_s
        assert function["Properties"]["MemorySize"] == spec.memory_mb
    _, api = function_by_handler(dev, c.API_FUNCTION.handler)
    assert api["Properties"]["Timeout"] < 29  # API Gateway's integration timeout


def test_code_asset_holds_memlane_and_functions_with_the_test_import_paths(dev):
    keys = {f["Properties"]["Code"]["S3Key"] for f in memlane_functions(dev).values()}
    assert len(keys) == 1  # one shared asset, staged in the cloud assembly as asset.<hash>
    asset = dev.outdir / f"asset.{keys.pop().removesuffix('.zip')}"
    assert (asset / "memlane" / "adapters" / "aws" / "dynamo_schema.py").is_file()
    assert (asset / "functions").is_dir()
    assert sorted(p.name for p in asset.iterdir()) == ["functions", "memlane"]
    assert not list(asset.rglob("__pycache__"))


def test_roles_use_no_aws_managed_policies_and_no_wildcard_actions(every_variant):
    for function in memlane_functions(every_variant).values():
        role = every_variant.props(function_role(function))
        assert "ManagedPolicyArns" not in role
        for statement in role_policies(every_variant, function_role(function)):
            for action in as_list(statement["Action"]):
                assert "*" not in action, (function["Properties"]["Handler"], action)


def test_only_xray_textract_and_rerank_are_granted_on_every_resource(every_variant):
    textract_readers, rerankers = set(), set()
    for function in memlane_functions(every_variant).values():
        for statement in role_policies(every_variant, function_role(function)):
            if "*" in as_list(statement["Resource"]):
                actions = set(as_list(statement["Action"]))
                # DetectDocumentText and Rerank have no resource-level permissions (CDK merges them with X-Ray's)
                if "textract:DetectDocumentText" in actions:
                    textract_readers.add(function["Properties"]["Handler"])
                if "bedrock:Rerank" in actions:
                    rerankers.add(function["Properties"]["Handler"])
                assert actions - {"textract:DetectDocumentText", "bedrock:Rerank"} <= {"xray:PutTraceSegments",
                                                                                        "xray:PutTelemetryRecords"}
    # images are read in the save request, longer scans in the workflow's Extract step
    assert textract_readers == {c.API_FUNCTION.handler, c.EXTRACT_FUNCTION.handler}
    # recall reranks in the API function, and only where the variant turns the stage on (prod)
    assert rerankers == ({c.API_FUNCTION.handler} if every_variant.name == "prod" else set())


def test_table_grants_name_indexes_explicitly(every_variant):
    for function in memlane_functions(every_variant).values():
        for statement in role_policies(every_variant, function_role(function)):
            if any(str(a).startswith("dynamodb:") for a in as_list(statement["Action"])):
                assert "/index/*" not in json.dumps(statement["Resource"])


def test_bedrock_model_access_only_where_text_is_embedded(dev):
    users = set()
    for function in memlane_functions(dev).values():
        for statement in role_policies(dev, function_role(function)):
            if "bedrock:InvokeModel" in as_list(statement["Action"]):
                for resource in as_list(statement["Resource"]):
                    if json.dumps(resource).endswith(f':foundation-model/{c.DEFAULT_LLM_MODEL}"]]}}'):
                        # the extraction LLM (tests/infra/test_infra_extraction.py): its function alone
                        assert function["Properties"]["Handler"] == c.EXTRACTION_CONSUMER_FUNCTION.handler
                        continue
                    users.add(function["Properties"]["Handler"])
                    assert json.dumps(resource).endswith(':foundation-model/amazon.titan-embed-text-v2:0"]]}')
    # Write and the forget job embed too: the memories next to one written or removed are indexed again
    # (memlane.documents.writer.DocumentWriter.rebuild)
    assert users == {c.API_FUNCTION.handler, c.EMBED_FUNCTION.handler, c.PAGE_WORKER_FUNCTION.handler,
                     c.CONNECTION_SYNC_FUNCTION.handler, c.EXTRACTION_CONSUMER_FUNCTION.handler,
                     c.WRITE_FUNCTION.handler, c.FORGET_FUNCTION.handler}
    _, api = function_by_handler(dev, c.API_FUNCTION.handler)
    assert api["Properties"]["Environment"]["Variables"][schema.ENV_EMBEDDER] == "bedrock"


def test_openai_secret_is_read_by_name_only_where_a_model_is_called(serverless):
    readers = set()
    for function in memlane_functions(serverless).values():
        env = function["Properties"]["Environment"]["Variables"]
        assert env[schema.ENV_EMBEDDER] == "openai"
        assert env[schema.ENV_OPENAI_SECRET_NAME] == c.DEFAULT_OPENAI_SECRET_NAME
        for statement in role_policies(serverless, function_role(function)):
            if "secretsmanager:GetSecretValue" in as_list(statement["Action"]):
                readers.add(function["Properties"]["Handler"])
                assert ":secret:memlane/openai-api-key-??????" in json.dumps(statement["Resource"])
            if function["Properties"]["Handler"] != c.EXTRACTION_CONSUMER_FUNCTION.handler:
                # the extraction LLM is on Bedrock whichever embedder (tests/infra/test_infra_extraction.py)
                assert "bedrock:InvokeModel" not in as_list(statement["Action"])
    assert readers == {
        c.API_FUNCTION.handler,
        c.EMBED_FUNCTION.handler,
        c.PREPARE_FUNCTION.handler,
        c.PAGE_WORKER_FUNCTION.handler,
        c.CONNECTION_SYNC_FUNCTION.handler,
        c.EXTRACTION_CONSUMER_FUNCTION.handler,  # facts are embedded like any save
        c.WRITE_FUNCTION.handler,  # the neighbours of what it wrote are embedded again
        c.FORGET_FUNCTION.handler,  # the neighbours of a forgotten message are embedded again
    }
    assert not serverless.of_type("AWS::SecretsManager::Secret")  # the operator creates it


def test_content_deletes_are_granted_where_a_document_is_removed_or_stored(dev):
    deleters = {
        function["Properties"]["Handler"]
        for function in memlane_functions(dev).values()
        for statement in role_policies(dev, function_role(function))
        if "s3:DeleteObjectVersion" in as_list(statement["Action"])
    }
    # Removal (the API, the forget job, the page worker, a connection's sync) deletes every version of
    # a document's keys; Write clears its staged work; and every function that stores a document may
    # drop its S3 copy when its content shrinks under 100 KB (the metadata store's put_document).
    assert deleters == {c.API_FUNCTION.handler, c.FORGET_FUNCTION.handler, c.PAGE_WORKER_FUNCTION.handler,
                        c.WRITE_FUNCTION.handler, c.CONNECTION_SYNC_FUNCTION.handler,
                        c.EXTRACT_FUNCTION.handler, c.PREPARE_FUNCTION.handler, c.TRANSCRIBED_FUNCTION.handler,
                        c.EXTRACTION_CONSUMER_FUNCTION.handler}
    # and no function is granted a plain DeleteObject: S3BlobStore deletes versions only
    assert not [s for f in memlane_functions(dev).values() for s in role_policies(dev, function_role(f))
                if "s3:DeleteObject" in as_list(s["Action"])]


def test_only_the_operator_keys_function_may_scan_the_table(dev):
    scanners = {
        function["Properties"]["Handler"]
        for function in memlane_functions(dev).values()
        for statement in role_policies(dev, function_role(function))
        if "dynamodb:Scan" in as_list(statement["Action"])
    }
    assert scanners == {c.KEYS_FUNCTION.handler}


def test_the_rerank_stage_is_granted_to_the_api_function_alone_and_reaches_its_one_model(dev, prod):
    # Given the prod variant turns it on with Cohere Rerank 3.5 (tests/infra/conftest.py)
    rerank_arn = ':foundation-model/cohere.rerank-v3-5:0"]]}'
    rerankers, invokers = set(), set()
    for function in memlane_functions(prod).values():
        handler = function["Properties"]["Handler"]
        for statement in role_policies(prod, function_role(function)):
            actions = as_list(statement["Action"])
            if "bedrock:Rerank" in actions:
                rerankers.add(handler)
                assert as_list(statement["Resource"]) == ["*"]  # no resource-level permissions
            if "bedrock:InvokeModel" in actions:
                resources = [json.dumps(r) for r in as_list(statement["Resource"])]
                assert all(r.endswith(rerank_arn) or r.endswith(':foundation-model/amazon.titan-embed-text-v2:0"]]}')
                           or (c.DEFAULT_LLM_MODEL in r and handler == c.EXTRACTION_CONSUMER_FUNCTION.handler)
                           for r in resources), resources  # the embedder's, the reranker's, the extraction LLM's
                if any(r.endswith(rerank_arn) for r in resources):
                    invokers.add(handler)
    assert rerankers == invokers == {c.API_FUNCTION.handler}
    _, api = function_by_handler(prod, c.API_FUNCTION.handler)
    env = api["Properties"]["Environment"]["Variables"]
    assert env[c.ENV_RERANK_MODEL_ID] == "cohere.rerank-v3-5:0" and env[c.ENV_RERANK_TOP_N] == "40"
    # and by default (dev) it is off: no grant, no setting
    for function in memlane_functions(dev).values():
        assert c.ENV_RERANK_MODEL_ID not in function["Properties"]["Environment"]["Variables"]
        for statement in role_policies(dev, function_role(function)):
            assert "bedrock:Rerank" not in as_list(statement["Action"])
            assert "rerank" not in json.dumps(statement["Resource"])


def test_rerank_settings_are_checked_before_synthesis():
    from infra.config import ConfigError, DeploymentConfig

    assert DeploymentConfig.from_mapping({}).rerank_model == ""
    with pytest.raises(ConfigError, match="rerank_model='amazon.titan-embed-text-v2:0': choose one of"):
        DeploymentConfig.from_mapping({"rerank_model": "amazon.titan-embed-text-v2:0"})
    with pytest.raises(ConfigError, match="rerank_top_n=500: at most 100"):
        DeploymentConfig.from_mapping({"rerank_model": "amazon.rerank-v1:0", "rerank_top_n": "500"})


def test_the_stack_and_the_function_name_the_rerank_settings_alike():
    from memlane.adapters.aws.bedrock_reranker import RERANK_MODELS
    from memlane.config import aws
    from memlane.ports.rerank import DEFAULT_RERANK_TOP_N, MAX_RERANK_TOP_N

    # infra/constants.py keeps its own copies (it imports only memlane's ground floor): the same names
    for name in ("ENV_RERANK_MODEL_ID", "ENV_RERANK_TOP_N", "ENV_BEDROCK_MODEL_ID", "ENV_USAGE_PLAN_ID",
                 "ENV_USAGE_PLAN_NAME", "ENV_XRAY_SDK"):
        assert getattr(c, name) == getattr(aws, name), name
    assert c.ENV_POWERTOOLS_METRICS_NAMESPACE == aws.ENV_METRICS_NAMESPACE
    assert c.RERANK_MODELS == RERANK_MODELS and c.DEFAULT_RERANK_TOP_N == DEFAULT_RERANK_TOP_N
    assert MAX_RERANK_TOP_N == 100  # infra/config.py refuses rerank_top_n above it
