"""The AWS SDK the functions run with: the one the dependency layer ships (layers/deps/requirements.txt),
not the Lambda runtime's, whose boto3 is whatever AWS last put in the runtime of that Region. Its pins
are the versions this test suite runs, so the service models the trace's calls were made with are
the ones deployed; every operation the permission trace saw must exist in them (Converse, Rerank and
every other, on both variants)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import boto3
import botocore
import botocore.session
import pytest

pytestmark = pytest.mark.infra

REQUIREMENTS = Path(__file__).resolve().parents[2] / "layers" / "deps" / "requirements.txt"


def pinned(name: str) -> str:
    found = re.search(rf"^{re.escape(name)}==([\w.]+)\s*$", REQUIREMENTS.read_text(), flags=re.MULTILINE)
    assert found, f"{name} is not pinned in {REQUIREMENTS}"
    return found.group(1)


def test_the_layer_pins_the_sdk_the_tests_run():
    assert pinned("boto3") == boto3.__version__
    assert pinned("botocore") == botocore.__version__


@pytest.mark.parametrize("variant", ["dev", "prod"])
def test_every_operation_the_functions_call_exists_in_the_layer_s_sdk(trace_variant: Any, variant: str):
    world, _ = trace_variant(variant)
    operations = {tuple(call.operation.split(".", 1)) for call in world.trace.calls if call.kind == "aws"}
    session = botocore.session.get_session()
    missing = sorted(f"{service}.{operation}" for service, operation in operations
                     if operation not in session.get_service_model(service).operation_names)
    assert missing == []
    # the calls this issue is about are among them
    assert {("bedrock-runtime", "Converse"), ("bedrock-runtime", "InvokeModel")} <= operations
    if variant == "prod":
        assert ("bedrock-agent-runtime", "Rerank") in operations
