"""What every AWS adapter shares: the botocore client configuration and how AWS errors become
memlane's typed errors. No client is created here; adapters create theirs lazily."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from memlane.domain.errors import MemlaneError, TransientError
from memlane.lazy import Lazy

# botocore's standard retry mode retries throttling, 5xx and transient connection errors with
# exponential backoff and jitter. `max_attempts` counts retries: 1 attempt + 5 retries = 6 calls
# before the error reaches the adapter (tests/aws/test_aws_faults.py checks this).
DEFAULT_CLIENT_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 5},
    connect_timeout=5,
    read_timeout=30,
)

# Error codes that mean "try again later", whatever the service.
TRANSIENT_ERROR_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "Throttling",
        "ThrottledException",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "TransactionConflictException",
        "InternalServerError",
        "InternalServerException",
        "InternalFailure",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "ModelTimeoutException",
        "ModelNotReadyException",
        "SlowDown",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)

CONNECTION_ERRORS: tuple[type[Exception], ...] = (
    ConnectTimeoutError,
    ReadTimeoutError,
    EndpointConnectionError,
    ConnectionClosedError,
)


def new_client(service: str, config: Config = DEFAULT_CLIENT_CONFIG) -> Any:
    """A boto3 client with memlane's retry policy. Called lazily by adapters, never at import."""
    return boto3.client(service, config=config)


def lazy_client(client: Any | None, service: str, config: Config = DEFAULT_CLIENT_CONFIG) -> Any:
    """The client given (tests hand one in), or one built on first use (memlane.lazy.Lazy):
    composing an adapter creates no client, and tests can start moto before any exists."""
    return client if client is not None else Lazy(lambda: new_client(service, config), f"{service} client")


def call(client: Any, operation: str, label: str, **kwargs: Any) -> Any:
    """One AWS call. botocore has already retried throttling (standard mode); what still fails
    transiently becomes TransientError("<label> <operation>: <code>"), anything else propagates."""
    try:
        return getattr(client, operation)(**kwargs)
    except ClientError as exc:
        if is_transient(exc):
            raise TransientError(f"{label} {operation}: {error_code(exc)}") from exc
        raise


def call_model(client: Any, operation: str, label: str, **kwargs: Any) -> Any:
    """One call to a hosted model (Bedrock): what may pass later (throttling, 5xx, timeouts, a
    dropped connection) becomes TransientError("<label> unavailable: <code>"), what the service
    refused MemlaneError("<label> refused the request: <code>"), any other botocore failure
    TransientError("<label> failed: <kind>")."""
    try:
        return getattr(client, operation)(**kwargs)
    except (ClientError, *CONNECTION_ERRORS) as exc:
        code = error_code(exc) if isinstance(exc, ClientError) else type(exc).__name__
        if is_transient(exc):
            raise TransientError(f"{label} unavailable: {code}") from exc
        raise MemlaneError(f"{label} refused the request: {code}") from exc
    except BotoCoreError as exc:
        raise TransientError(f"{label} failed: {type(exc).__name__}") from exc


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def http_status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


def is_transient(exc: BaseException) -> bool:
    """True for errors worth retrying later: throttling, 5xx, timeouts, dropped connections."""
    if isinstance(exc, CONNECTION_ERRORS):
        return True
    if isinstance(exc, ClientError):
        return error_code(exc) in TRANSIENT_ERROR_CODES or http_status(exc) >= 500
    return False
