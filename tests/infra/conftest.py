"""Infra tests synthesize memlane's CDK app offline (no Docker, no AWS, no network) and assert on the
CloudFormation it produces.

Each deployment variant is synthesized once per session, lazily (a test run that needs only the
default variant pays for one synthesis). The dependency layer is replaced by a tiny directory
passed with `-c layer_asset=`: the tests check templates, not wheels.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# The repository root (for `infra`, `layers`) and this folder (for infra_helpers).
for path in (REPO_ROOT, Path(__file__).resolve().parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from infra_helpers import Synth  # noqa: E402

VARIANTS: dict[str, dict[str, str]] = {
    # The cdk.json defaults: stage dev, managed OpenSearch domain, Bedrock embeddings, arm64, deployed
    # to us-east-1 (where the default LLM, Amazon Nova Micro, is invocable on demand).
    "dev": {"region": "us-east-1"},
    # The other search backend and the other embedding provider, with a daily quota.
    "serverless": {
        "search_backend": "serverless",
        "embedding_provider": "openai",
        "api_daily_quota": "10000",
        # in us-west-2: the default LLM through the us. cross-Region inference profile
        "region": "us-west-2",
    },
    # A production-like stage: data retained, two search nodes, x86_64, e-mail alarms, OAuth for /mcp
    # (a Cognito user pool), the rerank stage, values as the CLI passes them (strings).
    "prod": {
        "stage": "prod",
        "oauth": "true",
        "oauth_callback_urls": "https://claude.ai/api/mcp/auth_callback,http://localhost:8765/callback",
        "search_instance_count": "2",
        "lambda_architecture": "x86_64",
        "api_gateway_account_role": "false",
        "alarm_email": "ops@example.com",
        "xray_sdk_on_request_path": "true",
        # recall's rerank stage on, through Bedrock's Rerank API with Cohere Rerank 3.5
        "rerank_model": "cohere.rerank-v3-5:0",
        "rerank_top_n": "40",
        # in the EU: the default LLM through the eu. cross-Region inference profile
        "region": "eu-west-1",
    },
    # Amazon S3 Vectors instead of OpenSearch, named as docs/deploy.md names it (the camelCase alias),
    # with lean observability: the near-zero idle bill (issue 37); in us-east-1 like dev.
    "s3vectors": {
        "searchBackend": "s3vectors",
        "observability": "lean",
        "region": "us-east-1",
    },
}


@pytest.fixture(scope="session")
def fake_layer(tmp_path_factory) -> Path:
    layer = tmp_path_factory.mktemp("layer")
    (layer / "python").mkdir()
    (layer / "python" / "memlane_test_layer.py").write_text("# stands in for the dependency layer\n")
    return layer


@pytest.fixture(scope="session")
def fake_webapp(tmp_path_factory) -> Path:
    """Stands in for the built web app (web/dist): the tests check templates, not the app."""
    app = tmp_path_factory.mktemp("webapp")
    (app / "index.html").write_text("<!doctype html><title>memlane</title>\n")
    return app


@pytest.fixture(scope="session")
def synth_variant(tmp_path_factory, fake_layer, fake_webapp):
    cache: dict[str, Synth] = {}

    def synth(name: str) -> Synth:
        if name not in cache:
            from infra.app import build_app

            outdir = tmp_path_factory.mktemp(f"cdk-{name}")
            context = {"layer_asset": str(fake_layer), "webapp_asset": str(fake_webapp), **VARIANTS[name]}
            app, stack = build_app(
                context, outdir=str(outdir / "cdk.out"), code_staging_dir=outdir / "lambda-src"
            )
            assembly = app.synth()
            artifact = assembly.get_stack_by_name(stack.stack_name)
            template_path = Path(artifact.template_full_path)
            cache[name] = Synth(
                name=name,
                stack=stack,
                app=app,
                outdir=Path(assembly.directory),
                template_path=template_path,
                template_json=json.loads(template_path.read_text()),
            )
        return cache[name]

    return synth


@pytest.fixture(scope="session")
def dev(synth_variant) -> Synth:
    return synth_variant("dev")


@pytest.fixture(scope="session")
def serverless(synth_variant) -> Synth:
    return synth_variant("serverless")


@pytest.fixture(scope="session")
def prod(synth_variant) -> Synth:
    return synth_variant("prod")


@pytest.fixture(scope="session")
def s3vectors(synth_variant) -> Synth:
    return synth_variant("s3vectors")


@pytest.fixture(scope="session", params=["dev", "serverless", "prod", "s3vectors"])
def every_variant(request, synth_variant) -> Synth:
    return synth_variant(request.param)


@pytest.fixture(scope="session")
def trace_variant(synth_variant):
    """A variant deployed in moto and run through every function's paths (tests/infra/trace_scenarios.py),
    once per session: the permission trace and the environment test read the same run. What it returns
    is data (the trace, the outcomes, the reads); moto is stopped before it is handed out."""
    cache: dict[str, tuple] = {}

    def run(name: str) -> tuple:
        if name not in cache:
            from trace_scenarios import run_scenarios

            synth = synth_variant(name)
            cache[name] = run_scenarios(synth.template_json, synth.stack)
        return cache[name]

    return run
