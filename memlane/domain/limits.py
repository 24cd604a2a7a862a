"""Default limits that several layers (the key store, the API, the CLI, the OAuth sign-in, the CDK
usage plan) must agree on, each written once."""

from __future__ import annotations

# Requests a minute an API key may make unless it was created with another limit.
DEFAULT_RATE_LIMIT_PER_MINUTE = 100
