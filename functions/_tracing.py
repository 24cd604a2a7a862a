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

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

ENV_XRAY_SDK = "MEMLANE_XRAY_SDK"

F = TypeVar("F", bound=Callable[..., Any])


class Untraced:
    """Stands in for `Tracer` where the SDK is off: its decorators return the function as is."""

    def capture_lambda_handler(self, handler: F) -> F:
        return handler

    def capture_method(self, method: F) -> F:
        return method


def xray_sdk_enabled() -> bool:
    return os.getenv(ENV_XRAY_SDK, "true").strip().lower() not in ("0", "false", "no", "off")


def lambda_tracer() -> Tracer | Untraced:
    """A Powertools `Tracer()` when the X-Ray SDK is on for this function, else `Untraced()`."""
    if not xray_sdk_enabled():
        return Untraced()
    from aws_lambda_powertools import Tracer

    return Tracer()
