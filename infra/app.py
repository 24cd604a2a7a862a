"""Builds the CDK app: the same code path for `cdk synth`, `python app.py` and the infra tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aws_cdk import Annotations, App, Tags

from infra import constants as c
from infra.config import DeploymentConfig
from infra.constructs.webapp import CONTEXT_WEBAPP_ASSET, resolve_webapp_dir
from infra.nag import enable_aws_solutions_checks
from infra.packaging import REPO_ROOT, handler_module_path, resolve_layer_dir, stage_function_code
from infra.stack import MemlaneStack

CDK_JSON = REPO_ROOT / "cdk.json"


def cdk_json_context(path: Path = CDK_JSON) -> dict[str, Any]:
    """cdk.json's context (defaults and feature flags). The CDK CLI passes it to the app itself;
    `python app.py` does not run under the CLI, so the app reads it to synthesize the same thing."""
    return dict(json.loads(path.read_text()).get("context", {}))


def build_app(
    context: Mapping[str, Any] | None = None,
    *,
    outdir: str | None = None,
    code_staging_dir: Path | None = None,
) -> tuple[App, MemlaneStack]:
    """The app and its stack. Context precedence: cdk.json < `context` < the CDK CLI's (-c)."""
    app = App(context={**cdk_json_context(), **(context or {})}, outdir=outdir)
    config = DeploymentConfig.from_context(app.node.try_get_context)
    layer_dir = resolve_layer_dir(config.lambda_architecture, config.layer_asset)
    code_dir = stage_function_code(code_staging_dir or REPO_ROOT / c.FUNCTION_ASSET_STAGING_DIR)

    webapp_dir = resolve_webapp_dir(app.node.try_get_context(CONTEXT_WEBAPP_ASSET), REPO_ROOT)

    stack = MemlaneStack(app, config.stack_name, config=config, code_dir=code_dir, layer_dir=layer_dir,
                         webapp_dir=webapp_dir)
    missing = [spec.handler for spec in c.EVERY_FUNCTION if handler_module_path(spec.handler) is None]
    if missing:
        Annotations.of(stack).add_warning_v2(
            "memlane:missing-handlers",
            "These handler modules are not in the function asset yet, so invoking them would fail: "
            + ", ".join(missing),
        )
    if config.llm_model_note:
        Annotations.of(stack).add_info(config.llm_model_note)
    Tags.of(app).add("project", c.SERVICE_NAME)
    Tags.of(app).add("memlane:stage", config.stage)
    enable_aws_solutions_checks(app)
    return app, stack
