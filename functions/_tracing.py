"""The Powertools Tracer, or nothing, per function: `MEMLANE_XRAY_SDK`.

Every function runs with Lambda's active tracing, which records the invocation in X-Ray without
any SDK. Powertools' `Tracer()` adds subsegments for the handler and every boto3/httpx call, at the
price of importing the X-Ray SDK (and botocore through it) during the cold start: about 250 ms on
a 2-core machine, more than half of the API handler's import time. So the functions on the
request path (the API and the authorizer) are deployed with `MEMLANE_XRAY_SDK=false` unless the
cdk.json context `xray_sdk_on_request_path` asks for it; the background functions keep the SDK.
Unset means on, as with a plain `Tracer()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from memlane.config.aws import ENV_XRAY_SDK as ENV_XRAY_SDK  # FunctionSettings.xray_sdk

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

F = TypeVar("F", bound=Callable[..., Any])


class Untraced:
    """Stands in for `Tracer` where the SDK is off: its decorators return the function as is."""

    def capture_lambda_handler(self, handler: F) -> F:
        return handler

    def capture_method(self, method: F) -> F:
        return method


def lambda_tracer(xray_sdk: bool) -> Tracer | Untraced:
    """A Powertools `Tracer()` when the X-Ray SDK is on for this function
    (FunctionSettings.xray_sdk), else `Untraced()`."""
    if not xray_sdk:
        return Untraced()
    from aws_lambda_powertools import Tracer

    return Tracer()
