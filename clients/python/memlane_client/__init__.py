"""The Python client for memlane's HTTP API, synchronous and asynchronous.

    from memlane_client import MemlaneClient

    with MemlaneClient("http://127.0.0.1:7432", api_key="mlk_...") as memlane:
        memlane.remember("The ferry leaves at nine.", title="Ferry")
        print(memlane.recall("when does the ferry leave?")["results"])

`API_VERSION` is the version of memlane's API (its OpenAPI document) the models were generated from.
"""

from memlane_client.calls import message
from memlane_client.client import AsyncMemlaneClient, MemlaneClient
from memlane_client.errors import (
    AuthenticationError,
    BadRequest,
    Conflict,
    MemlaneError,
    MemlaneUnreachable,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    Unprocessable,
)
from memlane_client.models import API_VERSION
from memlane_client.retry import RetryPolicy

__version__ = "0.2.0"

__all__ = [
    "API_VERSION", "AsyncMemlaneClient", "AuthenticationError", "BadRequest", "Conflict", "MemlaneClient",
    "MemlaneError", "MemlaneUnreachable", "NotFound", "PayloadTooLarge", "PermissionDenied", "RateLimited",
    "RetryPolicy", "ServerError", "Unprocessable", "message",
]
