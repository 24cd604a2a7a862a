"""functions/_tracing.py: the X-Ray SDK switch each function is deployed with."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from functions import _tracing
from infra import constants as c

REPO_ROOT = Path(__file__).resolve().parents[2]

IMPORTED_AFTER = """
import sys
import {module}
print(" ".join(sorted(sys.modules)))
"""


def _modules_after_import(module: str, xray_sdk: str) -> set[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_DEFAULT_REGION": "us-east-1",
        "LAMBDA_TASK_ROOT": str(REPO_ROOT),
        c.ENV_XRAY_SDK: xray_sdk,
        "PYTHONPATH": str(REPO_ROOT),
    }
    result = subprocess.run(
        [sys.executable, "-c", IMPORTED_AFTER.format(module=module)],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return set(result.stdout.split())


def test_the_setting_names_the_same_variable_as_the_infra():
    assert _tracing.ENV_XRAY_SDK == c.ENV_XRAY_SDK


@pytest.mark.parametrize(
    ("value", "enabled"),
    [
        (None, True),
        ("true", True),
        ("1", True),
        ("false", False),
        ("0", False),
        (" OFF ", False),
        ("no", False),
    ],
)
def test_unset_means_on_like_a_plain_tracer(value, enabled):
    from memlane.config.aws import FunctionSettings

    assert FunctionSettings.from_env({} if value is None else {c.ENV_XRAY_SDK: value}).xray_sdk is enabled


def test_a_value_that_is_neither_on_nor_off_stops_the_function_at_import():
    from memlane.config.aws import FunctionSettings
    from memlane.domain.errors import ConfigurationError

    # the parser before the settings model read anything but 0/false/no/off as on
    with pytest.raises(ConfigurationError, match="MEMLANE_XRAY_SDK='maybe': expected on or off"):
        FunctionSettings.from_env({c.ENV_XRAY_SDK: "maybe"})


def test_untraced_decorators_return_the_function_itself():
    tracer = _tracing.lambda_tracer(False)

    def handler(event, context):
        return {"event": event}

    assert tracer.capture_lambda_handler(handler) is handler
    assert tracer.capture_method(handler) is handler


@pytest.mark.parametrize("module", ["functions.api.handler", "functions.authorizer.handler"])
def test_request_path_handlers_import_neither_the_xray_sdk_nor_botocore(module):
    """What the cold start of the API and the authorizer leaves out (BENCHMARKS.md, lambda):
    the X-Ray SDK and the botocore session its sampler builds; boto3 comes on the first request.
    (Powertools imports the bare `botocore` package for its version: ~1 ms.)"""
    loaded = _modules_after_import(module, "false")
    assert "memlane.api.auth" in loaded
    assert not loaded & {"aws_xray_sdk", "aws_xray_sdk.core", "botocore.session", "boto3"}


def test_the_api_cold_start_leaves_the_crawler_and_extraction_out():
    """The documentation routes import their service where they run (memlane.api.routes.docsets),
    and a save imports extraction where it runs: the crawler and the HTML and PDF parsers load on
    the first request that needs them, not when the API function starts."""
    loaded = _modules_after_import("functions.api.handler", "false")
    assert "memlane.api.routes.docsets" in loaded
    assert not loaded & {"memlane.docsets.service", "memlane.docsets.retrieval", "memlane.ingest.extract",
                         "bs4", "lxml", "pypdf"}


def test_with_the_sdk_on_the_tracer_is_powertools_and_loads_xray():
    loaded = _modules_after_import("functions.forget_job.handler", "true")
    assert "aws_xray_sdk.core" in loaded
